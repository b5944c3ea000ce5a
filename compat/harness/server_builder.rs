//! Configuring a Java Kafka server: its quorum, ports, roles and `server.properties`.

use std::marker::PhantomData;
use std::net::Ipv4Addr;

use super::java_server::JavaServer;
use super::kafka::Kafka;
use super::ports::free_port;
use super::props::Properties;
use super::testdir::TestDir;
use super::tools::{random_kafka_uuid, FormatFlag};

/// One controller of a quorum: its id, address, port and metadata directory id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    pub id: i32,
    /// The address it listens on and is reached at: 127.0.0.1 unless the test places it
    /// elsewhere (see `netns::Placement`).
    pub host: Ipv4Addr,
    pub port: u16,
    pub directory_id: String,
}

impl Voter {
    /// A voter on 127.0.0.1, on a fresh free port with a fresh directory id.
    pub fn new(id: i32) -> Voter {
        Voter {
            id,
            host: Ipv4Addr::LOCALHOST,
            port: free_port(),
            directory_id: random_kafka_uuid(),
        }
    }

    /// `<host>:<port>`, e.g. `127.0.0.1:<port>`
    pub fn endpoint(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// Voters with the given ids, e.g. `voters(1..=3)`.
pub fn voters(ids: impl IntoIterator<Item = i32>) -> Vec<Voter> {
    ids.into_iter().map(Voter::new).collect()
}

/// How a server finds its controller quorum, and how its storage is formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Quorum {
    /// A single-node dynamic quorum of this controller: `controller.quorum.bootstrap.servers` is
    /// itself, formatted with `--standalone`.
    Standalone,
    /// A dynamic quorum: `controller.quorum.bootstrap.servers` lists the voters; controllers are
    /// formatted with `--initial-controllers id@127.0.0.1:port:directoryId,...`.
    InitialControllers(Vec<Voter>),
    /// Join an existing dynamic quorum through these `host:port` controllers; controllers are
    /// formatted with `--no-initial-controllers` (they start as observers).
    Bootstrap(Vec<String>),
    /// A static quorum: `controller.quorum.voters=id@127.0.0.1:port,...`, formatted without
    /// voter flags.
    StaticVoters(Vec<Voter>),
}

/// Builds and starts a [`JavaServer`]; `R` is the handle type returned by [`Self::start`].
#[must_use = "call .start(&dir) to format and start the server"]
pub struct ServerBuilder<R> {
    node_id: i32,
    controller: bool,
    broker: bool,
    quorum: Quorum,
    cluster_id: Option<String>,
    controller_port: Option<u16>,
    broker_port: Option<u16>,
    props: Properties,
    jvm_opts: Vec<String>,
    format: bool,
    format_args: Vec<String>,
    name: Option<String>,
    kafka: Option<&'static Kafka>,
    netns: Option<String>,
    env: Vec<(String, String)>,
    role: PhantomData<fn() -> R>,
}

impl<R: From<JavaServer>> ServerBuilder<R> {
    pub(super) fn new(node_id: i32, controller: bool, broker: bool, quorum: Quorum) -> Self {
        ServerBuilder {
            node_id,
            controller,
            broker,
            quorum,
            cluster_id: None,
            controller_port: None,
            broker_port: None,
            props: Properties::new(),
            jvm_opts: Vec::new(),
            format: true,
            format_args: Vec::new(),
            name: None,
            kafka: None,
            netns: None,
            env: Vec::new(),
            role: PhantomData,
        }
    }

    pub fn quorum(mut self, quorum: Quorum) -> Self {
        self.quorum = quorum;
        self
    }

    /// The cluster id to format with (all nodes of a cluster must share it); random by default.
    pub fn cluster_id(mut self, id: impl Into<String>) -> Self {
        self.cluster_id = Some(id.into());
        self
    }

    /// Adds the broker role (`process.roles=broker,controller`).
    pub fn also_broker(mut self) -> Self {
        self.broker = true;
        self
    }

    /// Adds the controller role.
    pub fn also_controller(mut self) -> Self {
        self.controller = true;
        self
    }

    /// The CONTROLLER listener's port; by default the node's [`Voter`] port, or a free port.
    pub fn controller_port(mut self, port: u16) -> Self {
        self.controller_port = Some(port);
        self
    }

    /// The PLAINTEXT (broker) listener's port; a free port by default.
    pub fn broker_port(mut self, port: u16) -> Self {
        self.broker_port = Some(port);
        self
    }

    /// Sets a `server.properties` key, overriding the harness's value if it has one.
    pub fn prop(mut self, key: &str, value: impl ToString) -> Self {
        self.props.set(key, value.to_string());
        self
    }

    /// Adds a JVM option (e.g. `-Dsome.property=x`).
    pub fn jvm_opt(mut self, opt: &str) -> Self {
        self.jvm_opts.push(opt.to_string());
        self
    }

    /// Adds arguments to `kafka-storage format` (e.g. `--release-version 3.9-IV0`).
    pub fn format_args(mut self, args: &[&str]) -> Self {
        self.format_args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Does not run `kafka-storage format` (e.g. to test an unformatted directory).
    pub fn skip_format(mut self) -> Self {
        self.format = false;
        self
    }

    /// Names the node's directory and log (default `controller-<id>`, `broker-<id>` or `combined-<id>`).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// Runs this Kafka release's jars (format and server) instead of [`Kafka::get`]'s.
    pub fn kafka(mut self, kafka: &'static Kafka) -> Self {
        self.kafka = Some(kafka);
        self
    }

    /// Runs the server (not its format) with `env` set, e.g. a clock ahead (see `faketime.rs`).
    pub fn env(mut self, env: &[(String, String)]) -> Self {
        self.env.extend_from_slice(env);
        self
    }

    /// Runs the server (not its format) in the named network namespace (see `netns.rs`); its
    /// listeners should be on an address of that namespace, i.e. its [`Voter`]'s host.
    pub fn netns(mut self, name: &str) -> Self {
        self.netns = Some(name.to_string());
        self
    }

    /// Writes `server.properties`, formats the data directory and starts `kafka.Kafka`.
    pub fn start(self, dir: &TestDir) -> R {
        R::from(JavaServer::start(self.into_spec(), dir))
    }

    /// [`Self::start`] for several servers: the formats (a JVM each) run in parallel, the
    /// servers are then started from this thread, in order.
    pub fn start_all(builders: Vec<Self>, dir: &TestDir) -> Vec<R> {
        let specs: Vec<Spec> = builders.into_iter().map(Self::into_spec).collect();
        let prepared: Vec<_> = std::thread::scope(|s| {
            let formats: Vec<_> = specs
                .into_iter()
                .map(|spec| s.spawn(move || JavaServer::prepare(spec, dir)))
                .collect();
            formats
                .into_iter()
                .map(|f| {
                    f.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        prepared
            .into_iter()
            .map(|p| R::from(p.spawn(dir)))
            .collect()
    }

    fn into_spec(self) -> Spec {
        let role = match (self.controller, self.broker) {
            (true, true) => "combined",
            (true, false) => "controller",
            (false, true) => "broker",
            (false, false) => panic!(
                "node {} has neither the controller nor the broker role",
                self.node_id
            ),
        };
        let name = self
            .name
            .unwrap_or_else(|| format!("{role}-{}", self.node_id));
        let voter = match &self.quorum {
            Quorum::InitialControllers(v) | Quorum::StaticVoters(v) => {
                v.iter().find(|v| v.id == self.node_id)
            }
            _ => None,
        };
        let controller_port = self
            .controller
            .then(|| match (self.controller_port, voter) {
                (Some(port), Some(v)) if port != v.port => {
                    panic!(
                        "{name}: controller_port {port} differs from its voter's port {}",
                        v.port
                    )
                }
                (Some(port), _) => port,
                (None, Some(v)) => v.port,
                (None, None) => free_port(),
            });
        // A controller listens on its voter's address; anything else on loopback.
        let controller_host = voter.map_or(Ipv4Addr::LOCALHOST, |v| v.host);
        let broker_port = self
            .broker
            .then(|| self.broker_port.unwrap_or_else(free_port));
        let quorum = quorum_settings(&self.quorum, &name, controller_port);
        // Only controllers take a voter flag; brokers are formatted without one.
        let flag = if self.controller {
            quorum.flag
        } else {
            FormatFlag::None
        };

        let mut props = Properties::new();
        let roles = [
            self.broker.then_some("broker"),
            self.controller.then_some("controller"),
        ];
        props.set("process.roles", join(roles.into_iter().flatten()));
        props.set("node.id", self.node_id.to_string());
        let listeners = [
            broker_port.map(|p| format!("PLAINTEXT://127.0.0.1:{p}")),
            controller_port.map(|p| format!("CONTROLLER://{controller_host}:{p}")),
        ];
        props.set("listeners", join(listeners.into_iter().flatten()));
        props.set("controller.listener.names", "CONTROLLER");
        props.set(
            "listener.security.protocol.map",
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        );
        props.set(quorum.key, quorum.value);
        if self.broker {
            props.set("inter.broker.listener.name", "PLAINTEXT");
            // A one-broker cluster cannot satisfy the default replication factor of 3 of the
            // internal topics; no rebalance delay keeps console-consumer tests quick.
            for key in [
                "offsets.topic.replication.factor",
                "transaction.state.log.replication.factor",
                "transaction.state.log.min.isr",
            ] {
                props.set(key, "1");
            }
            props.set("group.initial.rebalance.delay.ms", "0");
        }
        for (key, value) in self.props.iter() {
            props.set(key, value);
        }
        Spec {
            name,
            node_id: self.node_id,
            controller_host,
            controller_port,
            broker_port,
            cluster_id: self.cluster_id.unwrap_or_else(random_kafka_uuid),
            bootstrap_controllers: quorum.bootstrap_controllers,
            flag,
            format: self.format,
            format_args: self.format_args,
            props,
            jvm_opts: self.jvm_opts,
            kafka: self.kafka.unwrap_or_else(Kafka::get),
            netns: self.netns,
            env: self.env,
        }
    }
}

/// Everything needed to (re)start a server, resolved from a [`ServerBuilder`].
pub(super) struct Spec {
    pub(super) name: String,
    pub(super) node_id: i32,
    /// The address of the CONTROLLER listener (127.0.0.1 unless its voter is elsewhere).
    pub(super) controller_host: Ipv4Addr,
    pub(super) controller_port: Option<u16>,
    pub(super) broker_port: Option<u16>,
    pub(super) cluster_id: String,
    pub(super) bootstrap_controllers: String,
    pub(super) flag: FormatFlag,
    pub(super) format: bool,
    pub(super) format_args: Vec<String>,
    pub(super) props: Properties,
    pub(super) jvm_opts: Vec<String>,
    /// The Kafka release whose jars format and run the server.
    pub(super) kafka: &'static Kafka,
    /// The network namespace the server runs in (the test's own if `None`).
    pub(super) netns: Option<String>,
    /// Set in the server's environment (not its format's).
    pub(super) env: Vec<(String, String)>,
}

/// The quorum part of a server's config and format command.
struct QuorumSettings {
    /// `controller.quorum.voters` or `controller.quorum.bootstrap.servers`
    key: &'static str,
    value: String,
    /// `host:port,...` for `--bootstrap-controller`.
    bootstrap_controllers: String,
    flag: FormatFlag,
}

fn quorum_settings(quorum: &Quorum, name: &str, controller_port: Option<u16>) -> QuorumSettings {
    let bootstrap = |servers: String, flag| QuorumSettings {
        key: "controller.quorum.bootstrap.servers",
        value: servers.clone(),
        bootstrap_controllers: servers,
        flag,
    };
    match quorum {
        Quorum::Standalone => {
            let port = controller_port.unwrap_or_else(|| {
                panic!("{name}: Quorum::Standalone needs the controller role; a broker joins with Quorum::Bootstrap")
            });
            bootstrap(format!("127.0.0.1:{port}"), FormatFlag::Standalone)
        }
        Quorum::InitialControllers(voters) => {
            let initial = voters
                .iter()
                .map(|v| format!("{}@{}:{}", v.id, v.endpoint(), v.directory_id));
            bootstrap(
                join(voters.iter().map(Voter::endpoint)),
                FormatFlag::InitialControllers(join(initial)),
            )
        }
        Quorum::Bootstrap(servers) => {
            bootstrap(servers.join(","), FormatFlag::NoInitialControllers)
        }
        Quorum::StaticVoters(voters) => QuorumSettings {
            key: "controller.quorum.voters",
            value: join(voters.iter().map(|v| format!("{}@{}", v.id, v.endpoint()))),
            bootstrap_controllers: join(voters.iter().map(Voter::endpoint)),
            flag: FormatFlag::None,
        },
    }
}

/// Joins with commas, as Kafka's list-valued settings expect.
fn join<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items
        .into_iter()
        .map(|s| s.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(",")
}
