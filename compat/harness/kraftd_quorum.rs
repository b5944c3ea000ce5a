//! A quorum of kraftd controllers only, with static voters (`controller.quorum.voters`), each
//! from `config/quorum/controller-<id>.properties` with its own port and data directory, and
//! the stock brokers that register with it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::quorum_probe::describe_quorum;
use super::transport::{Role, Transport};
use super::{
    free_port, JavaBroker, Kafka, KraftdProcess, Properties, Quorum, ServerBuilder, TestDir, Voter,
    KRAFTD_COMMAND_TIMEOUT,
};

const START_TIMEOUT: Duration = Duration::from_secs(120);
/// What a stock broker logs once it is unfenced.
pub const BROKER_RUNNING: &str =
    "The broker has been unfenced. Transitioning from RECOVERY to RUNNING.";

pub struct KraftdQuorum {
    pub cluster_id: String,
    pub voters: Vec<Voter>,
    /// Voter `i + 1` at index `i`.
    pub nodes: Vec<KraftdProcess>,
    /// Every voter's `host:port`, comma-separated (for `--bootstrap-controller`).
    pub bootstrap: String,
    /// How the controller listeners are secured.
    pub transport: Transport,
}

impl KraftdQuorum {
    /// Formats and starts voters `1..=n`, then waits until one leads.
    pub fn start(dir: &TestDir, n: i32) -> KraftdQuorum {
        Self::start_secured(dir, n, Transport::Plaintext)
    }

    /// [`Self::start`] with the controller listeners secured as `transport` says.
    pub fn start_secured(dir: &TestDir, n: i32, transport: Transport) -> KraftdQuorum {
        Self::start_secured_with(dir, n, transport, |_| Vec::new())
    }

    /// [`Self::start_secured`], voter `id`'s settings overridden by `props(id)`.
    pub fn start_secured_with(
        dir: &TestDir,
        n: i32,
        transport: Transport,
        props: impl Fn(i32) -> Vec<(String, String)>,
    ) -> KraftdQuorum {
        let overrides = props;
        let voters: Vec<Voter> = (1..=n)
            .map(|id| Voter {
                id,
                host: std::net::Ipv4Addr::LOCALHOST,
                port: free_port(),
                directory_id: String::new(),
            })
            .collect();
        transport.register(voters.iter().map(|v| v.port));
        let voter_list = voters
            .iter()
            .map(|v| format!("{}@{}", v.id, v.endpoint()))
            .collect::<Vec<_>>()
            .join(",");
        let bootstrap = voters
            .iter()
            .map(Voter::endpoint)
            .collect::<Vec<_>>()
            .join(",");
        let cluster_id = KraftdProcess::run(&["random-uuid"], &[], KRAFTD_COMMAND_TIMEOUT)
            .stdout
            .trim()
            .to_string();
        let nodes = voters
            .iter()
            .map(|v| {
                let name = format!("kraftd-{}", v.id);
                let mut props = Properties::read(
                    &Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join(format!("config/quorum/controller-{}.properties", v.id)),
                );
                props
                    .set("listeners", format!("CONTROLLER://{}", v.endpoint()))
                    .set("controller.quorum.voters", voter_list.clone())
                    .set("log.dirs", dir.subdir(&name).display().to_string());
                for (k, value) in
                    transport.node_props(v.id, Role::Controller { kraftd: true }, None)
                {
                    props.set(k, value);
                }
                for (k, value) in overrides(v.id) {
                    props.set(k, value);
                }
                let config = KraftdProcess::write_config(dir, &name, &props);
                let config = config.display().to_string();
                KraftdProcess::run(
                    &[
                        &["format", "-t", &cluster_id, "-c", &config][..],
                        &transport
                            .format_args()
                            .iter()
                            .map(String::as_str)
                            .collect::<Vec<_>>(),
                    ]
                    .concat(),
                    &[],
                    KRAFTD_COMMAND_TIMEOUT,
                )
                .assert_success();
                KraftdProcess::start(dir, &name, &["start", &config], &[])
            })
            .collect();
        let q = KraftdQuorum {
            cluster_id,
            voters,
            nodes,
            bootstrap,
            transport,
        };
        q.wait_for_leader(|_| true);
        q
    }

    /// Waits until a voter answers DescribeQuorum naming a leader that `accept`s (asking the
    /// voters directly: a killed voter refuses at once, where a tool would wait it out).
    pub fn wait_for_leader(&self, accept: impl Fn(i32) -> bool) -> i32 {
        let ports: Vec<u16> = self.voters.iter().map(|v| v.port).collect();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let leader = ports.iter().find_map(|&p| {
                describe_quorum(p)
                    .filter(|d| d.partition_error.0 == 0 && d.leader_id >= 1)
                    .map(|d| d.leader_id)
                    .filter(|&id| accept(id))
            });
            if let Some(id) = leader {
                return id;
            }
            assert!(
                Instant::now() < deadline,
                "no kraftd leader within {START_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn node(&mut self, id: i32) -> &mut KraftdProcess {
        &mut self.nodes[(id - 1) as usize]
    }

    pub fn port(&self, id: i32) -> u16 {
        self.voters[(id - 1) as usize].port
    }

    /// Voter `id`'s `__cluster_metadata-0`.
    pub fn metadata_log(&self, dir: &TestDir, id: i32) -> PathBuf {
        dir.subdir(format!("kraftd-{id}"))
            .join("__cluster_metadata-0")
    }

    /// Starts stock brokers with these ids against the voters and waits until each runs.
    pub fn start_brokers(&self, dir: &TestDir, ids: &[i32]) -> Vec<JavaBroker> {
        let builders = ids
            .iter()
            .map(|&id| {
                let mut b = JavaBroker::builder(id, Quorum::StaticVoters(self.voters.clone()))
                    .cluster_id(self.cluster_id.clone());
                for (k, v) in self.transport.node_props(id, Role::Broker, None) {
                    b = b.prop(&k, v);
                }
                b
            })
            .collect();
        let mut brokers = ServerBuilder::start_all(builders, dir);
        for b in &mut brokers {
            assert!(
                b.wait_for_log(BROKER_RUNNING, START_TIMEOUT),
                "broker {} did not reach RUNNING; log {}",
                b.node_id(),
                b.log_path().display()
            );
        }
        brokers
    }

    /// Stops every running node (SIGTERM, then waits).
    pub fn stop(&mut self) {
        for n in self.nodes.iter_mut() {
            if n.is_running() {
                n.stop(Duration::from_secs(30));
            }
        }
    }
}
