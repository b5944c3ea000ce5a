//! The workload's cluster: Java 4.4 voters 1 and 2, kraftd voter 3 (static voters) unless
//! [`Cluster::start_with`] says otherwise (or [`Cluster::start_on`] another Kafka release for
//! the Java controllers, the brokers and the tools), and stock brokers 101-103 with an extra
//! SASL_PLAINTEXT listener (PLAIN) for the delegation-token calls, `StandardAuthorizer`
//! everywhere, and the Kafka tools run against it.

use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use super::log_view::LogView;
use super::tools::Tools;
use crate::harness::mixed_quorum::{Member, Mixed, QuorumMode};
use crate::harness::netns::Placement;
use crate::harness::prometheus::Prometheus;
use crate::harness::quorum_probe::leader_view_at;
use crate::harness::transport::Transport;
use crate::harness::{free_port, JavaBroker, Kafka, Properties, Quorum, ServerBuilder};

pub const KRAFTD: i32 = 3;
pub const BROKERS: [i32; 3] = [101, 102, 103];
/// The release the cluster is formatted at; the workload upgrades it to 4.4-IV2 later.
pub const INITIAL_RELEASE: &str = "3.9-IV0";
/// The SASL/PLAIN user the delegation-token calls authenticate as.
pub const ADMIN_USER: &str = "admin";
const ADMIN_PASSWORD: &str = "admin-secret";
/// How long one step (a tool that keeps failing, a wait on the log) may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings for every node, kraftd included (it reads the session timeout and ignores the
/// rest, with a warning for the authorizer keys).
const EVERY_NODE: &[(&str, &str)] = &[
    (
        "authorizer.class.name",
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    ),
    // PLAINTEXT connections (brokers to controllers, between brokers, the tools) are
    // User:ANONYMOUS; the SASL listener's admin creates the delegation tokens.
    ("super.users", "User:ANONYMOUS;User:admin"),
    ("delegation.token.secret.key", "workload-token-secret"),
    // Preferred elections come from the tool, not from the controller's balancer.
    ("auto.leader.rebalance.enable", "false"),
    // Fence a killed broker within seconds, not the default 9.
    ("broker.session.timeout.ms", "4000"),
    // Every controller snapshots its image several times during the workload (Java's default
    // is every 20 MiB; this log is about 60 KiB), so that kraftd's own snapshots can be compared with Java's image.
    ("metadata.log.max.record.bytes.between.snapshots", "8192"),
];

/// One step of the workload and the quorum's high watermark once it was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub phase: &'static str,
    /// The leader's high watermark: the image at this point covers the records below it.
    pub offset: i64,
}

pub struct Cluster {
    /// The voters; `q.kafka` is the release of the Java controllers, the brokers and the tools.
    pub q: Mixed,
    /// The node whose copy of the log [`Self::view`] reads: a voter ([`KRAFTD`] unless
    /// changed) or a broker (its copy stays whole while the voters come and go).
    pub log_of: i32,
    /// Brokers 101, 102, 103 in that order.
    pub brokers: Vec<JavaBroker>,
    pub checkpoints: Vec<Checkpoint>,
    /// Admin-client config for the brokers' SASL_PLAINTEXT listener as `admin`.
    pub sasl_admin_config: PathBuf,
    sasl_ports: Vec<u16>,
    started: Instant,
    /// Scraping every voter, when the workload watches Strimzi's alerts (alerts.rs).
    pub(super) prometheus: Option<Prometheus>,
}

impl Cluster {
    /// The workload's cluster, observed: every voter serves Prometheus metrics
    /// (`Mixed::start_observed`), which the workload checks against each other.
    /// The voters listen and run where `placement` says.
    pub fn start(transport: Transport, placement: Placement) -> Cluster {
        Self::start_full(
            Kafka::get(),
            QuorumMode::Static,
            placement,
            transport,
            &[KRAFTD],
            INITIAL_RELEASE,
            &[],
            true,
        )
    }

    /// Voters 1..=3, those in `kraftd` running kraftd and the others Java, and the brokers,
    /// every node formatted at `release` (e.g. `4.4-IV2`), the controllers configured with
    /// `controller_overrides` over the workload's settings. The waits read voter 3's log, or
    /// the first kraftd's.
    pub fn start_with(
        kraftd: &[i32],
        release: &str,
        controller_overrides: &[(&str, &str)],
        transport: Transport,
    ) -> Cluster {
        Self::start_on(
            Kafka::get(),
            QuorumMode::Static,
            Placement::default(),
            transport,
            kraftd,
            release,
            controller_overrides,
        )
    }

    /// [`Self::start_with`] on Kafka release `kafka` (its Java controllers, brokers and tools),
    /// on a quorum of either [`QuorumMode`] (the brokers find a dynamic one through
    /// `controller.quorum.bootstrap.servers`), the voters listening and running where
    /// `placement` says (the brokers and clients stay on 127.0.0.1), the controller listeners
    /// secured as `transport` says.
    pub fn start_on(
        kafka: &'static Kafka,
        mode: QuorumMode,
        placement: Placement,
        transport: Transport,
        kraftd: &[i32],
        release: &str,
        controller_overrides: &[(&str, &str)],
    ) -> Cluster {
        Self::start_full(
            kafka,
            mode,
            placement,
            transport,
            kraftd,
            release,
            controller_overrides,
            false,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn start_full(
        kafka: &'static Kafka,
        mode: QuorumMode,
        placement: Placement,
        transport: Transport,
        kraftd: &[i32],
        release: &str,
        controller_overrides: &[(&str, &str)],
        observed: bool,
    ) -> Cluster {
        let started = Instant::now();
        let controllers: Vec<(&str, &str)> = EVERY_NODE
            .iter()
            .filter(|(k, _)| !controller_overrides.iter().any(|(o, _)| o == k))
            .chain(controller_overrides)
            .copied()
            .collect();
        let format = ["--release-version", release];
        let q = Mixed::start_observed(
            kafka,
            mode,
            placement,
            transport,
            kraftd,
            &controllers,
            &format,
            observed,
        );
        let protocol_map = format!(
            "CONTROLLER:{},PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
            transport.controller_protocol()
        );
        let mut sasl_ports = Vec::new();
        let builders = BROKERS
            .iter()
            .map(|&id| {
                let (plain, sasl) = (free_port(), free_port());
                sasl_ports.push(sasl);
                let mut b = JavaBroker::builder(id, q.quorum_for_others())
                    .kafka(kafka)
                    .cluster_id(q.cluster_id.clone())
                    .format_args(&["--release-version", release])
                    .broker_port(plain)
                    .prop(
                        "listeners",
                        format!("PLAINTEXT://127.0.0.1:{plain},SASL_PLAINTEXT://127.0.0.1:{sasl}"),
                    )
                    .prop("listener.security.protocol.map", &protocol_map)
                    .prop("sasl.enabled.mechanisms", "PLAIN")
                    .prop(
                        "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                        format!(
                            "org.apache.kafka.common.security.plain.PlainLoginModule required \
                             user_{ADMIN_USER}=\"{ADMIN_PASSWORD}\";"
                        ),
                    )
                    .prop("broker.heartbeat.interval.ms", 500)
                    .prop("replica.lag.time.max.ms", 10_000)
                    .prop("offsets.topic.replication.factor", 3)
                    .prop("offsets.topic.num.partitions", 3)
                    .prop("transaction.state.log.replication.factor", 3)
                    .prop("transaction.state.log.min.isr", 2)
                    .prop("transaction.state.log.num.partitions", 3);
                for (k, v) in EVERY_NODE {
                    b = b.prop(k, v);
                }
                for (k, v) in q.broker_props(id) {
                    if k != "listener.security.protocol.map" {
                        b = b.prop(&k, v);
                    }
                }
                b
            })
            .collect();
        let brokers = ServerBuilder::start_all(builders, &q.dir);
        let mut sasl = Properties::new();
        sasl.set("security.protocol", "SASL_PLAINTEXT")
            .set("sasl.mechanism", "PLAIN")
            .set(
                "sasl.jaas.config",
                format!(
                    "org.apache.kafka.common.security.plain.PlainLoginModule required \
                     username=\"{ADMIN_USER}\" password=\"{ADMIN_PASSWORD}\";"
                ),
            );
        let sasl_admin_config = q.dir.join("sasl-admin.properties");
        sasl.write(&sasl_admin_config);
        Cluster {
            q,
            log_of: kraftd.first().copied().unwrap_or(KRAFTD),
            brokers,
            checkpoints: Vec::new(),
            sasl_admin_config,
            sasl_ports,
            started,
            prometheus: None,
        }
    }

    pub fn broker(&mut self, id: i32) -> &mut JavaBroker {
        &mut self.brokers[(id - BROKERS[0]) as usize]
    }

    /// The PLAINTEXT listeners of the brokers that are running.
    pub fn bootstrap(&mut self) -> String {
        let live: Vec<String> = self
            .brokers
            .iter_mut()
            .filter_map(|b| b.is_running().then(|| b.bootstrap_server()))
            .collect();
        assert!(!live.is_empty(), "no broker is running");
        live.join(",")
    }

    /// The SASL_PLAINTEXT listener of a running broker.
    pub fn sasl_bootstrap(&mut self) -> String {
        let i = (0..self.brokers.len())
            .find(|&i| self.brokers[i].is_running())
            .expect("no broker is running");
        format!("127.0.0.1:{}", self.sasl_ports[i])
    }

    pub fn kraftd_metadata_dir(&self) -> PathBuf {
        self.q.members[(KRAFTD - 1) as usize].metadata_dir()
    }

    /// What node [`Self::log_of`]'s copy of the log says now (nothing yet if the node has
    /// not created its log).
    pub fn view(&self) -> LogView {
        let id = self.log_of;
        let dir = if BROKERS.contains(&id) {
            self.brokers[(id - BROKERS[0]) as usize]
                .data_dir()
                .to_path_buf()
        } else {
            self.q.members[(id - 1) as usize].metadata_dir()
        };
        if !dir.join("__cluster_metadata-0").is_dir() {
            return LogView::default();
        }
        LogView::read(&dir)
    }

    /// Polls node [`Self::log_of`]'s log until `done` holds; panics naming `what` after
    /// [`STEP_TIMEOUT`].
    #[track_caller]
    pub fn wait_for(&mut self, what: &str, done: impl Fn(&LogView) -> bool) -> LogView {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let view = self.view();
            if done(&view) {
                return view;
            }
            self.assert_running();
            assert!(
                Instant::now() < deadline,
                "node {}'s log did not show {what} within {STEP_TIMEOUT:?} (its log ends at \
                 offset {}; brokers {:?}; see the node logs in {})",
                self.log_of,
                view.end_offset,
                view.brokers,
                self.q.dir.path().display()
            );
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// The tools, pointed at the brokers that run now.
    pub fn tools(&mut self) -> Tools {
        let (bootstrap, sasl) = (self.bootstrap(), self.sasl_bootstrap());
        Tools::new(self.q.kafka, bootstrap, sasl, &self.sasl_admin_config)
    }

    /// Records the leader's high watermark as the end of `phase`.
    pub fn checkpoint(&mut self, phase: &'static str) {
        let deadline = Instant::now() + STEP_TIMEOUT;
        let offset = loop {
            if let Some(d) = leader_view_at(&self.q.addrs()) {
                break d.high_watermark;
            }
            assert!(
                Instant::now() < deadline,
                "no leader to read a checkpoint from"
            );
            thread::sleep(Duration::from_millis(100));
        };
        self.checkpoint_at(phase, offset);
    }

    /// Records `offset` as the end of `phase`.
    pub fn checkpoint_at(&mut self, phase: &'static str, offset: i64) {
        eprintln!(
            "  [{:>5.1?}] {phase}: high watermark {offset}",
            self.started.elapsed()
        );
        self.checkpoints.push(Checkpoint { phase, offset });
    }

    /// Every controller and every broker that should run does.
    #[track_caller]
    pub fn assert_running(&mut self) {
        for (i, m) in self.q.members.iter_mut().enumerate() {
            let running = match m {
                Member::Java(j) => j.is_running(),
                Member::Kraftd(k, _) => k.is_running(),
            };
            assert!(running, "controller {} ({}) exited", i + 1, m.kind());
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
