//! `sasl.jaas.config` values from arbitrary bytes (see `kraftd::fuzzing::jaas_config`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::jaas_config(data);
});
