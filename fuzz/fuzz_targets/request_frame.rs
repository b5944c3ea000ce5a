//! Any bytes as a request frame on a controller listener: answered or closed, never a crash.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static CTX: OnceLock<kraftd::server::context::ServerContext> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::request_frame(CTX.get_or_init(kraftd::fuzzing::test_context), data);
});
