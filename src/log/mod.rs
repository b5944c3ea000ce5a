//! The metadata log directory, in Kafka 4.4's on-disk formats so that Java controllers and
//! tools read kraftd's directories and kraftd reads theirs. Uses `protocol`; never `server`.
//!
//! ```text
//! <metadata.log.dir>/
//!   .lock                      lock.rs             (fcntl lock, excludes Java's FileChannel.tryLock)
//!   meta.properties            meta_properties.rs  (metadata_dir.rs: lock + checks + open all)
//!   __cluster_metadata-0/      file_log.rs         (FileLog: the metadata log in files)
//!     <offset>.log             segment.rs, segment_log.rs, scan.rs (recovery)
//!     <offset>.index/.timeindex  Java's; kraftd writes none (Java rebuilds them at start-up)
//!     <offset>.snapshot        Java's producer-state snapshots; kraftd prunes stale ones
//!     leader-epoch-checkpoint  epoch_cache.rs
//!     partition.metadata       partition_metadata.rs
//!     quorum-state             quorum_state.rs
//!     <offset>-<epoch>.checkpoint  snapshot.rs, snapshot_io.rs
//! ```
//!
//! The raft layer reaches the log only through `raft::RaftLog`, implemented once for [`LogCore`]
//! (src/raft/log_core.rs, where Kafka's `KafkaRaftLog` rules live, one method each); [`FileLog`]
//! and [`MemoryLog`] are that core over a [`storage::Storage`]. Everything else reads and writes
//! the log through that trait too, so that no method of `LogCore` shadows one of it.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// the metadata log's files live here.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod append;
pub mod bootstrap;
pub mod core;
pub mod epoch_cache;
pub mod error;
pub mod file_log;
pub mod fsutil;
pub mod fsync_latency;
pub mod lock;
pub mod memory_faults;
pub mod memory_log;
pub mod meta_properties;
pub mod metadata_dir;
pub mod partition_metadata;
pub mod quorum_state;
pub mod replicated;
pub mod scan;
pub mod segment;
pub mod segment_log;
pub mod snapshot;
pub mod snapshot_io;
pub mod storage;

#[cfg(test)]
mod tests;

pub use self::core::{LogConfig, LogCore};
pub use epoch_cache::{EpochCache, EpochEntry};
pub use error::LogError;
pub use file_log::{FileLog, PARTITION_DIR_NAME};
pub use lock::{DirLock, LockError};
pub use memory_log::MemoryLog;
pub use metadata_dir::MetadataDir;
pub use quorum_state::{
    ElectionState, FileQuorumStateStore, QuorumStateError, QuorumStateFile, QuorumStateStore,
    ReplicaKey,
};
pub use replicated::{
    Isolation, LogAppendInfo, LogFetchInfo, OffsetAndEpoch, RawSnapshotReader, RawSnapshotWriter,
};
pub use segment_log::RollConfig;
