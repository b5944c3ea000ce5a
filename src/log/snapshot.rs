//! KRaft snapshots: ids, file names, and the checks a snapshot's bytes must pass.
//!
//! A snapshot `(end offset, epoch)` lives in `<20-digit end offset>-<10-digit epoch>.checkpoint`
//! in the partition directory. While written it is `<id>-<random digits>.checkpoint.part`
//! (Java's `Files.createTempFile(dir, "<id>-", ".checkpoint.part")`); when dropped by
//! retention it is renamed `<id>.checkpoint.deleted` before removal. Java parses characters
//! 0–19 as the offset and 21–30 as the epoch, so any suffix between the id and the extension
//! is tolerated.
//!
//! Content: v2 batches, snapshot-relative offsets. The first batch is a control batch whose
//! first record is a `SnapshotHeaderRecord`; the last is a control batch whose first record is
//! a `SnapshotFooterRecord`.

use std::fmt;

use crate::protocol::records::{
    split_batches, BatchView, ControlRecord, ControlRecordError, ErrorKind, SplitEnd,
};

pub const SUFFIX: &str = ".checkpoint";
pub const PARTIAL_SUFFIX: &str = ".checkpoint.part";
pub const DELETED_SUFFIX: &str = ".checkpoint.deleted";

/// A snapshot id, and any log position: Kafka's `OffsetAndEpoch`, ordered as its `compareTo`
/// orders it: by epoch first, then offset (so the latest snapshot is the one of the newest epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetAndEpoch {
    pub offset: i64,
    pub epoch: i32,
}

impl OffsetAndEpoch {
    pub const fn new(offset: i64, epoch: i32) -> OffsetAndEpoch {
        OffsetAndEpoch { offset, epoch }
    }
}

impl PartialOrd for OffsetAndEpoch {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OffsetAndEpoch {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.epoch, self.offset).cmp(&(other.epoch, other.offset))
    }
}

/// `offset@eEPOCH`, as the raft transcripts print positions.
impl fmt::Display for OffsetAndEpoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@e{}", self.offset, self.epoch)
    }
}

/// What a snapshot file name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotFileKind {
    Frozen,
    Partial,
    Deleted,
}

/// `<20-digit offset>-<10-digit epoch>` (Kafka's `Snapshots.filenameFromSnapshotId`).
pub fn id_prefix(id: OffsetAndEpoch) -> String {
    format!("{:020}-{:010}", id.offset, id.epoch)
}

/// `<id>.checkpoint`
pub fn file_name(id: OffsetAndEpoch) -> String {
    format!("{}{SUFFIX}", id_prefix(id))
}

/// `<id>.checkpoint.deleted`
pub fn deleted_file_name(id: OffsetAndEpoch) -> String {
    format!("{}{DELETED_SUFFIX}", id_prefix(id))
}

/// Parses a snapshot file name as Kafka's `Snapshots.parse` does; `None` for other files.
pub fn parse_file_name(name: &str) -> Option<(OffsetAndEpoch, SnapshotFileKind)> {
    let kind = if name.ends_with(SUFFIX) {
        SnapshotFileKind::Frozen
    } else if name.ends_with(PARTIAL_SUFFIX) {
        SnapshotFileKind::Partial
    } else if name.ends_with(DELETED_SUFFIX) {
        SnapshotFileKind::Deleted
    } else {
        return None;
    };
    let b = name.as_bytes();
    if b.len() < 31 || b[20] != b'-' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| {
        let s = name.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then_some(s)
    };
    let offset: i64 = digits(0..20)?.parse().ok()?;
    let epoch: i32 = digits(21..31)?.parse().ok()?;
    Some((OffsetAndEpoch { offset, epoch }, kind))
}

/// What validating a snapshot learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// The header's `LastContainedLogTimestamp` (what retention by age compares).
    pub last_contained_log_timestamp: i64,
    pub batch_count: usize,
}

/// Checks a snapshot's batches as they stream past: the first must be a control batch starting
/// with a `SnapshotHeaderRecord`, the last a control batch starting with a
/// `SnapshotFooterRecord`. (CRCs are the scanner's job.)
#[derive(Debug, Default)]
pub struct SnapshotChecker {
    batches: usize,
    header_timestamp: Option<i64>,
    last_is_footer: bool,
}

/// Why a snapshot's batches are not a snapshot. The reader names the file and the position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotContentError {
    #[error("the first batch is not a control batch starting with a SnapshotHeaderRecord")]
    NoHeader,
    #[error("the snapshot holds no batch")]
    NoBatch,
    #[error("the last batch is not a control batch starting with a SnapshotFooterRecord")]
    NoFooter,
    #[error("an empty control batch")]
    EmptyControlBatch,
    /// A batch, or a record of one, does not parse (CRC, lengths, codec).
    #[error("{0}")]
    Records(ErrorKind),
    #[error("{0}")]
    ControlRecord(ControlRecordError),
    /// The bytes end inside the last batch.
    #[error("the last batch needs {needed} bytes but only {available} are present")]
    Torn { needed: usize, available: usize },
}

/// A snapshot held in memory that is not valid, and the byte where that was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {position}: {reason}")]
pub struct InvalidSnapshot {
    pub position: u64,
    #[source]
    pub reason: SnapshotContentError,
}

impl SnapshotChecker {
    pub fn visit(&mut self, batch: &BatchView<'_>) -> Result<(), SnapshotContentError> {
        let first = first_control_record(batch)?;
        if self.batches == 0 {
            match &first {
                Some(ControlRecord::SnapshotHeader(h)) => {
                    self.header_timestamp = Some(h.last_contained_log_timestamp)
                }
                _ => return Err(SnapshotContentError::NoHeader),
            }
        }
        self.last_is_footer = matches!(first, Some(ControlRecord::SnapshotFooter(_)));
        self.batches += 1;
        Ok(())
    }

    pub fn finish(self) -> Result<SnapshotSummary, SnapshotContentError> {
        let Some(ts) = self.header_timestamp else {
            return Err(SnapshotContentError::NoBatch);
        };
        if !self.last_is_footer {
            return Err(SnapshotContentError::NoFooter);
        }
        Ok(SnapshotSummary {
            last_contained_log_timestamp: ts,
            batch_count: self.batches,
        })
    }
}

/// The first record of a control batch, decoded; `None` for a data batch.
fn first_control_record(
    batch: &BatchView<'_>,
) -> Result<Option<ControlRecord>, SnapshotContentError> {
    if !batch.is_control() {
        return Ok(None);
    }
    let records = batch
        .records()
        .map_err(|e| SnapshotContentError::Records(e.kind))?;
    let first = records
        .iter()
        .next()
        .ok_or(SnapshotContentError::EmptyControlBatch)?
        .map_err(|e| SnapshotContentError::Records(e.kind))?;
    ControlRecord::decode(first.key, first.value)
        .map(Some)
        .map_err(SnapshotContentError::ControlRecord)
}

/// Validates a whole snapshot held in memory; errors carry the byte position.
pub fn validate_bytes(bytes: &[u8]) -> Result<SnapshotSummary, InvalidSnapshot> {
    let at = |position: usize| {
        move |reason| InvalidSnapshot {
            position: position as u64,
            reason,
        }
    };
    let split = split_batches(bytes);
    let mut checker = SnapshotChecker::default();
    for b in &split.batches {
        b.validate()
            .map_err(|e| at(b.position())(SnapshotContentError::Records(e.kind)))?;
        checker.visit(b).map_err(at(b.position()))?;
    }
    match split.end {
        SplitEnd::Clean => {}
        SplitEnd::Torn {
            position,
            needed,
            available,
        } => {
            return Err(at(position)(SnapshotContentError::Torn {
                needed,
                available,
            }))
        }
        SplitEnd::Corrupt { position, error } => {
            return Err(at(position)(SnapshotContentError::Records(error.kind)))
        }
    }
    checker.finish().map_err(at(bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kafka() {
        let id = OffsetAndEpoch::new(12345, 7);
        assert_eq!(file_name(id), "00000000000000012345-0000000007.checkpoint");
        assert_eq!(
            deleted_file_name(id),
            "00000000000000012345-0000000007.checkpoint.deleted"
        );
        assert_eq!(
            parse_file_name(&file_name(id)),
            Some((id, SnapshotFileKind::Frozen))
        );
        assert_eq!(
            parse_file_name("00000000000000012345-0000000007-8812734.checkpoint.part"),
            Some((id, SnapshotFileKind::Partial))
        );
        assert_eq!(
            parse_file_name("00000000000000012345-0000000007.checkpoint.deleted"),
            Some((id, SnapshotFileKind::Deleted))
        );
        for other in [
            "00000000000000000000.log",
            "bootstrap.checkpoint",
            "0000000000000001234x-0000000007.checkpoint",
            "00000000000000012345_0000000007.checkpoint",
        ] {
            assert_eq!(parse_file_name(other), None, "{other}");
        }
        // Kafka's OffsetAndEpoch.compareTo: epoch first, then offset.
        assert!(OffsetAndEpoch::new(6, 1) < OffsetAndEpoch::new(5, 9));
        assert!(OffsetAndEpoch::new(5, 2) < OffsetAndEpoch::new(6, 2));
    }
}
