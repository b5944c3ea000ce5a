//! Arbitrary record sequences for the controller, drawn from a small vocabulary so that most of
//! them replay (few topic ids, partitions and brokers), plus raw bytes for the decoder. Used by
//! the fuzz target and by a property test (src/fuzzing.rs).

use crate::protocol::codec::Uuid;
use crate::protocol::messages::*;
use crate::protocol::records::MetadataRecord;

/// Reads small numbers from the fuzzer's bytes; runs dry as zeros.
pub struct Draw<'a>(pub &'a [u8]);

impl Draw<'_> {
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    pub fn below(&mut self, n: u8) -> u8 {
        self.byte() % n
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn ids(&mut self, max: u8) -> Vec<i32> {
        let n = self.below(4);
        (0..n).map(|_| self.below(max) as i32).collect()
    }
}

fn topic_id(d: &mut Draw) -> Uuid {
    Uuid([d.below(3) + 1; 16])
}

/// One record from the vocabulary.
pub fn record(d: &mut Draw) -> MetadataRecord {
    match d.below(16) {
        0 => TopicRecord {
            name: format!("t{}", d.below(3)),
            topic_id: topic_id(d),
            ..Default::default()
        }
        .into(),
        1 => {
            let replicas = d.ids(4);
            PartitionRecord {
                partition_id: d.below(3) as i32,
                topic_id: topic_id(d),
                isr: replicas.clone(),
                leader: replicas.first().copied().unwrap_or(-1),
                leader_epoch: 0,
                partition_epoch: 0,
                directories: if d.below(2) == 0 {
                    Vec::new()
                } else {
                    replicas.iter().map(|r| Uuid([*r as u8; 16])).collect()
                },
                replicas,
                ..Default::default()
            }
            .into()
        }
        2 => PartitionChangeRecord {
            partition_id: d.below(3) as i32,
            topic_id: topic_id(d),
            isr: (d.below(2) == 0).then(|| d.ids(4)),
            replicas: (d.below(3) == 0).then(|| d.ids(4)),
            leader: d.below(5) as i32 - 2,
            eligible_leader_replicas: (d.below(2) == 0).then(|| d.ids(4)),
            ..Default::default()
        }
        .into(),
        3 => RemoveTopicRecord {
            topic_id: topic_id(d),
            ..Default::default()
        }
        .into(),
        4 => ConfigRecord {
            resource_type: [2, 4, 8][d.below(3) as usize],
            resource_name: format!("t{}", d.below(3)),
            name: ["retention.ms", "cleanup.policy", "x.y"][d.below(3) as usize].into(),
            value: (d.below(3) != 0).then(|| d.byte().to_string()),
            ..Default::default()
        }
        .into(),
        5 => RegisterBrokerRecord {
            broker_id: d.below(4) as i32,
            broker_epoch: d.below(3) as i64,
            fenced: d.below(2) == 0,
            ..Default::default()
        }
        .into(),
        6 => BrokerRegistrationChangeRecord {
            broker_id: d.below(4) as i32,
            broker_epoch: d.below(3) as i64,
            fenced: d.below(4) as i8 - 1,
            in_controlled_shutdown: d.below(3) as i8,
            ..Default::default()
        }
        .into(),
        7 => FeatureLevelRecord {
            name: ["metadata.version", "group.version"][d.below(2) as usize].into(),
            feature_level: [0, 7, 33, 99][d.below(4) as usize],
            ..Default::default()
        }
        .into(),
        8 => BeginTransactionRecord::default().into(),
        9 => EndTransactionRecord::default().into(),
        10 => AbortTransactionRecord::default().into(),
        11 => ClearElrRecord {
            topic_name: ["", "t0", "t1"][d.below(3) as usize].into(),
            ..Default::default()
        }
        .into(),
        12 => AccessControlEntryRecord {
            id: Uuid([d.below(3); 16]),
            ..Default::default()
        }
        .into(),
        13 => RemoveAccessControlEntryRecord {
            id: Uuid([d.below(3); 16]),
            ..Default::default()
        }
        .into(),
        14 => ClientQuotaRecord {
            key: "producer_byte_rate".into(),
            value: d.byte() as f64,
            remove: d.below(2) == 0,
            ..Default::default()
        }
        .into(),
        _ => UnregisterBrokerRecord {
            broker_id: d.below(4) as i32,
            ..Default::default()
        }
        .into(),
    }
}
