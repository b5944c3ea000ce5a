//! Real Kafka servers (controller, broker or combined) run from a generated `server.properties`.
//!
//! ```ignore
//! let dir = TestDir::new();
//! let mut controller = JavaController::builder(1).start(&dir); // formatted --standalone
//! controller.wait_until_leader(Duration::from_secs(60));
//! ```

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant};

use super::kafka::{Kafka, Tool};
use super::process::{describe_status, ChildGuard};
use super::props::Properties;
use super::server_builder::{Quorum, ServerBuilder, Spec};
use super::testdir::TestDir;
use super::tools::QuorumStatus;

/// What a broker's metadata loader and publishers log on a fault.
const BROKER_METADATA_FAULTS: [&str; 2] = [
    "Encountered metadata loading fault",
    "Encountered metadata publishing fault",
];

/// JVM options for servers: a modest heap, a single-threaded GC and the quick (C1) compiler only,
/// as the test machine has two cores shared by several JVMs that mostly wait; the optimising
/// compiler's work would not pay off in a test's lifetime. (`make bench` runs Java as shipped.)
const SERVER_JVM_OPTS: &[&str] = &[
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
];

/// Replaces [`SERVER_JVM_OPTS`] when set (whitespace-separated): `make bench-controller` runs
/// the Java controllers with the options Kafka's start scripts ship with, not the test's.
pub const JAVA_OPTS_ENV: &str = "KRAFTD_BENCH_JAVA_OPTS";

/// Pause between two `describe --status` polls.
const QUORUM_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// A running (or stopped) `kafka.Kafka` process. Dropping it SIGKILLs the JVM.
pub struct JavaServer {
    spec: Spec,
    config: PathBuf,
    data_dir: PathBuf,
    guard: ChildGuard,
}

/// A server whose `server.properties` is written and whose storage is formatted, not yet
/// started.
pub(super) struct Prepared {
    spec: Spec,
    config: PathBuf,
    data_dir: PathBuf,
}

impl Prepared {
    /// Starts the JVM. Call it from the test's own thread: a child is killed when the thread
    /// that spawned it exits (see `process.rs`).
    pub(super) fn spawn(self, dir: &TestDir) -> JavaServer {
        let guard = spawn_server(self.spec.kafka, &self.spec, &self.config, dir);
        JavaServer {
            spec: self.spec,
            config: self.config,
            data_dir: self.data_dir,
            guard,
        }
    }
}

impl JavaServer {
    pub(super) fn start(spec: Spec, dir: &TestDir) -> JavaServer {
        Self::prepare(spec, dir).spawn(dir)
    }

    /// Writes the config and formats the storage (a JVM run); any thread may do this.
    pub(super) fn prepare(spec: Spec, dir: &TestDir) -> Prepared {
        let kafka = spec.kafka;
        let node_dir = dir.subdir(&spec.name);
        let config = node_dir.join("server.properties");
        let mut props = spec.props.clone();
        if props.get("log.dirs").is_none() {
            props.set("log.dirs", node_dir.join("data").display().to_string());
        }
        // Kafka keeps the metadata log (and its meta.properties) in metadata.log.dir, else in
        // the first of log.dirs.
        let data_dir = props
            .get("metadata.log.dir")
            .or_else(|| {
                props
                    .get("log.dirs")
                    .and_then(|dirs| dirs.split(',').next())
            })
            .map(PathBuf::from)
            .expect("log.dirs is set above");
        props.write(&config);
        if spec.format {
            let extra: Vec<&str> = spec.format_args.iter().map(String::as_str).collect();
            let out = kafka.storage_format(&config, &spec.cluster_id, &spec.flag, &extra);
            assert!(
                out.success(),
                "kafka-storage format of {} failed ({}):\n{out}",
                spec.name,
                config.display()
            );
        }
        Prepared {
            spec,
            config,
            data_dir,
        }
    }

    /// Starts the server again on the same config and data (no reformat). It must be stopped.
    pub fn restart(&mut self, dir: &TestDir) {
        assert!(
            !self.guard.is_running(),
            "{} is still running; stop it before restart",
            self.spec.name
        );
        self.guard = spawn_server(self.spec.kafka, &self.spec, &self.config, dir);
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The Kafka release whose jars format and run this server (a restart keeps it).
    pub fn kafka(&self) -> &'static Kafka {
        self.spec.kafka
    }

    /// Panics unless the running JVM is `kafka`'s: the release this server was built with, and
    /// the classpath of the live process (read from `/proc/<pid>/environ`) is that release's.
    #[track_caller]
    pub fn assert_runs(&self, kafka: &Kafka) {
        assert_eq!(
            self.spec.kafka.version(),
            kafka.version(),
            "{} is built on another Kafka",
            self.spec.name
        );
        let environ = std::fs::read(format!("/proc/{}/environ", self.pid()))
            .unwrap_or_else(|e| panic!("cannot read the environment of {}: {e}", self.spec.name));
        let classpath = environ
            .split(|&b| b == 0)
            .find_map(|v| v.strip_prefix(b"CLASSPATH="))
            .map(String::from_utf8_lossy);
        assert_eq!(
            classpath.as_deref(),
            Some(kafka.classpath()),
            "{} does not run Kafka {}'s jars",
            self.spec.name,
            kafka.version()
        );
    }

    pub fn node_id(&self) -> i32 {
        self.spec.node_id
    }

    pub fn cluster_id(&self) -> &str {
        &self.spec.cluster_id
    }

    /// The controller port for controllers (and combined nodes), the broker port for brokers.
    pub fn port(&self) -> u16 {
        self.spec
            .controller_port
            .or(self.spec.broker_port)
            .expect("a server has a listener")
    }

    pub fn controller_port(&self) -> Option<u16> {
        self.spec.controller_port
    }

    pub fn broker_port(&self) -> Option<u16> {
        self.spec.broker_port
    }

    /// `<host>:<controller port>` (127.0.0.1 unless its voter listens elsewhere); panics for a
    /// broker-only node.
    pub fn controller_endpoint(&self) -> String {
        let port = self
            .spec
            .controller_port
            .unwrap_or_else(|| panic!("{} has no controller listener", self.spec.name));
        format!("{}:{port}", self.spec.controller_host)
    }

    /// `127.0.0.1:<broker port>` for `--bootstrap-server`; panics for a controller-only node.
    pub fn bootstrap_server(&self) -> String {
        let port = self
            .spec
            .broker_port
            .unwrap_or_else(|| panic!("{} has no broker listener", self.spec.name));
        format!("127.0.0.1:{port}")
    }

    /// The quorum's controllers as `host:port,...`, for `--bootstrap-controller`.
    pub fn bootstrap_controllers(&self) -> &str {
        &self.spec.bootstrap_controllers
    }

    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// The `server.properties` the server was started with.
    pub fn config(&self) -> Properties {
        Properties::read(&self.config)
    }

    /// The directory holding the metadata log and its `meta.properties`.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// `<data>/__cluster_metadata-0`, the KRaft log.
    pub fn metadata_log_dir(&self) -> PathBuf {
        self.data_dir.join("__cluster_metadata-0")
    }

    /// The directory id that `kafka-storage format` wrote into `meta.properties`.
    pub fn directory_id(&self) -> String {
        let meta = Properties::read(&self.data_dir.join("meta.properties"));
        meta.get("directory.id")
            .unwrap_or_else(|| panic!("{}: meta.properties has no directory.id", self.spec.name))
            .to_string()
    }

    pub fn log_path(&self) -> &Path {
        self.guard
            .log_path()
            .expect("servers are spawned with a log")
    }

    pub fn pid(&self) -> u32 {
        self.guard.pid()
    }

    pub fn is_running(&mut self) -> bool {
        self.guard.is_running()
    }

    /// SIGKILLs the JVM (a crash: no shutdown hook, no flush) and reaps it.
    pub fn kill9(&mut self) -> ExitStatus {
        self.guard.kill9()
    }

    /// Sends `signal` (e.g. SIGSTOP/SIGCONT to freeze and thaw the JVM).
    pub fn signal(&mut self, signal: i32) {
        self.guard.signal(signal)
    }

    /// Sends SIGTERM (Kafka's shutdown hook runs a controlled shutdown); does not wait.
    pub fn sigterm(&mut self) {
        self.guard.sigterm()
    }

    /// Waits for the JVM to exit; SIGKILLs it and panics after `timeout`.
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

    /// Panics if the broker's metadata loader or a publisher logged a fault (the fault
    /// handler's line, which also counts `metadata-load-error-count` and the publisher's fault
    /// metric): a record it could not load or apply.
    #[track_caller]
    pub fn assert_no_metadata_faults(&self) {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        for fault in BROKER_METADATA_FAULTS {
            assert!(!log.contains(fault), "{}: {fault}", self.spec.name);
        }
    }

    /// Waits until the server's log contains `needle`.
    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) -> bool {
        self.guard.wait_for_log(needle, timeout)
    }

    /// Waits for Kafka's `Kafka Server started` log line, which every role logs once its startup
    /// finished; panics on timeout or if the server exits first.
    #[track_caller]
    pub fn wait_until_started(&mut self, timeout: Duration) {
        if !self.guard.wait_for_log("Kafka Server started", timeout) {
            let state = match self.guard.try_status() {
                Some(status) => format!("exited ({})", describe_status(status)),
                None => format!("still not started after {timeout:?}"),
            };
            panic!(
                "{} {state}; log: {}",
                self.spec.name,
                self.guard.log_display()
            );
        }
    }

    /// Polls `kafka-metadata-quorum describe --status` until this node is the leader.
    #[track_caller]
    pub fn wait_until_leader(&mut self, timeout: Duration) -> QuorumStatus {
        let id = self.node_id();
        self.wait_for_quorum(timeout, &format!("node {id} to lead"), |s| {
            s.leader_id == id
        })
    }

    /// Polls `kafka-metadata-quorum describe --status` until the quorum has any leader.
    #[track_caller]
    pub fn wait_for_leader(&mut self, timeout: Duration) -> QuorumStatus {
        self.wait_for_quorum(timeout, "a leader", |s| s.leader_id >= 0)
    }

    /// Polls `describe --status` (against this node if it is a controller, else against the
    /// quorum) until `done` holds; panics on timeout or if this server exits meanwhile.
    #[track_caller]
    pub fn wait_for_quorum(
        &mut self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&QuorumStatus) -> bool,
    ) -> QuorumStatus {
        let kafka = Kafka::get();
        let target = match self.spec.controller_port {
            Some(_) => self.controller_endpoint(),
            None => self.spec.bootstrap_controllers.clone(),
        };
        let deadline = Instant::now() + timeout;
        let mut last;
        loop {
            if let Some(status) = self.guard.try_status() {
                panic!(
                    "{} exited ({}) while waiting for {what}; log: {}",
                    self.spec.name,
                    describe_status(status),
                    self.guard.log_display()
                );
            }
            match kafka.quorum_status(&target) {
                Ok(status) if done(&status) => return status,
                Ok(status) => last = format!("{status:?}"),
                Err(out) => last = out.to_string(),
            }
            if Instant::now() >= deadline {
                panic!("timed out after {timeout:?} waiting for {what} (asked {target}); last describe --status:\n{last}");
            }
            thread::sleep(QUORUM_POLL_INTERVAL);
        }
    }
}

fn spawn_server(kafka: &Kafka, spec: &Spec, config: &Path, dir: &TestDir) -> ChildGuard {
    let mut jvm_opts: Vec<String> = match std::env::var(JAVA_OPTS_ENV) {
        Ok(opts) if !opts.trim().is_empty() => {
            opts.split_whitespace().map(str::to_string).collect()
        }
        _ => SERVER_JVM_OPTS.iter().map(|s| s.to_string()).collect(),
    };
    jvm_opts.extend(spec.jvm_opts.iter().cloned());
    let mut cmd = kafka.java_command(
        kafka.main_class(Tool::Server),
        &kafka.server_log4j_config(),
        &jvm_opts,
    );
    cmd.arg(config);
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(netns) = &spec.netns {
        super::netns::enter(&mut cmd, netns);
    }
    let log = dir.log_path(&spec.name);
    ChildGuard::spawn_logged(&spec.name, cmd, &log)
        .unwrap_or_else(|e| panic!("cannot start {} (java kafka.Kafka): {e}", spec.name))
}

/// A Java KRaft controller (or a combined node built with `.also_broker()`).
pub struct JavaController(JavaServer);

impl JavaController {
    /// A controller with node id `node_id`, by default a standalone single-node quorum.
    pub fn builder(node_id: i32) -> ServerBuilder<JavaController> {
        ServerBuilder::new(node_id, true, false, Quorum::Standalone)
    }
}

/// A Java broker; give it the quorum it joins (`Quorum::Bootstrap`, `InitialControllers` or `StaticVoters`).
pub struct JavaBroker(JavaServer);

impl JavaBroker {
    pub fn builder(node_id: i32, quorum: Quorum) -> ServerBuilder<JavaBroker> {
        ServerBuilder::new(node_id, false, true, quorum)
    }
}

macro_rules! server_handle {
    ($handle:ident) => {
        impl From<JavaServer> for $handle {
            fn from(server: JavaServer) -> Self {
                $handle(server)
            }
        }
        impl Deref for $handle {
            type Target = JavaServer;
            fn deref(&self) -> &JavaServer {
                &self.0
            }
        }
        impl DerefMut for $handle {
            fn deref_mut(&mut self) -> &mut JavaServer {
                &mut self.0
            }
        }
    };
}

server_handle!(JavaController);
server_handle!(JavaBroker);
