//! Writing and reading snapshots as raw bytes, in files or in memory (Kafka's
//! `RawSnapshotWriter` / `RawSnapshotReader`); `raft::SnapshotWriter` and `raft::SnapshotReader`
//! turn records into these bytes and back, one batch at a time.
//!
//! File protocol (Kafka's `FileRawSnapshotWriter`): bytes go to `<id>-<random>.checkpoint.part`;
//! freezing validates them, fsyncs, makes the file read-only (as Java does), renames it to
//! `<id>.checkpoint` and fsyncs the directory. A writer dropped unfrozen removes its `.part`.
//! The costly half of freezing (validating and fsyncing every byte) can be done first, by
//! [`RawSnapshotWriter::seal`], away from the thread that owns the log; the freeze is then a
//! rename and a directory fsync.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::{LogError, Result};
use super::fsutil;
use super::scan::scan_file;
use super::snapshot::{
    self, parse_file_name, OffsetAndEpoch, SnapshotChecker, SnapshotFileKind, SnapshotSummary,
    PARTIAL_SUFFIX,
};

/// A snapshot being written, as bytes; the log freezes it when complete
/// (`RaftLog::freeze_snapshot`, or the end of a download).
#[derive(Debug)]
pub struct RawSnapshotWriter {
    id: OffsetAndEpoch,
    size: u64,
    /// Set by `seal`: the bytes are validated (and, in a file, durable). Invariant: nothing is
    /// appended after it.
    sealed: Option<SnapshotSummary>,
    pub(crate) inner: WriterInner,
}

#[derive(Debug)]
pub(crate) enum WriterInner {
    File {
        file: File,
        part: PathBuf,
        frozen: bool,
    },
    Memory(Vec<u8>),
}

impl RawSnapshotWriter {
    pub(crate) fn create_file(dir: &Path, id: OffsetAndEpoch) -> Result<RawSnapshotWriter> {
        loop {
            let part = dir.join(format!(
                "{}-{}{PARTIAL_SUFFIX}",
                snapshot::id_prefix(id),
                rand::random::<u64>()
            ));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&part)
            {
                Ok(file) => {
                    return Ok(RawSnapshotWriter {
                        id,
                        size: 0,
                        sealed: None,
                        inner: WriterInner::File {
                            file,
                            part,
                            frozen: false,
                        },
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(LogError::io("create snapshot", &part)(e)),
            }
        }
    }

    pub fn memory(id: OffsetAndEpoch) -> RawSnapshotWriter {
        RawSnapshotWriter {
            id,
            size: 0,
            sealed: None,
            inner: WriterInner::Memory(Vec::new()),
        }
    }

    pub fn id(&self) -> OffsetAndEpoch {
        self.id
    }

    pub fn size_in_bytes(&self) -> u64 {
        self.size
    }

    /// Appends bytes: whole batches (a snapshot being generated) or any chunk of a snapshot
    /// being downloaded with FetchSnapshot. Everything is validated when frozen.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        if self.sealed.is_some() {
            return Err(LogError::InvalidAppend(format!(
                "snapshot {} is sealed: nothing can be appended to it",
                self.id
            )));
        }
        match &mut self.inner {
            WriterInner::File { file, part, .. } => file
                .write_all_at(bytes, self.size)
                .map_err(LogError::io("write snapshot", part))?,
            WriterInner::Memory(buf) => buf.extend_from_slice(bytes),
        }
        self.size += bytes.len() as u64;
        Ok(())
    }

    /// Validates the bytes and, in a file, fsyncs them: everything of a freeze but the rename.
    /// It needs no access to the log, so a snapshot can be sealed on a thread of its own.
    pub fn seal(&mut self) -> Result<SnapshotSummary> {
        if let Some(summary) = self.sealed {
            return Ok(summary);
        }
        let summary = match &self.inner {
            WriterInner::File { file, part, .. } => {
                let summary = validate_open_file(file, self.size, part)?;
                file.sync_all()
                    .map_err(LogError::io("fsync snapshot", part))?;
                summary
            }
            WriterInner::Memory(bytes) => {
                let name = snapshot::file_name(self.id);
                snapshot::validate_bytes(bytes).map_err(|e| {
                    LogError::corrupt(Path::new(&name), Some(e.position), e.reason.to_string())
                })?
            }
        };
        self.sealed = Some(summary);
        Ok(summary)
    }

    pub fn is_sealed(&self) -> bool {
        self.sealed.is_some()
    }

    /// Seals (unless sealed already), makes the file read-only, renames it into place and
    /// fsyncs `dir`. Returns the frozen file's path.
    pub(crate) fn freeze_file(mut self, dir: &Path) -> Result<(PathBuf, SnapshotSummary)> {
        let id = self.id;
        let summary = self.seal()?;
        let WriterInner::File { part, frozen, .. } = &mut self.inner else {
            unreachable!("freeze_file on a memory writer");
        };
        fs::set_permissions(&*part, fs::Permissions::from_mode(0o400))
            .map_err(LogError::io("make read-only", part))?;
        let path = dir.join(snapshot::file_name(id));
        fs::rename(&*part, &path).map_err(LogError::io("rename snapshot into place", &path))?;
        *frozen = true;
        fsutil::fsync_dir(dir)?;
        Ok((path, summary))
    }

    /// The bytes of a memory writer, validated.
    pub(crate) fn freeze_memory(mut self) -> Result<(Vec<u8>, SnapshotSummary)> {
        let summary = self.seal()?;
        let WriterInner::Memory(bytes) =
            std::mem::replace(&mut self.inner, WriterInner::Memory(Vec::new()))
        else {
            unreachable!("freeze_memory on a file writer");
        };
        Ok((bytes, summary))
    }
}

impl Drop for RawSnapshotWriter {
    fn drop(&mut self) {
        if let WriterInner::File {
            part,
            frozen: false,
            ..
        } = &self.inner
        {
            let _ = fs::remove_file(part);
        }
    }
}

/// A frozen snapshot's bytes, read whole or in slices (FetchSnapshot).
#[derive(Debug, Clone)]
pub struct RawSnapshotReader {
    id: OffsetAndEpoch,
    size: u64,
    inner: ReaderInner,
}

#[derive(Debug, Clone)]
enum ReaderInner {
    File { file: Arc<File>, path: PathBuf },
    Memory(Arc<Vec<u8>>),
}

impl RawSnapshotReader {
    pub(crate) fn open_file(dir: &Path, id: OffsetAndEpoch) -> Result<RawSnapshotReader> {
        Self::open_path(&dir.join(snapshot::file_name(id)), id)
    }

    /// Opens the checkpoint file at `path` as snapshot `id` (a tool reading a file by name).
    pub fn open_path(path: &Path, id: OffsetAndEpoch) -> Result<RawSnapshotReader> {
        let path = path.to_path_buf();
        let file = File::open(&path).map_err(LogError::io("open snapshot", &path))?;
        let size = file
            .metadata()
            .map_err(LogError::io("stat snapshot", &path))?
            .len();
        Ok(RawSnapshotReader {
            id,
            size,
            inner: ReaderInner::File {
                file: Arc::new(file),
                path,
            },
        })
    }

    /// A snapshot held in memory (a memory log's, or bytes to be checked).
    pub fn memory(id: OffsetAndEpoch, bytes: Arc<Vec<u8>>) -> RawSnapshotReader {
        RawSnapshotReader {
            id,
            size: bytes.len() as u64,
            inner: ReaderInner::Memory(bytes),
        }
    }

    pub fn id(&self) -> OffsetAndEpoch {
        self.id
    }

    pub fn size_in_bytes(&self) -> u64 {
        self.size
    }

    /// Up to `max_bytes` from `position` (fewer at the end; empty at or past it). Slices are
    /// raw bytes and may cut a batch, as Kafka's `slice` does.
    pub fn read(&self, position: u64, max_bytes: usize) -> Result<Vec<u8>> {
        let start = position.min(self.size);
        let len = (self.size - start).min(max_bytes as u64) as usize;
        match &self.inner {
            ReaderInner::File { file, path } => {
                let mut buf = vec![0u8; len];
                file.read_exact_at(&mut buf, start)
                    .map_err(LogError::io("read snapshot", path))?;
                Ok(buf)
            }
            ReaderInner::Memory(bytes) => Ok(bytes[start as usize..start as usize + len].to_vec()),
        }
    }

    /// The file read, for errors (`None` in memory).
    pub fn path(&self) -> Option<&Path> {
        match &self.inner {
            ReaderInner::File { path, .. } => Some(path),
            ReaderInner::Memory(_) => None,
        }
    }
}

/// Validates a snapshot file: every batch's CRC, the header and footer control records.
pub fn validate_file(path: &Path) -> Result<SnapshotSummary> {
    let file = File::open(path).map_err(LogError::io("open snapshot", path))?;
    let len = file
        .metadata()
        .map_err(LogError::io("stat snapshot", path))?
        .len();
    validate_open_file(&file, len, path)
}

fn validate_open_file(file: &File, len: u64, path: &Path) -> Result<SnapshotSummary> {
    let mut checker = SnapshotChecker::default();
    let outcome = scan_file(file, len, |_, b| checker.visit(b))
        .map_err(LogError::io("read snapshot", path))?;
    if let Some(stop) = outcome.stop {
        return Err(LogError::corrupt(
            path,
            Some(stop.position()),
            stop.to_string(),
        ));
    }
    checker
        .finish()
        .map_err(|why| LogError::corrupt(path, Some(len), why.to_string()))
}

/// Renames `<id>.checkpoint` to `.checkpoint.deleted`, then removes it (Java removes it after
/// `file.delete.delay.ms`; a crash in between leaves a `.deleted` file that opening removes).
pub fn delete_file(dir: &Path, id: OffsetAndEpoch) -> Result<()> {
    let path = dir.join(snapshot::file_name(id));
    let deleted = dir.join(snapshot::deleted_file_name(id));
    match fs::rename(&path, &deleted) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(LogError::io("rename snapshot for deletion", &path)(e)),
    }
    fsutil::remove_if_exists(&deleted)?;
    Ok(())
}

/// Lists the frozen snapshots of `dir`, removing `.part` and `.deleted` leftovers.
pub fn list_and_clean(dir: &Path) -> Result<(Vec<OffsetAndEpoch>, Vec<PathBuf>)> {
    let mut ids = Vec::new();
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir).map_err(LogError::io("list", dir))? {
        let entry = entry.map_err(LogError::io("list", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        match parse_file_name(&name) {
            Some((id, SnapshotFileKind::Frozen)) => ids.push(id),
            Some((_, SnapshotFileKind::Partial | SnapshotFileKind::Deleted)) => {
                fsutil::remove_if_exists(&entry.path())?;
                removed.push(entry.path());
            }
            None => {}
        }
    }
    ids.sort_unstable();
    Ok((ids, removed))
}
