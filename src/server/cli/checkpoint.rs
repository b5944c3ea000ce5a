//! Snapshot files for the command line, streamed both ways: records go to a `.checkpoint` a
//! batch at a time, and a `.checkpoint` is loaded a batch at a time, so that neither side holds
//! a million partitions' records at once.
//!
//! The file is Kafka's (`RecordsSnapshotWriter`): a control batch with SnapshotHeader (then
//! KRaftVersion and Voters from kraft.version 1), data batches, a SnapshotFooter batch, offsets
//! from 0, every batch at the snapshot's epoch. Records are appended in groups of 1024, each
//! group kept whole in one batch of at most 8 MiB, as Java's `SnapshotEmitter` (batch size 1024)
//! feeds its `BatchAccumulator` (`MAX_BATCH_SIZE_BYTES`).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::controller::{ReplayError, SnapshotLoad};
use crate::log::fsutil::fsync_dir;
use crate::log::scan::scan_file;
use crate::log::snapshot::{file_name, id_prefix, OffsetAndEpoch, SnapshotChecker, PARTIAL_SUFFIX};
use crate::log::snapshot_io::validate_file;
use crate::log::LogError;
use crate::protocol::messages::{
    KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord, VotersRecord,
};
use crate::protocol::records::{
    BatchBuilder, BuildError, ControlRecord, MetadataRecordAndVersion, MAX_BATCH_SIZE_BYTES,
};
use crate::raft::convert::records::decode_batches;
use crate::raft::log::{ControlRecord as RaftControl, Records};

/// Records per append, as Java's `SnapshotEmitter.DEFAULT_BATCH_SIZE`.
pub const RECORDS_PER_APPEND: usize = 1024;

/// What the header batch says, besides the records.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointHeader {
    /// (end offset, epoch): the snapshot holds every offset below the end offset.
    pub id: OffsetAndEpoch,
    /// The timestamp of the last contained batch; also every batch's timestamp, so that the
    /// same image always gives the same bytes.
    pub last_contained_log_timestamp: i64,
    pub kraft_version: i16,
    pub voters: Option<VotersRecord>,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot {what} {}: {source}; check that the directory exists and is writable", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode the snapshot's records: {0}")]
    Encode(#[from] BuildError),
    #[error("{0}")]
    Log(#[from] LogError),
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

/// A `.checkpoint` being written: `append` the records, then `finish`. Dropped unfinished, it
/// removes its `.part` file.
pub struct CheckpointWriter {
    header: CheckpointHeader,
    part: PathBuf,
    path: PathBuf,
    file: Option<BufWriter<File>>,
    group: Vec<Vec<u8>>,
    group_bytes: usize,
    batch: BatchBuilder,
    records: u64,
    batches: u64,
}

/// A finished `.checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenCheckpoint {
    pub path: PathBuf,
    pub bytes: u64,
    pub records: u64,
    pub data_batches: u64,
}

impl CheckpointWriter {
    /// Starts `<id>.checkpoint` in `dir` (as `<id>.checkpoint.part` until finished).
    pub fn create(
        dir: &Path,
        header: CheckpointHeader,
    ) -> Result<CheckpointWriter, CheckpointError> {
        let path = dir.join(file_name(header.id));
        let part = dir.join(format!("{}{PARTIAL_SUFFIX}", id_prefix(header.id)));
        let file = File::create(&part).map_err(io("create", &part))?;
        let mut w = CheckpointWriter {
            part,
            path,
            file: Some(BufWriter::with_capacity(1 << 20, file)),
            group: Vec::with_capacity(RECORDS_PER_APPEND),
            group_bytes: 0,
            batch: BatchBuilder::new(0),
            records: 0,
            batches: 0,
            header,
        };
        let mut head = vec![ControlRecord::SnapshotHeader(SnapshotHeaderRecord {
            version: 0,
            last_contained_log_timestamp: w.header.last_contained_log_timestamp,
            ..Default::default()
        })];
        if w.header.kraft_version >= 1 {
            head.push(ControlRecord::KRaftVersion(KRaftVersionRecord {
                version: 0,
                k_raft_version: w.header.kraft_version,
                ..Default::default()
            }));
            head.extend(w.header.voters.clone().map(ControlRecord::KRaftVoters));
        }
        let next = w.write_control(0, &head)?;
        w.batch = w.data_batch(next);
        Ok(w)
    }

    fn data_batch(&self, base: i64) -> BatchBuilder {
        BatchBuilder::new(base).partition_leader_epoch(self.header.id.epoch)
    }

    fn write_control(
        &mut self,
        base: i64,
        records: &[ControlRecord],
    ) -> Result<i64, CheckpointError> {
        let mut b = BatchBuilder::new_control(base).partition_leader_epoch(self.header.id.epoch);
        for r in records {
            b.append_control(self.header.last_contained_log_timestamp, r)?;
        }
        self.write_batch(&b)?;
        Ok(b.next_offset())
    }

    fn write_batch(&mut self, b: &BatchBuilder) -> Result<(), CheckpointError> {
        let mut bytes = Vec::with_capacity(b.size_in_bytes());
        b.write_to(&mut bytes)?;
        let file = self.file.as_mut().expect("open until finished");
        file.write_all(&bytes).map_err(io("write", &self.part))
    }

    pub fn append(&mut self, record: &MetadataRecordAndVersion) -> Result<(), CheckpointError> {
        let value = record
            .encode()
            .map_err(|e| BuildError::Encode(e.to_string()))?;
        // ~21 bytes of record framing (varints) on top of the value.
        self.group_bytes += value.len() + 21;
        self.group.push(value);
        self.records += 1;
        if self.group.len() == RECORDS_PER_APPEND {
            self.flush_group()?;
        }
        Ok(())
    }

    /// Puts the group in the current batch, or in a new one when it would pass 8 MiB.
    fn flush_group(&mut self) -> Result<(), CheckpointError> {
        if !self.batch.is_empty()
            && self.batch.size_in_bytes() + self.group_bytes > MAX_BATCH_SIZE_BYTES
        {
            self.flush_batch()?;
        }
        let timestamp = self.header.last_contained_log_timestamp;
        for value in std::mem::take(&mut self.group) {
            self.batch.append(timestamp, None, Some(&value), &[])?;
        }
        self.group_bytes = 0;
        Ok(())
    }

    fn flush_batch(&mut self) -> Result<(), CheckpointError> {
        let next = self.data_batch(self.batch.next_offset());
        let full = std::mem::replace(&mut self.batch, next);
        self.write_batch(&full)?;
        self.batches += 1;
        Ok(())
    }

    /// Writes the last batch and the footer, syncs, renames into place and validates the file.
    pub fn finish(mut self) -> Result<WrittenCheckpoint, CheckpointError> {
        self.flush_group()?;
        if !self.batch.is_empty() {
            self.flush_batch()?;
        }
        let footer = ControlRecord::SnapshotFooter(SnapshotFooterRecord {
            version: 0,
            ..Default::default()
        });
        self.write_control(self.batch.next_offset(), &[footer])?;
        let file = self.file.take().expect("open until finished");
        let file = file.into_inner().map_err(|e| CheckpointError::Io {
            what: "write",
            path: self.part.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(io("fsync", &self.part))?;
        fs::rename(&self.part, &self.path).map_err(io("rename into place", &self.path))?;
        if let Some(dir) = self.path.parent() {
            fsync_dir(dir)?;
        }
        validate_file(&self.path)?;
        let bytes = fs::metadata(&self.path)
            .map_err(io("stat", &self.path))?
            .len();
        Ok(WrittenCheckpoint {
            path: self.path.clone(),
            bytes,
            records: self.records,
            data_batches: self.batches,
        })
    }
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = fs::remove_file(&self.part);
        }
    }
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
        checker.visit(view)?;
        for b in decode_batches(view.bytes()).map_err(|e| e.to_string())? {
            match &b.records {
                Records::Data(values) => {
                    for v in values {
                        if let Err(e) = load.replay_value(v) {
                            refused = Some(e);
                            return Err("a record does not replay".into());
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
    let summary = checker.finish().map_err(corrupt)?;
    Ok(LoadedCheckpoint {
        last_contained_log_timestamp: summary.last_contained_log_timestamp,
        kraft_version,
        voters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::MetadataImage;
    use crate::protocol::codec::Uuid;
    use crate::protocol::messages::{ConfigRecord, FeatureLevelRecord, TopicRecord};
    use crate::protocol::records::MetadataRecord;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kraftd-checkpoint-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn header(offset: i64) -> CheckpointHeader {
        CheckpointHeader {
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

    fn write(dir: &Path, image: &MetadataImage) -> WrittenCheckpoint {
        let mut w = CheckpointWriter::create(dir, header(500)).unwrap();
        for r in image.snapshot_records().unwrap() {
            w.append(&r).unwrap();
        }
        w.finish().unwrap()
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
