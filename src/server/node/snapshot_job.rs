//! A snapshot of the controller's image, written on a thread of its own (Java's snapshot
//! generator writes from an immutable image on its own thread too).
//!
//! The raft loop opens the snapshot (its header batch) and hands the writer and the image's
//! records here; every record is encoded, written, validated and fsynced on this thread, and
//! the loop then freezes the sealed file, which is a rename. The records own a persistent copy
//! of the image, so replay goes on while they are written.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use tracing::info;

use super::event::Event;
use crate::controller::{snapshot::Loss, SnapshotRecords};
use crate::protocol::records::Offset;
use crate::raft::{LogError, OffsetAndEpoch, SnapshotWriter};

/// Records per append, kept whole in one batch: Java's `SnapshotEmitter` batch size, so that
/// kraftd's snapshots are cut into batches where Java's are.
pub const RECORDS_PER_APPEND: usize = 1024;

/// How often a long write says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Why a snapshot job wrote no snapshot.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotJobError {
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
}

/// A snapshot whose every byte is written and durable, waiting to be frozen.
#[derive(Debug)]
pub struct SealedSnapshot {
    pub writer: SnapshotWriter,
    pub records: u64,
    pub bytes: u64,
    /// Time spent on the snapshot's thread.
    pub elapsed: Duration,
}

/// What the job sends back to the raft loop.
#[derive(Debug)]
pub struct SnapshotOutcome {
    pub id: OffsetAndEpoch,
    pub result: Result<SealedSnapshot, SnapshotJobError>,
}

/// Writes `records` (the image at `offset`) into `writer` on a new thread, then sends the
/// outcome to the raft loop on `events`.
pub fn spawn(
    writer: SnapshotWriter,
    records: SnapshotRecords,
    offset: Offset,
    events: mpsc::Sender<Event>,
) -> std::io::Result<()> {
    let id = writer.id();
    std::thread::Builder::new()
        .name("kraftd-snapshot".into())
        .spawn(move || {
            let result = write(writer, records, offset);
            // The loop is gone when the node stops; the dropped writer removes its file.
            let _ = events.send(Event::SnapshotWritten(Box::new(SnapshotOutcome {
                id,
                result,
            })));
        })
        .map(|_| ())
}

fn write(
    mut writer: SnapshotWriter,
    records: SnapshotRecords,
    offset: Offset,
) -> Result<SealedSnapshot, SnapshotJobError> {
    let started = Instant::now();
    write_image(&mut writer, records, offset)?;
    writer.seal()?;
    Ok(SealedSnapshot {
        records: writer.record_count(),
        bytes: writer.size_in_bytes(),
        writer,
        elapsed: started.elapsed(),
    })
}

/// Encodes the image's records (the image at `offset`) into `writer`, `RECORDS_PER_APPEND` at
/// a time, saying how far it got every few seconds. An image that holds what its own
/// metadata.version cannot is refused, as Java's writer refuses it. The node's snapshots and
/// `metadata-state --write-snapshot` both write through here.
pub fn write_image(
    writer: &mut SnapshotWriter,
    mut records: SnapshotRecords,
    offset: Offset,
) -> Result<(), SnapshotJobError> {
    let started = Instant::now();
    let id = writer.id();
    let mut chunk = Vec::with_capacity(RECORDS_PER_APPEND);
    let mut progress_at = started + PROGRESS_EVERY;
    loop {
        chunk.clear();
        for record in records.by_ref().take(RECORDS_PER_APPEND) {
            let value = record.encode().map_err(|e| SnapshotJobError::Encode {
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
        Some(first) => Err(SnapshotJobError::Losses {
            id,
            offset,
            first: first.clone(),
            more: records.losses().len() - 1,
        }),
        None => Ok(()),
    }
}
