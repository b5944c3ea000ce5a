//! Kafka's command-line tools run in long-lived JVMs (`compat/java/ToolServer.java`) instead of
//! one JVM each: a JVM's start costs 0.6-0.7 s of CPU even with the class-data-sharing archive,
//! and a `make test` runs some 700 tools, on 2 cores. Each server runs one tool at a time, the
//! tool's own main class with its arguments, unchanged; a pool per Kafka release holds as many
//! as tests run tools at once. A tool that feeds on stdin or needs JVM options of its own still
//! gets its own JVM, as does every tool with `KRAFTD_COMPAT_TOOL_JVMS=1` (to rule the servers
//! out when a tool misbehaves).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::testdir::scratch_dir;
use super::{java_probe, Kafka, Output};

/// Set to run every tool in a JVM of its own.
pub const TOOL_JVMS_ENV: &str = "KRAFTD_COMPAT_TOOL_JVMS";

/// One server's answer to one run.
struct Answer {
    status: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// The server exits after answering.
    retire: bool,
}

/// A running ToolServer JVM, idle between runs.
struct ToolServer {
    child: Child,
    requests: BufWriter<ChildStdin>,
    answers: mpsc::Receiver<io::Result<Answer>>,
    /// Its JVM's own stderr (JVM warnings, a crash), for messages.
    log: PathBuf,
}

impl Drop for ToolServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The idle servers of one kind: a Kafka release's tools, or classes of the harness's own (the
/// image dumper) with JVM options of their own.
pub struct ToolServers {
    idle: Mutex<Vec<ToolServer>>,
    /// Classes on the servers' classpath after Kafka's jars and the server's own class.
    extra_classpath: Option<PathBuf>,
    jvm_opts: Vec<String>,
}

impl Default for ToolServers {
    /// Servers for Kafka's tools.
    fn default() -> Self {
        ToolServers {
            idle: Mutex::default(),
            extra_classpath: None,
            jvm_opts: super::kafka::tool_jvm_opts(),
        }
    }
}

/// Whether a tool run can go to a server: one that reads no stdin and needs no JVM option of
/// its own, and that ends through Kafka's Exit (the Verifiable* clients call System.exit).
pub fn servable(main_class: &str, stdin: Option<&[u8]>, jvm_opts: &[String]) -> bool {
    stdin.is_none()
        && jvm_opts.is_empty()
        && !main_class.contains(".Verifiable")
        && std::env::var_os(TOOL_JVMS_ENV).is_none()
}

impl ToolServers {
    /// Servers whose JVMs also load `classes`, with `jvm_opts`.
    pub fn with_classes(classes: PathBuf, jvm_opts: Vec<String>) -> ToolServers {
        ToolServers {
            idle: Mutex::default(),
            extra_classpath: Some(classes),
            jvm_opts,
        }
    }

    /// Runs `main_class` with `args` on an idle server (started if none is), as
    /// `run_command` would run it in a JVM of its own: its status, stdout and stderr, or a
    /// timeout (the server is then killed).
    pub fn run(
        &self,
        kafka: &Kafka,
        main_class: &str,
        args: &[&str],
        timeout: Duration,
        display: String,
    ) -> Output {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut server = idle.unwrap_or_else(|| {
            ToolServer::start(kafka, self.extra_classpath.as_deref(), &self.jvm_opts)
        });
        let started = Instant::now();
        let output = |status: Option<ExitStatus>, stdout: &[u8], stderr: String| Output {
            command: display.clone(),
            status,
            stdout: String::from_utf8_lossy(stdout).into_owned(),
            stderr,
            elapsed: started.elapsed(),
        };
        if let Err(e) = server.send(main_class, args) {
            let log = server.log_tail();
            panic!("cannot hand `{display}` to the tool server ({e}); its log:\n{log}");
        }
        match server.answers.recv_timeout(timeout) {
            Ok(Ok(answer)) => {
                let status = ExitStatus::from_raw((answer.status & 0xff) << 8);
                let stderr = String::from_utf8_lossy(&answer.stderr).into_owned();
                if !answer.retire {
                    self.idle
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(server);
                }
                output(Some(status), &answer.stdout, stderr)
            }
            Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = server.child.wait().ok();
                let log = server.log_tail();
                panic!(
                    "the tool server running `{display}` exited ({status:?}) without answering \
                     (a tool that calls System.exit belongs in `servable`'s exceptions); its \
                     log:\n{log}"
                );
            }
            Err(mpsc::RecvTimeoutError::Timeout) => output(
                None,
                b"",
                format!(
                    "(run in a tool server, killed after {timeout:?}; rerun with \
                     {TOOL_JVMS_ENV}=1 to see its partial output)"
                ),
            ),
        }
    }
}

impl ToolServer {
    fn start(kafka: &Kafka, extra_classpath: Option<&Path>, jvm_opts: &[String]) -> ToolServer {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let scratch = scratch_dir();
        let classes = java_probe::program_classes(kafka, "ToolServer", &scratch);
        let mut cmd = kafka.java_command("ToolServer", &kafka.tools_log4j_config(), jvm_opts);
        // Kafka's jars first: the class-data-sharing archive matches a classpath by its prefix.
        let extra = extra_classpath.map_or(String::new(), |p| format!(":{}", p.display()));
        cmd.env(
            "CLASSPATH",
            format!("{}:{}{extra}", kafka.classpath(), classes.display()),
        );
        let log = scratch.join(format!(
            "tool-server-{}-{}.log",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let log_file =
            File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the tool server (java ToolServer): {e}"));
        let requests = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let mut from = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (tx, answers) = mpsc::channel();
        thread::spawn(move || loop {
            let answer = read_answer(&mut from);
            let failed = answer.is_err();
            if tx.send(answer).is_err() || failed {
                return;
            }
        });
        ToolServer {
            child,
            requests,
            answers,
            log,
        }
    }

    fn send(&mut self, main_class: &str, args: &[&str]) -> io::Result<()> {
        let words: Vec<&str> = std::iter::once(main_class)
            .chain(args.iter().copied())
            .collect();
        self.requests
            .write_all(&(words.len() as i32).to_be_bytes())?;
        for w in words {
            self.requests.write_all(&(w.len() as i32).to_be_bytes())?;
            self.requests.write_all(w.as_bytes())?;
        }
        self.requests.flush()
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

fn read_answer(from: &mut impl Read) -> io::Result<Answer> {
    let status = read_i32(from)?;
    let stdout = read_bytes(from)?;
    let stderr = read_bytes(from)?;
    let mut retire = [0u8];
    from.read_exact(&mut retire)?;
    Ok(Answer {
        status,
        stdout,
        stderr,
        retire: retire[0] != 0,
    })
}

fn read_i32(from: &mut impl Read) -> io::Result<i32> {
    let mut b = [0u8; 4];
    from.read_exact(&mut b)?;
    Ok(i32::from_be_bytes(b))
}

fn read_bytes(from: &mut impl Read) -> io::Result<Vec<u8>> {
    let len = read_i32(from)?;
    let mut bytes = vec![0u8; len.max(0) as usize];
    from.read_exact(&mut bytes)?;
    Ok(bytes)
}
