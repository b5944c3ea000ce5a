//! One segment of the metadata log: `<base offset, 20 digits>.log`, a plain concatenation of v2
//! record batches with contiguous offsets, and an in-memory position of every batch.
//!
//! kraftd writes no `.index`/`.timeindex` files. Java's metadata log recovers every segment at
//! every start-up (recovery point 0, "unclean shutdown"), which resets and rebuilds both index
//! files; checked against Kafka 4.4.0 with the index files absent, filled with garbage and cut
//! short. kraftd removes a segment's index files whenever it truncates or deletes the segment,
//! so a stale index never outlives the data it described.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::error::{LogError, Result};
use super::fsutil;
use super::scan::{scan_file, ScanOutcome, ScanStop};
use crate::protocol::records::BatchView;

pub const LOG_SUFFIX: &str = ".log";
/// Files Java keeps next to a segment, named after its base offset.
pub const COMPANION_SUFFIXES: [&str; 3] = [".index", ".timeindex", ".txnindex"];

pub fn file_name(base_offset: i64) -> String {
    format!("{base_offset:020}{LOG_SUFFIX}")
}

/// The base offset of a `<20 digits><suffix>` file name.
pub fn parse_offset_name(name: &str, suffix: &str) -> Option<i64> {
    let digits = name.strip_suffix(suffix)?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A batch's place: offsets relative to the segment's base, position in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BatchPos {
    relative_offset: u32,
    position: u32,
}

/// What a caller learns about a batch while a segment is scanned or appended to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMeta {
    pub base_offset: i64,
    pub last_offset: i64,
    pub epoch: i32,
    pub max_timestamp: i64,
    pub size: usize,
}

impl BatchMeta {
    pub fn of(b: &BatchView<'_>) -> BatchMeta {
        BatchMeta {
            base_offset: b.base_offset(),
            last_offset: b.last_offset(),
            epoch: b.partition_leader_epoch(),
            max_timestamp: b.max_timestamp(),
            size: b.size(),
        }
    }
}

/// Recovery's rules for the first `len` bytes of one segment, on a file or in memory: every
/// batch valid (CRC) and continuing the offsets from `expected_offset`, within the range of a
/// segment starting at `base_offset`. `keep(position, meta)` sees each batch kept, in order;
/// the outcome says where the valid batches end and why.
pub fn recover<R: super::scan::ReadAt + ?Sized>(
    source: &R,
    len: u64,
    base_offset: i64,
    expected_offset: i64,
    mut keep: impl FnMut(u64, &BatchMeta),
) -> std::io::Result<ScanOutcome> {
    let mut next_offset = expected_offset;
    scan_file(source, len, |position, b| {
        let meta = BatchMeta::of(b);
        if meta.base_offset != next_offset {
            return Err(RecoveryRefusal::OffsetGap {
                base_offset: meta.base_offset,
                expected: next_offset,
            });
        }
        if meta.last_offset < meta.base_offset {
            return Err(RecoveryRefusal::NegativeLastOffsetDelta {
                delta: b.last_offset_delta(),
            });
        }
        if meta.last_offset - base_offset > i32::MAX as i64 || position > u32::MAX as u64 {
            return Err(RecoveryRefusal::BeyondSegment);
        }
        next_offset = meta.last_offset + 1;
        keep(position, &meta);
        Ok(())
    })
}

/// Why recovery cuts a segment at a batch whose CRC is valid: the batch breaks the log's order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecoveryRefusal {
    #[error("the batch has base offset {base_offset} where offset {expected} was expected")]
    OffsetGap { base_offset: i64, expected: i64 },
    #[error("negative last offset delta {delta}")]
    NegativeLastOffsetDelta { delta: i32 },
    #[error("the batch is beyond the range of a segment")]
    BeyondSegment,
}

/// Where a recovery scan cut a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub path: PathBuf,
    pub stop: ScanStop,
    pub dropped_bytes: u64,
}

#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    path: PathBuf,
    file: File,
    size: u64,
    flushed_size: u64,
    index: BatchIndex,
}

/// Every batch's position, and where the segment's offsets end.
#[derive(Debug)]
struct BatchIndex {
    batches: Vec<BatchPos>,
    next_offset: i64,
    first_max_timestamp: Option<i64>,
}

impl BatchIndex {
    fn new(next_offset: i64) -> BatchIndex {
        BatchIndex {
            batches: Vec::new(),
            next_offset,
            first_max_timestamp: None,
        }
    }

    fn push(&mut self, base_offset: i64, position: u32, meta: &BatchMeta) {
        self.batches.push(BatchPos {
            relative_offset: (meta.base_offset - base_offset) as u32,
            position,
        });
        self.next_offset = meta.last_offset + 1;
        if self.first_max_timestamp.is_none() {
            self.first_max_timestamp = Some(meta.max_timestamp);
        }
    }
}

impl Segment {
    /// Creates an empty segment file (the caller fsyncs the directory).
    pub fn create(dir: &Path, base_offset: i64) -> Result<Segment> {
        let path = dir.join(file_name(base_offset));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(LogError::io("create segment", &path))?;
        Ok(Segment {
            base_offset,
            path,
            file,
            size: 0,
            flushed_size: 0,
            index: BatchIndex::new(base_offset),
        })
    }

    /// Opens a segment and recovers it: every batch must be valid (CRC) and continue the offsets
    /// from `expected_offset` (the segment's base, or where the previous segment ends). The file
    /// is cut (and fsynced) at the first batch that is not; `on_batch` sees each kept batch.
    pub fn open_and_recover(
        path: &Path,
        base_offset: i64,
        expected_offset: i64,
        mut on_batch: impl FnMut(&BatchMeta),
    ) -> Result<(Segment, Option<Cut>)> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(LogError::io("open segment", path))?;
        let len = file
            .metadata()
            .map_err(LogError::io("stat segment", path))?
            .len();
        let mut seg = Segment {
            base_offset,
            path: path.to_path_buf(),
            file,
            size: 0,
            flushed_size: 0,
            index: BatchIndex::new(expected_offset),
        };
        let Segment { file, index, .. } = &mut seg;
        let outcome = recover(
            &*file,
            len,
            base_offset,
            expected_offset,
            |position, meta| {
                index.push(base_offset, position as u32, meta);
                on_batch(meta);
            },
        )
        .map_err(LogError::io("read segment", path))?;
        seg.size = outcome.valid_len;
        seg.flushed_size = outcome.valid_len;
        let cut = match outcome.stop {
            None => None,
            Some(stop) => {
                seg.file
                    .set_len(outcome.valid_len)
                    .map_err(LogError::io("truncate segment", path))?;
                seg.file
                    .sync_all()
                    .map_err(LogError::io("fsync segment", path))?;
                seg.remove_companions()?;
                Some(Cut {
                    path: path.to_path_buf(),
                    stop,
                    dropped_bytes: len - outcome.valid_len,
                })
            }
        };
        Ok((seg, cut))
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn size(&self) -> u64 {
        self.size
    }
    pub fn next_offset(&self) -> i64 {
        self.index.next_offset
    }
    pub fn is_empty(&self) -> bool {
        self.index.batches.is_empty()
    }
    pub fn is_dirty(&self) -> bool {
        self.flushed_size != self.size
    }
    /// The max timestamp of the segment's first batch (Kafka's rolling-based timestamp).
    pub fn first_max_timestamp(&self) -> Option<i64> {
        self.index.first_max_timestamp
    }

    /// Appends already-validated batches (`metas` describe `bytes`, in order, continuing at
    /// [`Segment::next_offset`]). On a write error the file is cut back to its old size.
    pub fn append(&mut self, bytes: &[u8], metas: &[BatchMeta]) -> Result<()> {
        let old = self.size;
        if let Err(e) = self.file.write_all_at(bytes, old) {
            let _ = self.file.set_len(old);
            return Err(LogError::io("append to segment", &self.path)(e));
        }
        let mut position = old;
        for meta in metas {
            self.index.push(self.base_offset, position as u32, meta);
            position += meta.size as u64;
        }
        self.size = position;
        Ok(())
    }

    /// Whether a batch starts at `offset` (or `offset` is the segment's end).
    pub fn is_batch_boundary(&self, offset: i64) -> bool {
        offset == self.index.next_offset
            || self
                .index
                .batches
                .binary_search_by_key(&(offset - self.base_offset), |b| b.relative_offset as i64)
                .is_ok()
    }

    /// Index of the batch holding `offset` (the first batch whose last offset ≥ `offset`).
    fn batch_index(&self, offset: i64) -> usize {
        let rel = offset - self.base_offset;
        match self
            .index
            .batches
            .binary_search_by_key(&rel, |b| b.relative_offset as i64)
        {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        }
    }

    fn batch_start(&self, i: usize) -> (i64, u64) {
        match self.index.batches.get(i) {
            Some(b) => (
                self.base_offset + b.relative_offset as i64,
                b.position as u64,
            ),
            None => (self.index.next_offset, self.size),
        }
    }

    /// The whole batches from the one holding `offset`, at most `max_bytes` of them but at
    /// least one, and only batches that end before `upper_bound` (exclusive offset).
    pub fn read(&self, offset: i64, max_bytes: usize, upper_bound: i64) -> Result<Vec<u8>> {
        if offset >= self.index.next_offset || self.index.batches.is_empty() {
            return Ok(Vec::new());
        }
        let first = self.batch_index(offset);
        let (_, start) = self.batch_start(first);
        let mut end = start;
        for i in first..self.index.batches.len() {
            let (next_offset, next_position) = self.batch_start(i + 1);
            if next_offset > upper_bound {
                break;
            }
            if end > start && (next_position - start) as usize > max_bytes {
                break;
            }
            end = next_position;
        }
        let mut buf = vec![0u8; (end - start) as usize];
        self.file
            .read_exact_at(&mut buf, start)
            .map_err(LogError::io("read segment", &self.path))?;
        Ok(buf)
    }

    /// Removes every batch holding an offset ≥ `offset` (the batch holding `offset` included, as
    /// Kafka does), fsyncs, and drops the index files. Returns the new next offset.
    pub fn truncate_to(&mut self, offset: i64) -> Result<i64> {
        if offset >= self.index.next_offset {
            return Ok(self.index.next_offset);
        }
        // Batches starting before `offset`; the last of them goes too if `offset` is inside it.
        let before = self
            .index
            .batches
            .partition_point(|b| self.base_offset + (b.relative_offset as i64) < offset);
        let keep = if before > 0 && self.batch_start(before).0 > offset {
            before - 1
        } else {
            before
        };
        let (new_next, new_size) = self.batch_start(keep);
        let new_next = if keep == 0 {
            self.base_offset
        } else {
            new_next
        };
        self.file
            .set_len(new_size)
            .map_err(LogError::io("truncate segment", &self.path))?;
        self.file
            .sync_all()
            .map_err(LogError::io("fsync segment", &self.path))?;
        self.index.batches.truncate(keep);
        if keep == 0 {
            self.index.first_max_timestamp = None;
        }
        self.size = new_size;
        self.flushed_size = new_size;
        self.index.next_offset = new_next;
        self.remove_companions()?;
        Ok(new_next)
    }

    /// fsyncs the segment's data.
    pub fn flush(&mut self) -> Result<()> {
        if self.is_dirty() {
            self.file
                .sync_data()
                .map_err(LogError::io("fsync segment", &self.path))?;
            self.flushed_size = self.size;
        }
        Ok(())
    }

    /// Removes the segment file and its index files (the caller fsyncs the directory).
    pub fn delete(self) -> Result<()> {
        let dir = fsutil::parent_dir(&self.path).to_path_buf();
        drop(self.file);
        delete_files(&dir, self.base_offset)
    }

    fn remove_companions(&self) -> Result<()> {
        remove_companions(fsutil::parent_dir(&self.path), self.base_offset)
    }
}

/// Removes `<base>.log` and its index files from `dir` (the caller fsyncs the directory).
pub fn delete_files(dir: &Path, base_offset: i64) -> Result<()> {
    remove_companions(dir, base_offset)?;
    fsutil::remove_if_exists(&dir.join(file_name(base_offset)))?;
    Ok(())
}

fn remove_companions(dir: &Path, base_offset: i64) -> Result<()> {
    for suffix in COMPANION_SUFFIXES {
        fsutil::remove_if_exists(&dir.join(format!("{base_offset:020}{suffix}")))?;
    }
    Ok(())
}
