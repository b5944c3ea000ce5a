//! AlterPartitionReassignments, ListPartitionReassignments and AssignReplicasToDirs: the very
//! same requests, in the same order, to a Java 4.4 controller and to kraftd, each with four
//! brokers registered by raw BrokerRegistrations and unfenced by one heartbeat (they never
//! send AlterPartition, so reassignments stay in progress until cancelled), and two topics
//! created with manual assignments. The answers are compared field by field (Kafka's JSON of
//! each response; topic ids shown as names), then the topics of both logs as Java's own image
//! dumper reads them (replicas, directories, ISR, adding and removing replicas, leaders and
//! epochs, partition by partition).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use kraftd::protocol::codec::{ApiMessage, Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kraftd::protocol::messages::assign_replicas_to_dirs_request as dirs;
use kraftd::protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kraftd::protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use kraftd::protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
    AssignReplicasToDirsRequest, AssignReplicasToDirsResponse, BrokerHeartbeatRequest,
    BrokerHeartbeatResponse, BrokerRegistrationRequest, BrokerRegistrationResponse,
    CreateTopicsRequest, CreateTopicsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
};

use crate::harness::dump_java_image;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::TestDir;
use crate::load::fleet::broker_registration;
use crate::security::assert_same_answers;
use crate::topics::cluster::TopicCluster;

/// Brokers 1-3 with one log directory each, broker 4 with two.
const BROKERS: [i32; 4] = [1, 2, 3, 4];

fn log_dirs(broker: i32) -> Vec<Uuid> {
    let n = if broker == 4 { 2 } else { 1 };
    (0..n)
        .map(|i| Uuid([0x10 * broker as u8 + i; 16]))
        .collect()
}

/// A directory no broker registered.
const UNKNOWN_DIR: Uuid = Uuid([0x77; 16]);
/// A topic id no topic has.
const UNKNOWN_ID: Uuid = Uuid([7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

fn registration(broker: i32, cluster_id: &str) -> BrokerRegistrationRequest {
    let incarnation = Uuid([broker as u8; 16]);
    broker_registration(cluster_id, broker, incarnation, log_dirs(broker), 1)
}

/// Per partition: its index and target replicas (None: cancel).
type Targets<'a> = &'a [(&'a str, &'a [(i32, Option<&'a [i32]>)])];

fn reassign(allow_rf_change: bool, topics: Targets) -> AlterPartitionReassignmentsRequest {
    AlterPartitionReassignmentsRequest {
        timeout_ms: 30_000,
        allow_replication_factor_change: allow_rf_change,
        topics: topics
            .iter()
            .map(|(name, partitions)| ReassignableTopic {
                name: name.to_string(),
                partitions: partitions
                    .iter()
                    .map(|(p, r)| ReassignablePartition {
                        partition_index: *p,
                        replicas: r.map(<[i32]>::to_vec),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn list(topics: Option<&[(&str, &[i32])]>) -> ListPartitionReassignmentsRequest {
    ListPartitionReassignmentsRequest {
        timeout_ms: 30_000,
        topics: topics.map(|ts| {
            ts.iter()
                .map(|(name, ps)| ListPartitionReassignmentsTopics {
                    name: name.to_string(),
                    partition_indexes: ps.to_vec(),
                    ..Default::default()
                })
                .collect()
        }),
        ..Default::default()
    }
}

/// Which topic an AssignReplicasToDirs names: a created one, or an id no topic has.
#[derive(Clone, Copy)]
enum TopicRef {
    Named(&'static str),
    Unknown,
}

/// An AssignReplicasToDirs from `broker` (epoch: the registered one plus `epoch_delta`).
struct DirsRequest {
    broker: i32,
    epoch_delta: i64,
    dirs: &'static [(Uuid, TopicRef, &'static [i32])],
}

enum Step {
    Reassign(i16, AlterPartitionReassignmentsRequest),
    List(i16, ListPartitionReassignmentsRequest),
    Assign(DirsRequest),
}

fn steps() -> Vec<(&'static str, Step, ErrorCode)> {
    use ErrorCode as E;
    use Step::*;
    use TopicRef::*;
    let d4b = log_dirs(4)[1];
    let dirs_ok: &'static [(Uuid, TopicRef, &'static [i32])] = Box::leak(Box::new([
        (d4b, Named("t"), &[1, 0, 7][..]),
        (d4b, Unknown, &[0][..]),
    ]));
    let dirs_offline: &'static [(Uuid, TopicRef, &'static [i32])] =
        Box::leak(Box::new([(UNKNOWN_DIR, Named("t"), &[2][..])]));
    vec![
        (
            "an empty request",
            Reassign(1, reassign(true, &[])),
            E::NONE,
        ),
        (
            "an unknown topic",
            Reassign(0, reassign(true, &[("nope", &[(0, Some(&[1, 2, 3]))])])),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
        (
            "an unknown partition",
            Reassign(0, reassign(true, &[("t", &[(9, Some(&[1, 2, 3]))])])),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
        (
            "a cancellation without a reassignment",
            Reassign(0, reassign(true, &[("t", &[(0, None)])])),
            E::NO_REASSIGNMENT_IN_PROGRESS,
        ),
        (
            "no replicas",
            Reassign(0, reassign(true, &[("t", &[(0, Some(&[]))])])),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        (
            "a broker twice",
            Reassign(0, reassign(true, &[("t", &[(0, Some(&[1, 2, 1]))])])),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        (
            "a negative broker",
            Reassign(0, reassign(true, &[("t", &[(0, Some(&[2, -1, 3]))])])),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        (
            "an unregistered broker",
            Reassign(0, reassign(true, &[("t", &[(0, Some(&[1, 2, 9]))])])),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        (
            "v1: a replication factor change not allowed",
            Reassign(1, reassign(false, &[("t", &[(0, Some(&[1, 2, 3, 4]))])])),
            E::INVALID_REPLICATION_FACTOR,
        ),
        (
            "v0: a replication factor change (always allowed)",
            Reassign(0, reassign(true, &[("u", &[(0, Some(&[1, 2, 3]))])])),
            E::NONE,
        ),
        (
            "a move to another broker",
            Reassign(1, reassign(false, &[("t", &[(0, Some(&[2, 3, 4]))])])),
            E::NONE,
        ),
        (
            "a reorder, complete at once",
            Reassign(1, reassign(false, &[("t", &[(2, Some(&[1, 2, 3]))])])),
            E::NONE,
        ),
        (
            "a partition twice, and a cancellation",
            Reassign(
                1,
                reassign(
                    true,
                    &[
                        ("t", &[(1, Some(&[4, 1, 2])), (1, Some(&[4, 3]))]),
                        ("u", &[(0, None)]),
                    ],
                ),
            ),
            E::NONE,
        ),
        ("list every reassignment", List(0, list(None)), E::NONE),
        (
            "list some",
            List(0, list(Some(&[("t", &[0, 1, 2, 5]), ("nope", &[0])]))),
            E::NONE,
        ),
        ("list none", List(0, list(Some(&[]))), E::NONE),
        (
            "a new target while moving",
            Reassign(1, reassign(true, &[("t", &[(0, Some(&[4, 3, 1]))])])),
            E::NONE,
        ),
        (
            "the replication factor of a move in progress",
            Reassign(1, reassign(false, &[("t", &[(0, Some(&[1, 2]))])])),
            E::INVALID_REPLICATION_FACTOR,
        ),
        (
            "a cancellation",
            Reassign(0, reassign(true, &[("t", &[(0, None)])])),
            E::NONE,
        ),
        (
            "AssignReplicasToDirs: a stale broker epoch",
            Assign(DirsRequest {
                broker: 4,
                epoch_delta: -1,
                dirs: dirs_ok,
            }),
            E::STALE_BROKER_EPOCH,
        ),
        (
            "AssignReplicasToDirs: broker 4's second directory",
            Assign(DirsRequest {
                broker: 4,
                epoch_delta: 0,
                dirs: dirs_ok,
            }),
            E::NONE,
        ),
        (
            "AssignReplicasToDirs: a directory broker 1 does not have",
            Assign(DirsRequest {
                broker: 1,
                epoch_delta: 0,
                dirs: dirs_offline,
            }),
            E::NONE,
        ),
        (
            "list every reassignment again",
            List(0, list(None)),
            E::NONE,
        ),
    ]
}

struct Run {
    answers: Vec<(String, i16)>,
    topics: Value,
}

fn create_topics() -> CreateTopicsRequest {
    let topic = |name: &str, assignments: &[&[i32]], configs: &[(&str, &str)]| CreatableTopic {
        name: name.into(),
        num_partitions: -1,
        replication_factor: -1,
        assignments: assignments
            .iter()
            .enumerate()
            .map(|(i, b)| CreatableReplicaAssignment {
                partition_index: i as i32,
                broker_ids: b.to_vec(),
                ..Default::default()
            })
            .collect(),
        configs: configs
            .iter()
            .map(|(k, v)| CreatableTopicConfig {
                name: k.to_string(),
                value: Some(v.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    CreateTopicsRequest {
        topics: vec![
            topic("t", &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]], &[]),
            topic(
                "u",
                &[&[1, 2]],
                &[("unclean.leader.election.enable", "true")],
            ),
        ],
        timeout_ms: 30_000,
        ..Default::default()
    }
}

fn send<M: Message + ApiMessage, R: Message>(c: &TopicCluster, v: i16, request: &M) -> R {
    let body = c
        .send(v, request)
        .unwrap_or_else(|e| panic!("{}: no answer to {}: {e}", c.kind(), M::NAME));
    R::decode_exact(&body, v).unwrap_or_else(|e| panic!("{}: {}: {e}", c.kind(), M::NAME))
}

fn run_all(kind: Kind, dir: &TestDir) -> Run {
    let props = [("broker.session.timeout.ms", "600000".to_string())];
    let mut c = TopicCluster::controller_only(dir, kind, &props, &[]);
    let mut epochs = BTreeMap::new();
    for b in BROKERS {
        let r: BrokerRegistrationResponse = send(&c, 4, &registration(b, &c.cluster_id));
        assert_eq!(r.error_code, 0, "{kind}: broker {b} registers: {r:?}");
        epochs.insert(b, r.broker_epoch);
    }
    for b in BROKERS {
        let beat = BrokerHeartbeatRequest {
            broker_id: b,
            broker_epoch: epochs[&b],
            current_metadata_offset: 1_000_000,
            ..Default::default()
        };
        let unfenced = (0..50).any(|_| {
            let r: BrokerHeartbeatResponse = send(&c, 1, &beat);
            std::thread::sleep(std::time::Duration::from_millis(100));
            !r.is_fenced
        });
        assert!(unfenced, "{kind}: broker {b} was not unfenced");
    }
    let created: CreateTopicsResponse = send(&c, 7, &create_topics());
    let ids: BTreeMap<String, Uuid> = created
        .topics
        .iter()
        .map(|t| {
            assert_eq!(t.error_code, 0, "{kind}: {t:?}");
            (t.name.clone(), t.topic_id)
        })
        .collect();
    let name_of = |id: &Uuid| {
        ids.iter()
            .find(|(_, v)| *v == id)
            .map_or("an unknown id".to_string(), |(n, _)| n.clone())
    };
    let mut answers = Vec::new();
    for (_, step, _) in steps() {
        answers.push(match step {
            Step::Reassign(v, r) => {
                let a: AlterPartitionReassignmentsResponse = send(&c, v, &r);
                let first = a
                    .responses
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .map(|p| p.error_code)
                    .find(|c| *c != 0)
                    .unwrap_or(a.error_code);
                (a.to_kafka_json(v).to_string(), first)
            }
            Step::List(v, r) => {
                let a: ListPartitionReassignmentsResponse = send(&c, v, &r);
                (a.to_kafka_json(v).to_string(), a.error_code)
            }
            Step::Assign(a) => {
                let request = AssignReplicasToDirsRequest {
                    broker_id: a.broker,
                    broker_epoch: epochs[&a.broker] + a.epoch_delta,
                    directories: a
                        .dirs
                        .iter()
                        .map(|(d, t, ps)| dirs::DirectoryData {
                            id: *d,
                            topics: vec![dirs::TopicData {
                                topic_id: match t {
                                    TopicRef::Named(n) => ids[*n],
                                    TopicRef::Unknown => UNKNOWN_ID,
                                },
                                partitions: ps
                                    .iter()
                                    .map(|p| dirs::PartitionData {
                                        partition_index: *p,
                                        ..Default::default()
                                    })
                                    .collect(),
                                ..Default::default()
                            }],
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                };
                let r: AssignReplicasToDirsResponse = send(&c, 0, &request);
                let mut shown = json!({"errorCode": r.error_code, "throttleTimeMs": r.throttle_time_ms});
                shown["directories"] = r
                    .directories
                    .iter()
                    .map(|d| {
                        json!({"id": format!("{:?}", d.id.0), "topics": d.topics.iter().map(|t| json!({
                            "topic": name_of(&t.topic_id),
                            "partitions": t.partitions.iter().map(|p| json!([p.partition_index, ErrorCode(p.error_code).name()])).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>()})
                    })
                    .collect();
                (shown.to_string(), r.error_code)
            }
        });
    }
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    // The topics as Java's image dumper reads the log, by name.
    let image = dump_java_image(&log, None);
    let mut topics = serde_json::Map::new();
    for t in image["topics"].as_object().expect("topics").values() {
        topics.insert(
            t["name"].as_str().unwrap().to_string(),
            t["partitions"].clone(),
        );
    }
    Run {
        answers,
        topics: Value::Object(topics),
    }
}

#[test]
fn reassignments_and_directory_assignments_get_javas_answers_and_records() {
    let dir = TestDir::new();
    let java = run_all(Kind::Java, &dir);
    let kraftd = run_all(Kind::Kraftd, &dir);
    let cases: Vec<(&str, i16)> = steps().iter().map(|(n, _, e)| (*n, e.0)).collect();
    assert_same_answers(
        "AlterPartitionReassignments, ListPartitionReassignments, AssignReplicasToDirs",
        &cases,
        &java.answers,
        &kraftd.answers,
    );
    eprintln!(
        "the topics in Java's image of Java's log:\n{}",
        serde_json::to_string_pretty(&java.topics).unwrap()
    );
    let diffs = crate::harness::image_compare::image_differences(&java.topics, &kraftd.topics);
    assert!(
        diffs.is_empty(),
        "the topics of kraftd's log differ from those of Java's:\n  {}",
        diffs.join("\n  ")
    );
}
