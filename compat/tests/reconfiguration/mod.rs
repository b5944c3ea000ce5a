//! Issue #12: dynamic controller quorums (kraft.version 1, KIP-853) with Java 4.4 and kraftd
//! controllers side by side — AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter served by either,
//! through Kafka's own `kafka-metadata-quorum add-controller` / `remove-controller` and
//! `kafka-features upgrade --feature kraft.version=1`, and as raw requests.
//!
//! The all-Java runs are the oracle that proves each test's logic; the mixed runs are the same
//! code with kraftd nodes in it. What Kafka requires is summed up in `NOTES-reconfig.md`.

mod bad_requests;
mod scenario;

use crate::harness::dynamic_quorum::Kind::{Java, Kraftd};

#[test]
fn reconfiguration_walkthrough_all_java() {
    scenario::run([Java, Java, Java]);
}

#[test]
fn reconfiguration_walkthrough_from_a_kraftd_standalone_controller() {
    scenario::run([Kraftd, Java, Kraftd]);
}

#[test]
fn reconfiguration_walkthrough_from_a_java_standalone_controller() {
    scenario::run([Java, Kraftd, Java]);
}

#[test]
fn refused_voter_changes_get_javas_answers() {
    bad_requests::run();
}
