//! Any bytes as record batches (a segment, a Fetch response's records), as record bytes inside a
//! well-formed batch header, as a metadata record value or as a control record: splitting and
//! decoding are bounded and never panic, and whatever decodes re-encodes to a fixed point
//! (see `kraftd::fuzzing::record_batches` for the input layout).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::record_batches(data);
});
