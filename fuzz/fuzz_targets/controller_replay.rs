//! Arbitrary metadata record sequences into the controller's replay, as follower and leader
//! (see `kraftd::fuzzing::controller_replay`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::controller_replay(data);
});
