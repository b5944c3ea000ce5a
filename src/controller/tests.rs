//! Replay, rollback and transactions, one transcript each: records in, image out.

use super::*;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::*;
use crate::protocol::records::MetadataRecord;

const TOPIC: Uuid = Uuid([7; 16]);

fn topic(name: &str) -> MetadataRecord {
    TopicRecord {
        name: name.into(),
        topic_id: TOPIC,
        ..Default::default()
    }
    .into()
}

fn partition(id: i32, replicas: &[i32]) -> MetadataRecord {
    PartitionRecord {
        partition_id: id,
        topic_id: TOPIC,
        replicas: replicas.to_vec(),
        isr: replicas.to_vec(),
        leader: replicas[0],
        leader_epoch: 0,
        partition_epoch: 0,
        ..Default::default()
    }
    .into()
}

fn isr_change(id: i32, isr: &[i32]) -> MetadataRecord {
    PartitionChangeRecord {
        partition_id: id,
        topic_id: TOPIC,
        isr: Some(isr.to_vec()),
        ..Default::default()
    }
    .into()
}

fn config(name: &str, value: Option<&str>) -> MetadataRecord {
    ConfigRecord {
        resource_type: 2,
        resource_name: "orders".into(),
        name: name.into(),
        value: value.map(Into::into),
        ..Default::default()
    }
    .into()
}

fn encode(r: &MetadataRecord) -> Vec<u8> {
    MetadataRecordAndVersion::new(r.clone(), r.info().highest_version)
        .encode()
        .unwrap()
}

fn committed(records: &[MetadataRecord]) -> Controller {
    let mut c = Controller::new();
    let values: Vec<Vec<u8>> = records.iter().map(encode).collect();
    c.replay_committed_batch(0, &values).unwrap();
    c.check().unwrap();
    c
}

#[test]
fn a_follower_replays_a_topic_its_partitions_and_their_changes() {
    let c = committed(&[
        topic("orders"),
        partition(0, &[1, 2, 3]),
        partition(1, &[2, 3, 1]),
        isr_change(0, &[1, 2]),
        config("retention.ms", Some("1000")),
    ]);
    let t = &c.image().topics.by_id[&TOPIC];
    assert_eq!(&*t.name, "orders");
    let p0 = &t.partitions[&0];
    assert_eq!(p0.isr, vec![1, 2]);
    assert_eq!(
        p0.partition_epoch, 1,
        "every change bumps the partition epoch"
    );
    assert_eq!(p0.leader_epoch, 0, "an ISR change leaves the leader epoch");
    assert_eq!(
        p0.directories,
        vec![replication::DIRECTORY_MIGRATING; 3],
        "v0 records: Java fills MIGRATING"
    );
    assert_eq!(
        c.image().configs.resources[&(2, "orders".to_string())]["retention.ms"],
        "1000"
    );
    assert_eq!(c.last_applied(), 4);
    assert_eq!(c.stable_offset(), 4);
    assert!(c.timeline.kept().is_empty(), "a follower keeps no versions");
}

#[test]
fn removing_a_topic_takes_its_configs_with_it() {
    let c = committed(&[
        topic("orders"),
        partition(0, &[1]),
        config("retention.ms", Some("1000")),
        RemoveTopicRecord {
            topic_id: TOPIC,
            ..Default::default()
        }
        .into(),
    ]);
    assert!(c.image().topics.by_id.is_empty());
    assert!(c.image().topics.by_name.is_empty());
    assert!(c.image().configs.resources.is_empty());
}

#[test]
fn a_leader_that_renounces_reverts_to_the_committed_image() {
    let mut c = committed(&[topic("orders"), partition(0, &[1, 2, 3])]);
    let committed_image = c.image().clone();
    c.replay_written_batch(
        2,
        &[
            isr_change(0, &[1]),
            config("cleanup.policy", Some("compact")),
        ],
    )
    .unwrap();
    c.replay_written_batch(4, &[partition(1, &[3, 1, 2])])
        .unwrap();
    c.check().unwrap();
    assert_eq!(
        c.image().topics.by_id[&TOPIC].partitions.len(),
        2,
        "the leader decides against its own writes"
    );
    assert_eq!(
        c.stable_image().1,
        &committed_image,
        "reads of committed data see none of them"
    );

    c.on_committed(3); // the first batch committed, the second never will
    c.check().unwrap();
    c.renounce().unwrap();
    c.check().unwrap();
    assert_eq!(c.last_applied(), 3);
    let p0 = &c.image().topics.by_id[&TOPIC].partitions[&0];
    assert_eq!(p0.isr, vec![1], "committed writes stay");
    assert!(
        !c.image().topics.by_id[&TOPIC].partitions.contains_key(&1),
        "uncommitted writes go"
    );

    // Then it follows the new leader from there.
    let next = MetadataRecordAndVersion::new(partition(1, &[2, 3, 1]), 0)
        .encode()
        .unwrap();
    c.replay_committed_batch(4, &[next]).unwrap();
    assert_eq!(
        c.image().topics.by_id[&TOPIC].partitions[&1].replicas,
        vec![2, 3, 1]
    );
    c.check().unwrap();
}

#[test]
fn renouncing_with_nothing_uncommitted_changes_nothing() {
    let mut c = committed(&[topic("orders"), partition(0, &[1])]);
    let before = c.image().clone();
    c.renounce().unwrap();
    assert_eq!(c.image(), &before);
    assert_eq!(c.last_applied(), 1);
}

#[test]
fn an_aborted_transaction_leaves_the_image_as_before_it_began() {
    let mut c = committed(&[topic("orders")]);
    let before = c.image().clone();
    let records = [
        BeginTransactionRecord {
            name: Some("bootstrap".into()),
            ..Default::default()
        }
        .into(),
        partition(0, &[1]),
        config("retention.ms", Some("5")),
    ];
    let values: Vec<Vec<u8>> = records
        .iter()
        .map(|r: &MetadataRecord| {
            MetadataRecordAndVersion::new(r.clone(), 0)
                .encode()
                .unwrap()
        })
        .collect();
    c.replay_committed_batch(1, &values).unwrap();
    c.check().unwrap();
    assert_eq!(c.open_transaction().map(|t| t.begun_at), Some(1));
    assert_eq!(
        c.stable_offset(),
        0,
        "the published image stops before the transaction"
    );
    assert_eq!(c.stable_image().1, &before);
    assert_eq!(
        c.image().topics.by_id[&TOPIC].partitions.len(),
        1,
        "the controller itself sees it"
    );

    let abort = MetadataRecordAndVersion::new(
        AbortTransactionRecord {
            reason: Some("Controller failover".into()),
            ..Default::default()
        },
        0,
    )
    .encode()
    .unwrap();
    c.replay_committed_batch(4, &[abort]).unwrap();
    c.check().unwrap();
    assert_eq!(c.image(), &before);
    assert_eq!(c.open_transaction(), None);
    assert_eq!(c.last_applied(), 4);
    assert_eq!(c.stable_offset(), 4);
}

#[test]
fn an_ended_transaction_is_published_whole() {
    let c = committed(&[
        topic("orders"),
        BeginTransactionRecord {
            name: Some("t".into()),
            ..Default::default()
        }
        .into(),
        partition(0, &[1]),
        EndTransactionRecord::default().into(),
    ]);
    assert_eq!(c.stable_offset(), 3);
    assert_eq!(c.stable_image().1.topics.by_id[&TOPIC].partitions.len(), 1);
}

#[test]
fn java_refuses_these_records_and_so_does_replay_naming_the_offset() {
    let cases: Vec<(Vec<MetadataRecord>, &str)> = vec![
        (vec![partition(0, &[1])], "names topic id"),
        (vec![topic("orders"), isr_change(3, &[1])], "partition 3"),
        (
            vec![RemoveTopicRecord {
                topic_id: TOPIC,
                ..Default::default()
            }
            .into()],
            "does not exist",
        ),
        (
            vec![FenceBrokerRecord {
                id: 4,
                epoch: 1,
                ..Default::default()
            }
            .into()],
            "broker 4",
        ),
        (
            vec![EndTransactionRecord::default().into()],
            "without an open transaction",
        ),
        (
            vec![FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 99,
                ..Default::default()
            }
            .into()],
            "level 99",
        ),
        (
            vec![ClearElrRecord {
                topic_name: "nope".into(),
                ..Default::default()
            }
            .into()],
            "nope",
        ),
    ];
    for (records, expect) in cases {
        let mut c = Controller::new();
        let last = records.len() as Offset - 1;
        let mut err = None;
        for (i, r) in records.iter().enumerate() {
            if let Err(e) = c.replay(r, i as Offset) {
                err = Some(e);
                break;
            }
        }
        let e = err.unwrap_or_else(|| panic!("{records:?} replayed"));
        assert_eq!(e.offset, last, "{e}");
        assert!(e.to_string().contains(expect), "{e}");
        assert_eq!(
            c.last_applied(),
            last - 1,
            "the refused record is not applied"
        );
    }
}

/// Kafka 4.4's `PartitionRegistration.merge`: a change without directories keeps the old list
/// (MIGRATING ones are refilled for the new replica count), and a list that no longer fits the
/// replicas is refused. Checked against the 4.4 jar.
#[test]
fn a_replica_change_without_directories_keeps_the_old_list() {
    let d1 = Uuid([1; 16]);
    let d2 = Uuid([2; 16]);
    let placed = |directories: Vec<Uuid>| -> MetadataRecord {
        PartitionRecord {
            partition_id: 0,
            topic_id: TOPIC,
            replicas: vec![1, 2],
            isr: vec![1, 2],
            leader: 1,
            leader_epoch: 0,
            partition_epoch: 0,
            directories,
            ..Default::default()
        }
        .into()
    };
    let reassign = |replicas: Vec<i32>| -> MetadataRecord {
        PartitionChangeRecord {
            partition_id: 0,
            topic_id: TOPIC,
            replicas: Some(replicas),
            leader: 2,
            ..Default::default()
        }
        .into()
    };
    let c = committed(&[topic("orders"), placed(vec![d1, d2]), reassign(vec![2, 3])]);
    let p0 = &c.image().topics.by_id[&TOPIC].partitions[&0];
    assert_eq!(p0.directories, vec![d1, d2]);
    assert_eq!((p0.leader, p0.leader_epoch, p0.partition_epoch), (2, 1, 1));

    let c = committed(&[topic("orders"), placed(vec![]), reassign(vec![2, 3, 4])]);
    let p0 = &c.image().topics.by_id[&TOPIC].partitions[&0];
    assert_eq!(p0.directories, vec![replication::DIRECTORY_MIGRATING; 3]);

    let mut c = Controller::new();
    c.replay(&topic("orders"), 0).unwrap();
    c.replay(&placed(vec![d1, d2]), 1).unwrap();
    let e = c.replay(&reassign(vec![2, 3, 4]), 2).unwrap_err();
    assert!(
        e.to_string().contains("3 replicas but 2 directories"),
        "{e}"
    );
}

#[test]
fn directory_ids_are_kafkas_reserved_uuids() {
    // DirectoryId in kafka-server-common 4.4: MIGRATING (0,0), UNASSIGNED (0,1), LOST (0,2),
    // printed as Kafka prints them.
    assert_eq!(
        replication::DIRECTORY_MIGRATING.to_string(),
        "AAAAAAAAAAAAAAAAAAAAAA"
    );
    assert_eq!(
        replication::DIRECTORY_UNASSIGNED.to_string(),
        "AAAAAAAAAAAAAAAAAAAAAQ"
    );
    assert_eq!(
        replication::DIRECTORY_LOST.to_string(),
        "AAAAAAAAAAAAAAAAAAAAAg"
    );
}

#[test]
fn broker_registration_changes_fence_unfence_and_shut_down() {
    let reg = RegisterBrokerRecord {
        broker_id: 1,
        broker_epoch: 10,
        fenced: true,
        log_dirs: vec![Uuid([9; 16]), Uuid([0x80; 16]), Uuid([1; 16])],
        ..Default::default()
    };
    let unfence = BrokerRegistrationChangeRecord {
        broker_id: 1,
        broker_epoch: 10,
        fenced: -1,
        ..Default::default()
    };
    let shutdown = BrokerRegistrationChangeRecord {
        broker_id: 1,
        broker_epoch: 10,
        in_controlled_shutdown: 1,
        ..Default::default()
    };
    let c = committed(&[reg.into(), unfence.into(), shutdown.into()]);
    let b = &c.image().cluster.brokers[&1];
    assert!(!b.fenced);
    assert!(b.in_controlled_shutdown);
    // Java sorts directories by signed halves: 0x80.. is negative, so it comes first.
    assert_eq!(
        b.directories,
        vec![Uuid([0x80; 16]), Uuid([1; 16]), Uuid([9; 16])]
    );

    let mut c = c;
    let stale = BrokerRegistrationChangeRecord {
        broker_id: 1,
        broker_epoch: 9,
        fenced: 1,
        ..Default::default()
    };
    let e = c.replay(&stale.into(), 3).unwrap_err();
    assert!(e.to_string().contains("epoch 9"), "{e}");
}

#[test]
fn the_supported_config_name_tables_are_sorted_for_binary_search() {
    for table in [
        config_names::TOPIC_CONFIGS,
        config_names::CLIENT_METRICS_CONFIGS,
        config_names::GROUP_CONFIGS,
    ] {
        assert!(table.windows(2).all(|w| w[0] < w[1]), "{table:?}");
    }
    assert!(configs::supported(2, "retention.ms"));
    assert!(!configs::supported(2, "no.such.config"));
    assert!(configs::supported(4, "anything.goes.for.brokers"));
    assert!(
        !configs::supported(8, "kafka.server"),
        "broker loggers are never in the image"
    );
}

#[test]
fn a_leaders_abort_that_never_commits_is_reverted_to_the_open_transaction() {
    let mut c = committed(&[topic("orders")]);
    c.replay_written_batch(
        1,
        &[
            BeginTransactionRecord {
                name: Some("t".into()),
                ..Default::default()
            }
            .into(),
            partition(0, &[1]),
        ],
    )
    .unwrap();
    c.on_committed(2);
    let inside = c.image().clone();
    c.replay_written_batch(3, &[AbortTransactionRecord::default().into()])
        .unwrap();
    assert!(
        c.image().topics.by_id[&TOPIC].partitions.is_empty(),
        "the abort reverts"
    );
    c.renounce().unwrap();
    c.check().unwrap();
    assert_eq!(c.image(), &inside, "the uncommitted abort is undone");
    assert_eq!(c.open_transaction().map(|t| t.begun_at), Some(1));
    assert_eq!(c.stable_offset(), 0);
}
