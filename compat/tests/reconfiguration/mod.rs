//! Issue #12: dynamic controller quorums (kraft.version 1, KIP-853) with Java 4.4 and kraftd
//! controllers side by side — AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter served by either,
//! through Kafka's own `kafka-metadata-quorum add-controller` / `remove-controller` and
//! `kafka-features upgrade --feature kraft.version=1`, and as raw requests.
//!
//! The all-Java runs are the oracle that proves each test's logic; the mixed runs are the same
//! code with kraftd nodes in it. What Kafka requires is summed up in `docs/notes/reconfig.md`.

mod auto_join;
mod bad_requests;
mod feature_updates;
mod scenario;
mod static_to_dynamic;

use crate::harness::dynamic_quorum::Kind::{Java, Kraftd};
use crate::harness::pki::StoreFormat;
use crate::harness::transport::{PerNode, SaslMechanism, Transport};

#[test]
fn reconfiguration_walkthrough_all_java() {
    scenario::run([Java, Java, Java]);
}

#[test]
fn reconfiguration_walkthrough_from_a_kraftd_standalone_controller() {
    scenario::run([Kraftd, Java, Kraftd]);
}

/// On SASL_SSL (SASL/PLAIN between the controllers and from the tools): `add-controller` and
/// `remove-controller` through Java and kraftd leaders with `--command-config`.
#[test]
fn reconfiguration_walkthrough_from_a_java_standalone_controller_on_sasl_ssl() {
    scenario::run_on(
        [Java, Kraftd, Java],
        Transport::SaslSsl {
            kraftd: PerNode::Every(StoreFormat::Jks),
            brokers: PerNode::Every(SaslMechanism::Plain),
        },
    );
}

#[test]
fn refused_voter_changes_and_feature_updates_get_javas_answers() {
    bad_requests::run();
}

#[test]
fn static_quorum_upgrades_to_kraft_version_1_and_replaces_a_voter_all_java() {
    static_to_dynamic::run([Java, Java, Java], None, 3, Java);
}

/// kraftd follows at kraft.version 0 (its UpdateRaftVoter tells the Java leader its directory
/// id), then is replaced by a new kraftd node.
#[test]
fn static_quorum_upgraded_by_a_java_leader_replaces_its_kraftd_voter() {
    static_to_dynamic::run([Java, Java, Kraftd], Some(Java), 3, Kraftd);
}

/// The active kraftd controller serves UpdateFeatures and its raft writes the upgrade; then a
/// Java voter is replaced by a new Java node.
#[test]
fn static_quorum_upgraded_by_a_kraftd_leader_replaces_a_java_voter() {
    static_to_dynamic::run([Java, Java, Kraftd], Some(Kraftd), 2, Java);
}

#[test]
fn auto_join_all_java() {
    auto_join::run(Java, Java);
}

#[test]
fn auto_join_of_a_kraftd_observer() {
    auto_join::run(Java, Kraftd);
}

#[test]
fn auto_join_of_a_java_observer_while_kraftd_leads() {
    auto_join::run(Kraftd, Java);
}
