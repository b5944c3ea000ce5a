//! `MemLog`: the in-memory `RaftLog` for tests and the simulation. It tracks the durable prefix
//! and `crash()` drops everything not flushed (Kafka's `MockLog.reopen`). Snapshots are encoded
//! to bytes (a private format around Kafka's `VotersRecord` encoding) so FetchSnapshot moves
//! real byte ranges. Optionally it models Kafka's segments (`with_segment_bytes`): where each
//! segment starts, so that a Fetch is answered from one segment as Java's log reads are.

use std::collections::BTreeMap;

use super::log::{Batch, LogError, RaftLog, SnapshotContents};
use super::types::{Epoch, Offset, OffsetAndEpoch};
use crate::protocol::codec::Message;
use crate::protocol::messages::voters_record::VotersRecord;

#[derive(Debug, Clone, Default)]
pub struct MemLog {
    /// Contiguous batches covering `[start_offset, end_offset)`.
    batches: Vec<Batch>,
    start_offset: Offset,
    /// Invariant: `start_offset <= flushed <= end_offset()`, at a batch boundary.
    flushed: Offset,
    /// Leader-epoch cache: (epoch, start offset), strictly increasing in both.
    epochs: Vec<(Epoch, Offset)>,
    /// Frozen snapshots (durable), by id.
    snapshots: BTreeMap<OffsetAndEpoch, Vec<u8>>,
    /// The download in progress (a `.part` file; lost on crash).
    download: Option<(OffsetAndEpoch, Vec<u8>)>,
    /// Number of `flush` calls that made new data durable (for tests).
    pub flushes: u64,
    /// `None`: the log is one unbounded segment.
    segments: Option<Segments>,
}

/// Kafka's segments, by where each starts: an append that would overflow the active segment
/// rolls a new one first (`LogSegment.shouldRoll` on size), one larger than a segment is
/// refused (`RecordBatchTooLargeException`), and whole segments go at cleaning.
#[derive(Debug, Clone)]
struct Segments {
    /// `metadata.log.segment.bytes`.
    max_bytes: usize,
    /// Base offset of every segment, increasing, never empty; the first may lie below the log
    /// start (Kafka deletes only segments wholly below it).
    bases: Vec<Offset>,
}

impl MemLog {
    pub fn new() -> Self {
        MemLog::default()
    }

    /// A log of segments of at most `max_bytes` each.
    pub fn with_segment_bytes(max_bytes: usize) -> Self {
        MemLog {
            segments: Some(Segments {
                max_bytes,
                bases: vec![0],
            }),
            ..MemLog::default()
        }
    }

    /// Base offsets of the segments, when they are modelled.
    pub fn segment_bases(&self) -> Option<&[Offset]> {
        self.segments.as_ref().map(|s| s.bases.as_slice())
    }

    /// Rolls a new segment at `base` if an append of `size` bytes would overflow the active one.
    fn roll_for_append(&mut self, base: Offset, size: usize) -> Result<(), LogError> {
        let Some(segments) = &self.segments else {
            return Ok(());
        };
        let segment_bytes = segments.max_bytes;
        if size > segment_bytes {
            return Err(LogError::LargerThanSegment {
                size,
                segment_bytes,
            });
        }
        let active_base = *segments.bases.last().expect("at least one segment");
        let active: usize = self
            .batches
            .iter()
            .rev()
            .take_while(|b| b.base_offset >= active_base)
            .map(Batch::size_in_bytes)
            .sum();
        if active + size > segment_bytes {
            if let Some(s) = &mut self.segments {
                s.bases.push(base);
            }
        }
        Ok(())
    }

    /// A simulated hard kill: everything appended but not flushed is lost, and so is any
    /// snapshot download in progress.
    pub fn crash(&mut self) {
        let keep = self
            .batches
            .partition_point(|b| b.next_offset() <= self.flushed);
        self.batches.truncate(keep);
        self.rebuild_epochs_after_truncation();
        self.download = None;
        // Like Kafka's log recovery at open: a snapshot ahead of what is left becomes the start.
        self.truncate_to_latest_snapshot();
    }

    /// All batches (for invariant checks and transcripts).
    pub fn batches(&self) -> &[Batch] {
        &self.batches
    }

    pub fn snapshot_ids(&self) -> Vec<OffsetAndEpoch> {
        self.snapshots.keys().copied().collect()
    }

    /// Writes the bootstrap checkpoint (0, 0) as `kafka-storage format` does for a dynamic quorum.
    pub fn format_bootstrap(&mut self, kraft_version: i16, voters: Option<VotersRecord>) {
        let contents = SnapshotContents {
            id: OffsetAndEpoch::new(0, 0),
            last_contained_log_timestamp: 0,
            kraft_version,
            voters,
            data: Vec::new(),
        };
        self.snapshots
            .insert(contents.id, encode_snapshot(&contents));
    }

    fn rebuild_epochs_after_truncation(&mut self) {
        let end = self.end_offset();
        self.epochs.retain(|&(_, start)| start < end);
        if self.flushed > end {
            self.flushed = end;
        }
        // Kafka deletes the segments above the truncation point and keeps one starting at it.
        if let Some(s) = &mut self.segments {
            s.bases.retain(|&b| b <= end);
        }
    }

    fn push(&mut self, batch: Batch) {
        if self.epochs.last().map_or(true, |&(e, _)| e < batch.epoch) {
            self.epochs.push((batch.epoch, batch.base_offset));
        }
        self.batches.push(batch);
    }

    fn check_append(
        &self,
        batch: &Batch,
        expected: Offset,
        last: Option<Epoch>,
    ) -> Result<(), LogError> {
        if batch.record_count() == 0 {
            return Err(LogError::EmptyBatch);
        }
        if batch.base_offset != expected {
            return Err(LogError::NonContiguous {
                expected,
                got: batch.base_offset,
            });
        }
        if let Some(last) = last {
            if batch.epoch < last {
                return Err(LogError::EpochRegression {
                    last,
                    got: batch.epoch,
                });
            }
        }
        Ok(())
    }
}

impl RaftLog for MemLog {
    fn start_offset(&self) -> Offset {
        self.start_offset
    }

    fn end_offset(&self) -> Offset {
        self.batches
            .last()
            .map_or(self.start_offset, Batch::next_offset)
    }

    fn flushed_end_offset(&self) -> Offset {
        self.flushed
    }

    fn last_fetched_epoch(&self) -> Epoch {
        if let Some(&(e, _)) = self.epochs.last() {
            return e;
        }
        match self.latest_snapshot_id() {
            Some(s) if s.offset == self.start_offset && s.offset == self.end_offset() => s.epoch,
            _ => 0,
        }
    }

    fn end_offset_for_epoch(&self, epoch: Epoch) -> OffsetAndEpoch {
        let leo = self.end_offset();
        let found = match self.epochs.last() {
            Some(&(latest, _)) if latest == epoch => Some(OffsetAndEpoch::new(leo, epoch)),
            _ => match self.epochs.iter().find(|&&(e, _)| e > epoch) {
                None => None,
                Some(&(_, higher_start)) => {
                    match self.epochs.iter().rev().find(|&&(e, _)| e <= epoch) {
                        None => Some(OffsetAndEpoch::new(higher_start, epoch)),
                        Some(&(floor, _)) => Some(OffsetAndEpoch::new(higher_start, floor)),
                    }
                }
            },
        };
        match found {
            None => OffsetAndEpoch::new(leo, self.last_fetched_epoch()),
            Some(f) => match self.earliest_snapshot_id() {
                Some(s) if f.offset == s.offset && f.epoch == epoch => s,
                _ => f,
            },
        }
    }

    fn append_as_leader(&mut self, batch: Batch) -> Result<(), LogError> {
        let last = self.epochs.last().map(|&(e, _)| e);
        self.check_append(&batch, self.end_offset(), last)?;
        self.roll_for_append(batch.base_offset, batch.size_in_bytes())?;
        self.push(batch);
        Ok(())
    }

    fn append_as_follower(&mut self, batches: Vec<Batch>) -> Result<(), LogError> {
        let mut expected = self.end_offset();
        let mut last = self.epochs.last().map(|&(e, _)| e);
        for b in &batches {
            self.check_append(b, expected, last)?;
            expected = b.next_offset();
            last = Some(b.epoch);
        }
        if let Some(first) = batches.first() {
            // Like Java's follower: one append, one roll check, for the whole response.
            let size = batches.iter().map(Batch::size_in_bytes).sum();
            self.roll_for_append(first.base_offset, size)?;
        }
        for b in batches {
            self.push(b);
        }
        Ok(())
    }

    fn read(&self, from: Offset, max_bytes: usize) -> Vec<Batch> {
        let first = self.batches.partition_point(|b| b.next_offset() <= from);
        let mut out = Vec::new();
        let mut size = 0;
        for b in &self.batches[first..] {
            let s = b.size_in_bytes();
            if !out.is_empty() && size + s > max_bytes {
                break;
            }
            size += s;
            out.push(b.clone());
        }
        out
    }

    fn read_for_fetch(&self, from: Offset, max_bytes: usize) -> Vec<Batch> {
        let mut out = self.read(from, max_bytes);
        let next_segment = self
            .segments
            .as_ref()
            .and_then(|s| s.bases.iter().copied().find(|&b| b > from));
        if let Some(end) = next_segment {
            out.retain(|b| b.base_offset < end);
        }
        out
    }

    fn truncate_to(&mut self, offset: Offset) {
        if offset >= self.end_offset() {
            return;
        }
        // Kafka truncates whole batches: the batch containing `offset` goes too.
        let keep = self.batches.partition_point(|b| b.next_offset() <= offset);
        self.batches.truncate(keep);
        self.rebuild_epochs_after_truncation();
    }

    fn flush(&mut self) {
        let end = self.end_offset();
        if self.flushed != end {
            self.flushed = end;
            self.flushes += 1;
        }
    }

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.keys().next_back().copied()
    }

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.keys().next().copied()
    }

    fn read_snapshot(&self, id: OffsetAndEpoch) -> Option<SnapshotContents> {
        self.snapshots.get(&id).and_then(|b| decode_snapshot(b))
    }

    fn snapshot_size(&self, id: OffsetAndEpoch) -> Option<u64> {
        self.snapshots.get(&id).map(|b| b.len() as u64)
    }

    fn read_snapshot_chunk(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Option<Vec<u8>> {
        let bytes = self.snapshots.get(&id)?;
        let start = usize::try_from(position)
            .ok()
            .filter(|&p| p < bytes.len())?;
        let end = start.saturating_add(max_bytes.max(1)).min(bytes.len());
        Some(bytes[start..end].to_vec())
    }

    fn create_snapshot(&mut self, contents: SnapshotContents) -> Result<(), LogError> {
        if self.snapshots.contains_key(&contents.id) {
            return Err(LogError::SnapshotExists(contents.id));
        }
        self.snapshots
            .insert(contents.id, encode_snapshot(&contents));
        Ok(())
    }

    fn begin_snapshot_download(&mut self, id: OffsetAndEpoch) {
        self.download = Some((id, Vec::new()));
    }

    fn snapshot_download(&self) -> Option<(OffsetAndEpoch, u64)> {
        self.download.as_ref().map(|(id, b)| (*id, b.len() as u64))
    }

    fn append_snapshot_download(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        match &mut self.download {
            Some((_, buf)) => {
                buf.extend_from_slice(bytes);
                Ok(())
            }
            None => Err(LogError::Download("no download in progress".into())),
        }
    }

    fn complete_snapshot_download(&mut self) -> Result<OffsetAndEpoch, LogError> {
        let (id, bytes) = self
            .download
            .take()
            .ok_or_else(|| LogError::Download("no download in progress".into()))?;
        match decode_snapshot(&bytes) {
            Some(c) if c.id == id => {}
            _ => {
                return Err(LogError::Download(format!(
                    "bytes of {id} are not that snapshot"
                )))
            }
        }
        self.snapshots.insert(id, bytes);
        Ok(id)
    }

    fn abort_snapshot_download(&mut self) {
        self.download = None;
    }

    fn truncate_to_latest_snapshot(&mut self) -> bool {
        let Some(latest) = self.latest_snapshot_id() else {
            return false;
        };
        let last_epoch = self.last_fetched_epoch();
        let ahead = latest.epoch > last_epoch
            || (latest.epoch == last_epoch && latest.offset > self.end_offset());
        if !ahead {
            return false;
        }
        self.batches.clear();
        self.epochs.clear();
        self.start_offset = latest.offset;
        self.flushed = latest.offset;
        self.snapshots.retain(|id, _| *id == latest);
        if let Some(s) = &mut self.segments {
            s.bases = vec![latest.offset];
        }
        true
    }

    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> bool {
        if !self.snapshots.contains_key(&id)
            || id.offset <= self.start_offset
            || id.offset > self.end_offset()
        {
            return false;
        }
        let drop = self
            .batches
            .partition_point(|b| b.next_offset() <= id.offset);
        self.batches.drain(..drop);
        // Kafka's LeaderEpochFileCache.truncateFromStart: the last entry at or below the new
        // start is kept, moved to the new start.
        let removed: Vec<_> = self
            .epochs
            .iter()
            .copied()
            .filter(|&(_, s)| s <= id.offset)
            .collect();
        self.epochs.retain(|&(_, s)| s > id.offset);
        if let Some(&(e, _)) = removed.last() {
            self.epochs.insert(0, (e, id.offset));
        }
        self.start_offset = id.offset;
        self.flushed = self.flushed.max(id.offset);
        self.snapshots.retain(|s, _| *s >= id);
        if let Some(s) = &mut self.segments {
            let holding_start = s
                .bases
                .partition_point(|&b| b <= id.offset)
                .saturating_sub(1);
            s.bases.drain(..holding_start);
        }
        true
    }
}

const SNAPSHOT_MAGIC: &[u8; 8] = b"MEMSNAP1";

fn encode_snapshot(c: &SnapshotContents) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(SNAPSHOT_MAGIC);
    out.extend_from_slice(&c.id.offset.to_be_bytes());
    out.extend_from_slice(&c.id.epoch.to_be_bytes());
    out.extend_from_slice(&c.last_contained_log_timestamp.to_be_bytes());
    out.extend_from_slice(&c.kraft_version.to_be_bytes());
    match &c.voters {
        Some(v) => {
            let bytes = v.encode_to_vec(0).expect("VotersRecord v0 encodes");
            out.push(1);
            out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            out.extend_from_slice(&bytes);
        }
        None => out.push(0),
    }
    out.extend_from_slice(&(c.data.len() as u32).to_be_bytes());
    for v in &c.data {
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    }
    out
}

/// Bounds-checked: `None` on any malformed input.
fn decode_snapshot(b: &[u8]) -> Option<SnapshotContents> {
    struct Cur<'a>(&'a [u8]);
    impl<'a> Cur<'a> {
        fn take(&mut self, n: usize) -> Option<&'a [u8]> {
            if self.0.len() < n {
                return None;
            }
            let (h, t) = self.0.split_at(n);
            self.0 = t;
            Some(h)
        }
        fn arr<const N: usize>(&mut self) -> Option<[u8; N]> {
            self.take(N)?.try_into().ok()
        }
    }
    let mut c = Cur(b);
    if c.take(8)? != SNAPSHOT_MAGIC {
        return None;
    }
    let offset = i64::from_be_bytes(c.arr()?);
    let epoch = i32::from_be_bytes(c.arr()?);
    let ts = i64::from_be_bytes(c.arr()?);
    let kraft_version = i16::from_be_bytes(c.arr()?);
    let voters = match c.take(1)?[0] {
        0 => None,
        1 => {
            let n = u32::from_be_bytes(c.arr()?) as usize;
            Some(VotersRecord::decode_exact(c.take(n)?, 0).ok()?)
        }
        _ => return None,
    };
    let count = u32::from_be_bytes(c.arr()?) as usize;
    let mut data = Vec::with_capacity(count.min(c.0.len() / 4));
    for _ in 0..count {
        let n = u32::from_be_bytes(c.arr()?) as usize;
        data.push(c.take(n)?.to_vec());
    }
    if !c.0.is_empty() {
        return None;
    }
    Some(SnapshotContents {
        id: OffsetAndEpoch::new(offset, epoch),
        last_contained_log_timestamp: ts,
        kraft_version,
        voters,
        data,
    })
}
