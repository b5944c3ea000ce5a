//! Authorization of the raft APIs and DescribeCluster: the same requests, in the same order,
//! to a Java 4.4 controller and to kraftd, both running StandardAuthorizer, the answers
//! compared as Kafka's JSON form of each response (as `authorization` compares the others).
//!
//! - One leading controller with a fixed cluster id, `super.users=User:admin` and
//!   `allow.everyone.if.no.acl.found`: this test's connection (User:ANONYMOUS on PLAINTEXT) is
//!   refused every raft API and DescribeCluster once an ACL names the cluster, then gains
//!   CLUSTER_ACTION, DESCRIBE and ALTER one by one, each request asked again as it does.
//!   Allowed requests are ones raft answers the same on both (stale epochs, zero directory
//!   ids); the offsets each log has reached and the controllers' ports are blanked.
//!   A forwarded DescribeQuorum is authorized as the principal the Envelope names.
//! - One voter of three that never start, so it never learns a high watermark: its authorizer
//!   never loads the ACLs, and it answers everyone but super users UNKNOWN_SERVER_ERROR
//!   (`AuthorizerNotReadyException`), DescribeCluster its metadata.version check first.

use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, DecodeError, Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::{self as wire, ApiVersionsRequest};
use serde_json::Value;

use super::assert_same_answers;
use super::authorization::{ask, case, create_acl, create_acl_with, Case, Via};
use crate::harness::dynamic_quorum::{start_node_formatted, Kind};
use crate::harness::quorum_probe::round_trip;
use crate::harness::{Quorum, TestDir, Voter};
use crate::topics::cluster::TopicCluster;

const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
/// Both controllers are formatted with it, so that DescribeCluster names the same cluster.
const CLUSTER_ID: &str = "rAftAuthzClusterIdAAAA";
const METADATA_TOPIC: &str = "__cluster_metadata";
/// ACL codes: resource type CLUSTER, pattern LITERAL, DENY.
const CLUSTER: i8 = 4;
const LITERAL: i8 = 3;
const DENY: i8 = 2;
/// `AclOperation` codes.
const ALL: i8 = 2;
const ALTER: i8 = 7;
const DESCRIBE: i8 = 8;
const CLUSTER_ACTION: i8 = 9;

/// Kafka's JSON form of a raft, DescribeCluster or ControllerRegistration response
/// (`response_json` covers the other controller APIs); `None` for any other api.
pub(super) fn response_json(
    key: i16,
    version: i16,
    body: &[u8],
) -> Option<Result<Value, DecodeError>> {
    macro_rules! json {
        ($($resp:ident),*) => {
            match key {
                $(k if k == <wire::$resp as ApiMessage>::API_KEY => Some(
                    wire::$resp::decode_exact(body, version).map(|m| m.to_kafka_json(version)),
                ),)*
                _ => None,
            }
        };
    }
    json!(
        FetchResponse,
        VoteResponse,
        BeginQuorumEpochResponse,
        EndQuorumEpochResponse,
        DescribeQuorumResponse,
        FetchSnapshotResponse,
        DescribeClusterResponse,
        AddRaftVoterResponse,
        RemoveRaftVoterResponse,
        UpdateRaftVoterResponse,
        ControllerRegistrationResponse
    )
}

fn vote() -> wire::VoteRequest {
    use wire::vote_request::{PartitionData, TopicData};
    // Epoch 1 from an unknown candidate: a leader at epoch 1 does not grant it.
    wire::VoteRequest {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                replica_epoch: 1,
                replica_id: 2,
                last_offset_epoch: 0,
                last_offset: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn begin_quorum_epoch() -> wire::BeginQuorumEpochRequest {
    use wire::begin_quorum_epoch_request::{PartitionData, TopicData};
    wire::BeginQuorumEpochRequest {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                leader_id: 2,
                leader_epoch: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn end_quorum_epoch() -> wire::EndQuorumEpochRequest {
    use wire::end_quorum_epoch_request::{PartitionData, TopicData};
    wire::EndQuorumEpochRequest {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                leader_id: 2,
                leader_epoch: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A fetch at a stale epoch from replica 2; `by_name` for the versions below 13.
fn fetch(by_name: bool) -> wire::FetchRequest {
    use wire::fetch_request::{FetchPartition, FetchTopic, ReplicaState};
    // The replica id moved into ReplicaState in v15.
    wire::FetchRequest {
        replica_id: if by_name { 2 } else { -1 },
        replica_state: ReplicaState {
            replica_id: if by_name { -1 } else { 2 },
            ..Default::default()
        },
        max_wait_ms: 0,
        session_id: 7,
        topics: vec![FetchTopic {
            topic: if by_name {
                METADATA_TOPIC.into()
            } else {
                String::new()
            },
            topic_id: if by_name { Uuid::ZERO } else { Uuid::ONE },
            partitions: vec![FetchPartition {
                partition: 0,
                current_leader_epoch: 0,
                fetch_offset: 0,
                last_fetched_epoch: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A snapshot at a stale epoch, from a cluster named `cluster_id` (Java cannot answer
/// FetchSnapshot with a partition-level error, see docs/notes/security.md, so the allowed request
/// names another cluster).
fn fetch_snapshot(cluster_id: Option<&str>) -> wire::FetchSnapshotRequest {
    use wire::fetch_snapshot_request::{PartitionSnapshot, TopicSnapshot};
    wire::FetchSnapshotRequest {
        cluster_id: cluster_id.map(str::to_string),
        replica_id: 2,
        topics: vec![TopicSnapshot {
            name: METADATA_TOPIC.into(),
            partitions: vec![PartitionSnapshot {
                partition: 0,
                current_leader_epoch: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub(super) fn describe_quorum() -> wire::DescribeQuorumRequest {
    use wire::describe_quorum_request::{PartitionData, TopicData};
    wire::DescribeQuorumRequest {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Voter 2 without a directory id: raft refuses it (INVALID_REQUEST).
fn add_raft_voter() -> wire::AddRaftVoterRequest {
    use wire::add_raft_voter_request::Listener;
    wire::AddRaftVoterRequest {
        cluster_id: Some(CLUSTER_ID.into()),
        timeout_ms: 5_000,
        voter_id: 2,
        listeners: vec![Listener {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 9,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn remove_raft_voter() -> wire::RemoveRaftVoterRequest {
    wire::RemoveRaftVoterRequest {
        cluster_id: Some(CLUSTER_ID.into()),
        voter_id: 2,
        ..Default::default()
    }
}

/// Voter 7, unknown, at a stale epoch.
fn update_raft_voter() -> wire::UpdateRaftVoterRequest {
    use wire::update_raft_voter_request::{KRaftVersionFeature, Listener};
    wire::UpdateRaftVoterRequest {
        cluster_id: Some(CLUSTER_ID.into()),
        current_leader_epoch: 0,
        voter_id: 7,
        voter_directory_id: Uuid([7; 16]),
        listeners: vec![Listener {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 9,
            ..Default::default()
        }],
        k_raft_version_feature: KRaftVersionFeature {
            min_supported_version: 0,
            max_supported_version: 1,
            ..Default::default()
        },
        ..Default::default()
    }
}

pub(super) fn describe_cluster(
    endpoint_type: i8,
    include_operations: bool,
) -> wire::DescribeClusterRequest {
    wire::DescribeClusterRequest {
        include_cluster_authorized_operations: include_operations,
        endpoint_type,
        ..Default::default()
    }
}

/// An ACL on the cluster for `principal`, asked `via`.
fn cluster_acl(name: &'static str, via: Via, principal: &str, op: i8) -> Case {
    case(
        name,
        via,
        3,
        create_acl((CLUSTER, "kafka-cluster", LITERAL, principal, op)),
        ErrorCode::NONE,
    )
}

/// Every raft API and DescribeCluster from a connection holding none of what they need.
fn all_refused() -> Vec<Case> {
    use ErrorCode as E;
    use Via::Direct;
    let refused = E::CLUSTER_AUTHORIZATION_FAILED;
    vec![
        case("Vote", Direct, 0, vote(), refused),
        case("BeginQuorumEpoch", Direct, 0, begin_quorum_epoch(), refused),
        case("EndQuorumEpoch", Direct, 0, end_quorum_epoch(), refused),
        case("Fetch v16 (by topic id)", Direct, 16, fetch(false), refused),
        case("Fetch v12 (by name)", Direct, 12, fetch(true), refused),
        case("FetchSnapshot", Direct, 0, fetch_snapshot(None), refused),
        case("DescribeQuorum v0", Direct, 0, describe_quorum(), refused),
        case("DescribeQuorum v2", Direct, 2, describe_quorum(), refused),
        case("AddRaftVoter", Direct, 0, add_raft_voter(), refused),
        case("RemoveRaftVoter", Direct, 0, remove_raft_voter(), refused),
        case("UpdateRaftVoter", Direct, 0, update_raft_voter(), refused),
        case(
            "DescribeCluster of the controllers",
            Direct,
            2,
            describe_cluster(2, true),
            refused,
        ),
        case(
            "DescribeCluster of the brokers (refused before the endpoint type)",
            Direct,
            1,
            describe_cluster(1, false),
            refused,
        ),
    ]
}

/// While no ACL names the cluster everyone may do everything; an ACL for admin takes it all
/// from this connection.
fn losing() -> Vec<Case> {
    let mut cases = vec![
        case(
            "no ACL names the cluster: DescribeQuorum allowed",
            Via::Direct,
            0,
            describe_quorum(),
            ErrorCode::NONE,
        ),
        cluster_acl(
            "an ACL names the cluster (admin, ALL)",
            Via::Direct,
            "User:admin",
            ALL,
        ),
    ];
    cases.extend(all_refused());
    cases
}

/// This connection takes CLUSTER_ACTION while no ACL names the cluster (so it may forward
/// Envelopes), then admin, forwarded, grants it DESCRIBE and ALTER, and denies DESCRIBE.
fn gaining() -> Vec<Case> {
    use ErrorCode as E;
    use Via::{As, Direct};
    let refused = E::CLUSTER_AUTHORIZATION_FAILED;
    let admin = As("admin");
    vec![
        cluster_acl(
            "CLUSTER_ACTION for ANONYMOUS",
            Direct,
            "User:ANONYMOUS",
            CLUSTER_ACTION,
        ),
        case("Vote, allowed", Direct, 0, vote(), E::NONE),
        case(
            "BeginQuorumEpoch, allowed",
            Direct,
            0,
            begin_quorum_epoch(),
            E::FENCED_LEADER_EPOCH,
        ),
        case(
            "EndQuorumEpoch, allowed",
            Direct,
            0,
            end_quorum_epoch(),
            E::FENCED_LEADER_EPOCH,
        ),
        case(
            "Fetch v16, allowed",
            Direct,
            16,
            fetch(false),
            E::FENCED_LEADER_EPOCH,
        ),
        case(
            "FetchSnapshot, allowed",
            Direct,
            0,
            fetch_snapshot(Some("another-cluster")),
            E::INCONSISTENT_CLUSTER_ID,
        ),
        case(
            "UpdateRaftVoter, allowed",
            Direct,
            0,
            update_raft_voter(),
            E::FENCED_LEADER_EPOCH,
        ),
        case(
            "DescribeQuorum needs DESCRIBE",
            Direct,
            2,
            describe_quorum(),
            refused,
        ),
        case(
            "alice's forwarded DescribeQuorum",
            As("alice"),
            2,
            describe_quorum(),
            refused,
        ),
        case(
            "admin's forwarded DescribeQuorum",
            admin,
            0,
            describe_quorum(),
            E::NONE,
        ),
        case(
            "AddRaftVoter needs ALTER",
            Direct,
            0,
            add_raft_voter(),
            refused,
        ),
        case(
            "DescribeCluster needs ALTER",
            Direct,
            2,
            describe_cluster(2, true),
            refused,
        ),
        cluster_acl("DESCRIBE for ANONYMOUS", admin, "User:ANONYMOUS", DESCRIBE),
        case(
            "DescribeQuorum, allowed",
            Direct,
            0,
            describe_quorum(),
            E::NONE,
        ),
        cluster_acl("ALTER for ANONYMOUS", admin, "User:ANONYMOUS", ALTER),
        case(
            "AddRaftVoter, allowed",
            Direct,
            0,
            add_raft_voter(),
            E::INVALID_REQUEST,
        ),
        case(
            "RemoveRaftVoter, allowed",
            Direct,
            0,
            remove_raft_voter(),
            E::INVALID_REQUEST,
        ),
        case(
            "DescribeCluster with its authorized operations",
            Direct,
            2,
            describe_cluster(2, true),
            E::NONE,
        ),
        case(
            "DescribeCluster of the brokers, allowed",
            Direct,
            1,
            describe_cluster(1, false),
            E::MISMATCHED_ENDPOINT_TYPE,
        ),
        case(
            "DESCRIBE denied to ANONYMOUS",
            admin,
            3,
            create_acl_with(
                (
                    CLUSTER,
                    "kafka-cluster",
                    LITERAL,
                    "User:ANONYMOUS",
                    DESCRIBE,
                ),
                DENY,
            ),
            E::NONE,
        ),
        case(
            "DescribeCluster without DESCRIBE: no authorized operations",
            Direct,
            2,
            describe_cluster(2, true),
            E::NONE,
        ),
        case(
            "DescribeQuorum refused again",
            Direct,
            0,
            describe_quorum(),
            refused,
        ),
    ]
}

/// A controller of a quorum that never forms, before its authorizer has loaded anything.
fn not_ready() -> Vec<Case> {
    use ErrorCode as E;
    use Via::{As, Direct};
    let not_ready = E::UNKNOWN_SERVER_ERROR;
    vec![
        case("Vote", Direct, 0, vote(), not_ready),
        case("Fetch v12", Direct, 12, fetch(true), not_ready),
        case("DescribeQuorum v2", Direct, 2, describe_quorum(), not_ready),
        case("AddRaftVoter", Direct, 0, add_raft_voter(), not_ready),
        case("UpdateRaftVoter", Direct, 0, update_raft_voter(), not_ready),
        case(
            "DescribeCluster (no metadata.version yet)",
            Direct,
            2,
            describe_cluster(2, true),
            E::UNSUPPORTED_VERSION,
        ),
        case(
            "AllocateProducerIds",
            Direct,
            0,
            wire::AllocateProducerIdsRequest {
                broker_id: 1,
                broker_epoch: 0,
                ..Default::default()
            },
            not_ready,
        ),
        case(
            "UnregisterBroker",
            Direct,
            0,
            wire::UnregisterBrokerRequest {
                broker_id: 7,
                ..Default::default()
            },
            not_ready,
        ),
        case(
            "ControllerRegistration",
            Direct,
            0,
            wire::ControllerRegistrationRequest {
                controller_id: 2,
                ..Default::default()
            },
            not_ready,
        ),
        case(
            "CreateAcls",
            Direct,
            3,
            create_acl((CLUSTER, "kafka-cluster", LITERAL, "User:alice", ALL)),
            not_ready,
        ),
        case("an Envelope", As("admin"), 0, describe_quorum(), not_ready),
    ]
}

/// The answers of the leading controller of `kind` to `cases`.
fn run_leading(kind: Kind, props: &[(&str, String)], cases: &[Case]) -> Vec<(String, i16)> {
    let dir = TestDir::new();
    let mut c = TopicCluster::controller_with_id(&dir, kind, props, &[], CLUSTER_ID);
    let answers = cases
        .iter()
        .map(|x| {
            let answer = ask(c.controller.port, x);
            if x.key == wire::CreateAclsRequest::API_KEY {
                // Java's authorizer sees a new ACL once its image is published.
                std::thread::sleep(Duration::from_millis(1000));
            }
            answer
        })
        .collect();
    c.stop();
    answers
}

/// The answers of voter 1 of three, the others never started, to `cases`.
fn run_not_ready(kind: Kind, props: &[(&str, String)], cases: &[Case]) -> Vec<(String, i16)> {
    let dir = TestDir::new();
    let voters = vec![Voter::new(1), Voter::new(2), Voter::new(3)];
    let port = voters[0].port;
    let quorum = Quorum::StaticVoters(voters);
    let mut node = start_node_formatted(&dir, kind, 1, port, CLUSTER_ID, quorum, props, &[]);
    let hello = ApiVersionsRequest {
        client_software_name: "compat".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while round_trip(port, 18, 3, &hello).is_none() {
        assert!(
            Instant::now() < deadline,
            "{kind}: the controller never listened"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let answers = cases.iter().map(|x| ask(port, x)).collect();
    node.member.kill9();
    answers
}

fn compare(what: &str, cases: Vec<Case>, run: impl Fn(Kind, &[Case]) -> Vec<(String, i16)>) {
    let java = run(Kind::Java, &cases);
    let kraftd = run(Kind::Kraftd, &cases);
    let named: Vec<(&str, i16)> = cases.iter().map(|c| (c.name, c.expected.0)).collect();
    assert_same_answers(what, &named, &java, &kraftd);
}

#[test]
fn raft_apis_and_describe_cluster_are_authorized_as_a_java_controller_authorizes_them() {
    let props = [
        ("authorizer.class.name", STANDARD_AUTHORIZER.to_string()),
        ("super.users", "User:admin".to_string()),
        ("allow.everyone.if.no.acl.found", "true".to_string()),
    ];
    compare(
        "Raft APIs and DescribeCluster from a connection losing every permission",
        losing(),
        |kind, cases| run_leading(kind, &props, cases),
    );
    compare(
        "Raft APIs and DescribeCluster from a connection gaining permissions",
        gaining(),
        |kind, cases| run_leading(kind, &props, cases),
    );
    compare(
        "A controller whose authorizer has not loaded the ACLs",
        not_ready(),
        |kind, cases| run_not_ready(kind, &props, cases),
    );
}
