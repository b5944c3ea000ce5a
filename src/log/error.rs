//! The errors of the log module: each names the file and what went wrong.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a log operation failed.
#[derive(Debug)]
pub enum LogError {
    /// A system call failed on `path`; `op` says which ("open", "fsync", "rename", ...).
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// A file's content is not what it must be and cannot be repaired by cutting a tail
    /// (a corrupt snapshot, an unreadable `quorum-state`, a `partition.metadata` of another topic).
    Corrupt {
        path: PathBuf,
        position: Option<u64>,
        reason: String,
    },
    /// Batches handed to an append break a rule of the log (offsets, epochs, CRC, size).
    InvalidAppend(String),
    /// A read, truncation or snapshot offset outside what the log holds.
    OffsetOutOfRange { offset: i64, start: i64, end: i64 },
    /// One append larger than a log segment (Kafka's `RecordBatchTooLargeException`).
    LargerThanSegment { size: usize, segment_bytes: u64 },
    /// A request that contradicts the log's state (truncating below the high watermark,
    /// a snapshot id that is not valid for the log, log start > 0 without a snapshot...).
    InvalidState(String),
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Io { op, path, source } => {
                write!(f, "cannot {op} {}: {source}", path.display())
            }
            LogError::Corrupt {
                path,
                position: Some(p),
                reason,
            } => write!(f, "{} is corrupt at byte {p}: {reason}", path.display()),
            LogError::Corrupt {
                path,
                position: None,
                reason,
            } => write!(f, "{} is corrupt: {reason}", path.display()),
            LogError::InvalidAppend(why) => write!(f, "invalid append to the metadata log: {why}"),
            LogError::OffsetOutOfRange { offset, start, end } => write!(
                f,
                "offset {offset} is outside the metadata log [{start}, {end}]"
            ),
            LogError::LargerThanSegment {
                size,
                segment_bytes,
            } => write!(
                f,
                "an append of {size} bytes exceeds the segment size of {segment_bytes} bytes \
                 (metadata.log.segment.bytes)"
            ),
            LogError::InvalidState(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for LogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LogError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl LogError {
    /// The file this error concerns, when one is known.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LogError::Io { path, .. } | LogError::Corrupt { path, .. } => Some(path),
            _ => None,
        }
    }

    /// A closure turning an `io::Error` into [`LogError::Io`] for `op` on `path`.
    pub fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> LogError + 'a {
        move |source| LogError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn corrupt(path: &Path, position: Option<u64>, reason: impl Into<String>) -> LogError {
        LogError::Corrupt {
            path: path.to_path_buf(),
            position,
            reason: reason.into(),
        }
    }
}

pub type Result<T, E = LogError> = std::result::Result<T, E>;
