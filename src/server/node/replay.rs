//! What the node reads back from committed metadata until the controller state machine exists:
//! the finalized feature levels and the registered controllers. Every committed data record is
//! decoded, as a Java controller replays it; one that does not decode is logged (Java would
//! stop), never skipped silently.

use std::collections::BTreeMap;

use tracing::error;

use crate::protocol::codec::Uuid;
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use crate::raft::{Batch, Offset, Records};

#[derive(Debug, Default)]
pub struct Replay {
    /// Finalized feature levels (`FeatureLevelRecord`; level 0 removes the feature).
    pub features: BTreeMap<String, i16>,
    /// Registered controllers: id -> incarnation id (`RegisterControllerRecord`).
    pub controllers: BTreeMap<i32, Uuid>,
    /// Registered brokers: id -> incarnation id (`RegisterBrokerRecord`, until
    /// `UnregisterBrokerRecord`).
    pub brokers: BTreeMap<i32, Uuid>,
    /// Offset of the last record applied (-1: none).
    pub applied: Offset,
    /// Records that did not decode.
    pub undecodable: u64,
    /// Records replayed, by Kafka's record type name.
    pub counts: BTreeMap<&'static str, u64>,
}

impl Replay {
    pub fn new() -> Replay {
        Replay {
            applied: -1,
            ..Default::default()
        }
    }

    /// Starts over from a snapshot's records (its end offset is `end`).
    pub fn load_snapshot(
        &mut self,
        records: impl IntoIterator<Item = impl AsRef<[u8]>>,
        end: Offset,
    ) {
        *self = Replay::new();
        for value in records {
            self.apply_record(value.as_ref(), end - 1);
        }
        self.applied = end - 1;
    }

    pub fn apply_batch(&mut self, batch: &Batch) {
        if let Records::Data(values) = &batch.records {
            for (i, value) in values.iter().enumerate() {
                self.apply_record(value, batch.base_offset + i as Offset);
            }
        }
        self.applied = batch.last_offset();
    }

    fn apply_record(&mut self, value: &[u8], offset: Offset) {
        match MetadataRecordAndVersion::decode(value) {
            Ok(r) => {
                *self.counts.entry(r.record.kafka_name()).or_default() += 1;
                self.apply(r.record)
            }
            Err(e) => {
                self.undecodable += 1;
                error!(
                    target: "kraftd::raft",
                    "committed metadata record at offset {offset} does not decode: {e}; a Java controller would stop here"
                );
            }
        }
    }

    fn apply(&mut self, record: MetadataRecord) {
        match record {
            MetadataRecord::FeatureLevel(f) => {
                if f.feature_level == 0 {
                    self.features.remove(&f.name);
                } else {
                    self.features.insert(f.name, f.feature_level);
                }
            }
            MetadataRecord::RegisterController(c) => {
                self.controllers.insert(c.controller_id, c.incarnation_id);
            }
            MetadataRecord::UnregisterController(c) => {
                self.controllers.remove(&c.controller_id);
            }
            MetadataRecord::RegisterBroker(b) => {
                self.brokers.insert(b.broker_id, b.incarnation_id);
            }
            MetadataRecord::UnregisterBroker(b) => {
                self.brokers.remove(&b.broker_id);
            }
            _ => {}
        }
    }

    /// The finalized `metadata.version` level, if any.
    pub fn metadata_version(&self) -> Option<i16> {
        self.features.get("metadata.version").copied()
    }
}
