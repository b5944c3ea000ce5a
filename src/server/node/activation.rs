//! What a new leader reads from its log to activate (Kafka's `ActivationRecordsGenerator`,
//! whose decision is `controller::activation`): the bootstrap checkpoint's records. Whether the
//! log holds metadata (a metadata.version) is the controller's to say, once it has replayed
//! every record before the new epoch.

use crate::raft::{FatalError, OffsetAndEpoch, RaftLog};

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
    use crate::raft::{MemLog, SnapshotHeader};

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

    #[test]
    fn the_bootstrap_records_are_read_whole() {
        let records = vec![feature("metadata.version", 33), feature("group.version", 1)];
        let log = bootstrapped(records.clone());
        assert_eq!(bootstrap_records(&log).unwrap(), Some(records));
        assert_eq!(bootstrap_records(&MemLog::new()).unwrap(), None);
    }
}
