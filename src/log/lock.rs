//! The exclusive lock on a log directory: `<dir>/.lock`, as Kafka takes it.
//!
//! Java locks with `FileChannel.tryLock()` on `<dir>/.lock`; on Linux the JVM implements that
//! with a POSIX record lock (`fcntl(F_SETLK)`, a write lock over the whole file; it shows as
//! `POSIX ADVISORY WRITE` in `/proc/locks`). `flock(2)` locks are a separate kind that never
//! conflicts with it, so kraftd must use fcntl locks too.
//!
//! On Linux kraftd uses an *open file description* lock (`F_OFD_SETLK`): it conflicts with
//! Java's classic POSIX lock (the kernel treats both kinds as one lock table), and unlike a
//! classic POSIX lock it is owned by this open file, not by the process, so a second
//! [`DirLock::try_lock`] of the same directory in the same process fails as well, and closing
//! some other descriptor of the file does not silently drop the lock.

use std::fs::{File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::error::LogError;

pub const LOCK_FILE_NAME: &str = ".lock";

/// Holds `<dir>/.lock` locked until dropped.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    _file: File,
}

/// Why a directory could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process (or another `DirLock` in this one) holds the lock.
    Held {
        path: PathBuf,
        holder_pid: Option<i32>,
    },
    Io(LogError),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Held { path, holder_pid } => {
                write!(f, "failed to acquire lock on {}", path.display())?;
                if let Some(pid) = holder_pid {
                    write!(f, " (held by pid {pid})")?;
                }
                write!(
                    f,
                    ": a Kafka or kraftd instance in another process is using this directory"
                )
            }
            LockError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LockError {}

impl From<LockError> for LogError {
    fn from(e: LockError) -> LogError {
        match e {
            LockError::Io(e) => e,
            held @ LockError::Held { .. } => LogError::InvalidState(held.to_string()),
        }
    }
}

#[cfg(target_os = "linux")]
const SET_LOCK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(target_os = "linux")]
const GET_LOCK: libc::c_int = libc::F_OFD_GETLK;
#[cfg(not(target_os = "linux"))]
const SET_LOCK: libc::c_int = libc::F_SETLK;
#[cfg(not(target_os = "linux"))]
const GET_LOCK: libc::c_int = libc::F_GETLK;

fn whole_file_write_lock() -> libc::flock {
    // SAFETY: flock is a plain C struct; all-zero is a valid value (l_pid must be 0 for OFD).
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = 0;
    fl.l_len = 0; // to the end of the file, however it grows (Java: position 0, size Long.MAX)
    fl
}

impl DirLock {
    /// Creates `<dir>/.lock` if needed and locks it without waiting.
    pub fn try_lock(dir: &Path) -> Result<DirLock, LockError> {
        let path = dir.join(LOCK_FILE_NAME);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| LockError::Io(LogError::io("open", &path)(e)))?;
        let fl = whole_file_write_lock();
        // SAFETY: a valid descriptor and a pointer to an initialised flock.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), SET_LOCK, &fl) };
        if rc == 0 {
            return Ok(DirLock { path, _file: file });
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EACCES) => Err(LockError::Held {
                holder_pid: holder_pid(&file),
                path,
            }),
            _ => Err(LockError::Io(LogError::io("lock", &path)(err))),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The pid of a classic POSIX lock's owner (Java's); `None` for OFD locks or on error.
fn holder_pid(file: &File) -> Option<i32> {
    let mut fl = whole_file_write_lock();
    // SAFETY: as above; the kernel fills `fl`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), GET_LOCK, &mut fl) };
    (rc == 0 && fl.l_type != libc::F_UNLCK as libc::c_short && fl.l_pid > 0).then_some(fl.l_pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_of_the_same_dir_fails_until_the_first_is_dropped() {
        let dir = std::env::temp_dir().join(format!("kraftd-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = DirLock::try_lock(&dir).expect("first lock");
        assert_eq!(first.path(), dir.join(".lock"));
        let err = DirLock::try_lock(&dir).expect_err("second lock must fail");
        assert!(matches!(err, LockError::Held { .. }), "{err}");
        assert!(err.to_string().contains("another process"), "{err}");
        drop(first);
        let again = DirLock::try_lock(&dir).expect("lock after release");
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_holding_a_classic_posix_lock_excludes_us() {
        // What the JVM does: fcntl(F_SETLK) in another process. Fork a child that takes it.
        let dir = std::env::temp_dir().join(format!("kraftd-lock-posix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".lock");
        let script = format!(
            "import fcntl,sys,time\nf=open('{}','a')\nfcntl.lockf(f,fcntl.LOCK_EX|fcntl.LOCK_NB)\nprint('locked',flush=True)\ntime.sleep(30)\n",
            path.display()
        );
        let Ok(mut child) = std::process::Command::new("python3")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            eprintln!(
                "python3 not available; skipping the cross-process check here (compat covers Java)"
            );
            return;
        };
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line.trim(), "locked");
        let err = DirLock::try_lock(&dir).expect_err("the child's POSIX lock must exclude us");
        match &err {
            LockError::Held { holder_pid, .. } => assert_eq!(*holder_pid, Some(child.id() as i32)),
            other => panic!("{other}"),
        }
        child.kill().unwrap();
        child.wait().unwrap();
        DirLock::try_lock(&dir).expect("lock after the child died");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
