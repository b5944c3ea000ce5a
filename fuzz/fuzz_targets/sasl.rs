//! PLAIN tokens and a SASL listener's connection fed arbitrary frames (see
//! `kraftd::fuzzing::sasl_frames`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::sasl_frames(data);
});
