//! Writing the controller's image into a raft snapshot: the one place the node's snapshots and
//! `metadata-state --write-snapshot` are written from. It joins `controller` (the image's
//! records) and `raft` (the snapshot writer), so it lives above both.

use std::time::{Duration, Instant};

use tracing::info;

use crate::controller::{snapshot::Loss, SnapshotRecords};
use crate::protocol::records::Offset;
use crate::raft::{LogError, OffsetAndEpoch, SnapshotWriter};

/// Records per append, kept whole in one batch: Java's `SnapshotEmitter` batch size, so that
/// kraftd's snapshots are cut into batches where Java's are.
pub const RECORDS_PER_APPEND: usize = 1024;

/// How often a long write says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Why no snapshot of the image was written.
#[derive(Debug, thiserror::Error)]
pub enum ImageSnapshotError {
    /// Writing or sealing failed: a fault (the node must stop) or the writer's refusal.
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("record {index} of snapshot {id} does not encode: {detail}; no snapshot was written (this is a kraftd bug: report it with the log)")]
    Encode {
        id: OffsetAndEpoch,
        index: u64,
        detail: String,
    },
    #[error("the image at offset {offset} holds what its own metadata.version cannot: {first} (and {more} more); Java's snapshot writer refuses such an image too, so snapshot {id} was not written")]
    Losses {
        id: OffsetAndEpoch,
        offset: Offset,
        first: Loss,
        more: usize,
    },
    #[error("writing snapshot {id} stopped: {detail} (this is a kraftd bug: report it with the log); the node goes on and snapshots later")]
    Panicked { id: OffsetAndEpoch, detail: String },
}

/// Encodes the image's records (the image at `offset`) into `writer`, `RECORDS_PER_APPEND` at
/// a time, saying how far it got every few seconds. An image that holds what its own
/// metadata.version cannot is refused, as Java's writer refuses it.
pub fn write_image(
    writer: &mut SnapshotWriter,
    mut records: SnapshotRecords,
    offset: Offset,
) -> Result<(), ImageSnapshotError> {
    let started = Instant::now();
    let id = writer.id();
    let mut chunk = Vec::with_capacity(RECORDS_PER_APPEND);
    let mut progress_at = started + PROGRESS_EVERY;
    loop {
        chunk.clear();
        for record in records.by_ref().take(RECORDS_PER_APPEND) {
            let value = record.encode().map_err(|e| ImageSnapshotError::Encode {
                id,
                index: writer.record_count() + chunk.len() as u64,
                detail: e.to_string(),
            })?;
            chunk.push(value);
        }
        if chunk.is_empty() {
            break;
        }
        writer.append(&chunk)?;
        if Instant::now() >= progress_at {
            info!(
                target: "kraftd::raft",
                "writing snapshot {id}: {} records, {} bytes so far",
                writer.record_count(),
                writer.size_in_bytes()
            );
            progress_at += PROGRESS_EVERY;
        }
    }
    match records.losses().first() {
        Some(first) => Err(ImageSnapshotError::Losses {
            id,
            offset,
            first: first.clone(),
            more: records.losses().len() - 1,
        }),
        None => Ok(()),
    }
}
