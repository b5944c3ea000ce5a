//! What a new leader writes before anything else when the metadata log is empty: Kafka's
//! activation records (`ActivationRecordsGenerator` for an empty log). Java 4.4 writes, in one
//! batch of the leader's epoch:
//!
//! 1. `BeginTransactionRecord("Bootstrap records")`;
//! 2. every record of the bootstrap checkpoint (`0-0.checkpoint`): the `FeatureLevelRecord`s that
//!    `kafka-storage format` chose, `metadata.version` first;
//! 3. with `eligible.leader.replicas.version` >= 1, the cluster-wide `min.insync.replicas`
//!    (`ConfigRecord`, resource type BROKER, empty name) from the controller's configuration;
//! 4. `EndTransactionRecord`.
//!
//! A Java controller that leads later finds the feature levels it needs in the log. The check
//! runs once the leader's LeaderChange is committed, when every earlier record is known.

use crate::protocol::messages::{
    BeginTransactionRecord, ConfigRecord, EndTransactionRecord, FeatureLevelRecord,
};
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use crate::raft::{FatalError, Offset, OffsetAndEpoch, QuorumStateStore, Raft, RaftLog};

/// Kafka's `ConfigResource.Type.BROKER`.
const BROKER_RESOURCE: i8 = 4;
const ELR_FEATURE: &str = "eligible.leader.replicas.version";

/// Does the log (its latest snapshot and its committed batches below `below`, the new
/// leader's epoch start) hold any metadata record? A fault reading them is the node's fatal
/// error.
pub fn log_has_metadata<L: RaftLog, S: QuorumStateStore>(
    raft: &Raft<L, S>,
    below: Offset,
) -> Result<bool, FatalError> {
    let snapshot = raft
        .latest_snapshot_reader()
        .map_err(|e| FatalError::storage(&e))?;
    if let Some(first) = snapshot
        .filter(|s| s.id().offset > 0)
        .and_then(|s| s.records().next())
    {
        first.map_err(|e| FatalError::storage(&e))?;
        return Ok(true);
    }
    let Ok(batches) = raft.committed_batches(raft.log().start_offset()) else {
        return Ok(false);
    };
    for b in batches {
        let b = b?;
        if b.base_offset >= below {
            break;
        }
        if !b.is_control() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The activation batch's records for an empty log, from the bootstrap checkpoint.
pub fn activation_records<L: RaftLog>(
    log: &L,
    min_insync_replicas: u32,
) -> Result<Vec<Vec<u8>>, String> {
    let bootstrap = log
        .open_snapshot(OffsetAndEpoch::new(0, 0))
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            "the metadata log is empty and has no bootstrap checkpoint \
             (00000000000000000000-0000000000.checkpoint): format the directory with \
             `kraftd format` or `kafka-storage.sh format`"
                .to_string()
        })?;
    let encode = |r: MetadataRecordAndVersion| r.encode().map_err(|e| e.to_string());
    let mut out = vec![encode(MetadataRecordAndVersion::new(
        BeginTransactionRecord {
            name: Some("Bootstrap records".into()),
            ..Default::default()
        },
        0,
    ))?];
    let mut elr = 0;
    for value in bootstrap.records() {
        let value = value.map_err(|e| e.to_string())?;
        let record = MetadataRecordAndVersion::decode(&value)
            .map_err(|e| format!("bootstrap checkpoint: {e}"))?;
        if let MetadataRecord::FeatureLevel(FeatureLevelRecord {
            name,
            feature_level,
            ..
        }) = &record.record
        {
            if name == ELR_FEATURE {
                elr = *feature_level;
            }
        }
        out.push(value);
    }
    if elr >= 1 {
        out.push(encode(MetadataRecordAndVersion::new(
            ConfigRecord {
                resource_type: BROKER_RESOURCE,
                resource_name: String::new(),
                name: "min.insync.replicas".into(),
                value: Some(min_insync_replicas.to_string()),
                ..Default::default()
            },
            0,
        ))?);
    }
    out.push(encode(MetadataRecordAndVersion::new(
        EndTransactionRecord::default(),
        0,
    ))?);
    Ok(out)
}

/// Data records of a batch list (tests).
#[cfg(test)]
fn data_of(batches: &[crate::raft::Batch]) -> Vec<Vec<u8>> {
    batches
        .iter()
        .filter_map(|b| match &b.records {
            crate::raft::Records::Data(d) => Some(d.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raft::mem_log::LogInspect;
    use crate::raft::{Instant, MemLog, MemQuorumStateStore, RaftConfig, SnapshotHeader};

    fn feature(name: &str, level: i16) -> Vec<u8> {
        MetadataRecordAndVersion::new(
            FeatureLevelRecord {
                name: name.into(),
                feature_level: level,
                ..Default::default()
            },
            0,
        )
        .encode()
        .unwrap()
    }

    fn bootstrapped(records: Vec<Vec<u8>>) -> MemLog {
        let mut log = MemLog::new();
        let header = SnapshotHeader {
            id: OffsetAndEpoch::new(0, 0),
            last_contained_log_timestamp: 0,
            kraft_version: 0,
            voters: None,
        };
        log.write_snapshot(header, &records).unwrap();
        log
    }

    fn observer(log: MemLog) -> Raft<MemLog, MemQuorumStateStore> {
        let cfg = RaftConfig::new(None, crate::protocol::codec::Uuid::ONE, "c");
        Raft::new(cfg, log, MemQuorumStateStore::default(), Instant(0))
    }

    fn names(records: &[Vec<u8>]) -> Vec<String> {
        records
            .iter()
            .map(|r| {
                let r = MetadataRecordAndVersion::decode(r).unwrap();
                match &r.record {
                    MetadataRecord::FeatureLevel(f) => {
                        format!("FeatureLevel {}={}", f.name, f.feature_level)
                    }
                    MetadataRecord::Config(c) => {
                        format!("Config {}={}", c.name, c.value.clone().unwrap_or_default())
                    }
                    other => other.schema_name().to_string(),
                }
            })
            .collect()
    }

    #[test]
    fn an_empty_log_gets_the_bootstrap_features_in_a_transaction_as_java_writes_them() {
        let log = bootstrapped(vec![
            feature("metadata.version", 33),
            feature(ELR_FEATURE, 1),
            feature("group.version", 1),
        ]);
        let records = activation_records(&log, 2).unwrap();
        assert!(!log_has_metadata(&observer(log), 0).unwrap());
        assert_eq!(
            names(&records),
            [
                "BeginTransactionRecord",
                "FeatureLevel metadata.version=33",
                "FeatureLevel eligible.leader.replicas.version=1",
                "FeatureLevel group.version=1",
                "Config min.insync.replicas=2",
                "EndTransactionRecord"
            ]
        );
        assert!(data_of(&[]).is_empty());
    }

    #[test]
    fn committed_data_below_the_epoch_start_is_metadata() {
        let mut log = bootstrapped(vec![feature("metadata.version", 20)]);
        log.append_as_follower(vec![crate::raft::Batch {
            base_offset: 0,
            epoch: 1,
            append_time: 0,
            records: crate::raft::Records::Data(vec![feature("metadata.version", 20)]),
            encoded: Default::default(),
        }])
        .unwrap();
        log.flush().unwrap();
        // A single voter leads at once and commits its LeaderChange at 1.
        let mut cfg = RaftConfig::new(Some(1), crate::protocol::codec::Uuid::ONE, "c");
        cfg.static_voters = vec![(1, crate::raft::HostPort::new("h", 1))];
        let raft = Raft::new(cfg, log, MemQuorumStateStore::default(), Instant(0));
        assert_eq!(raft.leader_epoch_start_offset(), Some(1));
        assert!(log_has_metadata(&raft, 1).unwrap());
        assert!(!log_has_metadata(&raft, 0).unwrap());
    }

    #[test]
    fn without_elr_there_is_no_min_insync_replicas_record() {
        let log = bootstrapped(vec![feature("metadata.version", 20)]);
        let records = activation_records(&log, 1).unwrap();
        assert_eq!(
            names(&records),
            [
                "BeginTransactionRecord",
                "FeatureLevel metadata.version=20",
                "EndTransactionRecord"
            ]
        );
    }

    #[test]
    fn a_log_without_a_bootstrap_checkpoint_cannot_be_activated() {
        let err = activation_records(&MemLog::new(), 1).unwrap_err();
        assert!(err.contains("bootstrap checkpoint"), "{err}");
    }
}
