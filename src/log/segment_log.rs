//! The segments of `__cluster_metadata-0`: contiguous `.log` files, the last one active.
//!
//! Durability rules (so that everything flushed is a valid prefix after any crash):
//! - a segment is created, then the directory is fsynced, before any batch goes into it;
//! - [`SegmentLog::flush`] fsyncs every segment with unflushed bytes, oldest first;
//! - truncation removes later segments newest first (fsyncing the directory), then cuts and
//!   fsyncs the segment that keeps a prefix; a crash in between leaves a prefix of the old log;
//! - recovery on open checks every batch (CRC, contiguous offsets), cuts the first segment
//!   that goes wrong at the bad batch and deletes every later segment: those can only hold
//!   unflushed bytes, as a flush covers all segments before the later ones.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::{LogError, Result};
use super::fsutil;
use super::fsync_latency::FsyncLatency;
use super::segment::{self, BatchMeta, Cut, Segment, COMPANION_SUFFIXES, LOG_SUFFIX};

/// Kafka's producer-state snapshot suffix (`<offset>.snapshot`): Java's file, rebuilt by Java.
pub const PRODUCER_SNAPSHOT_SUFFIX: &str = ".snapshot";

/// When to roll to a new segment (`metadata.log.segment.bytes`, `metadata.log.segment.ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollConfig {
    pub segment_bytes: u64,
    pub segment_ms: i64,
}

impl Default for RollConfig {
    fn default() -> Self {
        RollConfig {
            segment_bytes: 1 << 30,
            segment_ms: 7 * 24 * 60 * 60 * 1000,
        }
    }
}

/// What opening the segments repaired.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OpenReport {
    pub cuts: Vec<Cut>,
    pub deleted_segments: Vec<PathBuf>,
    pub removed_files: Vec<PathBuf>,
}

/// Where recovery's walk over the segments stops, and what it leaves behind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SegmentWalk {
    /// The offset after the last batch kept (`None`: no segment).
    pub end_offset: Option<i64>,
    /// The segment recovery cut at its first invalid batch, if any.
    pub cut: Option<Cut>,
    /// A segment that does not start where the log before it ends: (its base, that end).
    pub gap: Option<(i64, i64)>,
    /// The bases of the segments after a gap or a cut, which recovery deletes (they can only
    /// hold unflushed data), in base order.
    pub stale: Vec<i64>,
}

/// Recovery's walk over the segments `bases` (sorted): each must start where the log before
/// it ends, and `recover_one(base, expected)` recovers it, giving the offset after its last kept
/// batch and where it was cut, if it was. The walk stops at a gap or a cut; every later segment
/// is stale. Start-up recovers and deletes as the walk says (`SegmentLog::open`); `kraftd doctor
/// --data-dir` walks with a read-only `recover_one` to say what start-up would do.
pub fn walk_segments<E>(
    bases: &[i64],
    mut recover_one: impl FnMut(i64, i64) -> std::result::Result<(i64, Option<Cut>), E>,
) -> std::result::Result<SegmentWalk, E> {
    let mut walk = SegmentWalk::default();
    for (i, &base) in bases.iter().enumerate() {
        let expected = walk.end_offset.unwrap_or(base);
        if base != expected {
            walk.gap = Some((base, expected));
            walk.stale.extend(&bases[i..]);
            break;
        }
        let (end, cut) = recover_one(base, expected)?;
        walk.end_offset = Some(end);
        if cut.is_some() {
            walk.cut = cut;
            walk.stale.extend(&bases[i + 1..]);
            break;
        }
    }
    Ok(walk)
}

#[derive(Debug)]
pub struct SegmentLog {
    dir: PathBuf,
    segments: Vec<Segment>,
    roll: RollConfig,
    flushed_offset: i64,
    /// How long each flush with something to sync took.
    fsync_latency: FsyncLatency,
}

impl SegmentLog {
    /// Opens (recovering) the segments in `dir`, creating segment 0 if there is none. `on_batch`
    /// sees every batch kept, in offset order.
    pub fn open(
        dir: &Path,
        roll: RollConfig,
        mut on_batch: impl FnMut(&BatchMeta),
    ) -> Result<(SegmentLog, OpenReport)> {
        let mut report = OpenReport::default();
        let mut bases = Vec::new();
        let mut companions = Vec::new();
        for entry in fs::read_dir(dir).map_err(LogError::io("list", dir))? {
            let entry = entry.map_err(LogError::io("list", dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(base) = segment::parse_offset_name(&name, LOG_SUFFIX) {
                bases.push(base);
            } else if is_stray(&name) {
                fsutil::remove_if_exists(&entry.path())?;
                report.removed_files.push(entry.path());
            } else if let Some(base) = COMPANION_SUFFIXES
                .iter()
                .find_map(|s| segment::parse_offset_name(&name, s))
            {
                companions.push((base, entry.path()));
            } else if name.ends_with(".swap") {
                tracing::warn!(
                    "ignoring {}: kraftd never writes .swap files",
                    entry.path().display()
                );
            }
        }
        bases.sort_unstable();
        // Index files without their segment (Java deletes them too).
        for (base, path) in companions {
            if bases.binary_search(&base).is_err() {
                fsutil::remove_if_exists(&path)?;
                report.removed_files.push(path);
            }
        }
        let mut segments: Vec<Segment> = Vec::new();
        let walk = walk_segments(&bases, |base, expected| {
            let path = dir.join(segment::file_name(base));
            let (seg, cut) = Segment::open_and_recover(&path, base, expected, &mut on_batch)?;
            let end = seg.next_offset();
            segments.push(seg);
            Ok::<_, LogError>((end, cut))
        })?;
        if let Some((base, expected)) = walk.gap {
            tracing::warn!(
                "[LogLoader partition=__cluster_metadata-0, dir={}] {} starts at offset {base} but the log before it ends at {expected}; deleting it and every later segment (unflushed data)",
                dir.display(),
                dir.join(segment::file_name(base)).display()
            );
        }
        if let Some(cut) = walk.cut {
            let base = segments.last().map_or(0, Segment::base_offset);
            tracing::warn!(
                "[LogLoader partition=__cluster_metadata-0, dir={}] Corruption found in segment {base}, truncating to offset {}: {} at byte {} cut, {} bytes dropped: {}",
                dir.display(),
                walk.end_offset.unwrap_or(base),
                cut.path.display(),
                cut.stop.position(),
                cut.dropped_bytes,
                cut.stop
            );
            if !walk.stale.is_empty() {
                tracing::warn!(
                    "[LogLoader partition=__cluster_metadata-0, dir={}] Deleting the {} segment(s) after {} (they can only hold unflushed data)",
                    dir.display(),
                    walk.stale.len(),
                    cut.path.display()
                );
            }
            report.cuts.push(cut);
        }
        for base in walk.stale.into_iter().rev() {
            segment::delete_files(dir, base)?;
            report
                .deleted_segments
                .push(dir.join(segment::file_name(base)));
        }
        report.deleted_segments.reverse();
        if segments.is_empty() {
            segments.push(Segment::create(dir, 0)?);
        }
        fsutil::fsync_dir(dir)?;
        let mut log = SegmentLog {
            dir: dir.to_path_buf(),
            flushed_offset: segments.last().map_or(0, Segment::next_offset),
            fsync_latency: FsyncLatency::default(),
            segments,
            roll,
        };
        log.prune_producer_snapshots()?;
        Ok((log, report))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The first segment's base offset (the log start after a restart).
    pub fn base_offset(&self) -> i64 {
        self.segments[0].base_offset()
    }
    pub fn end_offset(&self) -> i64 {
        self.active().next_offset()
    }
    pub fn flushed_offset(&self) -> i64 {
        self.flushed_offset
    }
    /// Bytes in all segments.
    pub fn size(&self) -> u64 {
        self.segments.iter().map(Segment::size).sum()
    }
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }
    pub fn segment_paths(&self) -> Vec<PathBuf> {
        self.segments
            .iter()
            .map(|s| s.path().to_path_buf())
            .collect()
    }
    pub fn segment_bases(&self) -> Vec<i64> {
        self.segments.iter().map(Segment::base_offset).collect()
    }

    fn active(&self) -> &Segment {
        self.segments.last().expect("a log always has a segment")
    }

    pub fn is_batch_boundary(&self, offset: i64) -> bool {
        self.segments.iter().any(|s| {
            offset >= s.base_offset() && offset <= s.next_offset() && s.is_batch_boundary(offset)
        })
    }

    /// Appends validated batches at the end offset, rolling first if the active segment is full
    /// or old (by batch timestamps), or the offsets would not fit its int32 relative offsets.
    pub fn append(&mut self, bytes: &[u8], metas: &[BatchMeta]) -> Result<()> {
        let (Some(first), Some(last)) = (metas.first(), metas.last()) else {
            return Ok(());
        };
        debug_assert_eq!(first.base_offset, self.end_offset());
        let active = self.active();
        let max_ts = metas.iter().map(|m| m.max_timestamp).max().unwrap_or(-1);
        let full = active.size() + bytes.len() as u64 > self.roll.segment_bytes;
        let old = active
            .first_max_timestamp()
            .is_some_and(|t0| max_ts.saturating_sub(t0) > self.roll.segment_ms);
        let overflow = last.last_offset - active.base_offset() > i32::MAX as i64;
        if !active.is_empty() && (full || old || overflow) {
            let base = first.base_offset;
            self.segments.push(Segment::create(&self.dir, base)?);
            fsutil::fsync_dir(&self.dir)?;
        }
        self.segments
            .last_mut()
            .expect("a log always has a segment")
            .append(bytes, metas)
    }

    /// Whole batches from the one holding `offset`: see [`Segment::read`]. One segment at most.
    pub fn read(&self, offset: i64, max_bytes: usize, upper_bound: i64) -> Result<Vec<u8>> {
        match self.segments.iter().find(|s| s.next_offset() > offset) {
            Some(s) => s.read(offset, max_bytes, upper_bound),
            None => Ok(Vec::new()),
        }
    }

    /// Removes everything from the batch holding `offset` on (`offset` ≥ the base offset).
    pub fn truncate_to(&mut self, offset: i64) -> Result<i64> {
        if offset >= self.end_offset() {
            return Ok(self.end_offset());
        }
        let mut deleted = false;
        while self.segments.len() > 1 && self.active().base_offset() >= offset {
            self.segments.pop().expect("len > 1").delete()?;
            deleted = true;
        }
        if deleted {
            fsutil::fsync_dir(&self.dir)?;
        }
        let end = self
            .segments
            .last_mut()
            .expect("a log always has a segment")
            .truncate_to(offset)?;
        self.flushed_offset = self.flushed_offset.min(end);
        self.prune_producer_snapshots()?;
        Ok(end)
    }

    /// Deletes every segment and starts an empty one at `offset`.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        while let Some(seg) = self.segments.pop() {
            seg.delete()?;
        }
        fsutil::fsync_dir(&self.dir)?;
        self.segments.push(Segment::create(&self.dir, offset)?);
        fsutil::fsync_dir(&self.dir)?;
        self.flushed_offset = offset;
        self.prune_producer_snapshots()
    }

    /// Deletes the segments that lie entirely below `offset` (the next segment starts at or
    /// before it); the active segment always stays. Returns how many went.
    pub fn delete_segments_below(&mut self, offset: i64) -> Result<usize> {
        let count = self
            .segments
            .windows(2)
            .take_while(|w| w[1].base_offset() <= offset)
            .count();
        for seg in self.segments.drain(..count) {
            seg.delete()?;
        }
        if count > 0 {
            fsutil::fsync_dir(&self.dir)?;
            self.prune_producer_snapshots()?;
        }
        Ok(count)
    }

    /// fsyncs every segment with unflushed bytes, oldest first.
    pub fn flush(&mut self) -> Result<()> {
        // Timed here, on the I/O side: what the disk costs, not a decision of the core.
        let started = std::time::Instant::now();
        let mut synced = false;
        for seg in self.segments.iter_mut().filter(|s| s.is_dirty()) {
            seg.flush()?;
            synced = true;
        }
        if synced {
            self.fsync_latency.observe(started.elapsed());
        }
        self.flushed_offset = self.end_offset();
        Ok(())
    }

    /// The flushes' durations so far.
    pub fn fsync_latency(&self) -> &FsyncLatency {
        &self.fsync_latency
    }

    /// Removes Java's producer-state snapshots outside [base offset, end offset]: Java rebuilds
    /// them, and one beyond the end would describe records that are gone.
    fn prune_producer_snapshots(&mut self) -> Result<()> {
        let (start, end) = (self.base_offset(), self.end_offset());
        for entry in fs::read_dir(&self.dir).map_err(LogError::io("list", &self.dir))? {
            let entry = entry.map_err(LogError::io("list", &self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(o) = segment::parse_offset_name(&name, PRODUCER_SNAPSHOT_SUFFIX) {
                if o < start || o > end {
                    fsutil::remove_if_exists(&entry.path())?;
                }
            }
        }
        Ok(())
    }
}

/// Leftovers of interrupted segment operations (Kafka's `.deleted` and `.cleaned` suffixes;
/// snapshot `.checkpoint.deleted` files are the snapshot code's).
fn is_stray(name: &str) -> bool {
    (name.ends_with(".deleted") && !name.ends_with(".checkpoint.deleted"))
        || name.ends_with(".cleaned")
}
