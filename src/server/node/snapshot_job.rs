//! A snapshot of the controller's image, written on a thread of its own (Java's snapshot
//! generator writes from an immutable image on its own thread too).
//!
//! The raft loop opens the snapshot (its header batch) and hands the writer and the image's
//! records here; every record is encoded, written, validated and fsynced on this thread, and
//! the loop then freezes the sealed file, which is a rename. The records own a persistent copy
//! of the image, so replay goes on while they are written. The thread always reports back, a
//! panic included, so that the loop never waits for a snapshot that will not come.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use crate::controller::SnapshotRecords;
use crate::protocol::records::Offset;
use crate::raft::{OffsetAndEpoch, SnapshotWriter};
use crate::server::image_snapshot::{write_image, ImageSnapshotError};

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
    pub result: Result<SealedSnapshot, ImageSnapshotError>,
}

/// Writes `records` (the image at `offset`) into `writer` on a new thread, then sends the
/// outcome to the raft loop on `events`. If the node stops first, the thread's writer is
/// dropped when it finishes (removing its `.part` file), or the next start removes the file.
pub fn spawn(
    writer: SnapshotWriter,
    records: SnapshotRecords,
    offset: Offset,
    done: impl FnOnce(SnapshotOutcome) + Send + 'static,
) -> std::io::Result<()> {
    let id = writer.id();
    std::thread::Builder::new()
        .name("kraftd-snapshot".into())
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| write(writer, records, offset)))
                .unwrap_or_else(|panic| {
                    let detail = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".into());
                    Err(ImageSnapshotError::Panicked { id, detail })
                });
            done(SnapshotOutcome { id, result });
        })
        .map(|_| ())
}

fn write(
    mut writer: SnapshotWriter,
    records: SnapshotRecords,
    offset: Offset,
) -> Result<SealedSnapshot, ImageSnapshotError> {
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
