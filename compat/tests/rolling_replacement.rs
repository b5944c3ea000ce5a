//! Issue 13: every Java controller of a live cluster replaced by kraftd, one node at a time, on
//! the node's own data directory, and then back to Java the same way, while three stock brokers
//! serve a verifying producer and consumer. Once on a static quorum, and once on a dynamic one
//! (kraft.version 1), where the last step of each direction also replaces the voter's disk
//! (`remove-controller`, a new directory id, `add-controller`; see `Swap::NewDirectory`). The
//! dynamic quorum runs its controller listeners on SSL with mutual TLS (see
//! `harness::transport`): kraftd reads the Java voter's PKCS12 stores from its config, and the
//! tools (`add-controller`, `remove-controller`, `describe`) reach it with `--command-config`.
//!
//! Start: Java 4.4 voters 1-3 (static `controller.quorum.voters`, or formatted
//! `--initial-controllers` with brokers bootstrapping from them) and stock brokers 101-103
//! (the workload cluster, at 4.4-IV2, Kafka's default broker session); topic `orders`, written
//! by Kafka's `VerifiableProducer` (idempotent, acks=all) and read by Kafka's
//! `VerifiableConsumer` for the whole test.
//!
//! Six steps, three to kraftd and three back. Each step stops one voter, the active controller
//! whenever it is of the kind being replaced (else the lowest id of that kind), with SIGTERM
//! or, in the second step of each direction, SIGKILL; and starts the other kind on the same
//! directory from the same `server.properties` (same node id, listener and voters), or on a
//! new directory. Then:
//! - a controller leads (in a later epoch, when the leader was stopped);
//! - the new process registered itself (a new RegisterControllerRecord for its id) and every
//!   voter is at the leader's log end, past that registration (DescribeQuorum);
//! - through a broker, a topic is created, a config of it set and read back, and the topic is
//!   deleted;
//! - no broker was fenced (no fencing record since the start), every broker and Java
//!   controller runs without a metadata or replay fault, and the clients got further.
//!
//! At the end every acknowledged message was consumed exactly once, at the offset it was
//! acknowledged at; the voters hold the same batches byte for byte; on every node the Java
//! dumper's image of its directory equals kraftd's image of it; and the nodes' images are
//! equal but for configs of deleted topics that a Java image may keep (see
//! `without_orphan_topic_configs`).
//!
//! The broker session is Kafka's default and the controllers' logs are small (see
//! [`CONTROLLERS`]), so each replacement starts from a snapshot the other kind wrote. The waits
//! read broker 101's copy of the log, which stays whole.
//!
//! The same test runs on a Kafka 4.0 cluster: Java 4.0.x controllers and brokers, their tools
//! and clients, formatted at 4.0-IV3 (`rolling_replacement_on_a_kafka_4_0_cluster`). The Java
//! image dumper (4.4's classes) reads its logs as the oracle.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::disk_replacement::DiskReplacement;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{
    image_differences, kraftd_image, without_orphan_topic_configs,
};
use crate::harness::java_probe::ProbeSession;
use crate::harness::mixed_quorum::{Member, QuorumMode, Stop};
use crate::harness::netns::Placement;
use crate::harness::pki::StoreFormat;
use crate::harness::transport::{PerNode, Transport};
use crate::harness::verifying::{Tally, VerifyingClients};
use crate::harness::workload::{Cluster, BROKERS};
use crate::harness::{dump_java_image, JavaController, Kafka};

/// The controllers' settings over the workload cluster's:
/// - Kafka's default broker session, not the workload's 4 s: with a controller killed, brokers
///   (observers) take a few seconds to find the new leader, as they do with Java controllers;
/// - a small log: segments of 8 KiB (see [`Release::small_segments`]), deleted once a snapshot
///   covers them, so that each replacement starts on a directory whose log begins at a
///   snapshot the other kind wrote.
const CONTROLLERS: &[(&str, &str)] = &[
    ("broker.session.timeout.ms", "9000"),
    ("metadata.max.retention.bytes", "0"),
];
const TOPIC: &str = "orders";
/// Messages a second from the verifying producer.
const RATE: u32 = 200;
/// How long the clients may take to get further after a step, and to drain at the end.
pub(crate) const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a topic's create, config change and delete may take (the Admin client's own
/// timeout for each call is 60 s).
const ADMIN_TIMEOUT: Duration = Duration::from_secs(180);

pub(crate) const JAVA: &str = "java";
pub(crate) const KRAFTD: &str = "kraftd";

/// The Kafka release a cluster runs and how it is set up.
struct Release {
    kafka: &'static Kafka,
    /// The metadata.version the nodes are formatted at (`--release-version`).
    metadata_version: &'static str,
    /// The controllers' settings for 8 KiB log segments, below `metadata.log.segment.bytes`'
    /// 8 MiB floor. kraftd reads both releases' keys, as it starts from the Java controller's
    /// own `server.properties`.
    small_segments: &'static [(&'static str, &'static str)],
}

/// The six steps on the same directories: the second step of each direction crashes the voter
/// it replaces. On Kafka 4.4 they run as `make test`'s loop of the rolling soak
/// (`rolling_soak.rs`), which adds a kill -9 and a partition and makes this file's checks.
pub(crate) const SAME_DIRECTORIES: [(&str, Swap); 6] = [
    (KRAFTD, Swap::SameDirectory(Stop::Sigterm)),
    (KRAFTD, Swap::SameDirectory(Stop::Kill9)),
    (KRAFTD, Swap::SameDirectory(Stop::Sigterm)),
    (JAVA, Swap::SameDirectory(Stop::Sigterm)),
    (JAVA, Swap::SameDirectory(Stop::Kill9)),
    (JAVA, Swap::SameDirectory(Stop::Sigterm)),
];

#[test]
fn rolling_replacement_on_a_kafka_4_0_cluster() {
    Rolling::start(&Release::kafka_4_0(), QuorumMode::Static).run(&SAME_DIRECTORIES);
}

/// The same path on a dynamic quorum (kraft.version 1, formatted `--initial-controllers`, the
/// brokers finding it through `controller.quorum.bootstrap.servers`). The last step of each
/// direction replaces the voter's disk: `remove-controller` of its old replica key, the other
/// kind on a new directory (a new directory id), `add-controller` once it has caught up.
#[test]
fn rolling_replacement_of_a_dynamic_quorum_with_a_new_disk_each_way() {
    let plan = [
        (KRAFTD, Swap::SameDirectory(Stop::Sigterm)),
        (KRAFTD, Swap::SameDirectory(Stop::Kill9)),
        (KRAFTD, Swap::NewDirectory(Stop::Sigterm)),
        (JAVA, Swap::SameDirectory(Stop::Sigterm)),
        (JAVA, Swap::SameDirectory(Stop::Kill9)),
        (JAVA, Swap::NewDirectory(Stop::Kill9)),
    ];
    // On SSL with mutual TLS: the Java voters' stores are PKCS12, and kraftd reads them from the
    // Java voter's own config on the same directory (voters 1 and 2), and from its own on a new
    // one (voter 3: PEM, its turn of the formats).
    let tls = Transport::MutualTls {
        kraftd: PerNode::InTurn(&StoreFormat::ALL),
    };
    Rolling::start_secured(&Release::kafka_4_4(), QuorumMode::Dynamic, tls).run(&plan);
}

impl Release {
    fn kafka_4_4() -> Release {
        Release {
            kafka: Kafka::get(),
            // 4.4's latest production metadata.version.
            metadata_version: "4.4-IV2",
            // 4.4's test-only size, which skips the floor.
            small_segments: &[("internal.metadata.log.segment.bytes", "8192")],
        }
    }

    fn kafka_4_0() -> Release {
        Release {
            kafka: Kafka::kafka_4_0(),
            // 4.0's latest metadata.version.
            metadata_version: "4.0-IV3",
            // 4.0 has no test-only size; its test-only floor is lowered instead.
            small_segments: &[
                ("metadata.log.segment.bytes", "8192"),
                ("metadata.log.segment.min.bytes", "8192"),
            ],
        }
    }
}

/// How a step swaps a voter's implementation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swap {
    /// The other kind starts on the voter's own directory, from its own `server.properties`.
    SameDirectory(Stop),
    /// The voter's disk is replaced (dynamic quorums only): see `Mixed::replace_on_new_directory`.
    NewDirectory(Stop),
}

/// The cluster, its clients and what the steps need to remember.
pub(crate) struct Rolling {
    pub(crate) c: Cluster,
    pub(crate) clients: VerifyingClients,
    /// One Admin client for the whole test, asked for a topic's life at every step.
    admin: ProbeSession,
    /// The Java controllers kraftd stands in for, by voter id.
    parked: BTreeMap<i32, JavaController>,
    /// Brokers fenced before the first step (a broker slow to heartbeat while every JVM
    /// starts); from then on none may be.
    pub(crate) fenced_at_start: Vec<i32>,
    started: Instant,
}

/// What one step did and how long its parts took.
pub(crate) struct Step {
    pub(crate) node: i32,
    from: &'static str,
    to: &'static str,
    swap: Swap,
    /// The directory ids and timings of a disk replacement.
    disk: Option<DiskReplacement>,
    /// (id, kind) of the leader before and after the step.
    pub(crate) leader_before: (i32, &'static str),
    pub(crate) leader_after: (i32, &'static str),
    pub(crate) epoch_after: i32,
    /// Until the replacement process was started (the old one stopped first).
    swapped: Duration,
    /// Until the replacement's registration was in the leader's log.
    registered: Duration,
    /// Until every voter was at the leader's log end, past that registration.
    caught_up: Duration,
    /// The topic's create, config change and delete, with each call's milliseconds.
    admin: Duration,
    calls: Value,
    total: Duration,
    pub(crate) acked: usize,
}

/// Where in a step [`Rolling::step_with`] hands the cluster to its caller (a soak injects
/// faults there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    /// The replacement process was started; it may not have registered yet.
    Swapped,
    /// Its registration is in the log; the voters may not have caught up with it yet.
    Registered,
}

impl Step {
    pub(crate) fn moved(&self) -> bool {
        self.leader_before.0 != self.leader_after.0
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "voter {} {} -> {} ({:?}{}); leader {} {} -> {} {} (epoch {}{}); swapped {:.1?}, \
             registered {:.1?}, caught up {:.1?}, topic+config {:.1?} {}; step {:.1?}; {} \
             acknowledged",
            self.node,
            self.from,
            self.to,
            self.swap,
            self.disk.as_ref().map_or(String::new(), |d| format!(
                ", directory {} -> {}, removed {:.1?}, observer caught up {:.1?}, added {:.1?}",
                d.old_directory_id, d.new_directory_id, d.removed, d.observer_caught_up, d.added
            )),
            self.leader_before.1,
            self.leader_before.0,
            self.leader_after.1,
            self.leader_after.0,
            self.epoch_after,
            if self.moved() { ", moved" } else { "" },
            self.swapped,
            self.registered,
            self.caught_up,
            self.admin,
            self.calls,
            self.total,
            self.acked
        )
    }
}

impl Rolling {
    /// The Java cluster of `release` with its clients running, on a quorum of `mode`.
    fn start(release: &Release, mode: QuorumMode) -> Rolling {
        Self::start_on(release, mode, Placement::default(), Transport::Plaintext)
    }

    /// [`Self::start`] with the controller listeners secured as `transport` says.
    fn start_secured(release: &Release, mode: QuorumMode, transport: Transport) -> Rolling {
        Self::start_on(release, mode, Placement::default(), transport)
    }

    /// The Kafka 4.4 cluster of [`Self::start`] on a static quorum, the controllers listening
    /// and running where `placement` says.
    pub(crate) fn start_placed(placement: Placement) -> Rolling {
        Self::start_on(
            &Release::kafka_4_4(),
            QuorumMode::Static,
            placement,
            Transport::Plaintext,
        )
    }

    fn start_on(
        release: &Release,
        mode: QuorumMode,
        placement: Placement,
        transport: Transport,
    ) -> Rolling {
        let started = Instant::now();
        let kafka = release.kafka;
        let controllers = [CONTROLLERS, release.small_segments].concat();
        let mut c = Cluster::start_on(
            kafka,
            mode,
            placement,
            transport,
            &[],
            release.metadata_version,
            &controllers,
        );
        for m in &c.q.members {
            let Member::Java(j) = m else {
                unreachable!("every voter starts as Java")
            };
            j.assert_runs(kafka);
        }
        for b in &c.brokers {
            b.assert_runs(kafka);
        }
        // The waits read broker 101's copy of the log: it stays whole (the brokers keep the
        // default retention) while the voters clean theirs and come and go.
        c.log_of = BROKERS[0];
        // The Admin client's JVM starts while the brokers do.
        let bootstrap = c.bootstrap();
        // The Admin client of the cluster's own release: TopicRoundTrip compiles against 4.0's
        // jars unchanged.
        let mut admin = ProbeSession::start_on(
            kafka,
            "TopicRoundTrip",
            &[&bootstrap, "3", "3", "retention.ms", "3600000"],
            &c.q.dir,
            "topic-round-trip",
        );
        c.wait_for("brokers 101-103 registered and unfenced", |v| {
            BROKERS.iter().all(|&b| v.is_active(b))
        });
        c.tools().create_topic(
            TOPIC,
            &[
                "--partitions",
                "6",
                "--replication-factor",
                "3",
                "--config",
                "min.insync.replicas=2",
            ],
        );
        let mut clients = VerifyingClients::start_on(kafka, &c.q.dir, &bootstrap, TOPIC, RATE);
        let calls = topic_round_trip(&mut admin, "step-0");
        clients.wait_beyond(0, CLIENT_TIMEOUT);
        // The producer is idempotent: a broker took a producer-id block for it.
        c.wait_for("a producer-id block for the idempotent producer", |v| {
            !v.producer_id_blocks.is_empty()
        });
        let fenced_at_start = c.view().fencings;
        let r = Rolling {
            c,
            clients,
            admin,
            parked: BTreeMap::new(),
            fenced_at_start,
            started,
        };
        r.log(&format!(
            "3 Java controllers, 3 brokers (Kafka {} at {}), clients producing and consuming; \
             topic round trip {calls}; fenced while starting: {:?}",
            kafka.version(),
            release.metadata_version,
            r.fenced_at_start
        ));
        r
    }

    /// Runs the steps of `plan` (the kind each step swaps to, and how), checks that each
    /// direction replaced an active controller and that kraftd led, and makes the end checks.
    fn run(mut self, plan: &[(&'static str, Swap)]) {
        let mut steps = Vec::new();
        for (i, &(to, swap)) in plan.iter().enumerate() {
            let s = self.step(i + 1, to, swap);
            self.log(&format!("step {}: {s}", i + 1));
            steps.push(s);
        }
        let moves = steps.iter().filter(|s| s.moved()).count();
        let kraftd_led = steps.iter().filter(|s| s.leader_after.1 == KRAFTD).count();
        self.log(&format!(
            "leadership moved in {moves} of {} steps; kraftd led after {kraftd_led} of them",
            steps.len()
        ));
        let replaced_leader = |kind| {
            steps
                .iter()
                .any(|s| s.from == kind && s.leader_before == (s.node, kind) && s.moved())
        };
        assert!(
            replaced_leader(JAVA) && replaced_leader(KRAFTD),
            "each direction should replace an active controller"
        );
        assert!(
            kraftd_led > 0,
            "kraftd never was the brokers' active controller"
        );
        self.finish();
    }

    pub(crate) fn log(&self, what: &str) {
        eprintln!("[{:>6.1?}] {what}", self.started.elapsed());
    }

    /// Replaces one voter with the other kind and checks the cluster through it.
    pub(crate) fn step(&mut self, n: usize, to: &'static str, swap: Swap) -> Step {
        self.step_with(n, to, swap, |_, _| {})
    }

    /// [`Self::step`], calling `at` at each [`Point`] of it.
    pub(crate) fn step_with(
        &mut self,
        n: usize,
        to: &'static str,
        swap: Swap,
        mut at: impl FnMut(&mut Cluster, Point),
    ) -> Step {
        let c = &mut self.c;
        let before = c.q.wait_caught_up(0);
        let from = if to == KRAFTD { JAVA } else { KRAFTD };
        let kind = |c: &mut Cluster, id: i32| c.q.member(id).kind();
        // A voter of the other kind, the leader if it is one. Java comes back on a directory
        // only where it was parked; a voter whose disk kraftd replaced takes a new one again.
        let parked = &self.parked;
        let eligible = |c: &mut Cluster, id: i32| {
            kind(c, id) == from
                && (to == KRAFTD
                    || matches!(swap, Swap::NewDirectory(_))
                    || parked.contains_key(&id))
        };
        let node = if eligible(c, before.leader_id) {
            before.leader_id
        } else {
            (1..=3)
                .find(|&id| eligible(c, id))
                .unwrap_or_else(|| panic!("step {n}: no voter to replace by {swap:?}"))
        };
        let leader_before = (before.leader_id, kind(c, before.leader_id));
        let incarnation = c.view().controllers.get(&node).copied();
        let acked_before = self.clients.tally().acked;

        let t0 = Instant::now();
        let mut disk = None;
        match swap {
            Swap::SameDirectory(stop) if to == KRAFTD => {
                let java = c.q.replace_with_kraftd(node, stop);
                self.parked.insert(node, java);
            }
            Swap::SameDirectory(stop) => {
                let java = self
                    .parked
                    .remove(&node)
                    .expect("the Java controller kraftd replaced");
                c.q.replace_with_java(node, java, stop);
            }
            Swap::NewDirectory(stop) => {
                let kind = if to == KRAFTD {
                    Kind::Kraftd
                } else {
                    Kind::Java
                };
                // The old directory is given up, and with it a Java controller parked there.
                let (_old, report) = c.q.replace_on_new_directory(node, kind, stop);
                self.parked.remove(&node);
                disk = Some(report);
            }
        }
        let swapped = t0.elapsed();
        if node == before.leader_id {
            c.q.wait_for_leader(before.leader_epoch);
        }
        at(c, Point::Swapped);
        // The new process registered (a new incarnation): it runs and reached the leader. It
        // has caught up once every voter is at the leader's log end, past that registration.
        let view = c.wait_for(
            &format!("voter {node} registered by its new process"),
            |v| {
                v.controllers
                    .get(&node)
                    .is_some_and(|&i| Some(i) != incarnation)
            },
        );
        let registered = t0.elapsed();
        at(c, Point::Registered);
        let after = c.q.wait_caught_up(view.end_offset);
        let caught_up = t0.elapsed();

        // A topic's create, config change and delete, through a broker.
        let a0 = Instant::now();
        let topic = format!("step-{n}");
        let calls = topic_round_trip(&mut self.admin, &topic);
        c.wait_for(&format!("{topic} deleted"), |v| {
            !v.topics.contains_key(&topic)
        });
        let admin = a0.elapsed();

        // Nothing fenced, nothing faulted, the clients got further.
        assert_eq!(
            c.view().fencings,
            self.fenced_at_start,
            "step {n}: brokers fenced"
        );
        for b in &mut c.brokers {
            assert!(b.is_running(), "broker {} exited", b.node_id());
            b.assert_no_metadata_faults();
        }
        c.q.assert_java_healthy();
        if let Member::Kraftd(k, _) = c.q.member(node) {
            assert!(k.is_running(), "kraftd {node} exited");
        }
        let acked = self.clients.wait_beyond(acked_before, CLIENT_TIMEOUT).acked;
        let end = c.q.wait_caught_up(0);
        assert_eq!(
            (end.leader_id, end.leader_epoch),
            (after.leader_id, after.leader_epoch),
            "step {n}: leadership moved again during the step's checks"
        );
        Step {
            node,
            from,
            to,
            swap,
            disk,
            leader_before,
            leader_after: (after.leader_id, kind(c, after.leader_id)),
            epoch_after: after.leader_epoch,
            swapped,
            registered,
            caught_up,
            admin,
            calls,
            total: t0.elapsed(),
            acked,
        }
    }

    /// The end checks: the clients' tally, no fencing, identical logs and equal images.
    pub(crate) fn finish(self) -> Tally {
        let Rolling {
            mut c,
            clients,
            fenced_at_start,
            started,
            ..
        } = self;
        let log = |what: String| eprintln!("[{:>6.1?}] {what}", started.elapsed());
        assert!(c.q.members.iter().all(|m| m.kind() == JAVA));

        // Every acknowledged message consumed exactly once; no broker fenced since the start.
        let tally = clients.finish(CLIENT_TIMEOUT * 2);
        log(format!("clients: {}", tally.summary()));
        tally.assert_exactly_once();
        assert_eq!(c.view().fencings, fenced_at_start, "brokers fenced");
        for b in &c.brokers {
            b.assert_no_metadata_faults();
        }

        // The brokers stop (controlled shutdowns), then the controllers, all at once.
        for b in &mut c.brokers {
            b.sigterm();
        }
        for b in &mut c.brokers {
            b.wait_exit(Duration::from_secs(60));
        }
        let end = c.q.wait_caught_up(0);
        let hw = end.high_watermark;
        if c.q.mode == QuorumMode::Dynamic {
            // The voter set holds each voter's current directory: the replaced disks' new ids.
            let mut listed: Vec<(i32, String)> = end
                .voters
                .iter()
                .map(|v| {
                    let dir = v.replica_key.directory_id.map(|u| u.to_string());
                    (v.replica_key.id, dir.unwrap_or_default())
                })
                .collect();
            listed.sort();
            let current: Vec<(i32, String)> =
                c.q.voters
                    .iter()
                    .map(|v| (v.id, v.directory_id.clone()))
                    .collect();
            assert_eq!(listed, current, "the voter set at the end");
            log(format!("voters at the end: {listed:?}"));
        }
        c.q.assert_java_healthy();
        c.q.stop();

        // The voters' logs are the same below the high watermark, and so are the images, Java's
        // and kraftd's of each node's directory.
        let batches = c.q.assert_logs_identical(hw);
        let at = Some(hw - 1);
        let logs: Vec<_> =
            c.q.members
                .iter()
                .map(|m| m.metadata_dir().join("__cluster_metadata-0"))
                .collect();
        let images: Vec<(Value, Value)> = std::thread::scope(|s| {
            let dumps: Vec<_> = logs
                .iter()
                .map(|l| s.spawn(move || (dump_java_image(l, at), kraftd_image(l, at))))
                .collect();
            dumps.into_iter().map(|d| d.join().unwrap()).collect()
        });
        for (i, (java, kraftd)) in images.iter().enumerate() {
            let diffs = image_differences(java, kraftd);
            assert!(
                diffs.is_empty(),
                "voter {}: kraftd's image differs from Java's at {at:?}:\n  {}",
                i + 1,
                diffs.join("\n  ")
            );
        }
        // A Java image can keep a deleted topic's configs (see `without_orphan_topic_configs`),
        // so the nodes' snapshots, and the images built on them, may differ in those alone.
        let cleaned: Vec<Value> = images
            .iter()
            .map(|(java, _)| without_orphan_topic_configs(java))
            .collect();
        let orphans: Vec<usize> = images
            .iter()
            .zip(&cleaned)
            .map(|((java, _), clean)| config_count(java) - config_count(clean))
            .collect();
        for (i, image) in cleaned.iter().enumerate().skip(1) {
            let diffs = image_differences(&cleaned[0], image);
            assert!(
                diffs.is_empty(),
                "voter {}'s image differs from voter 1's:\n  {}",
                i + 1,
                diffs.join("\n  ")
            );
        }
        log(format!(
            "{batches} batches identical on the 3 voters below {hw}; on each, kraftd's image \
             equals Java's; the 3 images equal but for configs of deleted topics that Java's \
             images kept ({orphans:?})"
        ));
        tally
    }
}

/// A topic created, a config of it set (and read back from the broker) and the topic deleted,
/// through a broker; the client's timings.
#[track_caller]
fn topic_round_trip(admin: &mut ProbeSession, topic: &str) -> Value {
    let calls = admin.ask(topic, ADMIN_TIMEOUT);
    assert!(
        calls.get("error").is_none(),
        "the topic round trip of {topic} failed: {calls}"
    );
    calls
}

fn config_count(image: &Value) -> usize {
    image["configs"].as_object().map_or(0, |c| c.len())
}
