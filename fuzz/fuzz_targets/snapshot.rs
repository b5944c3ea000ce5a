//! Any bytes as a checkpoint file, as raft response bodies at every version kraftd sends, and
//! as a committed metadata record for the node's replay (see
//! `kraftd::fuzzing::snapshot_and_raft_responses`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::snapshot_and_raft_responses(data);
});
