//! Mixed static quorums of Java and kraftd controllers (voters 1..=3), each node formatted by
//! its own tool with one cluster id, and the moves the compat tests make on them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use super::dynamic_quorum::{kraftd_format_with, kraftd_props};
use super::netns::Placement;
use super::quorum_probe::{all_caught_up, assert_same_batches, leader_view_at, read_log_batches};
use super::transport::{Role, Transport};
use super::{
    voters, JavaController, Kafka, KraftdProcess, Properties, Quorum, ServerBuilder, TestDir, Voter,
};
use kraftd::raft::msg::DescribeQuorumResponse;

/// How long a mixed quorum may take to elect or catch up.
pub const TIMEOUT: Duration = Duration::from_secs(90);

pub enum Member {
    Java(JavaController),
    Kraftd(KraftdProcess, PathBuf),
}

impl Member {
    pub fn kind(&self) -> &'static str {
        match self {
            Member::Java(_) => "java",
            Member::Kraftd(..) => "kraftd",
        }
    }
    pub fn metadata_dir(&self) -> PathBuf {
        match self {
            // The harness names the partition directory; the batches' reader wants its parent.
            Member::Java(j) => j.metadata_log_dir().parent().unwrap().to_path_buf(),
            Member::Kraftd(_, data) => data.clone(),
        }
    }
    /// The `directory.id` its format wrote into `meta.properties`.
    pub fn directory_id(&self) -> String {
        let meta = Properties::read(&self.metadata_dir().join("meta.properties"));
        meta.get("directory.id")
            .unwrap_or_else(|| panic!("{}: meta.properties has no directory.id", self.kind()))
            .to_string()
    }
    pub fn kill9(&mut self) {
        match self {
            Member::Java(j) => {
                j.kill9();
            }
            Member::Kraftd(k, _) => {
                k.kill9();
            }
        }
    }
    pub fn sigterm(&mut self) {
        match self {
            Member::Java(j) => j.sigterm(),
            Member::Kraftd(k, _) => k.sigterm(),
        }
    }
    /// Waits for the exit that follows a SIGTERM and checks it was clean: kraftd exits 0; the
    /// JVM, after running Kafka's shutdown hook, exits with 143 (128 + SIGTERM).
    #[track_caller]
    pub fn assert_clean_exit(&mut self, name: &str) {
        let status = match self {
            Member::Java(j) => j.wait_exit(Duration::from_secs(60)),
            Member::Kraftd(k, _) => k.wait_exit(Duration::from_secs(30)),
        };
        let clean = match self {
            Member::Java(_) => {
                status.code() == Some(143)
                    || status.success()
                    || (status.code() == Some(1) && self.lost_kafkas_shutdown_race(name))
            }
            Member::Kraftd(..) => status.success(),
        };
        assert!(clean, "{name} exited with {status:?} after SIGTERM");
    }
    /// Whether this Java voter's log shows Kafka's metadata-loader shutdown race (said so).
    fn lost_kafkas_shutdown_race(&self, name: &str) -> bool {
        let race = java_loader_shutdown_race(&self.log_text());
        if race {
            eprintln!("{name}: exit 1 from Kafka's metadata-loader shutdown race");
        }
        race
    }
    pub fn signal(&mut self, sig: i32) {
        match self {
            Member::Java(j) => j.signal(sig),
            Member::Kraftd(k, _) => k.signal(sig),
        }
    }
    /// Everything the node has logged so far.
    pub fn log_text(&self) -> String {
        let path = match self {
            Member::Java(j) => j.log_path().to_path_buf(),
            Member::Kraftd(k, _) => k.log_path().to_path_buf(),
        };
        std::fs::read_to_string(path).unwrap_or_default()
    }

    pub fn restart(&mut self, dir: &TestDir) {
        match self {
            Member::Java(j) => j.restart(dir),
            Member::Kraftd(k, _) => k.restart(dir),
        }
    }
    /// Java only: panics if the JVM exited or logged a replay, metadata-loading or fatal
    /// error. Other ERROR lines (e.g. a resigning controller refusing a request with
    /// NotControllerException, which Java logs at ERROR) are counted and printed.
    #[track_caller]
    pub fn assert_java_healthy(&mut self, name: &str) -> usize {
        let Member::Java(j) = self else { return 0 };
        assert!(
            j.is_running(),
            "{name} exited; log: {}",
            j.log_path().display()
        );
        let log = std::fs::read_to_string(j.log_path()).unwrap_or_default();
        let errors: Vec<&str> = log.lines().filter(|l| l.contains(" ERROR ")).collect();
        let fatal: Vec<&str> = errors
            .iter()
            .copied()
            .filter(|l| {
                // Kafka's fault handlers ("Encountered fatal fault", "Encountered metadata
                // loading fault"), the metadata loader and replay, and dying threads.
                [
                    "Encountered",
                    "fatal",
                    "Fatal",
                    "replay",
                    "MetadataLoader",
                    "Exception in thread",
                ]
                .iter()
                .any(|p| l.contains(p))
            })
            .collect();
        assert!(
            fatal.is_empty(),
            "{name} logged replay or fatal errors:\n{}",
            fatal.join("\n")
        );
        errors.len()
    }
}

/// How a voter is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A clean shutdown (a leader resigns first).
    Sigterm,
    /// A crash: no shutdown hook, no flush.
    Kill9,
}

/// How the voters of a [`Mixed`] quorum know each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuorumMode {
    /// `controller.quorum.voters` (kraft.version 0): the voter set is fixed by the config.
    Static,
    /// `controller.quorum.bootstrap.servers`, formatted with `--initial-controllers`
    /// (kraft.version 1): the voter set lives in the log and changes through
    /// `add-controller` / `remove-controller`.
    Dynamic,
}

pub struct Mixed {
    /// The Kafka release the Java controllers run (and format with).
    pub kafka: &'static Kafka,
    pub dir: TestDir,
    pub cluster_id: String,
    /// Voters 1..=3 in that order; a voter's directory id is the one it runs with now.
    pub voters: Vec<Voter>,
    pub members: Vec<Member>,
    pub mode: QuorumMode,
    /// The properties every node got over the harness's, and the format arguments: a node on a
    /// new directory gets them too.
    pub node_props: Vec<(String, String)>,
    pub format_args: Vec<String>,
    /// Where each voter listens and runs (127.0.0.1, this network namespace, by default).
    pub placement: Placement,
    /// How the controller listeners are secured.
    pub transport: Transport,
    /// Each voter's Prometheus endpoint, on its host address (kraftd's `kraftd.http.listener`,
    /// the JMX exporter javaagent on a Java controller), when the quorum was started observed.
    pub metrics_addrs: Vec<Option<SocketAddr>>,
}

impl Mixed {
    /// Voters 1..=3; the ids in `kraftd` run kraftd, the others Java.
    pub fn start(kraftd: &[i32]) -> Mixed {
        Self::start_with(kraftd, &[])
    }

    /// [`Self::start`] with extra properties for every node.
    pub fn start_with(kraftd: &[i32], extra: &[(&str, &str)]) -> Mixed {
        Self::start_formatted(kraftd, extra, &[])
    }

    /// [`Self::start_with`], every node formatted with `format_args` too (both `kafka-storage
    /// format` and `kraftd format` take e.g. `--release-version 3.9-IV0`).
    pub fn start_formatted(kraftd: &[i32], extra: &[(&str, &str)], format_args: &[&str]) -> Mixed {
        Self::start_on(
            Kafka::get(),
            QuorumMode::Static,
            Placement::default(),
            Transport::Plaintext,
            kraftd,
            extra,
            format_args,
        )
    }

    /// Voters 1..=3 of a quorum of `mode`, the Java ones of Kafka release `kafka`, each voter
    /// listening and running where `placement` says; the ids in `kraftd` run kraftd; every
    /// node gets the `extra` properties and is formatted with `format_args`; the controller
    /// listeners are secured as `transport` says.
    pub fn start_on(
        kafka: &'static Kafka,
        mode: QuorumMode,
        placement: Placement,
        transport: Transport,
        kraftd: &[i32],
        extra: &[(&str, &str)],
        format_args: &[&str],
    ) -> Mixed {
        Self::start_observed(
            kafka,
            mode,
            placement,
            transport,
            kraftd,
            extra,
            format_args,
            false,
        )
    }

    /// [`Self::start_on`]; with `observed`, every voter serves Prometheus metrics on a port of
    /// its host address ([`Self::metrics_addrs`]): kraftd on `kraftd.http.listener`, each Java
    /// controller through the JMX exporter javaagent under compat/jmx-exporter-kraft.yaml.
    #[allow(clippy::too_many_arguments)]
    pub fn start_observed(
        kafka: &'static Kafka,
        mode: QuorumMode,
        placement: Placement,
        transport: Transport,
        kraftd: &[i32],
        extra: &[(&str, &str)],
        format_args: &[&str],
        observed: bool,
    ) -> Mixed {
        let dir = TestDir::new();
        let cluster_id = kafka.random_uuid();
        let mut voters = voters(1..=3);
        for v in &mut voters {
            v.host = placement.host(v.id);
        }
        let metrics_addrs: Vec<Option<SocketAddr>> = voters
            .iter()
            .map(|v| observed.then(|| SocketAddr::from((v.host, super::free_port()))))
            .collect();
        transport.register(voters.iter().map(|v| v.port));
        let format_args: Vec<String> = format_args
            .iter()
            .map(|a| a.to_string())
            .chain(transport.format_args())
            .collect();
        let format_args: Vec<&str> = format_args.iter().map(String::as_str).collect();
        let format_args = format_args.as_slice();
        let node_props: Vec<(String, String)> = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let props_for = |id, kraftd| secured_props(transport, &node_props, id, kraftd);
        let quorum = match mode {
            QuorumMode::Static => Quorum::StaticVoters(voters.clone()),
            QuorumMode::Dynamic => Quorum::InitialControllers(voters.clone()),
        };
        // The Java voters' formats run in parallel (a JVM each); the servers start in order.
        let java_builders = voters
            .iter()
            .filter(|v| !kraftd.contains(&v.id))
            .map(|v| {
                let mut builder = JavaController::builder(v.id)
                    .kafka(kafka)
                    .quorum(quorum.clone())
                    .cluster_id(cluster_id.clone())
                    .format_args(format_args);
                for (k, v) in props_for(v.id, false) {
                    builder = builder.prop(&k, v);
                }
                if let Some(addr) = metrics_addrs[(v.id - 1) as usize] {
                    builder = builder.jvm_opt(&super::metrics::jmx_exporter_opt(kafka, addr));
                }
                if let Some(netns) = placement.netns(v.id) {
                    builder = builder.netns(netns);
                }
                builder.env(&placement.env(v.id))
            })
            .collect();
        let mut java = ServerBuilder::start_all(java_builders, &dir).into_iter();
        let members = voters
            .iter()
            .map(|v| {
                if !kraftd.contains(&v.id) {
                    return Member::Java(java.next().expect("one Java server per Java voter"));
                }
                let data = dir.subdir(format!("kraftd-{}-data", v.id));
                let (mut props, flag) = kraftd_props(v.id, v.port, &data, &quorum);
                props.set("listeners", format!("CONTROLLER://{}", v.endpoint()));
                for (k, v) in props_for(v.id, true) {
                    props.set(k, v);
                }
                if let Some(addr) = metrics_addrs[(v.id - 1) as usize] {
                    props.set("kraftd.http.listener", addr.to_string());
                }
                let name = format!("kraftd-{}", v.id);
                let config = KraftdProcess::write_config(&dir, &name, &props);
                kraftd_format_with(&config, &cluster_id, &flag, format_args);
                let config = config.display().to_string();
                let start = ["start", config.as_str()];
                let netns = placement.netns(v.id);
                Member::Kraftd(
                    KraftdProcess::start_in_netns(&dir, &name, &start, placement.env(v.id), netns),
                    data,
                )
            })
            .collect();
        Mixed {
            kafka,
            dir,
            cluster_id,
            voters,
            members,
            mode,
            node_props,
            format_args: format_args.iter().map(|a| a.to_string()).collect(),
            placement,
            transport,
            metrics_addrs,
        }
    }

    /// Voter `id`'s settings over the harness's: the quorum's, and its TLS if any (as `kraftd`
    /// or as a Java controller).
    pub fn props_for(&self, id: i32, kraftd: bool) -> Vec<(String, String)> {
        secured_props(self.transport, &self.node_props, id, kraftd)
    }

    /// A broker's TLS settings for reaching this quorum (none on PLAINTEXT).
    pub fn broker_props(&self, id: i32) -> Vec<(String, String)> {
        let super_users = self.node_props.iter().find(|(k, _)| k == "super.users");
        self.transport
            .node_props(id, Role::Broker, super_users.map(|(_, v)| v.as_str()))
    }

    /// How a broker (or an observer) finds this quorum.
    pub fn quorum_for_others(&self) -> Quorum {
        match self.mode {
            QuorumMode::Static => Quorum::StaticVoters(self.voters.clone()),
            QuorumMode::Dynamic => {
                Quorum::Bootstrap(self.voters.iter().map(Voter::endpoint).collect())
            }
        }
    }

    pub fn ports(&self) -> Vec<u16> {
        self.voters.iter().map(|v| v.port).collect()
    }

    /// Each voter's listener address.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.voters
            .iter()
            .map(|v| SocketAddr::from((v.host, v.port)))
            .collect()
    }

    pub fn bootstrap(&self) -> String {
        self.voters
            .iter()
            .map(Voter::endpoint)
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn member(&mut self, id: i32) -> &mut Member {
        &mut self.members[(id - 1) as usize]
    }

    /// Waits until a controller (Java or kraftd) leads in an epoch after `after`.
    pub fn wait_for_leader(&self, after: i32) -> DescribeQuorumResponse {
        let ids: Vec<i32> = self.voters.iter().map(|v| v.id).collect();
        self.wait_for_leader_asking(after, &ids)
    }

    /// [`Self::wait_for_leader`] asking only voters `ids` (a paused one would answer nothing).
    pub fn wait_for_leader_asking(&self, after: i32, ids: &[i32]) -> DescribeQuorumResponse {
        let addrs: Vec<SocketAddr> = self
            .voters
            .iter()
            .filter(|v| ids.contains(&v.id))
            .map(|v| SocketAddr::from((v.host, v.port)))
            .collect();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(d) = leader_view_at(&addrs).filter(|d| d.leader_epoch > after) {
                return d;
            }
            assert!(
                Instant::now() < deadline,
                "no controller led after epoch {after} within {TIMEOUT:?}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops voter `id` (a Java controller) and starts kraftd in its place: on its data
    /// directory, from its own `server.properties` (same node id, listener and voters).
    /// Returns the stopped Java controller, which [`Self::replace_with_java`] can bring back.
    pub fn replace_with_kraftd(&mut self, id: i32, stop: Stop) -> JavaController {
        self.stop_member(id, stop);
        let (config, data) = match self.member(id) {
            Member::Java(j) => (
                j.config_path().display().to_string(),
                j.data_dir().to_path_buf(),
            ),
            Member::Kraftd(..) => panic!("voter {id} already runs kraftd"),
        };
        let netns = self.placement.netns(id);
        let name = format!("kraftd-{id}");
        let env = self.placement.env(id);
        let kraftd =
            KraftdProcess::start_in_netns(&self.dir, &name, &["start", &config], env, netns);
        match std::mem::replace(self.member(id), Member::Kraftd(kraftd, data)) {
            Member::Java(j) => j,
            Member::Kraftd(..) => unreachable!("checked above"),
        }
    }

    /// Stops voter `id` (kraftd) and restarts `java`, the Java controller it replaced, on
    /// the same directory and config, with the quorum's Kafka release.
    pub fn replace_with_java(&mut self, id: i32, mut java: JavaController, stop: Stop) {
        assert!(
            matches!(self.member(id), Member::Kraftd(..)),
            "voter {id} does not run kraftd"
        );
        self.stop_member(id, stop);
        java.restart(&self.dir);
        java.assert_runs(self.kafka);
        *self.member(id) = Member::Java(java);
    }

    /// SIGTERM to every voter at once, then a check that each exited cleanly.
    pub fn stop(&mut self) {
        for m in &mut self.members {
            m.sigterm();
        }
        for (i, m) in self.members.iter_mut().enumerate() {
            let name = format!("{} controller {}", m.kind(), i + 1);
            m.assert_clean_exit(&name);
        }
    }

    /// Stops voter `id`: SIGTERM and a check that it exited cleanly, or SIGKILL.
    pub fn stop_member(&mut self, id: i32, stop: Stop) {
        let m = self.member(id);
        match stop {
            Stop::Sigterm => {
                let name = format!("{} controller {id}", m.kind());
                m.sigterm();
                m.assert_clean_exit(&name);
            }
            Stop::Kill9 => m.kill9(),
        }
    }

    /// Starts stopped voter `id` again on its directory and config; a Java voter is waited for
    /// until its startup finished. Kafka 4.4 stopped during its startup (between the raft
    /// client's start and the registration channel's) exits 1 with a NullPointerException in
    /// `RaftControllerNodeProvider`, seen once in a fresh-clone `make test`.
    pub fn restart_member(&mut self, id: i32) {
        self.members[(id - 1) as usize].restart(&self.dir);
        if let Member::Java(j) = self.member(id) {
            j.wait_until_started(TIMEOUT);
        }
    }

    /// Waits until a leader reports every voter at its own log end offset, past `min_hw`.
    pub fn wait_caught_up(&self, min_hw: i64) -> DescribeQuorumResponse {
        let addrs = self.addrs();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(d) = leader_view_at(&addrs) {
                if d.high_watermark > min_hw && all_caught_up(&d) {
                    return d;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the quorum did not catch up within {TIMEOUT:?}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every node holds the same batches below the high watermark, from the highest log start
    /// among them (below it some node holds a snapshot instead).
    pub fn assert_logs_identical(&self, below: i64) -> usize {
        let logs: Vec<(String, Vec<_>)> = self
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                (
                    format!("{}-{}", m.kind(), i + 1),
                    read_log_batches(&m.metadata_dir()),
                )
            })
            .collect();
        let from = logs
            .iter()
            .map(|(_, l)| l.first().map_or(0, |b| b.0))
            .max()
            .unwrap_or(0);
        assert_same_batches(&logs, from, below)
    }

    pub fn assert_java_healthy(&mut self) {
        for (i, m) in self.members.iter_mut().enumerate() {
            let other_errors = m.assert_java_healthy(&format!("java controller {}", i + 1));
            if other_errors > 0 {
                eprintln!(
                    "  java controller {}: {other_errors} other ERROR lines so far",
                    i + 1
                );
            }
        }
    }
}

/// Kafka 4.4's own shutdown race: the shutdown hook closes the log's files while the metadata
/// loader still reads a commit from them, and the loader's fault handler ends the JVM with
/// exit code 1 (`Unhandled fault in MetadataLoader#handleCommit`, caused by a
/// `ClosedChannelException`). Seen once in `make test`, on a Java voter stopped seconds after a
/// restart.
fn java_loader_shutdown_race(log: &str) -> bool {
    let fault = "Encountered fatal fault: Unhandled fault in MetadataLoader#handleCommit";
    log.rfind(fault)
        .is_some_and(|at| log[at..].contains("java.nio.channels.ClosedChannelException"))
        && log.contains("kafka-shutdown-hook")
}

/// `node_props` with voter `id`'s TLS settings over them (`super.users` extended by them).
fn secured_props(
    transport: Transport,
    node_props: &[(String, String)],
    id: i32,
    kraftd: bool,
) -> Vec<(String, String)> {
    let super_users = node_props.iter().find(|(k, _)| k == "super.users");
    let secured = transport.node_props(
        id,
        Role::Controller { kraftd },
        super_users.map(|(_, v)| v.as_str()),
    );
    let mut props: Vec<(String, String)> = node_props
        .iter()
        .filter(|(k, _)| !secured.iter().any(|(s, _)| s == k))
        .cloned()
        .collect();
    props.extend(secured);
    props
}
