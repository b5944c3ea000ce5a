//! Durable file primitives: fsync of files and directories, and Kafka's atomic replace
//! (`<name>.tmp`, fsync, rename over `<name>`, fsync the directory).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{LogError, Result};

/// fsyncs a directory, so that entries created, renamed or removed in it survive a crash.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(LogError::io("open directory", dir))?;
    d.sync_all().map_err(LogError::io("fsync directory", dir))
}

/// The directory holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `<path>.tmp`, the temporary name Kafka's atomic writers use.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// Replaces `path` with `bytes` atomically and durably: a reader (or a crash) sees either the
/// old file or the new one, never a mix. Writes `<path>.tmp` (removing a stale one first),
/// fsyncs it, renames it over `path`, then fsyncs the directory.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = tmp_path(path);
    remove_if_exists(&tmp)?;
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(LogError::io("create", &tmp))?;
        f.write_all(bytes).map_err(LogError::io("write", &tmp))?;
        f.sync_all().map_err(LogError::io("fsync", &tmp))?;
    }
    fs::rename(&tmp, path).map_err(LogError::io("rename into place", path))?;
    fsync_dir(parent_dir(path))
}

/// Removes a file; a missing file is not an error. Returns whether it existed.
pub fn remove_if_exists(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(LogError::io("remove", path)(e)),
    }
}

/// Reads a whole file; `Ok(None)` if it does not exist.
pub fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LogError::io("read", path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kraftd-fsutil-{name}-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_tmp() {
        let dir = scratch("atomic");
        let path = dir.join("quorum-state");
        fs::write(tmp_path(&path), b"stale tmp from a crash").unwrap();
        atomic_write(&path, b"one").unwrap();
        atomic_write(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!tmp_path(&path).exists());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_files_are_not_errors() {
        let dir = scratch("missing");
        assert!(!remove_if_exists(&dir.join("nope")).unwrap());
        assert_eq!(read_if_exists(&dir.join("nope")).unwrap(), None);
        fs::remove_dir_all(dir).unwrap();
    }
}
