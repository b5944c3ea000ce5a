//! The leader-epoch cache (Kafka's `LeaderEpochFileCache`): for each epoch that has records, the
//! first offset written in it; and its file, `leader-epoch-checkpoint`.
//!
//! The checkpoint is text with `\n` line ends (checked against Kafka 4.4.0): a version line
//! (`0`), a count line, then `<epoch> <start offset>` lines in ascending order; written
//! atomically (`leader-epoch-checkpoint.tmp`, fsync, rename, fsync the directory).
//!
//! Java rebuilds the cache from the segments' batches at every start-up but only *adds* epochs
//! newer than the file's last one, so a wrong file would survive; the file-backed log therefore
//! rebuilds the cache from its segments on open and rewrites the file whenever it differs.

use std::path::Path;

use super::error::{LogError, Result};
use super::fsutil;

pub const CHECKPOINT_FILE_NAME: &str = "leader-epoch-checkpoint";
const CHECKPOINT_VERSION: i32 = 0;

/// `(epoch, start offset)`: epoch `epoch` starts at offset `start_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochCache {
    entries: Vec<EpochEntry>,
}

impl EpochCache {
    pub fn new() -> EpochCache {
        EpochCache::default()
    }

    pub fn from_entries(entries: Vec<EpochEntry>) -> EpochCache {
        let mut cache = EpochCache::new();
        for e in entries {
            cache.assign(e.epoch, e.start_offset);
        }
        cache
    }

    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    pub fn latest(&self) -> Option<EpochEntry> {
        self.entries.last().copied()
    }

    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    /// Records that `epoch` starts at `start_offset`, dropping entries it contradicts (an epoch
    /// at least as new, or a start offset at or after it). Returns whether the cache changed.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> bool {
        if epoch < 0 || start_offset < 0 {
            return false;
        }
        if let Some(last) = self.latest() {
            if last.epoch == epoch && start_offset >= last.start_offset {
                return false;
            }
        }
        self.entries
            .retain(|e| e.epoch < epoch && e.start_offset < start_offset);
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        true
    }

    /// Removes the entries starting at or after `end_offset` (log truncation to `end_offset`).
    pub fn truncate_from_end(&mut self, end_offset: i64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.start_offset < end_offset);
        before != self.entries.len()
    }

    /// Moves the cache's start to `start_offset` (the log start moved there): entries starting
    /// at or before it are replaced by one for the last of them, starting at `start_offset`.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> bool {
        let removed = self
            .entries
            .iter()
            .take_while(|e| e.start_offset <= start_offset)
            .count();
        if removed == 0 {
            return false;
        }
        let last_removed = self.entries[removed - 1];
        self.entries.drain(..removed);
        self.entries.insert(
            0,
            EpochEntry {
                epoch: last_removed.epoch,
                start_offset,
            },
        );
        removed > 1 || last_removed.start_offset != start_offset
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Kafka's `endOffsetFor(epoch, logEndOffset)`: `Some((epoch', end offset))` of the largest
    /// epoch ≤ `epoch` and where it ends; `None` when undefined (no larger epoch is known and
    /// `epoch` is not the latest).
    pub fn end_offset_for(&self, epoch: i32, log_end_offset: i64) -> Option<(i32, i64)> {
        if epoch < 0 {
            return None;
        }
        if self.latest_epoch() == Some(epoch) {
            return Some((epoch, log_end_offset));
        }
        let higher = self.entries.iter().find(|e| e.epoch > epoch)?;
        match self.entries.iter().rev().find(|e| e.epoch <= epoch) {
            None => Some((epoch, higher.start_offset)),
            Some(floor) => Some((floor.epoch, higher.start_offset)),
        }
    }

    /// The epoch of the record at `offset`, if the cache covers it.
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.start_offset <= offset)
            .map(|e| e.epoch)
    }
}

/// The checkpoint file's text.
pub fn to_checkpoint_text(entries: &[EpochEntry]) -> String {
    let mut out = format!("{CHECKPOINT_VERSION}\n{}\n", entries.len());
    for e in entries {
        out.push_str(&format!("{} {}\n", e.epoch, e.start_offset));
    }
    out
}

/// Why a `leader-epoch-checkpoint`'s text is not what Java writes. `read_checkpoint` names the
/// file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EpochCheckpointError {
    #[error("the file is empty")]
    Empty,
    #[error("unrecognised version '{line}' (expected {CHECKPOINT_VERSION})")]
    UnrecognisedVersion { line: String },
    #[error("missing the entry count line")]
    MissingCount,
    #[error("malformed entry count '{line}'")]
    MalformedCount { line: String },
    #[error("more entries than the declared {declared}")]
    TooManyEntries { declared: usize },
    #[error("malformed line '{line}'")]
    MalformedEntry { line: String },
    #[error("{found} entries, {declared} declared")]
    CountMismatch { found: usize, declared: usize },
}

/// Parses the checkpoint file's text as Java's `CheckpointFile` reader does.
pub fn parse_checkpoint(text: &str) -> Result<Vec<EpochEntry>, EpochCheckpointError> {
    let mut lines = text.lines();
    let version = lines.next().ok_or(EpochCheckpointError::Empty)?;
    if version.trim().parse::<i32>() != Ok(CHECKPOINT_VERSION) {
        return Err(EpochCheckpointError::UnrecognisedVersion {
            line: version.to_owned(),
        });
    }
    let count_line = lines.next().ok_or(EpochCheckpointError::MissingCount)?;
    let count: usize =
        count_line
            .trim()
            .parse()
            .map_err(|_| EpochCheckpointError::MalformedCount {
                line: count_line.to_owned(),
            })?;
    let mut entries = Vec::new();
    for line in lines.by_ref() {
        if entries.len() == count {
            return Err(EpochCheckpointError::TooManyEntries { declared: count });
        }
        let mut parts = line.split(' ');
        let parsed = match (parts.next(), parts.next(), parts.next()) {
            (Some(e), Some(o), None) => e.parse::<i32>().ok().zip(o.parse::<i64>().ok()),
            _ => None,
        };
        let (epoch, start_offset) = parsed.ok_or_else(|| EpochCheckpointError::MalformedEntry {
            line: line.to_owned(),
        })?;
        entries.push(EpochEntry {
            epoch,
            start_offset,
        });
    }
    if entries.len() != count {
        return Err(EpochCheckpointError::CountMismatch {
            found: entries.len(),
            declared: count,
        });
    }
    Ok(entries)
}

/// Reads `<dir>/leader-epoch-checkpoint`; `None` if absent.
pub fn read_checkpoint(dir: &Path) -> Result<Option<Vec<EpochEntry>>> {
    let path = dir.join(CHECKPOINT_FILE_NAME);
    match fsutil::read_if_exists(&path)? {
        None => Ok(None),
        Some(bytes) => parse_checkpoint(&String::from_utf8_lossy(&bytes))
            .map(Some)
            .map_err(|reason| LogError::corrupt(&path, None, reason.to_string())),
    }
}

/// Writes `<dir>/leader-epoch-checkpoint` atomically.
pub fn write_checkpoint(dir: &Path, entries: &[EpochEntry]) -> Result<()> {
    fsutil::atomic_write(
        &dir.join(CHECKPOINT_FILE_NAME),
        to_checkpoint_text(entries).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(epoch: i32, start_offset: i64) -> EpochEntry {
        EpochEntry {
            epoch,
            start_offset,
        }
    }

    #[test]
    fn checkpoint_text_is_javas() {
        // Kafka 4.4.0's file after two epochs: "0\n2\n1 0\n2 59\n".
        assert_eq!(
            to_checkpoint_text(&[e(1, 0), e(2, 59)]),
            "0\n2\n1 0\n2 59\n"
        );
        assert_eq!(to_checkpoint_text(&[]), "0\n0\n");
        assert_eq!(
            parse_checkpoint("0\n2\n1 0\n2 59\n").unwrap(),
            vec![e(1, 0), e(2, 59)]
        );
        for bad in [
            "",
            "1\n0\n",
            "0\n",
            "0\n2\n1 0\n",
            "0\n1\n1 0\n2 5\n",
            "0\n1\n1\n",
            "0\n1\nx 1\n",
        ] {
            assert!(parse_checkpoint(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn assign_keeps_epochs_and_offsets_monotonic() {
        let mut c = EpochCache::new();
        assert!(c.assign(1, 0));
        assert!(!c.assign(1, 5), "same epoch later: no change");
        assert!(c.assign(3, 10));
        // A leader initialising epoch 4 at offset 10 replaces epoch 3 (no records in it).
        assert!(c.assign(4, 10));
        assert_eq!(c.entries(), &[e(1, 0), e(4, 10)]);
        // A lower epoch drops every newer entry.
        assert!(c.assign(2, 12));
        assert_eq!(c.entries(), &[e(1, 0), e(2, 12)]);
    }

    #[test]
    fn end_offset_for_epoch_follows_kafka() {
        let c = EpochCache::from_entries(vec![e(1, 0), e(3, 57), e(5, 90)]);
        assert_eq!(
            c.end_offset_for(5, 100),
            Some((5, 100)),
            "latest epoch: LEO"
        );
        assert_eq!(c.end_offset_for(3, 100), Some((3, 90)));
        assert_eq!(
            c.end_offset_for(4, 100),
            Some((3, 90)),
            "missing epoch: floor"
        );
        assert_eq!(c.end_offset_for(2, 100), Some((1, 57)));
        assert_eq!(
            c.end_offset_for(0, 100),
            Some((0, 0)),
            "below the first: its start"
        );
        assert_eq!(
            c.end_offset_for(6, 100),
            None,
            "above the latest: undefined"
        );
        assert_eq!(c.end_offset_for(-1, 100), None);
        assert_eq!(EpochCache::new().end_offset_for(1, 0), None);
    }

    #[test]
    fn truncation_from_both_ends() {
        let mut c = EpochCache::from_entries(vec![e(1, 0), e(3, 57), e(5, 90)]);
        assert!(c.truncate_from_end(90));
        assert_eq!(c.entries(), &[e(1, 0), e(3, 57)]);
        assert!(c.truncate_from_start(60));
        assert_eq!(c.entries(), &[e(3, 60)]);
        assert!(!c.truncate_from_start(10));
        assert_eq!(c.epoch_for_offset(70), Some(3));
        assert_eq!(c.epoch_for_offset(10), None);
    }

    #[test]
    fn checkpoint_file_round_trip() {
        let dir = std::env::temp_dir().join(format!("kraftd-epoch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(read_checkpoint(&dir).unwrap(), None);
        write_checkpoint(&dir, &[e(1, 0), e(2, 59)]).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(CHECKPOINT_FILE_NAME)).unwrap(),
            "0\n2\n1 0\n2 59\n"
        );
        assert_eq!(
            read_checkpoint(&dir).unwrap(),
            Some(vec![e(1, 0), e(2, 59)])
        );
        std::fs::write(dir.join(CHECKPOINT_FILE_NAME), "7\n").unwrap();
        let err = read_checkpoint(&dir).unwrap_err().to_string();
        assert!(
            err.contains("leader-epoch-checkpoint") && err.contains("version"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
