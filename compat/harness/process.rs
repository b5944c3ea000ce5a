//! Child processes that cannot outlive their test, and one-shot commands with a timeout.
//!
//! Every process the harness starts goes through [`ChildGuard`]:
//! - it runs in its own process group (`process_group(0)`), and dropping the guard (normal end of a
//!   test, or unwinding from a panic) SIGKILLs that whole group and reaps it;
//! - it gets `PR_SET_PDEATHSIG = SIGKILL`, so the kernel kills it if the test binary dies without
//!   unwinding (SIGKILL, abort, Ctrl-C on the binary).
//!
//! Caveat of `PR_SET_PDEATHSIG`: it fires when the *thread* that spawned the child exits, not the
//! process. Spawn long-lived processes from the test's own thread (the normal case), never from a
//! short-lived helper thread.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How often waits poll a child or a condition.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long reaping a SIGKILLed process may take before we give up on it.
const REAP_TIMEOUT: Duration = Duration::from_secs(10);

/// Owns a child process (and its process group); kills the group on drop.
pub struct ChildGuard {
    name: String,
    child: Child,
    log: Option<PathBuf>,
    /// The log's length when this process started: a restarted process appends to its
    /// predecessor's log, and waits look only at what this one wrote.
    log_from: u64,
    status: Option<ExitStatus>,
}

impl ChildGuard {
    /// Spawns `cmd` in a new process group with a parent-death signal. The caller sets stdio.
    pub fn spawn(name: &str, mut cmd: Command) -> io::Result<ChildGuard> {
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        {
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
            // calls (prctl, getppid); the error it may return is built without allocating.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::prctl(
                        libc::PR_SET_PDEATHSIG,
                        libc::SIGKILL as libc::c_ulong,
                        0,
                        0,
                        0,
                    ) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                    // The parent may have died between fork and prctl: then nobody would kill us.
                    if libc::getppid() != parent {
                        return Err(io::Error::from_raw_os_error(libc::ESRCH));
                    }
                    Ok(())
                });
            }
        }
        let child = cmd.spawn()?;
        Ok(ChildGuard {
            name: name.to_string(),
            child,
            log: None,
            log_from: 0,
            status: None,
        })
    }

    /// Spawns `cmd` with stdin closed and stdout and stderr appended to `log` (created if
    /// missing; appending keeps the history of a restarted process in one file).
    pub fn spawn_logged(name: &str, mut cmd: Command, log: &Path) -> io::Result<ChildGuard> {
        let out = OpenOptions::new().create(true).append(true).open(log)?;
        let log_from = out.metadata()?.len();
        let err = out.try_clone()?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let mut guard = ChildGuard::spawn(name, cmd)?;
        guard.log = Some(log.to_path_buf());
        guard.log_from = log_from;
        Ok(guard)
    }

    /// [`Self::spawn_logged`] with stdin a pipe, returned for the caller to write to.
    pub fn spawn_logged_with_stdin(
        name: &str,
        mut cmd: Command,
        log: &Path,
    ) -> io::Result<(ChildGuard, ChildStdin)> {
        let out = OpenOptions::new().create(true).append(true).open(log)?;
        let log_from = out.metadata()?.len();
        let err = out.try_clone()?;
        cmd.stdin(Stdio::piped()).stdout(out).stderr(err);
        let mut guard = ChildGuard::spawn(name, cmd)?;
        guard.log = Some(log.to_path_buf());
        guard.log_from = log_from;
        let stdin = guard.child.stdin.take().expect("stdin is piped");
        Ok((guard, stdin))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The file holding the process's stdout and stderr, when spawned with [`Self::spawn_logged`].
    pub fn log_path(&self) -> Option<&Path> {
        self.log.as_deref()
    }

    /// The exit status if the process has exited (non-blocking; reaps it).
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            match self.child.try_wait() {
                Ok(status) => self.status = status,
                Err(e) => panic!(
                    "cannot poll process {} (pid {}): {e}",
                    self.name,
                    self.pid()
                ),
            }
        }
        self.status
    }

    pub fn is_running(&mut self) -> bool {
        self.try_status().is_none()
    }

    /// Sends `signal` to the process itself (not its group). No-op once it has exited.
    pub fn signal(&mut self, signal: i32) {
        if self.is_running() {
            // SAFETY: plain kill(2) on a pid we spawned and have not reaped yet.
            unsafe { libc::kill(self.pid() as libc::pid_t, signal) };
        }
    }

    /// Asks the process to shut down (SIGTERM) without waiting; see [`Self::wait_exit`].
    pub fn sigterm(&mut self) {
        self.signal(libc::SIGTERM);
    }

    /// SIGKILLs the whole process group and reaps the process.
    pub fn kill9(&mut self) -> ExitStatus {
        self.kill_group();
        match self.wait_timeout(REAP_TIMEOUT) {
            Some(status) => status,
            None => panic!(
                "process {} (pid {}) survived SIGKILL for {REAP_TIMEOUT:?} (stuck in the kernel?)",
                self.name,
                self.pid()
            ),
        }
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    /// Waits up to `timeout` for the process to exit; on timeout SIGKILLs it and panics.
    #[track_caller]
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        match self.wait_timeout(timeout) {
            Some(status) => status,
            None => {
                self.kill9();
                panic!(
                    "process {} did not exit within {timeout:?}; killed it with SIGKILL (log: {})",
                    self.name,
                    self.log_display()
                );
            }
        }
    }

    /// Waits up to `timeout` until the log holds `needle` in what this process wrote (a restarted
    /// process appends to its predecessor's log); false on timeout or if the process exits first.
    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) -> bool {
        let Some(log) = self.log.clone() else {
            panic!(
                "process {} has no log file to watch for {needle:?}",
                self.name
            )
        };
        let deadline = Instant::now() + timeout;
        loop {
            let exited = !self.is_running();
            let from = self.log_from as usize;
            let written = |bytes: &Vec<u8>| {
                String::from_utf8_lossy(bytes.get(from..).unwrap_or(&[])).contains(needle)
            };
            if fs::read(&log).is_ok_and(|bytes| written(&bytes)) {
                return true;
            }
            if exited || Instant::now() >= deadline {
                return false;
            }
            thread::sleep(POLL_INTERVAL * 4);
        }
    }

    fn kill_group(&mut self) {
        // The group id is the child's pid (process_group(0)). Members may remain after the leader
        // exited, so kill the group even then; ESRCH just means nothing is left.
        // SAFETY: kill(2) with a negative pid targets the process group we created.
        unsafe { libc::kill(-(self.pid() as libc::pid_t), libc::SIGKILL) };
    }

    pub(crate) fn log_display(&self) -> String {
        self.log
            .as_ref()
            .map_or_else(|| "none".to_string(), |p| p.display().to_string())
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill_group();
        if self.wait_timeout(REAP_TIMEOUT).is_none() {
            // Never panic in drop (it may run during unwinding); say what leaked instead.
            eprintln!(
                "compat harness: process {} (pid {}) could not be reaped after SIGKILL",
                self.name,
                self.pid()
            );
        }
    }
}

/// Describes how a finished process ended, e.g. "exit code 1" or "signal 9 (SIGKILL)".
pub fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(libc::SIGKILL)) => "signal 9 (SIGKILL)".to_string(),
        (None, Some(libc::SIGTERM)) => "signal 15 (SIGTERM)".to_string(),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => format!("{status}"),
    }
}

/// What a one-shot command did.
#[derive(Debug, Clone)]
pub struct Output {
    /// The command line, for messages.
    pub command: String,
    /// `None` when the command timed out and was killed.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }

    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    /// Panics with the command, status, stdout and stderr unless the command exited with 0.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert!(self.success(), "command failed:\n{self}");
        self
    }

    /// Panics unless the command ran to completion with a non-zero exit code.
    #[track_caller]
    pub fn assert_failure(&self) -> &Self {
        assert!(
            self.code().is_some_and(|c| c != 0),
            "command was expected to fail:\n{self}"
        );
        self
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.status {
            Some(status) => describe_status(status),
            None => "timed out, killed".to_string(),
        };
        writeln!(f, "  command: {}", self.command)?;
        writeln!(f, "  status:  {status} after {:.1?}", self.elapsed)?;
        writeln!(f, "  --- stdout ---\n{}", last_lines(&self.stdout))?;
        write!(f, "  --- stderr ---\n{}", last_lines(&self.stderr))
    }
}

/// Lines of each stream shown by `Output`'s Display (failure messages stay readable).
const SHOWN_LINES: usize = 200;

fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    match lines.len().checked_sub(SHOWN_LINES) {
        Some(skipped) if skipped > 0 => {
            format!(
                "[{skipped} earlier lines not shown]\n{}",
                lines[skipped..].join("\n")
            )
        }
        _ => lines.join("\n"),
    }
}

/// Runs `cmd` to completion with stdout and stderr captured into files under `scratch` (no pipes,
/// so no reader threads and no pipe-buffer deadlock), stdin from `stdin` if given, killing the
/// process group when `timeout` passes.
/// Panics if the command cannot be started at all (see [`try_run_command`]).
pub fn run_command(
    cmd: Command,
    display: String,
    stdin: Option<&[u8]>,
    timeout: Duration,
    scratch: &Path,
) -> Output {
    try_run_command(cmd, &display, stdin, timeout, scratch)
        .unwrap_or_else(|e| panic!("cannot run `{display}`: {e}"))
}

/// Like [`run_command`], but returns an error when the command cannot be started.
pub fn try_run_command(
    cmd: Command,
    display: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
    scratch: &Path,
) -> io::Result<Output> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let stem = scratch.join(format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let (out_path, err_path, in_path) = (
        stem.with_extension("out"),
        stem.with_extension("err"),
        stem.with_extension("in"),
    );
    let result = run_with_files(
        cmd,
        display,
        stdin,
        timeout,
        [&out_path, &err_path, &in_path],
    );
    for path in [&out_path, &err_path, &in_path] {
        let _ = fs::remove_file(path);
    }
    result
}

fn run_with_files(
    mut cmd: Command,
    display: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
    [out_path, err_path, in_path]: [&PathBuf; 3],
) -> io::Result<Output> {
    let stdin = match stdin {
        Some(bytes) => {
            fs::write(in_path, bytes)?;
            Stdio::from(File::open(in_path)?)
        }
        None => Stdio::null(),
    };
    cmd.stdin(stdin)
        .stdout(File::create(out_path)?)
        .stderr(File::create(err_path)?);
    let started = Instant::now();
    let mut guard = ChildGuard::spawn(display, cmd)?;
    let status = guard.wait_timeout(timeout);
    drop(guard); // kills the group: on timeout, and any stray grandchildren otherwise
    let read = |path: &Path| fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned());
    Ok(Output {
        command: display.to_string(),
        status,
        stdout: read(out_path)?,
        stderr: read(err_path)?,
        elapsed: started.elapsed(),
    })
}
