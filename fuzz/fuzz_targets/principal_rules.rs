//! ssl.principal.mapping.rules and client certificate subjects from arbitrary bytes (see
//! `kraftd::fuzzing::principal_rules`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::principal_rules(data);
});
