//! What a new leader reads from its log to activate (Kafka's `ActivationRecordsGenerator`,
//! whose decision is `controller::activation`): does the log hold metadata below the new
//! epoch's start, and what does the bootstrap checkpoint hold. The check runs once the leader's
//! LeaderChange is committed, when every earlier record is known.

use crate::raft::{FatalError, Offset, OffsetAndEpoch, QuorumStateStore, Raft, RaftLog};

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

/// The record values of the bootstrap checkpoint (`0-0.checkpoint`), `None` if there is none.
pub fn bootstrap_records<L: RaftLog>(log: &L) -> Result<Option<Vec<Vec<u8>>>, FatalError> {
    let Some(bootstrap) = log
        .open_snapshot(OffsetAndEpoch::new(0, 0))
        .map_err(|e| FatalError::storage(&e))?
    else {
        return Ok(None);
    };
    let values: Result<Vec<Vec<u8>>, _> = bootstrap.records().collect();
    values.map(Some).map_err(|e| FatalError::storage(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::FeatureLevelRecord;
    use crate::protocol::records::MetadataRecordAndVersion;
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

    #[test]
    fn a_formatted_empty_log_has_no_metadata_and_its_bootstrap_records_are_read_whole() {
        let records = vec![feature("metadata.version", 33), feature("group.version", 1)];
        let log = bootstrapped(records.clone());
        assert_eq!(bootstrap_records(&log).unwrap(), Some(records));
        assert!(!log_has_metadata(&observer(log), 0).unwrap());
        assert_eq!(bootstrap_records(&MemLog::new()).unwrap(), None);
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
}
