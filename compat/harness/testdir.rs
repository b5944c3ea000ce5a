//! Per-test working directories that explain failures.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Lines of each process log printed when a test fails.
const TAIL_LINES: usize = 200;

/// Set to keep every test directory, not only those of failed tests.
pub const KEEP_ENV: &str = "KRAFTD_COMPAT_KEEP";

/// Root of all harness output: `<repo>/target/compat-runs`.
pub fn runs_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("compat-runs")
}

/// Scratch space for one-shot tool runs' captured output.
pub(crate) fn scratch_dir() -> PathBuf {
    let dir = runs_root().join(".scratch");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// A directory for one test under `target/compat-runs/`, holding its processes' data, configs and
/// logs. Processes register their log files here; if the test panics, dropping the `TestDir`
/// prints the last lines of every log to stderr (which the test harness shows with the failure)
/// and keeps the directory. On success the directory is removed unless `KRAFTD_COMPAT_KEEP` is set.
///
/// Declare it before the processes that use it: locals drop in reverse order, so the processes
/// are killed first and their logs are complete when printed.
pub struct TestDir {
    path: PathBuf,
    logs: Mutex<Vec<(String, PathBuf)>>,
}

impl TestDir {
    /// A fresh directory named after the current test (cargo names each test's thread after it).
    pub fn new() -> TestDir {
        let thread = std::thread::current();
        TestDir::named(thread.name().unwrap_or("test"))
    }

    /// A fresh directory `target/compat-runs/<name>-<pid>-<n>`.
    pub fn named(name: &str) -> TestDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = runs_root().join(format!("{safe}-{}-{n}", std::process::id()));
        // A leftover from an earlier run that happened to have the same pid.
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create test dir {}: {e}", path.display()));
        TestDir {
            path,
            logs: Mutex::new(Vec::new()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn join(&self, relative: impl AsRef<Path>) -> PathBuf {
        self.path.join(relative)
    }

    /// Creates (if needed) and returns the subdirectory `relative`.
    pub fn subdir(&self, relative: impl AsRef<Path>) -> PathBuf {
        let dir = self.path.join(relative);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        dir
    }

    /// The log file for process `name` (`<dir>/logs/<name>.log`), registered for failure reports.
    /// Asking again for the same name returns the same file (e.g. for a restarted process).
    pub fn log_path(&self, name: &str) -> PathBuf {
        let path = self.subdir("logs").join(format!("{name}.log"));
        self.register_log(name, &path);
        path
    }

    /// Registers any file to be tailed if the test fails.
    pub fn register_log(&self, name: &str, path: &Path) {
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        if !logs.iter().any(|(_, p)| p == path) {
            logs.push((name.to_string(), path.to_path_buf()));
        }
    }

    fn print_log_tails(&self) {
        let logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!(
            "\n==== test failed; its directory is kept: {} ====",
            self.path.display()
        );
        for (name, path) in logs.iter() {
            match tail(path, TAIL_LINES) {
                Ok((lines, skipped)) => {
                    eprintln!(
                        "==== {name}: last {} lines of {} ({skipped} earlier lines not shown) ====",
                        lines.len(),
                        path.display()
                    );
                    for line in lines {
                        eprintln!("{line}");
                    }
                }
                Err(e) => eprintln!("==== {name}: cannot read {}: {e} ====", path.display()),
            }
        }
        eprintln!("==== end of process logs ====");
    }
}

impl Default for TestDir {
    fn default() -> Self {
        TestDir::new()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.print_log_tails();
        } else if std::env::var_os(KEEP_ENV).is_none() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// The last `n` lines of a file, and how many lines came before them.
fn tail(path: &Path, n: usize) -> std::io::Result<(VecDeque<String>, usize)> {
    let mut lines = VecDeque::with_capacity(n);
    let mut skipped = 0;
    for line in BufReader::new(File::open(path)?).split(b'\n') {
        if lines.len() == n {
            lines.pop_front();
            skipped += 1;
        }
        lines.push_back(String::from_utf8_lossy(&line?).into_owned());
    }
    Ok((lines, skipped))
}
