//! Three kraftd controllers (static voters) serving three stock Kafka 4.4 brokers over SASL_SSL
//! with mutual TLS under it (client certificates required): the controllers authenticate to
//! each other with PLAIN as `controller`, the brokers as `broker` with PLAIN, SCRAM-SHA-256 and
//! SCRAM-SHA-512 (one each, against `--add-scram` credentials for SCRAM), Kafka's tools as
//! `harness`; kraftd's stores are JKS, PKCS12 and PEM (one voter each), the brokers' PKCS12.
//! The active controller is killed with SIGKILL while clients produce:
//! - `kafka-metadata-quorum --bootstrap-server <broker>` describes the quorum (status and
//!   replication) through a broker, before and after the failover;
//! - a verifying client workload (`compat/java/ExactlyOnceWorkload.java`) sends 100,000
//!   messages through an idempotent producer (acks=all) and 10,000 through a transactional
//!   producer (every fifth transaction aborted), then reads both topics as a read_committed
//!   consumer group (`__consumer_offsets` and `__transaction_state` auto-created); every
//!   acknowledged message is consumed exactly once and no error reaches the clients;
//! - midway the active kraftd is killed: another takes over, no live broker is ever fenced, a
//!   topic is created, grown and deleted through a broker while the workload runs, and no
//!   producer-id block is handed out twice;
//! - `kraftd doctor` over SASL_SSL finds the quorum healthy before the kill (its metadata disks
//!   and brokers too) and, while the killed voter is down, degraded with that voter named as
//!   stopped; once a broker is killed and fenced, it names that broker; offline it reads copies of
//!   that voter's directory as they are, torn and corrupt, and names what start-up would cut;
//! - the killed kraftd restarts with its clock 2 s ahead (libfaketime) and its
//!   `controller.quorum.voters` naming the others `localhost`, and catches up; the doctor,
//!   reading every voter's metrics, names it, its offset and its differing setting; a broker killed after the failover is fenced
//!   by the new active controller; Java's image of both kraftd logs equals kraftd's;
//! - a real Prometheus scrapes the three controllers every second, labelled as Strimzi's
//!   PodMonitor labels controller pods: every panel of Strimzi's KRaft dashboard that reads a
//!   controller's metrics returns data, and Strimzi's `AbnormalControllerState` and
//!   `OfflinePartitions` alerts stay quiet through the failover (shorter than their 10 s) and
//!   fire while their fault lasts: the killed broker holding a partition's only replica, and
//!   two of the three controllers paused (SIGSTOP); each is quiet again once its fault ends
//!   (the broker restarted, the controllers resumed).

use std::collections::BTreeMap;
use std::fs;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::{AllocateProducerIdsRequest, AllocateProducerIdsResponse};
use serde_json::Value;

use crate::harness::doctor::{
    assert_clock_named, assert_offline_diagnoses, assert_voter_lost, doctor,
};
use crate::harness::faketime::clock_ahead_env;
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::java_probe::spawn_program;
use crate::harness::kraftd_quorum::KraftdQuorum;
use crate::harness::pki::StoreFormat;
use crate::harness::prometheus::Prometheus;
use crate::harness::quorum_probe::{describe_quorum, round_trip, voter_end};
use crate::harness::transport::{PerNode, SaslMechanism, Transport};
use crate::harness::workload::log_view::LogView;
use crate::harness::{free_port, JavaBroker, Kafka, Properties, TestDir, Tool};
use crate::topics::workload::parse_describe;

const BROKERS: [i32; 3] = [11, 12, 13];
/// The idempotent producer's rate per second; the transactional producer sends a tenth as many
/// messages (see [`Plan`]), at a tenth of the rate: about 20 s of production in CI.
const RATE: u64 = 5_000;
/// Messages per transaction; every fifth transaction is aborted.
const PER_TRANSACTION: u64 = 100;
const WAIT: Duration = Duration::from_secs(120);
const WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// How far ahead the restarted voter's clock runs.
const CLOCK_AHEAD: Duration = Duration::from_secs(2);

#[test]
fn three_kraftd_controllers_serve_brokers_through_a_leader_kill_under_load() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let secured = Transport::SaslSsl {
        kraftd: PerNode::InTurn(&StoreFormat::ALL),
        brokers: PerNode::InTurn(&SaslMechanism::ALL),
    };
    // Each voter serves its metrics, where the doctor reads its clock.
    let metrics: Vec<(i32, SocketAddr)> = (1..=3)
        .map(|id| (id, SocketAddr::from(([127, 0, 0, 1], free_port()))))
        .collect();
    let mut q = KraftdQuorum::start_secured_with(&dir, 3, secured, |id| {
        let addr = metrics[(id - 1) as usize].1;
        vec![("kraftd.http.listener".into(), addr.to_string())]
    });
    let mut brokers = q.start_brokers(&dir, &BROKERS);
    let bootstrap = brokers
        .iter()
        .map(|b| b.bootstrap_server())
        .collect::<Vec<_>>()
        .join(",");
    let via = brokers[0].bootstrap_server();
    let mut first = q.wait_for_leader(|_| true);
    assert_quorum_described_through(kafka, &via, first, &[1, 2, 3], &BROKERS);
    tools_over_sasl_ssl(kafka, &q, first);
    // `kraftd doctor` over SASL_SSL: the healthy quorum is healthy on every check.
    let endpoints: Vec<String> = q.voters.iter().map(|v| v.endpoint()).collect();
    let healthy = doctor(&endpoints, 2, &metrics);
    assert_eq!(healthy.exit, 0, "{:#}", healthy.report);
    for check in ["disk", "brokers"] {
        assert_eq!(
            healthy.check(check)["verdict"],
            "healthy",
            "{:#}",
            healthy.report
        );
    }
    let prometheus = Prometheus::start(&dir, &metrics);
    prometheus.assert_dashboard_has_data(CONTROLLERS);
    // Quiet once every target has been scraped and the rules evaluated since (until then the sum
    // lacks the active one, and the rule is pending: its 10 s `for` keeps it from firing).
    prometheus.wait_targets_up(CONTROLLERS);
    for alert in ALERTS {
        prometheus.wait_alert(alert, None);
    }
    for (topic, partitions) in [("eos-idempotent", "12"), ("eos-transactional", "6")] {
        topics(
            kafka,
            &via,
            &[
                "--create",
                "--topic",
                topic,
                "--partitions",
                partitions,
                "--replication-factor",
                "3",
                "--config",
                "min.insync.replicas=2",
            ],
        );
    }

    // The workload runs; at even steps of it, the active controller dies (once in CI).
    let plan = Plan::from_env();
    let transactions = plan.messages / 10 / PER_TRANSACTION;
    let args = [
        bootstrap.clone(),
        plan.messages.to_string(),
        transactions.to_string(),
        PER_TRANSACTION.to_string(),
        RATE.to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut workload = spawn_program("ExactlyOnceWorkload", &args, &dir, "exactly-once-workload");
    let mut leader = first;
    let mut failovers = Vec::new();
    let mut last_kill = Instant::now();
    for kill in 1..=plan.kills {
        let progress = format!("acked {}\n", plan.kill_after(kill));
        assert!(
            workload.wait_for_log(&progress, WORKLOAD_TIMEOUT),
            "the workload did not log {progress:?}"
        );
        let blocks_before = LogView::read(&metadata_dir(&dir, leader))
            .producer_id_blocks
            .len();
        assert!(
            blocks_before > 0,
            "the brokers took no producer-id block before the kill"
        );
        let killed_id = leader;
        q.node(killed_id).kill9();
        let killed = Instant::now();
        leader = q.wait_for_leader(|id| id != killed_id);
        failovers.push(killed.elapsed());
        eprintln!(
            "kill {kill}/{}: kraftd {leader} leads {:?} after kraftd {killed_id} was killed",
            plan.kills,
            killed.elapsed()
        );
        last_kill = killed;
        // The new active controller serves topic changes while the workload runs.
        let topic = format!("after-failover-{kill}");
        topic_changes(kafka, &via, &topic);
        if kill < plan.kills {
            q.node(killed_id).restart(&dir);
            wait_caught_up(&q, leader, killed_id, 0);
        } else {
            first = killed_id;
            // The doctor names the stopped voter and why, and the quorum as degraded.
            let stopped = doctor(&endpoints, 2, &metrics);
            assert_voter_lost(&stopped, killed_id, "stopped: nothing listens there");
            // And reads the stopped voter's directory offline: copies as it is, torn, corrupt.
            assert_offline_diagnoses(
                &metadata_dir(&dir, killed_id),
                &dir.subdir("offline-doctor"),
            );
        }
    }
    let next = leader;
    if plan.kills > 1 {
        failovers.sort();
        eprintln!(
            "soak: {} kills; new leader after min {:?}, median {:?}, max {:?}",
            plan.kills,
            failovers[0],
            failovers[failovers.len() / 2],
            failovers[failovers.len() - 1]
        );
    }

    // A block asked for after the failover starts past every block handed out before it.
    let view = LogView::read(&metadata_dir(&dir, next));
    let epoch = view.brokers[&BROKERS[0]].epoch;
    let request = AllocateProducerIdsRequest {
        broker_id: BROKERS[0],
        broker_epoch: epoch,
        ..Default::default()
    };
    let body = round_trip(
        q.port(next),
        AllocateProducerIdsRequest::API_KEY,
        0,
        &request,
    )
    .expect("the new active controller answers AllocateProducerIds");
    let block = AllocateProducerIdsResponse::decode_exact(&body, 0).unwrap();
    assert_eq!(ErrorCode(block.error_code), ErrorCode::NONE, "{block:?}");

    let status = workload.wait_exit(WORKLOAD_TIMEOUT);
    let output = fs::read_to_string(dir.log_path("exactly-once-workload")).unwrap();
    let summary: Value = output
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("the workload printed no summary ({status:?}):\n{output}"));
    eprintln!("workload: {summary}");
    assert!(status.success() && summary["ok"] == true, "{summary}");
    assert_eq!(summary["idempotent_acked"], plan.messages);
    assert_eq!(summary["idempotent_consumed"], plan.messages);
    let committed = (transactions - transactions / 5) * PER_TRANSACTION;
    assert_eq!(summary["transactional_committed"], committed);
    assert_eq!(summary["transactional_consumed"], committed);

    // No live broker was fenced, before, during or after the failover.
    let view = LogView::read(&metadata_dir(&dir, next));
    assert!(view.fencings.is_empty(), "fenced: {:?}", view.fencings);
    for b in &mut brokers {
        assert!(b.is_running(), "broker {} exited", b.node_id());
        assert!(view.is_active(b.node_id()), "broker {}", b.node_id());
    }
    assert_blocks_never_reused(&view.producer_id_blocks, &block);
    assert_quorum_described_through(kafka, &via, next, &[1, 2, 3], &BROKERS);

    // The killed controller comes back, on a machine whose clock runs 2 s ahead, and catches
    // up; the doctor names it and its offset.
    // Its config drifted too: `controller.quorum.voters` names the other voters `localhost`
    // (it still reaches them); the doctor names the mismatch.
    let drifted = drift_voters(&dir, first);
    q.node(first).set_env(clock_ahead_env(CLOCK_AHEAD));
    q.node(first).restart(&dir);
    wait_caught_up(&q, next, first, view.end_offset);
    let skewed = doctor(&endpoints, 2, &metrics);
    let offset = assert_clock_named(&skewed, first, CLOCK_AHEAD, Duration::from_millis(500));
    eprintln!("the doctor put kraftd {first}'s clock {offset} ms ahead of the others'");
    let findings = skewed.degraded_findings("settings");
    assert!(
        findings.iter().any(|f| f
            .starts_with(&format!("voters [{first}] have controller.quorum.voters="))
            && f.contains(&drifted)),
        "the settings check does not name voter {first}'s controller.quorum.voters:\n{:#}",
        skewed.report
    );
    eprintln!("the doctor: {}", findings.join("; "));
    assert_eq!(
        skewed.check("disk")["verdict"],
        "healthy",
        "{:#}",
        skewed.report
    );

    // The new active controller does keep the brokers' sessions: one that dies now is fenced,
    // and a partition whose only replica it holds goes offline.
    let mut dead = brokers.pop().expect("three brokers");
    let only_on_dead = dead.node_id().to_string();
    topics(
        kafka,
        &via,
        &[
            "--create",
            "--topic",
            OFFLINE_TOPIC,
            "--replica-assignment",
            &only_on_dead,
        ],
    );
    dead.kill9();
    let killed = Instant::now();
    let deadline = killed + WAIT;
    while LogView::read(&metadata_dir(&dir, next)).fencings != [dead.node_id()] {
        assert!(
            Instant::now() < deadline,
            "broker {} not fenced",
            dead.node_id()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "broker {} fenced {:?} after its kill",
        dead.node_id(),
        killed.elapsed()
    );
    // The doctor, reading the controllers' broker gauges, names the fenced broker.
    let fenced = doctor(&endpoints, 2, &metrics);
    let findings = fenced.degraded_findings("brokers");
    assert!(
        findings.len() == 1
            && findings[0].starts_with(&format!("broker {} is fenced", dead.node_id())),
        "the brokers check does not name broker {} alone as fenced:\n{:#}",
        dead.node_id(),
        fenced.report
    );
    eprintln!("the doctor: {}", findings[0]);
    // The failover, shorter than AbnormalControllerState's 10 s, never fired it (asked of
    // Prometheus's own ALERTS series once that long has passed since the kill).
    std::thread::sleep(Duration::from_secs(15).saturating_sub(last_kill.elapsed()));
    assert!(
        !prometheus.fired_within("AbnormalControllerState", prometheus.age()),
        "AbnormalControllerState fired around a {:?} failover",
        failovers.last()
    );
    alerts_fire_while_faults_last(&prometheus, &mut q, &dir, &mut dead, [next, first]);
    brokers.push(dead);

    for b in &mut brokers {
        b.assert_no_metadata_faults();
        b.stop(Duration::from_secs(60));
    }
    q.stop();
    for id in [next, first] {
        let (offset, _, _) = assert_image_equals_javas(&q.metadata_log(&dir, id), None);
        eprintln!("Java's image of kraftd {id}'s log equals kraftd's at offset {offset}");
    }
}

/// Rewrites voter `id`'s `controller.quorum.voters` to name the other voters by `localhost`
/// (what its certificates also name): the same voters, a different value; returns one of the
/// rewritten entries.
fn drift_voters(dir: &TestDir, id: i32) -> String {
    let path = dir.subdir(format!("kraftd-{id}")).join("server.properties");
    let mut props = Properties::read(&path);
    let voters = props
        .get("controller.quorum.voters")
        .expect("static voters")
        .to_string();
    let drifted: Vec<String> = voters
        .split(',')
        .map(|e| {
            if e.starts_with(&format!("{id}@")) {
                e.to_string()
            } else {
                e.replace("@127.0.0.1:", "@localhost:")
            }
        })
        .collect();
    props.set("controller.quorum.voters", drifted.join(","));
    props.write(&path);
    drifted
        .into_iter()
        .find(|e| e.contains("@localhost:"))
        .expect("another voter")
}

/// Strimzi's controller alerts (compat/prometheus/kafka-controller-alerts.yaml).
const ALERTS: [&str; 2] = ["AbnormalControllerState", "OfflinePartitions"];
/// The quorum's controllers, each a Prometheus target.
const CONTROLLERS: usize = 3;
/// A topic whose one partition lives on the broker killed at the end.
const OFFLINE_TOPIC: &str = "only-on-the-dead-broker";

/// `OfflinePartitions` fires while the `dead` broker is down ([`OFFLINE_TOPIC`]'s partition, and
/// any other it alone holds, has no leader) and is quiet once it runs again;
/// `AbnormalControllerState` fires while two controllers (`paused`) are stopped, leaving no
/// active controller, and is quiet once they run again.
fn alerts_fire_while_faults_last(
    prometheus: &Prometheus,
    q: &mut KraftdQuorum,
    dir: &TestDir,
    dead: &mut JavaBroker,
    paused: [i32; 2],
) {
    let took = prometheus.wait_alert("OfflinePartitions", Some("firing"));
    eprintln!("prometheus: OfflinePartitions firing {took:?} after the broker's kill");
    assert_eq!(prometheus.alert_state("AbnormalControllerState"), None);
    dead.restart(dir);
    let took = prometheus.wait_alert("OfflinePartitions", None);
    eprintln!("prometheus: OfflinePartitions quiet {took:?} after the broker's restart");

    for id in paused {
        q.node(id).signal(libc::SIGSTOP);
    }
    let took = prometheus.wait_alert("AbnormalControllerState", Some("firing"));
    eprintln!(
        "prometheus: AbnormalControllerState firing {took:?} after controllers {paused:?} paused"
    );
    // The ALERTS series the failover check reads does show a firing alert.
    assert!(prometheus.fired_within("AbnormalControllerState", Duration::from_secs(60)));
    for id in paused {
        q.node(id).signal(libc::SIGCONT);
    }
    let took = prometheus.wait_alert("AbnormalControllerState", None);
    eprintln!("prometheus: AbnormalControllerState quiet {took:?} after they resumed");
    q.wait_for_leader(|_| true);
}

/// How long the workload runs and how often the active controller is killed: once in CI;
/// `KRAFTD_SOAK_MINUTES=<n>` (`make soak-failover`) produces for about n minutes and kills the
/// active controller about every 30 s, restarting each killed node before the next kill.
struct Plan {
    messages: u64,
    kills: u64,
}

impl Plan {
    fn from_env() -> Plan {
        match std::env::var("KRAFTD_SOAK_MINUTES")
            .ok()
            .map(|m| m.parse::<u64>())
        {
            None => Plan {
                messages: 100_000,
                kills: 1,
            },
            Some(Ok(minutes)) if minutes > 0 => Plan {
                messages: RATE * 60 * minutes,
                kills: 2 * minutes,
            },
            Some(_) => panic!("KRAFTD_SOAK_MINUTES must be a positive number of minutes"),
        }
    }

    /// The acknowledgement count after which kill `n` (from 1) happens: evenly spread, on the
    /// workload's progress lines (every 5,000), the first a fifth of the way in.
    fn kill_after(&self, n: u64) -> u64 {
        let first = self.messages / 5;
        let step = (self.messages - first) / self.kills;
        (first + (n - 1) * step) / 5_000 * 5_000
    }
}

/// Waits until voter `id` holds everything `leader` has committed, past `beyond`.
fn wait_caught_up(q: &KraftdQuorum, leader: i32, id: i32, beyond: i64) {
    let deadline = Instant::now() + WAIT;
    loop {
        let d = describe_quorum(q.port(leader)).expect("the leader answers DescribeQuorum");
        if voter_end(&d, id) >= Some(d.high_watermark) && d.high_watermark > beyond {
            return;
        }
        assert!(Instant::now() < deadline, "kraftd {id} did not catch up");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A topic created, grown and deleted through a broker.
fn topic_changes(kafka: &Kafka, via: &str, topic: &str) {
    topics(
        kafka,
        via,
        &[
            "--create",
            "--topic",
            topic,
            "--partitions",
            "12",
            "--replication-factor",
            "3",
        ],
    );
    // The create is answered once the controller commits it, but the broker serves
    // kafka-topics from its own image, which can lag by a fetch; right after a failover
    // the broker may still be finding the new leader (as with Java controllers).
    describe_until(kafka, via, topic, |d| d.len() == 12);
    topics(
        kafka,
        via,
        &["--alter", "--topic", topic, "--partitions", "16"],
    );
    let described = describe_until(kafka, via, topic, |d| d.len() == 16);
    assert!(
        described.values().all(|p| p.isr.len() == 3),
        "{described:?}"
    );
    topics(kafka, via, &["--delete", "--topic", topic]);
}

fn metadata_dir(dir: &TestDir, id: i32) -> PathBuf {
    dir.subdir(format!("kraftd-{id}"))
}

/// Every ProducerIdsRecord hands out the block right after the previous one, and the block
/// granted to the test is among them.
fn assert_blocks_never_reused(blocks: &[(i32, i64)], granted: &AllocateProducerIdsResponse) {
    let nexts: Vec<i64> = blocks.iter().map(|&(_, next)| next).collect();
    assert!(
        nexts.windows(2).all(|w| w[0] < w[1]),
        "producer-id blocks out of order: {blocks:?}"
    );
    let end = granted.producer_id_start + i64::from(granted.producer_id_len);
    let at = nexts.iter().position(|&n| n == end);
    assert!(
        at.is_some_and(|i| i == 0 || nexts[i - 1] == granted.producer_id_start),
        "granted {granted:?}, log {blocks:?}"
    );
    eprintln!("{} producer-id blocks, none reused", blocks.len());
}

fn topics(kafka: &Kafka, via: &str, args: &[&str]) {
    let mut all = vec!["--bootstrap-server", via];
    all.extend_from_slice(args);
    let out = kafka.run(Tool::Topics, &all);
    assert!(out.success(), "kafka-topics {args:?}: {out}");
}

fn describe_until(
    kafka: &Kafka,
    via: &str,
    topic: &str,
    done: impl Fn(&BTreeMap<i32, crate::topics::workload::Described>) -> bool,
) -> BTreeMap<i32, crate::topics::workload::Described> {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = kafka.run(
            Tool::Topics,
            &["--bootstrap-server", via, "--describe", "--topic", topic],
        );
        let d = parse_describe(&out.stdout, topic);
        if out.success() && done(&d) {
            return d;
        }
        assert!(Instant::now() < deadline, "{topic}: {out}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `kafka-metadata-quorum --bootstrap-server <broker> describe --status` names `leader`, and
/// `describe --replication` lists `voters` (the leader as such) and `observers`.
pub(crate) fn assert_quorum_described_through(
    kafka: &Kafka,
    via: &str,
    leader: i32,
    voters: &[i32],
    observers: &[i32],
) {
    let status = kafka.run(
        Tool::MetadataQuorum,
        &["--bootstrap-server", via, "describe", "--status"],
    );
    assert!(status.success(), "{status}");
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["LeaderId:", &leader.to_string()]),
        "{status}"
    );
    let replication = kafka.run(
        Tool::MetadataQuorum,
        &["--bootstrap-server", via, "describe", "--replication"],
    );
    assert!(replication.success(), "{replication}");
    let rows: Vec<Vec<&str>> = replication
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let status_of = |id: i32| {
        rows.iter()
            .find(|r| r.first() == Some(&id.to_string().as_str()))
            .and_then(|r| r.last().copied())
    };
    for &id in voters {
        let expected = if id == leader { "Leader" } else { "Follower" };
        assert!(
            status_of(id).is_some() && (id != leader || status_of(id) == Some(expected)),
            "voter {id}: {replication}"
        );
    }
    for &id in observers {
        assert_eq!(status_of(id), Some("Observer"), "{replication}");
    }
}

/// Kafka's tools with `--bootstrap-controller` on each kraftd voter over SASL_SSL (the harness
/// adds `--command-config` with its TLS and SASL/PLAIN settings, see `harness::transport`):
/// `kafka-metadata-quorum describe --status` names the leader, `kafka-features describe` the
/// finalized metadata.version, and `kafka-configs` alters the cluster-wide broker default and
/// describes it and a voter's own config back.
fn tools_over_sasl_ssl(kafka: &Kafka, q: &KraftdQuorum, leader: i32) {
    for v in &q.voters {
        let via = v.endpoint();
        let status = kafka
            .quorum_status(&via)
            .unwrap_or_else(|out| panic!("describe --status through voter {}:\n{out}", v.id));
        assert_eq!(
            status.leader_id, leader,
            "voter {} names another leader",
            v.id
        );
        let features = kafka.finalized_features(&via);
        assert!(
            features.contains_key("metadata.version"),
            "kafka-features describe through voter {}: {features:?}",
            v.id
        );
    }
    let via = q.voters[0].endpoint();
    kafka.alter_broker_default_through(&via, "log.cleaner.threads=2");
    let own = [
        "--describe",
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--all",
    ];
    let own = kafka.configs_through_controller(&via, &own);
    assert!(own.contains("node.id=1"), "voter 1's own config: {own}");
}
