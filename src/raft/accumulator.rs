//! The leader's append accumulator (Kafka's `BatchAccumulator`): proposals get their offsets at
//! once and are gathered into batches that reach the log when the linger expires or the batch is
//! full. Control batches close the open data batch and occupy their own batch.

use std::collections::VecDeque;
use std::time::Duration;

use super::log::{Batch, ControlRecord, Records};
use super::time::Instant;
use super::types::{Epoch, Offset};

/// A v2 batch header (Kafka's `RECORD_BATCH_OVERHEAD`).
const BATCH_HEADER_BYTES: usize = 61;
/// The most a record's framing can take (length, attributes, timestamp and offset deltas, key
/// length, value length, header count as varints): estimates never undercount.
const RECORD_FRAMING_BYTES: usize = 20;

/// How the accumulator batches (Kafka's `controller.quorum.append.linger.ms`,
/// `MAX_BATCH_SIZE_BYTES` and `MAX_NUMBER_OF_BATCHES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendLimits {
    pub linger: Duration,
    pub max_batch_bytes: usize,
    /// Batches held at once (the open one included) before proposals are refused.
    pub max_pending_batches: usize,
}

/// Where a proposal's records landed: offsets `base_offset..=last_offset` of `epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proposed {
    pub epoch: Epoch,
    pub base_offset: Offset,
    pub last_offset: Offset,
}

/// Why the accumulator refused records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccumulateError {
    #[error("a proposal of {bytes} bytes exceeds the batch limit of {max} bytes")]
    TooLarge { bytes: usize, max: usize },
    #[error("{pending} batches wait for the log already (backpressure)")]
    Full { pending: usize },
}

/// The data batch still taking records.
#[derive(Debug, Clone)]
struct OpenBatch {
    base_offset: Offset,
    created: Instant,
    drain_at: Instant,
    bytes: usize,
    records: Vec<Vec<u8>>,
}

/// Kafka's `BatchAccumulator` for one leader epoch.
/// Invariant: batches (completed, then open) are contiguous and end at `next_offset`.
#[derive(Debug, Clone)]
pub struct BatchAccumulator {
    epoch: Epoch,
    next_offset: Offset,
    limits: AppendLimits,
    completed: VecDeque<Batch>,
    open: Option<OpenBatch>,
}

fn record_bytes(value: &[u8]) -> usize {
    value.len() + RECORD_FRAMING_BYTES
}

impl BatchAccumulator {
    /// Starts accumulating `epoch`'s records at `next_offset` (the leader's epoch start).
    pub fn new(epoch: Epoch, next_offset: Offset, limits: AppendLimits) -> Self {
        BatchAccumulator {
            epoch,
            next_offset,
            limits,
            completed: VecDeque::new(),
            open: None,
        }
    }

    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The offset the next proposal's first record gets.
    pub fn next_offset(&self) -> Offset {
        self.next_offset
    }

    /// Batches held (completed and open).
    pub fn pending_batches(&self) -> usize {
        self.completed.len() + usize::from(self.open.is_some())
    }

    /// Assigns offsets to `records` (non-empty) and adds them to the open batch, or to a new one
    /// when they do not fit; all of them go into one batch.
    pub fn append(
        &mut self,
        now: Instant,
        records: Vec<Vec<u8>>,
    ) -> Result<Proposed, AccumulateError> {
        debug_assert!(!records.is_empty());
        let bytes: usize = records.iter().map(|r| record_bytes(r)).sum();
        let max = self.limits.max_batch_bytes;
        if BATCH_HEADER_BYTES + bytes > max {
            return Err(AccumulateError::TooLarge {
                bytes: BATCH_HEADER_BYTES + bytes,
                max,
            });
        }
        let fits = self.open.as_ref().is_some_and(|o| o.bytes + bytes <= max);
        if !fits && self.pending_batches() + 1 > self.limits.max_pending_batches {
            return Err(AccumulateError::Full {
                pending: self.pending_batches(),
            });
        }
        if !fits {
            self.complete_open();
            self.open = Some(OpenBatch {
                base_offset: self.next_offset,
                created: now,
                drain_at: now + self.limits.linger,
                bytes: BATCH_HEADER_BYTES,
                records: Vec::new(),
            });
        }
        let open = self.open.as_mut().expect("an open batch");
        let base_offset = self.next_offset;
        self.next_offset += records.len() as Offset;
        open.bytes += bytes;
        open.records.extend(records);
        Ok(Proposed {
            epoch: self.epoch,
            base_offset,
            last_offset: self.next_offset - 1,
        })
    }

    /// Closes the open data batch and builds a control batch after it (Kafka's
    /// `appendControlMessages`); the caller drains everything at once. Returns the control
    /// batch's base offset.
    pub fn append_control(&mut self, now: Instant, records: Vec<ControlRecord>) -> Offset {
        debug_assert!(!records.is_empty());
        self.complete_open();
        let base_offset = self.next_offset;
        let batch = Batch {
            base_offset: self.next_offset,
            epoch: self.epoch,
            append_time: now.as_i64(),
            records: Records::Control(records),
            encoded: Default::default(),
        };
        self.next_offset = batch.next_offset();
        self.completed.push_back(batch);
        base_offset
    }

    /// When `drain` has something to give: now for completed batches, else the open batch's
    /// linger deadline.
    pub fn drain_deadline(&self) -> Instant {
        if !self.completed.is_empty() {
            Instant::ZERO
        } else {
            self.open.as_ref().map_or(Instant::NEVER, |o| o.drain_at)
        }
    }

    /// The batches due for the log at `now`: completed ones, and the open one once its linger
    /// expired.
    pub fn drain(&mut self, now: Instant) -> Vec<Batch> {
        if self.open.as_ref().is_some_and(|o| o.drain_at <= now) {
            self.complete_open();
        }
        self.completed.drain(..).collect()
    }

    /// Every batch, due or not (leadership ends gracefully).
    pub fn drain_all(&mut self) -> Vec<Batch> {
        self.complete_open();
        self.completed.drain(..).collect()
    }

    fn complete_open(&mut self) {
        if let Some(o) = self.open.take().filter(|o| !o.records.is_empty()) {
            self.completed.push_back(Batch {
                base_offset: o.base_offset,
                epoch: self.epoch,
                append_time: o.created.as_i64(),
                records: Records::Data(o.records),
                encoded: Default::default(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(linger_ms: u64, max_batch_bytes: usize, max_pending_batches: usize) -> BatchAccumulator {
        BatchAccumulator::new(
            3,
            10,
            AppendLimits {
                linger: Duration::from_millis(linger_ms),
                max_batch_bytes,
                max_pending_batches,
            },
        )
    }

    #[test]
    fn offsets_are_assigned_at_once_and_the_batch_waits_for_the_linger() {
        let mut a = acc(25, 1 << 20, 10);
        let p = a.append(Instant(100), vec![vec![1], vec![2]]).unwrap();
        assert_eq!((p.epoch, p.base_offset, p.last_offset), (3, 10, 11));
        let q = a.append(Instant(110), vec![vec![3]]).unwrap();
        assert_eq!((q.base_offset, q.last_offset), (12, 12));
        assert_eq!(a.drain_deadline(), Instant(125));
        assert!(a.drain(Instant(124)).is_empty());
        let batches = a.drain(Instant(125));
        assert_eq!(batches.len(), 1);
        assert_eq!((batches[0].base_offset, batches[0].last_offset()), (10, 12));
        assert_eq!(batches[0].append_time, 100);
        assert_eq!(a.drain_deadline(), Instant::NEVER);
    }

    #[test]
    fn a_full_batch_is_due_at_once_and_a_proposal_is_never_split() {
        let mut a = acc(25, 61 + 2 * 21, 10);
        a.append(Instant(0), vec![vec![0]]).unwrap();
        a.append(Instant(0), vec![vec![0]]).unwrap();
        let p = a.append(Instant(1), vec![vec![0]]).unwrap();
        assert_eq!(p.base_offset, 12);
        assert_eq!(a.drain_deadline(), Instant::ZERO, "the first batch is full");
        let batches = a.drain(Instant(1));
        assert_eq!(batches.len(), 1, "the second batch lingers");
        assert_eq!(batches[0].record_count(), 2);
        assert_eq!(
            a.append(Instant(1), vec![vec![0]; 3]),
            Err(AccumulateError::TooLarge {
                bytes: 61 + 63,
                max: 61 + 42
            })
        );
    }

    #[test]
    fn too_many_pending_batches_push_back() {
        let mut a = acc(25, 61 + 21, 2);
        a.append(Instant(0), vec![vec![0]]).unwrap();
        a.append(Instant(0), vec![vec![0]]).unwrap();
        assert_eq!(
            a.append(Instant(0), vec![vec![0]]),
            Err(AccumulateError::Full { pending: 2 })
        );
        assert_eq!(a.next_offset(), 12, "a refused proposal takes no offsets");
        assert_eq!(a.drain(Instant(0)).len(), 1);
        a.append(Instant(0), vec![vec![0]]).unwrap();
    }

    #[test]
    fn a_control_batch_closes_the_open_batch() {
        let mut a = acc(25, 1 << 20, 10);
        a.append(Instant(0), vec![vec![0]]).unwrap();
        a.append_control(
            Instant(5),
            vec![ControlRecord::LeaderChange(Default::default())],
        );
        let batches = a.drain(Instant(5));
        assert_eq!(batches.len(), 2);
        assert!(!batches[0].is_control() && batches[1].is_control());
        assert_eq!(batches[1].base_offset, 11);
        assert_eq!(a.next_offset(), 12);
    }
}
