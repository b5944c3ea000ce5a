//! Any bytes as any generated message at any version: decode is bounded and never panics, and
//! whatever decodes re-encodes to a fixed point.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::message(data);
});
