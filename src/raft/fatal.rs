//! Why a node must stop: Kafka's raft thread halts the process on a storage fault (an fsync that
//! failed may have lost records the quorum counts on) and throws on states it cannot be in.

use std::path::PathBuf;

use super::log::LogError;
use super::quorum_state::QuorumStateError;

/// The payload of `Action::Fatal`. Its display is the one error line the node prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FatalError {
    /// Storage failed: the file, the operation and the OS error are named.
    #[error("the metadata log failed: {detail}{}; the node stops so that no acknowledged record is lost: fix the storage (free space, replace the disk) and restart", file.as_ref().map(|f| format!(" (file {})", f.display())).unwrap_or_default())]
    Storage {
        /// What the log was doing and why it failed, as the log says it.
        detail: String,
        file: Option<PathBuf>,
        /// The OS error (`No space left on device (os error 28)`), for I/O faults.
        os_error: Option<String>,
        /// The raw OS error number (ENOSPC = 28, EIO = 5), for I/O faults.
        errno: Option<i32>,
    },
    /// A committed record the node cannot apply (it does not decode): the metadata log is
    /// corrupt at `offset`.
    #[error("{detail}")]
    CorruptRecord { offset: i64, detail: String },
    /// Kafka would throw here (an illegal transition, a response that breaks the protocol).
    #[error("{0}")]
    Illegal(String),
}

impl FatalError {
    /// A failed quorum-state write: the file and the OS error named as for the log.
    pub fn quorum_state(e: &QuorumStateError) -> FatalError {
        FatalError::Storage {
            detail: e.to_string(),
            file: e.file().map(|p| p.to_path_buf()),
            os_error: e.os_error().map(|o| o.to_string()),
            errno: e.os_error().and_then(|o| o.raw_os_error()),
        }
    }

    pub fn storage(e: &LogError) -> FatalError {
        FatalError::Storage {
            detail: e.to_string(),
            file: e.file().map(|p| p.to_path_buf()),
            os_error: e.os_error().map(|o| o.to_string()),
            errno: e.os_error().and_then(|o| o.raw_os_error()),
        }
    }
}
