//! Loading a snapshot file for the command line, streamed: a `.checkpoint` is loaded a batch
//! at a time, so that a million partitions' records are never held at once. (Writing one goes
//! through the node's own writer: `raft::SnapshotWriter::create_in` and
//! `image_snapshot::write_image`.)

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::controller::{ReplayError, SnapshotLoad};
use crate::log::scan::scan_file;
use crate::log::snapshot::{SnapshotChecker, SnapshotContentError};
use crate::protocol::messages::VotersRecord;
use crate::raft::convert::records::decode_batches;
use crate::raft::convert::ConvertError;
use crate::raft::log::{ControlRecord as RaftControl, Records};

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot {what} {}: {source}; check that the file exists and is readable", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", .path.display())]
    Replay {
        path: PathBuf,
        #[source]
        source: ReplayError,
    },
    #[error("{}: {reason}; it is not a complete KRaft checkpoint", .path.display())]
    Corrupt { path: PathBuf, reason: String },
}

fn io<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> CheckpointError + 'a {
    move |source| CheckpointError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Why loading stops at a batch of the checkpoint.
#[derive(Debug, thiserror::Error)]
enum BatchStop {
    #[error(transparent)]
    NotASnapshot(SnapshotContentError),
    #[error("{0}")]
    Undecodable(ConvertError),
    /// A record does not replay: the error is kept beside the scan.
    #[error("a record does not replay")]
    Refused,
}

/// What a loaded `.checkpoint` said besides its records.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedCheckpoint {
    pub last_contained_log_timestamp: i64,
    pub kraft_version: i16,
    pub voters: Option<VotersRecord>,
}

/// Loads the `.checkpoint` at `path` into `load` batch by batch (the file is never read whole),
/// checking its CRCs, header and footer as the log's snapshot validation does.
pub fn load_checkpoint(
    path: &Path,
    load: &mut SnapshotLoad,
) -> Result<LoadedCheckpoint, CheckpointError> {
    let file = File::open(path).map_err(io("open", path))?;
    let len = file.metadata().map_err(io("stat", path))?.len();
    let mut checker = SnapshotChecker::default();
    let (mut kraft_version, mut voters) = (0, None);
    let mut refused = None;
    let outcome = scan_file(&file, len, |_, view| {
        checker.visit(view).map_err(BatchStop::NotASnapshot)?;
        for b in decode_batches(view.bytes()).map_err(BatchStop::Undecodable)? {
            match &b.records {
                Records::Data(values) => {
                    for v in values {
                        if let Err(e) = load.replay_value(v) {
                            refused = Some(e);
                            return Err(BatchStop::Refused);
                        }
                    }
                }
                Records::Control(records) => {
                    for r in records {
                        match r {
                            RaftControl::KRaftVersion(k) => kraft_version = k.k_raft_version,
                            RaftControl::Voters(v) => voters = Some(v.clone()),
                            _ => {}
                        }
                    }
                }
            }
        }
        Ok(())
    })
    .map_err(io("read", path))?;
    let corrupt = |reason: String| CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(source) = refused {
        return Err(CheckpointError::Replay {
            path: path.to_path_buf(),
            source,
        });
    }
    if let Some(stop) = outcome.stop {
        return Err(corrupt(stop.to_string()));
    }
    let summary = checker.finish().map_err(|e| corrupt(e.to_string()))?;
    Ok(LoadedCheckpoint {
        last_contained_log_timestamp: summary.last_contained_log_timestamp,
        kraft_version,
        voters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::controller::MetadataImage;
    use crate::log::snapshot::OffsetAndEpoch;
    use crate::protocol::codec::Uuid;
    use crate::protocol::messages::{ConfigRecord, FeatureLevelRecord, TopicRecord};
    use crate::protocol::records::MetadataRecord;
    use crate::protocol::records::MAX_BATCH_SIZE_BYTES;
    use crate::raft::{SnapshotHeader, SnapshotWriter};
    use crate::server::image_snapshot::{write_image, RECORDS_PER_APPEND};

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kraftd-checkpoint-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn header(offset: i64) -> SnapshotHeader {
        SnapshotHeader {
            id: OffsetAndEpoch::new(offset, 7),
            last_contained_log_timestamp: 1_700_000_000_000,
            kraft_version: 0,
            voters: None,
        }
    }

    /// An image of `configs` broker configs with values of `value_bytes` bytes.
    fn image(configs: usize, value_bytes: usize) -> MetadataImage {
        let mut image = MetadataImage::default();
        let mv: MetadataRecord = FeatureLevelRecord {
            name: "metadata.version".into(),
            feature_level: 33,
            ..Default::default()
        }
        .into();
        image.replay(&mv).unwrap();
        let topic: MetadataRecord = TopicRecord {
            name: "t".into(),
            topic_id: Uuid([3; 16]),
            ..Default::default()
        }
        .into();
        image.replay(&topic).unwrap();
        for i in 0..configs {
            let c: MetadataRecord = ConfigRecord {
                resource_type: 4,
                resource_name: String::new(),
                name: format!("key.{i:05}"),
                value: Some("v".repeat(value_bytes)),
                ..Default::default()
            }
            .into();
            image.replay(&c).unwrap();
        }
        image
    }

    /// The image written as the node and `metadata-state --write-snapshot` write it.
    fn write(dir: &Path, image: &MetadataImage) -> Written {
        let mut w = SnapshotWriter::create_in(dir, header(500), MAX_BATCH_SIZE_BYTES).unwrap();
        write_image(&mut w, image.snapshot_records().unwrap(), 499).unwrap();
        let records = w.record_count();
        Written {
            path: w.freeze_in(dir).unwrap(),
            records,
        }
    }

    struct Written {
        path: PathBuf,
        records: u64,
    }

    /// The record count of each data batch of a checkpoint file, and its size.
    fn data_batches(path: &Path) -> Vec<(usize, usize)> {
        let bytes = fs::read(path).unwrap();
        crate::protocol::records::split_batches(&bytes)
            .batches
            .iter()
            .filter(|b| !b.is_control())
            .map(|b| (b.records().unwrap().iter().count(), b.bytes().len()))
            .collect()
    }

    #[test]
    fn a_written_checkpoint_loads_back_as_the_image() {
        let dir = scratch("roundtrip");
        let image = image(3000, 8);
        let written = write(&dir, &image);
        assert_eq!(
            written.path,
            dir.join("00000000000000000500-0000000007.checkpoint")
        );
        assert_eq!(written.records, 3002);
        assert!(!dir
            .join("00000000000000000500-0000000007.checkpoint.part")
            .exists());
        let mut load = SnapshotLoad::new(499);
        let loaded = load_checkpoint(&written.path, &mut load).unwrap();
        assert_eq!(loaded.last_contained_log_timestamp, 1_700_000_000_000);
        assert_eq!(load.image(), &image);
        // Small records: three groups, all in one batch.
        let batches = data_batches(&written.path);
        assert_eq!(batches.iter().map(|b| b.0).collect::<Vec<_>>(), vec![3002]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn groups_of_1024_records_stay_whole_in_batches_of_at_most_8_mib() {
        let dir = scratch("batches");
        // 5000 records of ~4 KiB: 20 MiB, so three batches of whole groups.
        let written = write(&dir, &image(4998, 4096));
        let batches = data_batches(&written.path);
        assert!(batches.len() >= 3, "{batches:?}");
        for (i, (records, bytes)) in batches.iter().enumerate() {
            assert!(*bytes <= MAX_BATCH_SIZE_BYTES, "{batches:?}");
            if i + 1 < batches.len() {
                assert_eq!(records % RECORDS_PER_APPEND, 0, "{batches:?}");
            }
        }
        assert_eq!(batches.iter().map(|b| b.0).sum::<usize>(), 5000);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupt_checkpoint_is_refused_naming_the_file() {
        let dir = scratch("corrupt");
        let written = write(&dir, &image(10, 8));
        let mut bytes = fs::read(&written.path).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0xff;
        let path = dir.join("00000000000000000500-0000000008.checkpoint");
        fs::write(&path, &bytes).unwrap();
        let e = load_checkpoint(&path, &mut SnapshotLoad::new(499)).unwrap_err();
        assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("0000000008.checkpoint"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
