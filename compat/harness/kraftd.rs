//! The project's own binary, launched like the Java servers: guarded, logged into the `TestDir`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use super::process::{run_command, ChildGuard, Output};
use super::props::Properties;
use super::testdir::{scratch_dir, TestDir};

/// Default timeout of a one-shot `kraftd` command (format, random-uuid, ...).
pub const KRAFTD_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// A long-running `kraftd` process (e.g. `kraftd start ...`). Dropping it SIGKILLs it.
pub struct KraftdProcess {
    name: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Working directory (relative `log.dirs` in a config file resolve against it).
    cwd: Option<PathBuf>,
    /// The network namespace it runs in (the test's own if `None`).
    netns: Option<String>,
    guard: ChildGuard,
}

impl KraftdProcess {
    /// The binary cargo built for this test run.
    pub fn binary() -> &'static Path {
        Path::new(env!("CARGO_BIN_EXE_kraftd"))
    }

    /// A `kraftd` command with `args` and `env` on top of the inherited environment, with
    /// backtraces on and `RUST_LOG=info` unless the caller or the environment says otherwise.
    pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(Self::binary());
        cmd.args(args);
        if std::env::var_os("RUST_LOG").is_none() {
            cmd.env("RUST_LOG", "info");
        }
        cmd.env("RUST_BACKTRACE", "1");
        cmd.envs(env.iter().copied());
        cmd
    }

    /// Runs a one-shot `kraftd` command to completion (killed after `timeout`).
    pub fn run(args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Output {
        let display = format!("kraftd {}", args.join(" "));
        run_command(
            Self::command(args, env),
            display,
            None,
            timeout,
            &scratch_dir(),
        )
    }

    /// Writes `props` to `<dir>/<name>/server.properties` and returns the path.
    pub fn write_config(dir: &TestDir, name: &str, props: &Properties) -> PathBuf {
        let path = dir.subdir(name).join("server.properties");
        props.write(&path);
        path
    }

    /// Starts `kraftd <args...>` with stdout and stderr in `<dir>/logs/<name>.log`.
    pub fn start(dir: &TestDir, name: &str, args: &[&str], env: &[(&str, &str)]) -> KraftdProcess {
        Self::start_in(dir, name, args, env, None)
    }

    /// [`Self::start`] with `cwd` as the working directory.
    pub fn start_in(
        dir: &TestDir,
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
        cwd: Option<&Path>,
    ) -> KraftdProcess {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let cwd = cwd.map(Path::to_path_buf);
        let guard = spawn(dir, name, &args, &env, cwd.as_deref(), None);
        KraftdProcess {
            name: name.to_string(),
            args,
            env,
            cwd,
            netns: None,
            guard,
        }
    }

    /// [`Self::start`] with `env` in network namespace `netns` (see `netns.rs`), if given;
    /// restarts stay there.
    pub fn start_in_netns(
        dir: &TestDir,
        name: &str,
        args: &[&str],
        env: Vec<(String, String)>,
        netns: Option<&str>,
    ) -> KraftdProcess {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let netns = netns.map(str::to_string);
        let guard = spawn(dir, name, &args, &env, None, netns.as_deref());
        KraftdProcess {
            name: name.to_string(),
            args,
            env,
            cwd: None,
            netns,
            guard,
        }
    }

    /// Runs a one-shot `kraftd` command in `cwd`.
    pub fn run_in(args: &[&str], cwd: &Path, timeout: Duration) -> Output {
        let display = format!("kraftd {}", args.join(" "));
        let mut cmd = Self::command(args, &[]);
        cmd.current_dir(cwd);
        run_command(cmd, display, None, timeout, &scratch_dir())
    }

    /// Sets `env` for the next [`Self::restart`]s (over what it started with).
    pub fn set_env(&mut self, env: Vec<(String, String)>) {
        for (k, v) in env {
            self.env.retain(|(key, _)| *key != k);
            self.env.push((k, v));
        }
    }

    /// Starts the same command again (same args, env and log file). It must have exited.
    pub fn restart(&mut self, dir: &TestDir) {
        assert!(
            !self.guard.is_running(),
            "{} is still running; stop it before restart",
            self.name
        );
        self.guard = spawn(
            dir,
            &self.name,
            &self.args,
            &self.env,
            self.cwd.as_deref(),
            self.netns.as_deref(),
        );
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.guard.pid()
    }

    pub fn log_path(&self) -> &Path {
        self.guard
            .log_path()
            .expect("kraftd processes are spawned with a log")
    }

    pub fn is_running(&mut self) -> bool {
        self.guard.is_running()
    }

    pub fn kill9(&mut self) -> ExitStatus {
        self.guard.kill9()
    }

    pub fn sigterm(&mut self) {
        self.guard.sigterm()
    }

    /// Sends `signal` (e.g. SIGSTOP/SIGCONT to freeze and thaw the process).
    pub fn signal(&mut self, signal: i32) {
        self.guard.signal(signal)
    }

    #[track_caller]
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        self.guard.wait_exit(timeout)
    }

    /// SIGTERM, then [`Self::wait_exit`].
    #[track_caller]
    pub fn stop(&mut self, timeout: Duration) -> ExitStatus {
        self.sigterm();
        self.wait_exit(timeout)
    }

    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) -> bool {
        self.guard.wait_for_log(needle, timeout)
    }
}

fn spawn(
    dir: &TestDir,
    name: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
    netns: Option<&str>,
) -> ChildGuard {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut cmd = KraftdProcess::command(&args, &env);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    if let Some(netns) = netns {
        super::netns::enter(&mut cmd, netns);
    }
    let log = dir.log_path(name);
    ChildGuard::spawn_logged(name, cmd, &log).unwrap_or_else(|e| {
        panic!(
            "cannot start {name} ({}): {e}",
            KraftdProcess::binary().display()
        )
    })
}
