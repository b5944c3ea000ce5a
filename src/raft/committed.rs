//! The one reader of committed data (Kafka's listener `handleCommit` batches): whole batches
//! below the high watermark, in order, from an offset, across segments.

use super::fatal::FatalError;
use super::log::{Batch, RaftLog};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::types::{Offset, OffsetAndEpoch};

/// How much one log read takes; the reader reads again as it goes.
const READ_BYTES: usize = 1 << 20;

/// Why committed batches cannot be read from an offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CommittedReadError {
    /// The log starts past `from`: load `snapshot` first and read on from its end offset.
    #[error("offset {from} is below the log start {log_start}: load snapshot {snapshot:?} first")]
    SnapshotNeeded {
        from: Offset,
        log_start: Offset,
        snapshot: Option<OffsetAndEpoch>,
    },
}

/// Committed batches from an offset (`Raft::committed_batches`). Control batches are included
/// (their offsets count too); callers skip what they do not apply. A batch that cannot be read
/// is an `Err` naming the offset and the file (a storage fault: the node must halt); the reader
/// ends after it.
pub struct CommittedBatches<'a, L: RaftLog> {
    log: &'a L,
    /// The next offset wanted.
    next: Offset,
    /// The high watermark when the reader was made: batches must end at or below it.
    upto: Offset,
    read: std::vec::IntoIter<Batch>,
}

impl<L: RaftLog> Iterator for CommittedBatches<'_, L> {
    type Item = Result<Batch, FatalError>;

    fn next(&mut self) -> Option<Result<Batch, FatalError>> {
        loop {
            if let Some(b) = self.read.next() {
                if b.next_offset() <= self.next {
                    continue; // before `from`
                }
                if b.next_offset() > self.upto {
                    self.upto = self.next; // not committed whole: done
                    return None;
                }
                self.next = b.next_offset();
                return Some(Ok(b));
            }
            if self.next >= self.upto {
                return None;
            }
            let read = match self.log.read(self.next, READ_BYTES) {
                Ok(read) => read,
                Err(e) => {
                    let at = self.next;
                    self.upto = self.next; // fused: nothing after a fault
                    let mut fatal = FatalError::storage(&e);
                    if let FatalError::Storage { detail, .. } = &mut fatal {
                        *detail =
                            format!("cannot read the committed batch at offset {at}: {detail}");
                    }
                    return Some(Err(fatal));
                }
            };
            if read.last().is_none_or(|b| b.next_offset() <= self.next) {
                self.upto = self.next; // the log ends here
                return None;
            }
            self.read = read.into_iter();
        }
    }
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// The committed batches (wholly below the high watermark) from the batch holding `from`.
    /// Empty while the high watermark is unknown.
    pub fn committed_batches(
        &self,
        from: Offset,
    ) -> Result<CommittedBatches<'_, L>, CommittedReadError> {
        let log_start = self.log.start_offset();
        if from < log_start {
            return Err(CommittedReadError::SnapshotNeeded {
                from,
                log_start,
                snapshot: self.log.latest_snapshot_id(),
            });
        }
        Ok(CommittedBatches {
            log: &self.log,
            next: from,
            upto: self.high_watermark.unwrap_or(from),
            read: Vec::new().into_iter(),
        })
    }
}
