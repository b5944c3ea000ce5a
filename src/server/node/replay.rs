//! What the node reads back from committed metadata until the controller state machine exists:
//! the finalized feature levels and the registered controllers. Every committed data record is
//! decoded, as a Java controller replays it; one that does not decode is a fatal fault naming
//! its offset (Java's controller stops there), never logged and skipped.

use std::collections::BTreeMap;

use crate::protocol::codec::Uuid;
use crate::protocol::records::metadata::MetadataRecordError;
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use crate::raft::{Batch, Offset, Records};

/// Why committed metadata cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A committed record does not decode: the metadata log is corrupt there (or written by a
    /// newer Kafka), and acting on the records after it could diverge from the quorum.
    #[error("the committed metadata record at offset {offset} does not decode: {source}; the controller stops, as Java's does: restore the metadata log from a replica")]
    Undecodable {
        offset: Offset,
        #[source]
        source: MetadataRecordError,
    },
}

impl ReplayError {
    /// The offset of the record that stopped the replay.
    pub fn offset(&self) -> Offset {
        match self {
            ReplayError::Undecodable { offset, .. } => *offset,
        }
    }
}

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

    /// Starts over from a snapshot whose end offset is `end`; its records follow, streamed,
    /// through [`Replay::apply_snapshot_record`].
    pub fn begin_snapshot(&mut self, end: Offset) {
        *self = Replay::new();
        self.applied = end - 1;
    }

    /// Applies the next record of the snapshot begun; a snapshot's records are named by its
    /// last contained offset (`end - 1`).
    pub fn apply_snapshot_record(&mut self, value: &[u8]) -> Result<(), ReplayError> {
        self.apply_record(value, self.applied)
    }

    /// Applies a committed batch; stops at the first record that does not decode (the records
    /// before it stay applied, `applied` stays before it).
    pub fn apply_batch(&mut self, batch: &Batch) -> Result<(), ReplayError> {
        if let Records::Data(values) = &batch.records {
            for (i, value) in values.iter().enumerate() {
                let offset = batch.base_offset + i as Offset;
                self.apply_record(value, offset)?;
                self.applied = offset;
            }
        }
        self.applied = batch.last_offset();
        Ok(())
    }

    fn apply_record(&mut self, value: &[u8], offset: Offset) -> Result<(), ReplayError> {
        let r = MetadataRecordAndVersion::decode(value)
            .map_err(|source| ReplayError::Undecodable { offset, source })?;
        *self.counts.entry(r.record.kafka_name()).or_default() += 1;
        self.apply(r.record);
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undecodable_committed_record_stops_the_replay_naming_its_offset() {
        let batch = Batch {
            base_offset: 7,
            epoch: 1,
            append_time: 0,
            records: Records::Data(vec![vec![0xff, 0xff, 0xff], Vec::new()]),
            encoded: Default::default(),
        };
        let mut replay = Replay::new();
        let err = replay.apply_batch(&batch).unwrap_err();
        assert_eq!(err.offset(), 7);
        assert!(err.to_string().contains("offset 7"), "{err}");
        assert_eq!(replay.applied, -1, "nothing applied past the fault");
        replay.begin_snapshot(10);
        let err = replay.apply_snapshot_record(&[0xff]).unwrap_err();
        assert_eq!(
            err.offset(),
            9,
            "a snapshot's records are at its last offset"
        );
    }
}
