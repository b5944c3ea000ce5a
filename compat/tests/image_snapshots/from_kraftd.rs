//! A Java 4.4 controller starts from kraftd's snapshot alone, and its image is kraftd's.
//!
//! A Java controller and broker take a workload (topics, topic and broker configs, quotas,
//! ACLs, SCRAM credentials, a producer id block) and stop. kraftd writes a snapshot of that log
//! at its end (`metadata-state --write-snapshot`). A new Java controller, configured as the
//! original (same node id, cluster id, port, and meta.properties, whose directory id a dynamic
//! quorum's voters record names), starts on a data directory whose `__cluster_metadata-0` holds
//! only that snapshot: no segment, no bootstrap checkpoint, no quorum-state. The broker, its own
//! metadata log removed, starts against it and so fetches kraftd's snapshot from the Java
//! controller. Then:
//!
//! - (a) the controller leads (at an epoch above the snapshot's) and the broker registers and
//!   serves;
//! - (b) Admin describes what it described on the original cluster, line for line;
//! - (c) the controller restarts on its log, which starts at kraftd's snapshot; after more changes
//!   (deletes that fail unless the controller holds what only the snapshot held, and a producer
//!   id block after the snapshot's) it writes a snapshot of its own, which Java's dumper reads as
//!   the image kraftd replays from its snapshot and Java's log, field by field.
//!
//! Once for a `--standalone` (dynamic, kraft.version 1) quorum and once for a static one
//! (`controller.quorum.voters`, kraft.version 0).

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kraftd::log::snapshot::parse_file_name;

use serde_json::Value;

use super::{
    admin, java, kraftd_image, kraftd_snapshot, path, stop, wait_for_snapshot_after, AUTHORIZER,
    START_TIMEOUT, STOP_TIMEOUT, TOPIC,
};
use crate::harness::image_compare::image_differences;
use crate::harness::{
    dump_java_image, dump_java_image_from_snapshot, dump_java_snapshot, JavaBroker, JavaController,
    JavaServer, Quorum, QuorumStatus, TestDir, Voter,
};

/// `AdminWorkload describe` (or `setup`, which ends with it): one sorted line per cluster id,
/// feature, topic, partition, config, ACL, quota and SCRAM credential.
fn describe(dir: &TestDir, args: &[&str]) -> String {
    let out = java::run("AdminWorkload", args, &dir.subdir("scratch"));
    assert!(out.success(), "AdminWorkload {args:?} failed:\n{out}");
    out.stdout
}

/// Waits until the controller's log says, for the `n`th time, that it became the active
/// controller (a file poll: each `describe --status` is a JVM), then asks the quorum once.
fn wait_active(server: &mut JavaServer, n: usize) -> QuorumStatus {
    const ACTIVE: &str = "Becoming the active controller at epoch";
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let text = fs::read_to_string(server.log_path()).unwrap_or_default();
        if text.matches(ACTIVE).count() >= n {
            return server.wait_until_leader(START_TIMEOUT);
        }
        assert!(server.is_running(), "{} exited", server.name());
        assert!(
            Instant::now() < deadline,
            "{} logged {ACTIVE:?} fewer than {n} times in {START_TIMEOUT:?}",
            server.name()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The lines of a Java server's log that say why it failed, at most 40.
fn java_errors(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains("ERROR")
                || l.contains("FATAL")
                || l.contains("Exception")
                || l.contains("Caused by")
        })
        .take(40)
        .collect();
    lines.join("\n")
}

/// Runs `wait` on `server`; if it panics (the JVM exited, or never became what it should),
/// panics again with the error lines of the server's log.
fn or_java_refused<T>(
    server: &mut JavaServer,
    what: &str,
    wait: impl FnOnce(&mut JavaServer) -> T,
) -> T {
    match catch_unwind(AssertUnwindSafe(|| wait(&mut *server))) {
        Ok(v) => v,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!(
                "{} did not {what} from kraftd's snapshot: {message}\nerrors in its log ({}):\n{}",
                server.name(),
                server.log_path().display(),
                java_errors(server.log_path())
            )
        }
    }
}

/// The files of a directory, by name, for reports.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `snapshot` and the segments of `log` in a directory of their own (Java's own snapshots left
/// out), so that kraftd replays its snapshot and then Java's log.
fn snapshot_and_segments(dir: &TestDir, snapshot: &Path, log: &Path, name: &str) -> PathBuf {
    let out = dir.subdir(name);
    fs::copy(snapshot, out.join(snapshot.file_name().unwrap())).unwrap();
    for e in fs::read_dir(log).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "log") {
            fs::copy(&p, out.join(p.file_name().unwrap())).unwrap();
        }
    }
    out
}

#[track_caller]
fn assert_same_image(what: &str, java: &Value, kraftd: &Value) {
    let diffs = image_differences(java, kraftd);
    assert!(
        diffs.is_empty(),
        "{what}: Java's image differs from kraftd's in {} places:\n  {}",
        diffs.len(),
        diffs.join("\n  ")
    );
}

/// Whether the image's topics include one named `name`.
fn has_topic(image: &Value, name: &str) -> bool {
    image["topics"]
        .as_object()
        .is_some_and(|t| t.values().any(|t| t["name"] == name))
}

const SNAPSHOT_PROPS: &[(&str, &str)] = &[
    ("metadata.log.max.record.bytes.between.snapshots", "2048"),
    ("metadata.max.idle.interval.ms", "50"),
];

/// Wall time per phase, for the report.
struct Laps {
    last: Instant,
    laps: Vec<String>,
}

impl Laps {
    fn new() -> Laps {
        Laps {
            last: Instant::now(),
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, what: &str) {
        let now = Instant::now();
        self.laps
            .push(format!("{what} {:.1} s", (now - self.last).as_secs_f64()));
        self.last = now;
    }
}

/// How the original controller was formatted; the new one is configured the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Formatted {
    /// `--standalone`: a dynamic quorum (kraft.version 1), the voters in the log and snapshot.
    Standalone,
    /// `controller.quorum.voters`, no voter flag: kraft.version 0, the voters in the config.
    StaticVoters,
}

#[test]
fn a_java_controller_starts_from_kraftds_snapshot_of_a_standalone_quorum() {
    starts_from_kraftds_snapshot(Formatted::Standalone);
}

#[test]
fn a_java_controller_starts_from_kraftds_snapshot_of_a_static_quorum() {
    starts_from_kraftds_snapshot(Formatted::StaticVoters);
}

/// The controller's and the broker's quorum.
fn quorums(formatted: Formatted) -> (Quorum, Option<Quorum>) {
    match formatted {
        Formatted::Standalone => (Quorum::Standalone, None),
        Formatted::StaticVoters => {
            let voters = vec![Voter::new(1)];
            (
                Quorum::StaticVoters(voters.clone()),
                Some(Quorum::StaticVoters(voters)),
            )
        }
    }
}

/// A Java controller (1) and broker (2) with StandardAuthorizer, both started.
fn original_cluster(
    dir: &TestDir,
    controller_quorum: Quorum,
    broker_quorum: Option<Quorum>,
) -> (JavaController, JavaBroker) {
    let mut controller = JavaController::builder(1)
        .quorum(controller_quorum)
        .prop("authorizer.class.name", AUTHORIZER)
        .prop("super.users", "User:ANONYMOUS")
        .start(dir);
    let broker_quorum =
        broker_quorum.unwrap_or_else(|| Quorum::Bootstrap(vec![controller.controller_endpoint()]));
    let mut broker = JavaBroker::builder(2, broker_quorum)
        .cluster_id(controller.cluster_id())
        .prop("authorizer.class.name", AUTHORIZER)
        .prop("super.users", "User:ANONYMOUS")
        .start(dir);
    wait_active(&mut controller, 1);
    broker.wait_until_started(START_TIMEOUT);
    (controller, broker)
}

fn starts_from_kraftds_snapshot(formatted: Formatted) {
    let started = Instant::now();
    let mut laps = Laps::new();
    let dir = TestDir::new();

    // 1. The original cluster and its workload.
    let (controller_quorum, broker_quorum) = quorums(formatted);
    let (mut controller, mut broker) =
        original_cluster(&dir, controller_quorum.clone(), broker_quorum.clone());
    laps.lap("original cluster up");
    let bootstrap = broker.bootstrap_server();
    let described = describe(&dir, &["setup", &bootstrap, TOPIC]);
    laps.lap("workload and describe");
    let controller_port = controller.controller_port().unwrap();
    stop(&mut controller, &mut broker);
    laps.lap("stop");
    let original = controller.data_dir().to_path_buf();
    println!(
        "original controller: {:?}; __cluster_metadata-0: {:?}",
        listing(&original),
        listing(&controller.metadata_log_dir())
    );

    // 2. kraftd's snapshot of the whole log.
    let history = super::segments_only(&dir, &controller.metadata_log_dir(), "log-only");
    let reference = kraftd_image(&[path(&history)]);
    for part in ["topics", "configs", "clientQuotas", "scram", "acls"] {
        assert_ne!(
            reference[part],
            serde_json::json!({}),
            "{part} in {reference}"
        );
    }
    let end = reference["offset"].as_i64().unwrap();
    let ours = kraftd_snapshot(&history, end, &dir.subdir("kraftd-snapshot"));
    assert_same_image(
        "kraftd's snapshot vs kraftd's replay of the log",
        &dump_java_snapshot(&ours),
        &reference,
    );
    laps.lap("kraftd snapshot and dumper");

    // 3. A data directory with meta.properties (its directory id is the voter's) and, in
    // __cluster_metadata-0, kraftd's snapshot and nothing else.
    let name = "controller-1-from-kraftd";
    let data = dir.subdir(name).join("data");
    let partition = data.join("__cluster_metadata-0");
    fs::create_dir_all(&partition).unwrap();
    fs::copy(
        original.join("meta.properties"),
        data.join("meta.properties"),
    )
    .unwrap();
    fs::copy(&ours, partition.join(ours.file_name().unwrap())).unwrap();
    let mut fresh = JavaController::builder(1)
        .quorum(controller_quorum)
        .name(name)
        .cluster_id(controller.cluster_id())
        .controller_port(controller_port)
        .prop("log.dirs", data.display())
        .prop("authorizer.class.name", AUTHORIZER)
        .prop("super.users", "User:ANONYMOUS")
        .skip_format()
        .start(&dir);
    let status = or_java_refused(&mut fresh, "lead", |s| wait_active(s, 1));
    laps.lap("controller from kraftd snapshot leads");
    let stem = ours.file_stem().unwrap().to_string_lossy().into_owned();
    let loaded = format!("Successfully loaded snapshot {stem}");
    assert!(
        fresh.wait_for_log(&loaded, Duration::from_secs(10)),
        "the controller leads but never logged {loaded:?}"
    );
    let (snapshot_end, snapshot_epoch) =
        parse_file_name(&ours.file_name().unwrap().to_string_lossy())
            .map(|(id, _)| (id.offset, id.epoch))
            .unwrap();
    assert_eq!(snapshot_end, end + 1);
    assert!(status.leader_epoch > snapshot_epoch, "{status:?}");
    if formatted == Formatted::Standalone {
        // The voters came from kraftd's snapshot: node 1 with the directory id of meta.properties.
        let directory_id = fresh.directory_id();
        let log = fs::read_to_string(fresh.log_path()).unwrap();
        let voters = log.lines().find(|l| l.contains("Latest set of voters is"));
        assert!(
            voters.is_some_and(|l| l
                .contains(&format!("ReplicaKey(id=1, directoryId={directory_id})"))
                && l.contains(&format!("at offset {end} "))),
            "the voters of kraftd's snapshot: {voters:?}"
        );
    }
    // Java made a segment at the snapshot's end offset and wrote its leader change there.
    assert!(
        partition.join(format!("{snapshot_end:020}.log")).is_file(),
        "{:?}",
        listing(&partition)
    );
    println!(
        "Java controller from kraftd's snapshot {stem}: leader at epoch {} (the snapshot's is {snapshot_epoch}), high watermark {}; __cluster_metadata-0: {:?}",
        status.leader_epoch,
        status.high_watermark,
        listing(&partition)
    );

    // The broker, without its metadata log, fetches the controller's latest snapshot: kraftd's,
    // as this controller writes none of its own yet (the default 20 MB between snapshots).
    let broker_data = broker.data_dir().to_path_buf();
    fs::remove_dir_all(broker_data.join("__cluster_metadata-0")).unwrap();
    let broker_quorum =
        broker_quorum.unwrap_or_else(|| Quorum::Bootstrap(vec![fresh.controller_endpoint()]));
    let mut restarted = JavaBroker::builder(2, broker_quorum)
        .name("broker-2-after")
        .cluster_id(controller.cluster_id())
        .prop("log.dirs", broker_data.display())
        .prop("authorizer.class.name", AUTHORIZER)
        .prop("super.users", "User:ANONYMOUS")
        .skip_format()
        .start(&dir);
    or_java_refused(&mut restarted, "start", |s| {
        s.wait_until_started(START_TIMEOUT)
    });
    laps.lap("broker fetches and starts");
    let fetched =
        format!("Fetching snapshot OffsetAndEpoch[offset={snapshot_end}, epoch={snapshot_epoch}]");
    assert!(
        restarted.wait_for_log(&fetched, Duration::from_secs(10)),
        "the broker started without logging {fetched:?}"
    );
    let bootstrap = restarted.bootstrap_server();

    // (b) Admin describes what it described before.
    let again = describe(&dir, &["describe", &bootstrap]);
    laps.lap("describe again");
    assert_eq!(
        again, described,
        "Admin's description after the restart from kraftd's snapshot"
    );
    println!(
        "Admin describes the same {} lines before and after:\n{again}",
        again.lines().count()
    );

    // The controller restarts on its log, which starts at kraftd's snapshot, now to write
    // snapshots often.
    fresh.stop(STOP_TIMEOUT);
    let mut config = fresh.config();
    for (k, v) in SNAPSHOT_PROPS {
        config.set(*k, *v);
    }
    config.write(fresh.config_path());
    fresh.restart(&dir);
    or_java_refused(&mut fresh, "lead again", |s| wait_active(s, 2));
    laps.lap("controller restarts and leads");

    // (c) More changes, then a snapshot of Java's own.
    admin(&dir, &["more", &bootstrap, TOPIC]);
    laps.lap("more changes");
    let new_log = fresh.metadata_log_dir();
    let changed = kraftd_image(&[path(&snapshot_and_segments(
        &dir, &ours, &new_log, "changed",
    ))]);
    assert!(has_topic(&changed, &format!("{TOPIC}-after")), "{changed}");
    assert!(
        !has_topic(&changed, &format!("{TOPIC}-doomed")),
        "{changed}"
    );
    let changed_at = changed["offset"].as_i64().unwrap();
    let (java_end, java_snapshot) = wait_for_snapshot_after(&new_log, changed_at, START_TIMEOUT);
    laps.lap("Java's own snapshot");
    stop(&mut fresh, &mut restarted);
    laps.lap("stop");
    println!(
        "Java's own snapshot {}; __cluster_metadata-0: {:?}; quorum-state: {}",
        java_snapshot.file_name().unwrap().to_string_lossy(),
        listing(&new_log),
        fs::read_to_string(new_log.join("quorum-state")).unwrap_or_default()
    );
    let chain = snapshot_and_segments(&dir, &ours, &new_log, "kraftd-snapshot-and-java-log");
    let at = (java_end - 1).to_string();
    let kraftd_at = kraftd_image(&[path(&chain), "--at", &at]);
    assert_eq!(kraftd_at["offset"], java_end - 1, "{kraftd_at}");
    let next_producer_id = |image: &Value| image["producerIds"]["nextProducerId"].as_i64().unwrap();
    assert!(
        next_producer_id(&kraftd_at) > next_producer_id(&reference),
        "the producer id block after the snapshot's: {} vs {}",
        next_producer_id(&kraftd_at),
        next_producer_id(&reference)
    );
    assert_same_image(
        "Java's own snapshot vs kraftd's snapshot and Java's log",
        &dump_java_snapshot(&java_snapshot),
        &kraftd_at,
    );
    assert_same_image(
        "the new directory, whole",
        &dump_java_image(&new_log, None),
        &kraftd_image(&[path(&new_log)]),
    );
    assert_same_image(
        "kraftd's snapshot and Java's log",
        &dump_java_image_from_snapshot(&chain, &ours, None),
        &kraftd_image(&[path(&chain)]),
    );
    laps.lap("images compared");
    println!(
        "a Java controller started from kraftd's snapshot ({formatted:?}) in {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        laps.laps.join(", ")
    );
}
