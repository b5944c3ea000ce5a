//! The vocabulary of the metadata log's byte-level operations ([`super::LogCore`]): append
//! results, read isolation and fetch answers. The raft layer reaches the log through one trait,
//! `raft::RaftLog`, implemented once over `LogCore`.
//!
//! Offsets are Kafka offsets; `epoch` is a leader epoch. Appends take whole, already-built v2
//! batches (the raft layer builds them with their final base offset and partition leader
//! epoch); reads return whole batches. Nothing is durable until `RaftLog::flush` returns: a
//! crash loses the unflushed tail, never anything below `RaftLog::flushed_end_offset`.

pub use super::snapshot::OffsetAndEpoch;
pub use super::snapshot_io::{RawSnapshotReader, RawSnapshotWriter};

/// The offsets an append wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAppendInfo {
    pub first_offset: i64,
    pub last_offset: i64,
}

/// Which records a read may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Only batches entirely below the high watermark.
    Committed,
    /// Everything up to the log end offset.
    Uncommitted,
}

/// What a read returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFetchInfo {
    /// Whole batches, starting with the one holding the requested offset; empty at the end.
    pub records: Vec<u8>,
    /// The offset that was asked for.
    pub start_offset: i64,
}
