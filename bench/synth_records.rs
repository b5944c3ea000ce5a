//! The records of a synthetic metadata image, shared by the benches that build one
//! (`image/synth_metadata_log.rs` writes them to a segment, `scrape.rs` replays them):
//! metadata.version 4.4-IV2, registered unfenced brokers with one log directory each, and
//! topics whose partitions are placed round-robin, as CreateTopics writes them.

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::register_broker_record::BrokerEndpoint;
use kraftd::protocol::messages::{
    FeatureLevelRecord, PartitionRecord, RegisterBrokerRecord, TopicRecord,
};
use kraftd::protocol::records::MetadataRecord;

/// A made-up id: `kind` apart, then `n`.
pub fn uuid(kind: u8, n: u64) -> Uuid {
    let mut b = [0u8; 16];
    b[0] = kind;
    b[8..].copy_from_slice(&n.to_be_bytes());
    Uuid(b)
}

/// metadata.version 4.4-IV2 and `brokers` registered, unfenced brokers.
pub fn setup(brokers: usize) -> Vec<MetadataRecord> {
    let mut records: Vec<MetadataRecord> = vec![FeatureLevelRecord {
        name: "metadata.version".into(),
        feature_level: 33,
        ..Default::default()
    }
    .into()];
    for b in 0..brokers {
        records.push(
            RegisterBrokerRecord {
                broker_id: b as i32,
                incarnation_id: uuid(1, b as u64),
                broker_epoch: b as i64 + 1,
                end_points: vec![BrokerEndpoint {
                    name: "PLAINTEXT".into(),
                    host: format!("broker-{b}"),
                    port: 9092,
                    security_protocol: 0,
                    ..Default::default()
                }],
                rack: None,
                fenced: false,
                log_dirs: vec![uuid(2, b as u64)],
                ..Default::default()
            }
            .into(),
        );
    }
    records
}

/// Topic number `t`: its TopicRecord and `partitions` PartitionRecords of `replicas` replicas
/// among `brokers`, each led by its first replica.
pub fn topic(t: usize, partitions: usize, replicas: usize, brokers: usize) -> Vec<MetadataRecord> {
    let topic_id = uuid(3, t as u64);
    let mut records: Vec<MetadataRecord> = vec![TopicRecord {
        name: format!("topic-{t:05}"),
        topic_id,
        ..Default::default()
    }
    .into()];
    for p in 0..partitions {
        let first = (t + p) % brokers;
        let placed: Vec<i32> = (0..replicas)
            .map(|r| ((first + r) % brokers) as i32)
            .collect();
        records.push(
            PartitionRecord {
                partition_id: p as i32,
                topic_id,
                directories: placed.iter().map(|b| uuid(2, *b as u64)).collect(),
                isr: placed.clone(),
                leader: placed[0],
                replicas: placed,
                leader_epoch: 0,
                partition_epoch: 0,
                ..Default::default()
            }
            .into(),
        );
    }
    records
}
