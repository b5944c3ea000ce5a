//! Reassignment and directory transcripts on the leadership cluster (brokers 1-3, topic `t`
//! with partitions [1,2,3], [2,3,1], [3,1,2]) plus broker 4, registered and unfenced: each
//! AlterPartitionReassignments, AlterPartition and AssignReplicasToDirs shown as the answers
//! and records decided, the records replayed before the next step.

use super::alter_partition::alter_partition;
use super::directories::{assign_replicas_to_dirs, AssignDirsError};
use super::reassign::{alter_partition_reassignments, reassign_response, Plan, Revert};
use super::tests::{cluster, epoch, partition, TOPIC_ID};
use super::*;
use crate::controller::brokers::tests::{beat, describe, dir, registration, Cluster};
use crate::controller::brokers::BrokerError;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use crate::protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use crate::protocol::messages::assign_replicas_to_dirs_request as dirs_request;
use crate::protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionRequest, AssignReplicasToDirsRequest,
};

/// The leadership cluster with broker 4 registered (with `dirs` log directories) and unfenced.
fn cluster4(dirs: u8) -> Cluster {
    let mut c = cluster(false, 1);
    let mut r = registration(4, 1);
    r.log_dirs = (0..dirs).map(|i| dir(4, 1 + i)).collect();
    c.register(&r).unwrap();
    let e = epoch(&c, 4);
    c.heartbeat(beat(4, e, 1000, false, false)).unwrap();
    c
}

/// Per topic name, (partition, target replicas or None to cancel).
type Targets<'a> = &'a [(&'a str, &'a [(i32, Option<&'a [i32]>)])];

fn request(allow_rf_change: bool, topics: Targets) -> AlterPartitionReassignmentsRequest {
    AlterPartitionReassignmentsRequest {
        allow_replication_factor_change: allow_rf_change,
        topics: topics
            .iter()
            .map(|(name, partitions)| ReassignableTopic {
                name: name.to_string(),
                partitions: partitions
                    .iter()
                    .map(|(p, replicas)| ReassignablePartition {
                        partition_index: *p,
                        replicas: replicas.map(<[i32]>::to_vec),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Decides and replays a request: each partition's answer ("t-0 NONE" or with the code and
/// message), then the records.
fn reassign(c: &mut Cluster, r: &AlterPartitionReassignmentsRequest) -> Vec<String> {
    let leadership = Leadership::new(c.controller.image(), &c.topics).unwrap();
    let decided = alter_partition_reassignments(&leadership, r);
    let response = reassign_response(&decided.reply, r.allow_replication_factor_change);
    let mut out: Vec<String> = response
        .responses
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| {
                let code = ErrorCode(p.error_code).name();
                match &p.error_message {
                    Some(m) => format!("{}-{} {code}: {m}", t.name, p.partition_index),
                    None => format!("{}-{} {code}", t.name, p.partition_index),
                }
            })
        })
        .collect();
    out.extend(decided.records.iter().map(describe));
    c.write(&decided.records);
    out
}

/// The leader of p0 reports `isr` (AlterPartition v3): its answer's code, then the records.
fn leader_reports(c: &mut Cluster, isr: &[i32]) -> Vec<String> {
    let p0 = partition(c, 0);
    let request = AlterPartitionRequest {
        broker_id: p0.leader,
        broker_epoch: epoch(c, p0.leader),
        topics: vec![TopicData {
            topic_id: TOPIC_ID,
            partitions: vec![PartitionData {
                partition_index: 0,
                leader_epoch: p0.leader_epoch,
                partition_epoch: p0.partition_epoch,
                new_isr_with_epochs: isr
                    .iter()
                    .map(|b| BrokerState {
                        broker_id: *b,
                        broker_epoch: -1,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let leadership = Leadership::new(c.controller.image(), &c.topics).unwrap();
    let decided = alter_partition(&leadership, 3, &request).unwrap();
    let code = ErrorCode(decided.reply.0.topics[0].partitions[0].error_code);
    let mut out = vec![code.name().to_string()];
    out.extend(decided.records.iter().map(describe));
    c.write(&decided.records);
    out
}

#[test]
fn the_plan_puts_the_target_first_then_the_removed_replicas_in_ascending_order() {
    let plan = Plan::of(&[3, 1, 2], &[5, 2, 4]);
    assert_eq!(plan.removing, vec![1, 3]);
    assert_eq!(plan.adding, vec![4, 5]);
    assert_eq!(plan.replicas, vec![5, 2, 4, 1, 3]);
}

#[test]
fn a_move_adds_the_target_replicas_then_completes_once_they_are_in_sync() {
    let mut c = cluster4(1);
    // p0 [1,2,3] moves to [2,3,4]: 4 joins, 1 is being removed; 1 still leads.
    assert_eq!(
        reassign(&mut c, &request(false, &[("t", &[(0, Some(&[2, 3, 4]))])])),
        vec![
            "t-0 NONE",
            "PartitionChange v2 p0 replicas [2, 3, 4, 1] removing [1] adding [4] \
             dirs [2/1, 3/1, 4/1, 1/1]",
        ]
    );
    let listed =
        crate::controller::topics::reassignments::list_reassignments(c.controller.image(), None);
    assert_eq!(listed[0].1[0].adding, vec![4]);
    // The leader reports 4 in sync: the reassignment completes, 1 leaves and 2 leads; the
    // leader learns it lost the leadership.
    assert_eq!(
        leader_reports(&mut c, &[1, 2, 3, 4]),
        vec![
            "NEW_LEADER_ELECTED",
            "PartitionChange v2 p0 leader 2 isr [2, 3, 4] replicas [2, 3, 4] removing [] \
             adding [] dirs [2/1, 3/1, 4/1]",
        ]
    );
    let p0 = partition(&c, 0);
    assert_eq!((p0.leader, p0.leader_epoch), (2, 1));
    assert!(
        crate::controller::topics::reassignments::list_reassignments(c.controller.image(), None)
            .is_empty()
    );
}

#[test]
fn a_reorder_or_a_shrink_within_the_isr_completes_at_once() {
    let mut c = cluster4(1);
    // The same replicas in another order: nothing to wait for; 1 still leads.
    assert_eq!(
        reassign(&mut c, &request(false, &[("t", &[(0, Some(&[3, 2, 1]))])])),
        vec![
            "t-0 NONE",
            "PartitionChange v2 p0 replicas [3, 2, 1] dirs [3/1, 2/1, 1/1]"
        ]
    );
    // Down to two replicas (allowed): every remaining one is in sync, so it completes, and 1
    // leaving forces a new leader epoch.
    assert_eq!(
        reassign(&mut c, &request(true, &[("t", &[(1, Some(&[2, 3]))])])),
        vec![
            "t-1 NONE",
            "PartitionChange v2 p1 leader 2 isr [2, 3] replicas [2, 3] dirs [2/1, 3/1]"
        ]
    );
}

#[test]
fn a_cancellation_reverts_to_the_original_replicas_in_their_reassignment_order() {
    let mut c = cluster4(1);
    reassign(&mut c, &request(false, &[("t", &[(0, Some(&[2, 3, 4]))])]));
    // The original replicas come back in the order the reassignment kept them (the target's
    // first, then the removed ones), not their first order [1,2,3].
    assert_eq!(
        reassign(&mut c, &request(false, &[("t", &[(0, None)])])),
        vec![
            "t-0 NONE",
            "PartitionChange v2 p0 leader 1 replicas [2, 3, 1] removing [] adding [] \
             dirs [2/1, 3/1, 1/1]",
        ]
    );
    // Nothing is in progress any more.
    assert_eq!(
        reassign(&mut c, &request(false, &[("t", &[(0, None)])])),
        vec!["t-0 NO_REASSIGNMENT_IN_PROGRESS"]
    );
}

#[test]
fn a_cancellation_that_needs_an_unclean_election_is_refused() {
    let p = PartitionRegistration {
        replicas: vec![4, 1],
        isr: vec![4],
        adding_replicas: vec![4],
        removing_replicas: vec![1],
        ..partition(&cluster(false, 1), 0)
    };
    assert_eq!(
        Revert::of(&p).unwrap(),
        Revert {
            replicas: vec![1],
            isr: vec![1],
            unclean: true
        }
    );
    let all_adding = PartitionRegistration {
        adding_replicas: vec![4, 1],
        ..p
    };
    assert_eq!(
        Revert::of(&all_adding).unwrap_err().to_string(),
        "Invalid replica assignment: addingReplicas contains all replicas."
    );
}

#[test]
fn refusals_come_in_javas_order_with_javas_codes_and_messages() {
    let mut c = cluster4(1);
    let answers = reassign(
        &mut c,
        &request(
            false,
            &[
                ("nope", &[(0, Some(&[1, 2, 3]))]),
                (
                    "t",
                    &[
                        (9, Some(&[1, 2, 3])),
                        (0, None),
                        (0, Some(&[])),
                        (0, Some(&[1, 1, 2])),
                        (0, Some(&[-1, 2, 7])),
                        (0, Some(&[1, 2, 3, 4])),
                        (1, Some(&[4, 2, 3])),
                    ],
                ),
            ],
        ),
    );
    assert_eq!(
        answers,
        vec![
            "nope-0 UNKNOWN_TOPIC_OR_PARTITION: Unable to find a topic named nope.",
            "t-9 UNKNOWN_TOPIC_OR_PARTITION: Unable to find partition t:9.",
            "t-0 NO_REASSIGNMENT_IN_PROGRESS",
            "t-0 INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes an empty \
             replica list.",
            "t-0 INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes the broker \
             1 more than once.",
            "t-0 INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes broker -1, \
             but no such broker is registered.",
            "t-0 INVALID_REPLICATION_FACTOR: The replication factor is changed from 3 to 4",
            "t-1 NONE",
            "PartitionChange v2 p1 replicas [4, 2, 3, 1] removing [1] adding [4] \
             dirs [4/1, 2/1, 3/1, 1/1]",
        ]
    );
    // While p1 moves, its replication factor is that of its target.
    assert_eq!(
        reassign(&mut c, &request(false, &[("t", &[(1, Some(&[1, 2]))])])),
        vec!["t-1 INVALID_REPLICATION_FACTOR: The replication factor is changed from 3 to 2"]
    );
}

fn assign(broker: i32, c: &Cluster, dirs: &[(Uuid, &[i32])]) -> AssignReplicasToDirsRequest {
    AssignReplicasToDirsRequest {
        broker_id: broker,
        broker_epoch: epoch(c, broker),
        directories: dirs
            .iter()
            .map(|(d, partitions)| dirs_request::DirectoryData {
                id: *d,
                topics: vec![dirs_request::TopicData {
                    topic_id: TOPIC_ID,
                    partitions: partitions
                        .iter()
                        .map(|p| dirs_request::PartitionData {
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
    }
}

/// Decides and replays an AssignReplicasToDirs: each partition's code, then the records.
fn assign_dirs(c: &mut Cluster, broker: i32, dirs: &[(Uuid, &[i32])]) -> Vec<String> {
    let r = assign(broker, c, dirs);
    let leadership = Leadership::new(c.controller.image(), &c.topics).unwrap();
    let decided = assign_replicas_to_dirs(&leadership, &r).unwrap();
    let mut out: Vec<String> = decided
        .reply
        .0
        .directories
        .iter()
        .flat_map(|d| &d.topics)
        .flat_map(|t| &t.partitions)
        .map(|p| format!("p{} {}", p.partition_index, ErrorCode(p.error_code).name()))
        .collect();
    out.extend(decided.records.iter().map(describe));
    c.write(&decided.records);
    out
}

#[test]
fn a_broker_with_two_log_directories_assigns_its_new_replicas_to_one() {
    let mut c = cluster4(2);
    // Broker 4 has two directories: its new replica is UNASSIGNED until it says where.
    assert_eq!(
        reassign(&mut c, &request(false, &[("t", &[(0, Some(&[2, 3, 4]))])]))[1],
        "PartitionChange v2 p0 replicas [2, 3, 4, 1] removing [1] adding [4] \
         dirs [2/1, 3/1, UNASSIGNED, 1/1]"
    );
    let second = dir(4, 2);
    assert_eq!(
        assign_dirs(&mut c, 4, &[(second, &[0, 1, 7])]),
        vec![
            "p0 NONE",
            "p1 NOT_LEADER_OR_FOLLOWER",
            "p7 UNKNOWN_TOPIC_OR_PARTITION",
            "PartitionChange v2 p0 dirs [2/1, 3/1, 4/2, 1/1]",
        ]
    );
    // The same again changes nothing.
    assert_eq!(assign_dirs(&mut c, 4, &[(second, &[0])]), vec!["p0 NONE"]);
}

#[test]
fn a_replica_assigned_to_an_offline_directory_leaves_the_isr_and_the_leadership() {
    let mut c = cluster4(1);
    // Broker 1 says p0's replica is in a directory it does not report online.
    let gone = dir(1, 9);
    assert_eq!(
        assign_dirs(&mut c, 1, &[(gone, &[0])]),
        vec![
            "p0 NONE",
            "PartitionChange v2 p0 dirs [1/9, 2/1, 3/1]",
            "PartitionChange v2 p0 leader 2 isr [2, 3]",
        ]
    );
}

#[test]
fn assign_replicas_to_dirs_checks_the_broker_epoch_first() {
    let c = cluster4(1);
    let leadership = Leadership::new(c.controller.image(), &c.topics).unwrap();
    let mut r = assign(1, &c, &[(dir(1, 1), &[0])]);
    r.broker_epoch -= 1;
    let e = assign_replicas_to_dirs(&leadership, &r).unwrap_err();
    assert_eq!(e.error_code(), ErrorCode::STALE_BROKER_EPOCH);
    r.broker_id = 9;
    assert_eq!(
        assign_replicas_to_dirs(&leadership, &r).unwrap_err(),
        AssignDirsError::Broker(BrokerError::NoRegistration { broker: 9 })
    );
}
