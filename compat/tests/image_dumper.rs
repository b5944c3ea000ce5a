//! The Java image dumper (`compat/image-dumper`) on its own, before kraftd is compared with it:
//! a real Java 4.4 controller and broker, driven by Kafka's tools, leave a metadata log; the
//! dumper's image must show what the tools created, an earlier `--at` must not, and loading a
//! snapshot the controller wrote, plus the log after it, must give the image of the log alone.
//! Logs written record by record: see image_dumper/synthetic.rs.

mod synthetic;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

use crate::harness::{
    dump_java_image, dump_java_image_from_snapshot, dump_java_snapshot, run_image_dumper,
    JavaBroker, JavaController, Kafka, Quorum, TestDir, Tool,
};

const START_TIMEOUT: Duration = Duration::from_secs(90);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

const TOPIC: &str = "dumped";
const PARTITIONS: usize = 3;
const RETENTION_MS: &str = "3600000";
const USER: &str = "alice";
const PRODUCER_BYTE_RATE: f64 = 1024.0;
const SCRAM_ITERATIONS: i64 = 8192;

/// Kafka's codes (ResourceType.TOPIC, PatternType.LITERAL, AclOperation.READ, AclPermissionType.ALLOW).
const TOPIC_RESOURCE: i64 = 2;
const LITERAL_PATTERN: i64 = 3;
const READ_OPERATION: i64 = 3;
const ALLOW_PERMISSION: i64 = 3;

/// Small enough that the controller snapshots several times during the test (its log grows by
/// about 6 KB), even with the tools run back to back: Java counts the bytes since the snapshot it
/// last finished, so records that come while it writes one may not bring the next.
const SNAPSHOT_EVERY_BYTES: u32 = 512;

#[test]
fn java_image_dumper_shows_what_kafkas_tools_created() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let authorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    let mut controller = JavaController::builder(1)
        .prop("authorizer.class.name", authorizer)
        .prop("super.users", "User:ANONYMOUS")
        .prop(
            "metadata.log.max.record.bytes.between.snapshots",
            SNAPSHOT_EVERY_BYTES,
        )
        .start(&dir);
    let mut broker =
        JavaBroker::builder(2, Quorum::Bootstrap(vec![controller.controller_endpoint()]))
            .cluster_id(controller.cluster_id())
            .prop("authorizer.class.name", authorizer)
            .prop("super.users", "User:ANONYMOUS")
            .start(&dir);
    controller.wait_until_leader(START_TIMEOUT);
    broker.wait_until_started(START_TIMEOUT);
    let bootstrap = broker.bootstrap_server();
    let controller_endpoint = controller.controller_endpoint();

    let before_topic = committed_offset(kafka, &controller_endpoint);
    create_everything(kafka, &bootstrap);
    let features = finalized_feature_levels(kafka, &controller_endpoint);
    let before_shutdown = committed_offset(kafka, &controller_endpoint);
    broker.stop(STOP_TIMEOUT);
    controller.stop(STOP_TIMEOUT);

    let log = controller.metadata_log_dir();
    let broker_port = broker.broker_port().unwrap();
    // While the tools ran, the broker was registered and unfenced, and led every partition.
    let running = dump_java_image(&log, Some(before_shutdown));
    assert_eq!(running["offset"], before_shutdown, "{running}");
    assert_created_facts(&running, &features, broker_port);
    assert_eq!(
        running["cluster"]["brokers"]["2"]["fenced"], false,
        "{running}"
    );
    assert_eq!(leaders(&running), [2; PARTITIONS], "{running}");

    // Its controlled shutdown fenced it, leaving the partitions of its only replica leaderless.
    let image = dump_java_image(&log, None);
    assert!(
        image["offset"].as_i64().unwrap() > before_shutdown,
        "{image}"
    );
    assert_created_facts(&image, &features, broker_port);
    assert_eq!(image["cluster"]["brokers"]["2"]["fenced"], true, "{image}");
    assert_eq!(leaders(&image), [-1; PARTITIONS], "{image}");

    // Before the topic was created, the image has the broker but no topic, config or quota.
    let earlier = dump_java_image(&log, Some(before_topic));
    assert!(
        earlier["offset"].as_i64().unwrap() <= before_topic,
        "{earlier}"
    );
    assert!(
        earlier["cluster"]["brokers"].get("2").is_some(),
        "{earlier}"
    );
    assert_eq!(topic_named(&earlier, TOPIC), None, "{earlier}");
    assert_eq!(earlier["configs"].get(format!("2:{TOPIC}")), None);
    assert_eq!(earlier["clientQuotas"], serde_json::json!({}));
    assert_eq!(earlier["acls"], serde_json::json!({}));

    assert_snapshots_agree_with_the_log(&dir, &log);

    // The broker's replica of the log gives the same image.
    let replica = broker.metadata_log_dir();
    assert_eq!(dump_java_image(&replica, Some(before_shutdown)), running);
}

/// A topic with a config override, a client quota, a SCRAM user and an ACL, with Kafka's tools.
fn create_everything(kafka: &Kafka, bootstrap: &str) {
    let partitions = PARTITIONS.to_string();
    let retention = format!("retention.ms={RETENTION_MS}");
    kafka
        .topics(
            bootstrap,
            &[
                "--create",
                "--topic",
                TOPIC,
                "--partitions",
                &partitions,
                "--replication-factor",
                "1",
                "--config",
                &retention,
            ],
        )
        .assert_success();
    // A byte rate is a long in kafka-configs, and a double in the record and the image.
    let quota = format!("producer_byte_rate={}", PRODUCER_BYTE_RATE as i64);
    let scram = format!("SCRAM-SHA-256=[iterations={SCRAM_ITERATIONS},password={USER}-secret]");
    for config in [quota.as_str(), scram.as_str()] {
        let args = [
            "--bootstrap-server",
            bootstrap,
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            USER,
            "--add-config",
            config,
        ];
        kafka.run(Tool::Configs, &args).assert_success();
    }
    let principal = format!("User:{USER}");
    let args = [
        "--bootstrap-server",
        bootstrap,
        "--add",
        "--allow-principal",
        &principal,
        "--operation",
        "Read",
        "--topic",
        TOPIC,
    ];
    kafka.run(Tool::Acls, &args).assert_success();
}

/// The quorum's high watermark - 1: every record up to it is committed.
fn committed_offset(kafka: &Kafka, controller: &str) -> i64 {
    let status = kafka
        .quorum_status(controller)
        .unwrap_or_else(|out| panic!("describe --status failed:\n{out}"));
    status.high_watermark - 1
}

/// `kafka-features describe`'s finalized levels, with metadata.version's name (e.g. 4.4-IV2)
/// turned into its level by `kafka-storage version-mapping`; kraft.version lives in raft's
/// control records, not in the metadata image, and level 0 means not finalized.
fn finalized_feature_levels(kafka: &Kafka, controller: &str) -> Vec<(String, i64)> {
    let mut levels = Vec::new();
    for (name, level) in kafka.finalized_features(controller) {
        let level = if name == "metadata.version" {
            metadata_version_level(kafka, &level)
        } else {
            level
                .parse()
                .unwrap_or_else(|_| panic!("{name} level {level:?}"))
        };
        if name != "kraft.version" && level > 0 {
            levels.push((name, level));
        }
    }
    levels
}

fn metadata_version_level(kafka: &Kafka, release: &str) -> i64 {
    let out = kafka.run(
        Tool::Storage,
        &["version-mapping", "--release-version", release],
    );
    out.assert_success();
    // "metadata.version=33 (4.4-IV2)"
    out.stdout
        .lines()
        .find_map(|line| line.strip_prefix("metadata.version="))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|level| level.parse().ok())
        .unwrap_or_else(|| panic!("no metadata.version level in:\n{out}"))
}

fn topic_named<'a>(image: &'a Value, name: &str) -> Option<(&'a String, &'a Value)> {
    image["topics"]
        .as_object()
        .expect("topics is an object")
        .iter()
        .find(|(_, topic)| topic["name"] == name)
}

/// The leader of each partition of the test's topic, by partition id.
fn leaders(image: &Value) -> Vec<i64> {
    let (_, topic) = topic_named(image, TOPIC).unwrap_or_else(|| panic!("no {TOPIC} in {image}"));
    (0..PARTITIONS)
        .map(|p| {
            topic["partitions"][p.to_string()]["leader"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

fn assert_created_facts(image: &Value, features: &[(String, i64)], broker_port: u16) {
    assert_eq!(image["version"], 1, "{image}");
    let image_features = image["features"].as_object().expect("features");
    assert_eq!(
        image_features.len(),
        features.len(),
        "{image_features:?} vs kafka-features describe {features:?}"
    );
    for (name, level) in features {
        assert_eq!(image_features[name], *level, "{name} in {image_features:?}");
    }

    let broker = &image["cluster"]["brokers"]["2"];
    assert_eq!(broker["id"], 2, "{broker}");
    assert_eq!(
        broker["listeners"]["PLAINTEXT"]["port"], broker_port,
        "{broker}"
    );
    assert!(
        image["cluster"]["controllers"].get("1").is_some(),
        "{image}"
    );

    let (_, topic) = topic_named(image, TOPIC).unwrap_or_else(|| panic!("no {TOPIC} in {image}"));
    let partitions = topic["partitions"].as_object().expect("partitions");
    assert_eq!(partitions.len(), PARTITIONS, "{topic}");
    for (id, partition) in partitions {
        assert!(id.parse::<usize>().unwrap() < PARTITIONS, "{topic}");
        assert_eq!(partition["replicas"], serde_json::json!([2]), "{partition}");
    }
    assert_eq!(
        image["configs"][format!("2:{TOPIC}")]["retention.ms"],
        RETENTION_MS,
        "{}",
        image["configs"]
    );

    let quota = &image["clientQuotas"][format!("user={USER}")]["producer_byte_rate"];
    assert_eq!(
        quota.as_f64(),
        Some(PRODUCER_BYTE_RATE),
        "{}",
        image["clientQuotas"]
    );
    assert!(
        quota.is_f64(),
        "a double prints as a floating-point number: {quota}"
    );

    // SCRAM-SHA-256 is mechanism type 1.
    let credential = &image["scram"]["1"][USER];
    assert_eq!(credential["iterations"], SCRAM_ITERATIONS, "{credential}");
    for key in ["salt", "storedKey", "serverKey"] {
        let text = credential[key]
            .as_str()
            .unwrap_or_else(|| panic!("{credential}"));
        let bytes = STANDARD
            .decode(text)
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(!bytes.is_empty(), "{credential}");
    }

    let acls: Vec<&Value> = image["acls"].as_object().expect("acls").values().collect();
    assert_eq!(acls.len(), 1, "{}", image["acls"]);
    let expected = serde_json::json!({
        "resourceType": TOPIC_RESOURCE, "resourceName": TOPIC, "patternType": LITERAL_PATTERN,
        "principal": format!("User:{USER}"), "host": "*",
        "operation": READ_OPERATION, "permissionType": ALLOW_PERMISSION,
    });
    assert_eq!(acls[0], &expected);
}

/// Every snapshot the controller wrote, alone and with the log after it, against the log alone
/// (its segments copied without the snapshots); the log must still start at offset 0.
fn assert_snapshots_agree_with_the_log(dir: &TestDir, log: &Path) {
    let snapshots = snapshot_files(log);
    assert!(
        snapshots.len() >= 2,
        "the controller wrote {} snapshots with metadata.log.max.record.bytes.between.snapshots={SNAPSHOT_EVERY_BYTES}; \
         the test needs two: {snapshots:?}",
        snapshots.len()
    );
    let log_only = dir.subdir("log-only");
    for segment in files_with_extension(log, "log") {
        fs::copy(&segment, log_only.join(segment.file_name().unwrap())).unwrap();
    }
    let whole = dump_java_image(&log_only, None);
    // Without --at, the dumper starts from the newest snapshot.
    assert_eq!(dump_java_image(log, None), whole);
    // Each dump starts a JVM: the oldest and the newest snapshot are enough.
    let checked = [&snapshots[0], &snapshots[snapshots.len() - 1]];
    for (end_offset, snapshot) in checked {
        let at_snapshot = dump_java_snapshot(snapshot);
        assert_eq!(
            at_snapshot["offset"],
            end_offset - 1,
            "{}",
            snapshot.display()
        );
        assert_eq!(
            at_snapshot,
            dump_java_image(&log_only, Some(end_offset - 1)),
            "{} alone against the log up to {}",
            snapshot.display(),
            end_offset - 1
        );
        assert_eq!(
            dump_java_image_from_snapshot(log, snapshot, None),
            whole,
            "{} plus the log after it",
            snapshot.display()
        );
    }
    // --at picks the newest snapshot at or before it: the oldest one here, half-way to the next.
    let (first, second) = (snapshots[0].0, snapshots[1].0);
    let between = first + (second - first) / 2;
    assert_eq!(
        dump_java_image(log, Some(between)),
        dump_java_image(&log_only, Some(between))
    );
}

/// The controller's snapshots (not format's bootstrap 0-0) by end offset.
fn snapshot_files(log: &Path) -> Vec<(i64, PathBuf)> {
    let mut snapshots: Vec<(i64, PathBuf)> = files_with_extension(log, "checkpoint")
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let offset = name.split('-').next().unwrap().parse().unwrap();
            (offset, path)
        })
        .filter(|(offset, _)| *offset > 0)
        .collect();
    snapshots.sort();
    snapshots
}

fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    files
}

#[test]
fn java_image_dumper_fails_loudly_on_bad_input() {
    let dir = TestDir::new();
    let missing = dir.join("no-such-dir");
    let out = run_image_dumper(&[missing.to_str().unwrap()]);
    out.assert_failure();
    assert!(
        out.stderr.contains("is not a directory"),
        "the error names the problem:\n{out}"
    );
    let empty = dir.subdir("empty");
    let out = run_image_dumper(&[empty.to_str().unwrap(), "--at", "ten"]);
    assert_eq!(out.code(), Some(2), "a usage error:\n{out}");
    assert!(out.stderr.contains("--at ten is not an offset"), "{out}");
    let misnamed = dir.join("latest.checkpoint");
    fs::write(&misnamed, b"").unwrap();
    let out = run_image_dumper(&["--snapshot", misnamed.to_str().unwrap()]);
    out.assert_failure();
    assert!(
        out.stderr.contains("is not named <20-digit end offset>"),
        "{out}"
    );
    // An empty directory is an empty log: the empty image, at offset -1.
    let image = dump_java_image(&empty, None);
    assert_eq!(image["offset"], -1, "{image}");
    assert_eq!(image["topics"], serde_json::json!({}), "{image}");
    assert_eq!(image["producerIds"]["nextProducerId"], -1, "{image}");
}
