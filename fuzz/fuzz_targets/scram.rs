//! Any bytes as each SASL/SCRAM message, and fed to a SCRAM server and client at each step
//! (see `kraftd::fuzzing::scram_messages`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::scram_messages(data);
});
