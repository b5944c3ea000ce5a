//! Any bytes as `meta.properties` or `server.properties`: parsed or refused, never a crash.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::properties_files(data);
});
