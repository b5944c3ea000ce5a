//! Leadership transcripts: three brokers (1, 2, 3) registered and unfenced under a controller
//! that replays what it decides, a topic `t` whose partition 0 has replicas [1, 2, 3], then
//! brokers fenced, unfenced, shut down and unregistered, AlterPartition and elections, each
//! shown as the records decided.

use super::alter_partition::alter_partition;
use super::elections::{elect_leaders, ElectionOutcome};
use super::*;
use crate::controller::brokers::tests::{beat, describe, registration, Cluster};
use crate::controller::brokers::{expire_one, unregister_broker, Expiry};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use crate::protocol::messages::{
    AlterPartitionRequest, ConfigRecord, FeatureLevelRecord, PartitionRecord, TopicRecord,
};
use crate::protocol::records::MetadataRecord;

pub(super) const TOPIC_ID: Uuid = Uuid([7; 16]);

/// Brokers 1-3 registered (epochs 10, 11, 12) and unfenced; ELR on or off; the cluster's
/// `min.insync.replicas` at `min_isr`; topic `t` with partitions [1,2,3], [2,3,1], [3,1,2]
/// all in sync, each led by its first replica.
pub(super) fn cluster(elr: bool, min_isr: i32) -> Cluster {
    let mut c = Cluster::new();
    for id in 1..=3 {
        c.register(&registration(id, 1)).unwrap();
    }
    for id in 1..=3 {
        let epoch = c.controller.image().cluster.brokers[&id].epoch;
        c.heartbeat(beat(id, epoch, 100, false, false)).unwrap();
    }
    let mut records: Vec<MetadataRecord> = vec![
        FeatureLevelRecord {
            name: ELR_FEATURE.into(),
            feature_level: i16::from(elr),
            ..Default::default()
        }
        .into(),
        ConfigRecord {
            resource_type: 4,
            resource_name: String::new(),
            name: "min.insync.replicas".into(),
            value: Some(min_isr.to_string()),
            ..Default::default()
        }
        .into(),
        TopicRecord {
            name: "t".into(),
            topic_id: TOPIC_ID,
            ..Default::default()
        }
        .into(),
    ];
    for (p, replicas) in [[1, 2, 3], [2, 3, 1], [3, 1, 2]].into_iter().enumerate() {
        let b = &c.controller.image().cluster.brokers;
        records.push(
            PartitionRecord {
                partition_id: p as i32,
                topic_id: TOPIC_ID,
                replicas: replicas.to_vec(),
                isr: replicas.to_vec(),
                leader: replicas[0],
                leader_epoch: 0,
                partition_epoch: 0,
                directories: replicas.iter().map(|r| b[r].directories[0]).collect(),
                ..Default::default()
            }
            .into(),
        );
    }
    let offset = c.next_offset;
    c.controller.replay_written_batch(offset, &records).unwrap();
    c.next_offset += records.len() as i64;
    c
}

pub(super) fn epoch(c: &Cluster, broker: i32) -> i64 {
    c.controller.image().cluster.brokers[&broker].epoch
}

/// The records of a heartbeat that changes `broker`'s state, described.
fn beat_changes(
    c: &mut Cluster,
    broker: i32,
    want_fence: bool,
    want_shut_down: bool,
) -> Vec<String> {
    let e = epoch(c, broker);
    c.heartbeat(beat(broker, e, 1000, want_fence, want_shut_down))
        .unwrap()
        .1
}

pub(super) fn partition(c: &Cluster, p: i32) -> PartitionRegistration {
    (*c.controller.image().topics.by_id[&TOPIC_ID].partitions[&p]).clone()
}

#[test]
fn a_fenced_broker_leaves_every_isr_and_its_leaderships_move_to_the_next_in_sync_replica() {
    let mut c = cluster(false, 1);
    // Broker 2 asks to be fenced: p1, which it led, goes to 3; it leaves every ISR.
    assert_eq!(
        beat_changes(&mut c, 2, true, false),
        vec![
            "PartitionChange v2 p0 isr [1, 3]",
            "PartitionChange v2 p1 leader 3 isr [3, 1]",
            "PartitionChange v2 p2 isr [3, 1]",
            "RegistrationChange v0 broker 2 epoch 11 fenced 1 shutdown 0",
        ]
    );
    let p1 = partition(&c, 1);
    assert_eq!((p1.leader, p1.leader_epoch, p1.partition_epoch), (3, 1, 1));
}

#[test]
fn without_elr_the_last_isr_member_stays_in_the_isr_and_leads_again_once_unfenced() {
    let mut c = cluster(false, 1);
    beat_changes(&mut c, 2, true, false);
    beat_changes(&mut c, 3, true, false);
    // Broker 1 is the last one in sync: fenced, p0 has no leader but keeps its ISR [1].
    assert_eq!(
        beat_changes(&mut c, 1, true, false),
        vec![
            "PartitionChange v2 p0 leader -1",
            "PartitionChange v2 p1 leader -1",
            "PartitionChange v2 p2 leader -1",
            "RegistrationChange v0 broker 1 epoch 10 fenced 1 shutdown 0",
        ]
    );
    assert_eq!(partition(&c, 0).isr, vec![1]);
    // Broker 2 comes back first: it is in no ISR, so it leads nothing.
    assert_eq!(
        beat_changes(&mut c, 2, false, false),
        vec!["RegistrationChange v0 broker 2 epoch 11 fenced -1 shutdown 0"]
    );
    // Broker 1 comes back: it leads every partition again.
    assert_eq!(
        beat_changes(&mut c, 1, false, false),
        vec![
            "RegistrationChange v0 broker 1 epoch 10 fenced -1 shutdown 0",
            "PartitionChange v2 p0 leader 1",
            "PartitionChange v2 p1 leader 1",
            "PartitionChange v2 p2 leader 1",
        ]
    );
}

#[test]
fn with_elr_replicas_that_leave_the_isr_below_min_isr_stay_eligible_leaders() {
    let mut c = cluster(true, 2);
    beat_changes(&mut c, 3, true, false);
    // Two of three in sync: at min ISR, nothing is eligible yet.
    assert!(partition(&c, 0).elr.is_empty());
    // Broker 2 goes too: the ISR [1] is below min ISR 2, so 2 becomes an eligible leader.
    assert_eq!(
        beat_changes(&mut c, 2, true, false),
        vec![
            "PartitionChange v2 p0 isr [1] elr [2]",
            "PartitionChange v2 p1 leader 1 isr [1] elr [2]",
            "PartitionChange v2 p2 isr [1] elr [2]",
            "RegistrationChange v0 broker 2 epoch 11 fenced 1 shutdown 0",
        ]
    );
    // The last one in sync goes: the ISR is empty, the ELR keeps 1 and 2, and the last known
    // leader is remembered.
    assert_eq!(
        beat_changes(&mut c, 1, true, false)[0],
        "PartitionChange v2 p0 leader -1 isr [] elr [1, 2] lastKnownElr [1]"
    );
    // Broker 2 is unfenced: as an eligible leader it leads, alone in the ISR.
    let unfenced = beat_changes(&mut c, 2, false, false);
    assert_eq!(
        unfenced[1],
        "PartitionChange v2 p0 leader 2 isr [2] elr [1] lastKnownElr []"
    );
}

#[test]
fn a_controlled_shutdown_moves_leaderships_first_and_is_granted_once_they_are_gone() {
    let mut c = cluster(false, 1);
    let records = beat_changes(&mut c, 1, false, true);
    assert_eq!(
        records,
        vec![
            "RegistrationChange v1 broker 1 epoch 10 fenced 0 shutdown 1",
            "PartitionChange v2 p0 leader 2 isr [2, 3]",
            "PartitionChange v2 p1 isr [2, 3]",
            "PartitionChange v2 p2 isr [3, 2]",
        ]
    );
    assert!(!crate::controller::brokers::leads_partitions(
        c.controller.image(),
        1
    ));
}

#[test]
fn an_expired_session_and_an_unregistration_move_partitions_too() {
    let mut c = cluster(false, 1);
    c.now = 1_000_000;
    // Every session expired; one broker is fenced per call.
    let Expiry::Fence { broker, result, .. } =
        expire_one(c.controller.image(), &c.topics, &mut c.sessions, c.now)
    else {
        panic!("a session should have expired")
    };
    let described: Vec<String> = result.records.iter().map(describe).collect();
    assert!(
        described
            .iter()
            .filter(|r| r.starts_with("PartitionChange"))
            .count()
            == 3
    );
    c.write(&result.records);
    let other = if broker == 3 { 2 } else { 3 };
    let decided = unregister_broker(c.controller.latest_state(), &c.topics, other).unwrap();
    let described: Vec<String> = decided.records.iter().map(describe).collect();
    assert_eq!(described.len(), 4, "{described:?}");
    assert!(described[3].starts_with("UnregisterBroker"));
}

pub(super) fn alter(
    c: &Cluster,
    leader_epoch: i32,
    partition_epoch: i32,
    isr: &[i32],
) -> ErrorCode {
    let leadership = Leadership::new(c.controller.image(), &c.topics).unwrap();
    let request = AlterPartitionRequest {
        broker_id: 1,
        broker_epoch: epoch(c, 1),
        topics: vec![TopicData {
            topic_id: TOPIC_ID,
            partitions: vec![PartitionData {
                partition_index: 0,
                leader_epoch,
                partition_epoch,
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
    let decided = alter_partition(&leadership, 3, &request).unwrap();
    ErrorCode(decided.reply.0.topics[0].partitions[0].error_code)
}

#[test]
fn alter_partition_checks_epochs_leader_and_isr_in_javas_order() {
    let mut c = cluster(false, 1);
    assert_eq!(alter(&c, 1, 0, &[1, 2]), ErrorCode::NOT_CONTROLLER);
    assert_eq!(alter(&c, 0, 1, &[1, 2]), ErrorCode::NOT_CONTROLLER);
    assert_eq!(alter(&c, 0, 0, &[1, 2, 9]), ErrorCode::INVALID_REQUEST);
    assert_eq!(alter(&c, 0, 0, &[2, 3]), ErrorCode::INVALID_REQUEST);
    assert_eq!(alter(&c, 0, 0, &[1, 2]), ErrorCode::NONE);
    beat_changes(&mut c, 3, true, false);
    // Broker 3 is fenced now: it may not join an ISR.
    let p0 = partition(&c, 0);
    assert_eq!(
        alter(&c, p0.leader_epoch, p0.partition_epoch, &[1, 2, 3]),
        ErrorCode::INELIGIBLE_REPLICA
    );
    assert_eq!(
        alter(&c, p0.leader_epoch, p0.partition_epoch - 1, &[1, 2]),
        ErrorCode::INVALID_UPDATE_VERSION
    );
}

#[test]
fn elect_leaders_reports_per_partition_outcomes() {
    let mut c = cluster(false, 1);
    // Broker 1 shuts down and comes back: p0 is led by 2, not its preferred 1.
    beat_changes(&mut c, 1, true, false);
    beat_changes(&mut c, 1, false, false);
    let leadership = Leadership::new(c.controller.image(), &c.topics).unwrap();
    let named = vec![
        ("t".to_string(), vec![0, 1, 7]),
        ("nope".to_string(), vec![0]),
    ];
    let decided = elect_leaders(&leadership, 0, Some(&named)).unwrap();
    let outcome = |code, message: Option<&str>| ElectionOutcome {
        code,
        message: message.map(str::to_string),
    };
    assert_eq!(
        decided.reply,
        vec![
            (
                "t".to_string(),
                vec![
                    // Broker 1 is not back in the ISR yet: its leader cannot be preferred.
                    (
                        0,
                        outcome(
                            ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE,
                            Some("The preferred leader was not available.")
                        )
                    ),
                    (
                        1,
                        outcome(
                            ErrorCode::ELECTION_NOT_NEEDED,
                            Some("Leader election not needed for topic partition.")
                        )
                    ),
                    (
                        7,
                        outcome(
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                            Some("No such partition as t-7")
                        )
                    ),
                ]
            ),
            (
                "nope".to_string(),
                vec![(
                    0,
                    outcome(
                        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                        Some("No such topic as nope")
                    )
                )]
            ),
        ]
    );
    assert!(elect_leaders(&leadership, 5, None).is_err());
}

#[test]
fn a_directory_reported_offline_takes_its_replicas_out_of_isrs_and_leaderships() {
    let mut c = cluster(false, 1);
    let e = epoch(&c, 2);
    let dir = c.controller.image().cluster.brokers[&2].directories[0];
    let mut h = beat(2, e, 1000, false, false);
    h.offline_log_dirs = vec![dir];
    let (_, records) = c.heartbeat(h).unwrap();
    assert_eq!(
        records,
        vec![
            "PartitionChange v2 p0 isr [1, 3]",
            "PartitionChange v2 p1 leader 3 isr [3, 1]",
            "PartitionChange v2 p2 isr [3, 1]",
            // The directories still online (none: an empty list, which Kafka's replay reads
            // as no change).
            "RegistrationChange v2 broker 2 epoch 11 fenced 0 shutdown 0",
        ]
    );
}
