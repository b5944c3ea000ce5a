//! Snapshot records: order, version gates, losses, chunking, and load(write(image)) == image.

mod generate;
mod roundtrip;

use super::*;
use crate::controller::replication::DIRECTORY_MIGRATING;
use crate::controller::Controller;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::*;
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};

const TOPIC: Uuid = Uuid([7; 16]);

fn feature(name: &str, level: i16) -> MetadataRecord {
    FeatureLevelRecord {
        name: name.into(),
        feature_level: level,
        ..Default::default()
    }
    .into()
}

fn image_of(records: &[MetadataRecord]) -> MetadataImage {
    let mut image = MetadataImage::default();
    for r in records {
        image.replay(r).unwrap();
    }
    image
}

fn options(level: i16, elr_enabled: bool) -> SnapshotOptions {
    SnapshotOptions {
        metadata_version: MetadataVersion::from_level(level).unwrap(),
        elr_enabled,
    }
}

/// The records, their losses, and the image they load into.
fn write(
    image: &MetadataImage,
    options: SnapshotOptions,
) -> (Vec<MetadataRecordAndVersion>, Vec<Loss>, MetadataImage) {
    let mut stream = image.snapshot_records_with(options);
    let records: Vec<_> = stream.by_ref().collect();
    let values = records.iter().map(|r| r.encode().unwrap());
    let mut c = Controller::new();
    c.load_snapshot(41, values).unwrap();
    (records, stream.losses().to_vec(), c.image().clone())
}

fn broker(id: i32, dirs: Vec<Uuid>, cordoned: Option<Vec<Uuid>>) -> MetadataRecord {
    RegisterBrokerRecord {
        broker_id: id,
        broker_epoch: 100 + id as i64,
        incarnation_id: Uuid([id as u8; 16]),
        rack: None,
        log_dirs: dirs,
        cordoned_log_dirs: cordoned,
        ..Default::default()
    }
    .into()
}

fn partition(id: i32, dirs: Vec<Uuid>, elr: Option<Vec<i32>>) -> MetadataRecord {
    PartitionRecord {
        partition_id: id,
        topic_id: TOPIC,
        replicas: vec![1, 2],
        isr: vec![1],
        leader: 1,
        leader_epoch: 3,
        partition_epoch: 4,
        directories: dirs,
        eligible_leader_replicas: elr,
        ..Default::default()
    }
    .into()
}

fn topic() -> MetadataRecord {
    TopicRecord {
        name: "orders".into(),
        topic_id: TOPIC,
        ..Default::default()
    }
    .into()
}

fn kinds(records: &[MetadataRecordAndVersion]) -> Vec<(&'static str, i16)> {
    records
        .iter()
        .map(|r| (r.record.schema_name(), r.version))
        .collect()
}

#[test]
fn the_stream_owns_its_image_so_another_thread_can_write_it() {
    fn sendable<T: Send + 'static>(_: &T) {}
    let mut image = image_of(&[feature("metadata.version", 33), topic()]);
    let stream = image.snapshot_records().unwrap();
    sendable(&stream);
    // Replay goes on; the stream still writes the image as it was.
    image.replay(&partition(0, vec![], None)).unwrap();
    let kinds: Vec<_> = stream.map(|r| r.record.schema_name()).collect();
    assert_eq!(kinds, vec!["FeatureLevelRecord", "TopicRecord"]);
}

#[test]
fn an_image_without_a_metadata_version_cannot_be_snapshot() {
    let image = image_of(&[topic()]);
    assert_eq!(
        image.snapshot_records().err(),
        Some(SnapshotError::NoMetadataVersion)
    );
}

#[test]
fn the_parts_come_in_java_image_writer_order_with_metadata_version_first() {
    let image = image_of(&[
        topic(),
        partition(0, vec![], None),
        ConfigRecord {
            resource_type: 4,
            resource_name: "".into(),
            name: "min.insync.replicas".into(),
            value: Some("2".into()),
            ..Default::default()
        }
        .into(),
        feature("group.version", 1),
        broker(1, vec![Uuid([1; 16])], None),
        feature("metadata.version", 33),
        ProducerIdsRecord {
            broker_id: 1,
            broker_epoch: 101,
            next_producer_id: 2000,
            ..Default::default()
        }
        .into(),
        feature("a.feature", 2),
    ]);
    let (records, losses, loaded) = write(&image, SnapshotOptions::for_image(&image).unwrap());
    assert_eq!(
        kinds(&records),
        vec![
            ("FeatureLevelRecord", 0),
            ("FeatureLevelRecord", 0),
            ("FeatureLevelRecord", 0),
            ("RegisterBrokerRecord", 4),
            ("TopicRecord", 0),
            ("PartitionRecord", 2),
            ("ConfigRecord", 0),
            ("ProducerIdsRecord", 0),
        ]
    );
    let MetadataRecord::FeatureLevel(first) = &records[0].record else {
        panic!("{records:?}");
    };
    assert_eq!(
        (first.name.as_str(), first.feature_level),
        ("metadata.version", 33)
    );
    let MetadataRecord::ProducerIds(ids) = &records[7].record else {
        panic!("{records:?}");
    };
    assert_eq!(
        (ids.broker_id, ids.broker_epoch, ids.next_producer_id),
        (-1, -1, 2000)
    );
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(loaded, image);
}

#[test]
fn no_producer_ids_record_until_an_id_block_was_handed_out() {
    let image = image_of(&[feature("metadata.version", 25)]);
    let (records, _, loaded) = write(&image, SnapshotOptions::for_image(&image).unwrap());
    assert_eq!(kinds(&records), vec![("FeatureLevelRecord", 0)]);
    assert_eq!(loaded.producer_ids.next_producer_id, -1);
}

#[test]
fn record_versions_follow_the_metadata_version() {
    let image = image_of(&[
        feature("metadata.version", 33),
        broker(1, vec![], None),
        topic(),
        partition(0, vec![], None),
    ]);
    let at = |level| {
        let (records, losses, _) = write(&image, options(level, false));
        assert!(losses.is_empty(), "{losses:?}");
        kinds(&records)[1..].to_vec()
    };
    let expect = |broker, partition| {
        vec![
            ("RegisterBrokerRecord", broker),
            ("TopicRecord", 0),
            ("PartitionRecord", partition),
        ]
    };
    assert_eq!(at(7), expect(1, 0));
    assert_eq!(at(16), expect(2, 0));
    assert_eq!(at(17), expect(3, 1));
    assert_eq!(at(23), expect(3, 2));
    assert_eq!(at(30), expect(4, 2));
}

#[test]
fn elr_is_written_only_when_enabled_and_not_empty() {
    let image = image_of(&[
        feature("metadata.version", 33),
        feature(ELR_FEATURE, 1),
        topic(),
        partition(0, vec![], Some(vec![2])),
        partition(1, vec![], Some(vec![])),
    ]);
    let (records, losses, loaded) = write(&image, SnapshotOptions::for_image(&image).unwrap());
    let partitions: Vec<&PartitionRecord> = records
        .iter()
        .filter_map(|r| match &r.record {
            MetadataRecord::Partition(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(partitions[0].eligible_leader_replicas, Some(vec![2]));
    assert_eq!(
        partitions[1].eligible_leader_replicas, None,
        "empty is left null"
    );
    assert_eq!(partitions[1].last_known_elr, None);
    assert!(losses.is_empty());
    assert_eq!(loaded, image);

    // ELR off: Java leaves the lists out; here that is a reported loss.
    let (records, losses, loaded) = write(&image, options(33, false));
    assert!(records.iter().all(|r| match &r.record {
        MetadataRecord::Partition(p) => p.eligible_leader_replicas.is_none(),
        _ => true,
    }));
    assert_eq!(
        losses.iter().map(|l| &l.what).collect::<Vec<_>>(),
        vec![&Lost::PartitionElr {
            topic_id: TOPIC,
            partition: 0
        }]
    );
    assert!(loaded.topics.by_id[&TOPIC].partitions[&0].elr.is_empty());
}

#[test]
fn directories_below_3_7_iv2_are_lost_unless_migrating() {
    let dir = Uuid([9; 16]);
    let image = image_of(&[
        feature("metadata.version", 33),
        broker(1, vec![dir], Some(vec![dir])),
        topic(),
        partition(0, vec![dir, DIRECTORY_MIGRATING], None),
        partition(1, vec![], None),
    ]);
    let (records, losses, loaded) = write(&image, options(16, false));
    let lost: Vec<Lost> = losses.iter().map(|l| l.what.clone()).collect();
    assert_eq!(
        lost,
        vec![
            Lost::BrokerDirectories { broker: 1 },
            Lost::CordonedDirectories { broker: 1 },
            Lost::PartitionDirectories {
                topic_id: TOPIC,
                partition: 0
            },
        ]
    );
    assert!(losses[0].to_string().contains("3.7-IV1:"), "{}", losses[0]);
    assert!(
        losses[0].to_string().contains("3.7-IV2 or later"),
        "{}",
        losses[0]
    );
    assert_eq!(kinds(&records)[1], ("RegisterBrokerRecord", 2));
    let p = &loaded.topics.by_id[&TOPIC].partitions;
    assert_eq!(p[&0].directories, vec![DIRECTORY_MIGRATING; 2]);
    assert_eq!(p[&1].directories, vec![DIRECTORY_MIGRATING; 2]);
    assert!(loaded.cluster.brokers[&1].directories.is_empty());
    assert_eq!(loaded.cluster.brokers[&1].cordoned_directories, None);
}

#[test]
fn controllers_scram_and_tokens_below_their_versions_are_lost_whole() {
    let image = image_of(&[
        feature("metadata.version", 33),
        RegisterControllerRecord {
            controller_id: 3000,
            ..Default::default()
        }
        .into(),
        UserScramCredentialRecord {
            name: "alice".into(),
            mechanism: 1,
            iterations: 4096,
            ..Default::default()
        }
        .into(),
        DelegationTokenRecord {
            token_id: "t1".into(),
            owner: "User:alice".into(),
            ..Default::default()
        }
        .into(),
    ]);
    let (records, losses, loaded) = write(&image, options(10, false));
    assert_eq!(kinds(&records), vec![("FeatureLevelRecord", 0)]);
    let lost: Vec<Lost> = losses.iter().map(|l| l.what.clone()).collect();
    assert_eq!(
        lost,
        vec![
            Lost::ControllerRegistrations { count: 1 },
            Lost::ScramCredentials { count: 1 },
            Lost::DelegationTokens { count: 1 },
        ]
    );
    assert_eq!(loaded.features.metadata_version(), Some(10));
    assert!(loaded.cluster.controllers.is_empty());

    let (records, losses, loaded) = write(&image, options(15, false));
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(records.len(), 4);
    assert_eq!(loaded.features.metadata_version(), Some(15));
    assert_eq!(loaded.cluster, image.cluster);
    assert_eq!(loaded.scram, image.scram);
    assert_eq!(loaded.delegation_tokens, image.delegation_tokens);
}

#[test]
fn a_stream_longer_than_a_chunk_resumes_where_it_stopped() {
    // Several chunks in each nested part, with the chunk boundary falling inside a topic.
    let mut records = vec![feature("metadata.version", 33)];
    for t in 0..3u8 {
        let topic_id = Uuid([t + 1; 16]);
        records.push(
            TopicRecord {
                name: format!("t{t}"),
                topic_id,
                ..Default::default()
            }
            .into(),
        );
        for p in 0..1500 {
            records.push(
                PartitionRecord {
                    partition_id: p,
                    topic_id,
                    replicas: vec![1],
                    isr: vec![1],
                    leader: 1,
                    ..Default::default()
                }
                .into(),
            );
        }
    }
    for b in 0..2100 {
        records.push(
            ConfigRecord {
                resource_type: 4,
                resource_name: (b % 3).to_string(),
                name: format!("k{b}"),
                value: Some("v".into()),
                ..Default::default()
            }
            .into(),
        );
    }
    let image = image_of(&records);
    let (written, losses, loaded) = write(&image, SnapshotOptions::for_image(&image).unwrap());
    assert!(losses.is_empty());
    assert_eq!(written.len(), 1 + 3 + 4500 + 2100);
    assert_eq!(loaded, image);
}

/// The snapshot is the state, not the history: 10,000 NoOps and 1,000 changes of one config key
/// leave one ConfigRecord for it (the log's history minus NoOps would hold 1,000).
#[test]
fn a_snapshot_holds_one_record_per_key_whatever_the_history() {
    let mut history = vec![feature("metadata.version", 33), topic()];
    for i in 0..11_000 {
        history.push(if i % 11 == 10 {
            ConfigRecord {
                resource_type: 2,
                resource_name: "orders".into(),
                name: "retention.ms".into(),
                value: Some(i.to_string()),
                ..Default::default()
            }
            .into()
        } else {
            NoOpRecord::default().into()
        });
    }
    let values: Vec<Vec<u8>> = history
        .iter()
        .map(|r| {
            MetadataRecordAndVersion::new(r.clone(), 0)
                .encode()
                .unwrap()
        })
        .collect();
    let mut c = Controller::new();
    c.replay_committed_batch(0, &values).unwrap();
    let (offset, stream) = c.snapshot().unwrap();
    assert_eq!(offset, 11_001);
    let records: Vec<_> = stream.collect();
    let configs: Vec<&ConfigRecord> = records
        .iter()
        .filter_map(|r| match &r.record {
            MetadataRecord::Config(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(configs.len(), 1);
    assert_eq!(configs[0].value.as_deref(), Some("10999"));
    assert_eq!(
        kinds(&records),
        vec![
            ("FeatureLevelRecord", 0),
            ("TopicRecord", 0),
            ("ConfigRecord", 0)
        ]
    );
}
