//! `kafka-configs --bootstrap-server` against kraftd's cluster: the broker checks broker
//! configs itself and forwards every change to kraftd in an Envelope; the brokers then
//! describe the new values, and a topic's `max.message.bytes` refuses a larger record.

use std::time::{Duration, Instant};

use crate::harness::{Kafka, Output, Tool, ToolOptions};
use crate::topics::cluster::TopicCluster;

const PROPAGATION: Duration = Duration::from_secs(60);

fn configs(kafka: &Kafka, broker: &str, args: &[&str]) -> Output {
    let mut all = vec!["--bootstrap-server", broker];
    all.extend_from_slice(args);
    kafka.run(Tool::Configs, &all)
}

/// Describes the entity through the broker until its output names `wanted` (or, with
/// `present` false, no longer does).
fn describe_until(kafka: &Kafka, broker: &str, entity: &[&str], wanted: &str, present: bool) {
    let mut args = vec!["--describe"];
    args.extend_from_slice(entity);
    let deadline = Instant::now() + PROPAGATION;
    loop {
        let out = configs(kafka, broker, &args);
        if out.success() && out.stdout.contains(wanted) == present {
            eprintln!(
                "kafka-configs --describe {entity:?}:\n{}",
                out.stdout.trim()
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{entity:?}: {wanted} {} after {PROPAGATION:?}:\n{out}",
            if present {
                "not described"
            } else {
                "still described"
            }
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn alter(kafka: &Kafka, broker: &str, entity: &[&str], change: &[&str]) {
    let mut args = vec!["--alter"];
    args.extend_from_slice(entity);
    args.extend_from_slice(change);
    let out = configs(kafka, broker, &args);
    out.assert_success();
}

/// The console producer (without idempotence) sending one record of `size` bytes.
fn produce_one(kafka: &Kafka, broker: &str, topic: &str, size: usize) -> Output {
    let mut stdin = "x".repeat(size).into_bytes();
    stdin.push(b'\n');
    let options = ToolOptions {
        stdin: Some(stdin),
        ..ToolOptions::default()
    };
    let args = [
        "--bootstrap-server",
        broker,
        "--topic",
        topic,
        "--producer-property",
        "enable.idempotence=false",
        "--producer-property",
        "retries=0",
    ];
    kafka.tool_with(kafka.main_class(Tool::ConsoleProducer), &args, &options)
}

pub fn kafka_configs_take_effect(c: &TopicCluster) {
    let kafka = Kafka::get();
    let broker = c.bootstrap_server();
    let broker = broker.as_str();

    // A topic config: described by the broker, and enforced by it.
    let topic = ["--entity-type", "topics", "--entity-name", "t"];
    alter(
        kafka,
        broker,
        &topic,
        &["--add-config", "max.message.bytes=200"],
    );
    describe_until(kafka, broker, &topic, "max.message.bytes=200", true);
    let big = produce_one(kafka, broker, "t", 1000);
    let said = format!("{}{}", big.stdout, big.stderr);
    assert!(
        said.contains("RecordTooLargeException") || said.contains("MESSAGE_TOO_LARGE"),
        "a 1000-byte record went to a topic with max.message.bytes=200:\n{big}"
    );
    alter(
        kafka,
        broker,
        &topic,
        &["--delete-config", "max.message.bytes"],
    );
    describe_until(kafka, broker, &topic, "max.message.bytes=200", false);
    produce_one(kafka, broker, "t", 1000).assert_success();

    // A broker's dynamic config, and the cluster default.
    let broker11 = ["--entity-type", "brokers", "--entity-name", "11"];
    alter(
        kafka,
        broker,
        &broker11,
        &["--add-config", "log.cleaner.threads=1"],
    );
    describe_until(kafka, broker, &broker11, "log.cleaner.threads=1", true);
    let default = ["--entity-type", "brokers", "--entity-default"];
    alter(
        kafka,
        broker,
        &default,
        &["--add-config", "log.retention.ms=123456789"],
    );
    describe_until(kafka, broker, &default, "log.retention.ms=123456789", true);
    // A broker refuses a broker config that is not dynamic before forwarding anything.
    let out = configs(
        kafka,
        broker,
        &[
            "--alter",
            "--entity-type",
            "brokers",
            "--entity-name",
            "11",
            "--add-config",
            "process.roles=broker",
        ],
    );
    assert!(!out.success(), "a static config was changed:\n{out}");

    // A client-metrics subscription through `kafka-client-metrics`.
    let out = kafka.run(
        Tool::ClientMetrics,
        &[
            "--bootstrap-server",
            broker,
            "--alter",
            "--name",
            "tools-sub",
            "--interval",
            "2500",
            "--metrics",
            "org.apache.kafka.producer.",
        ],
    );
    out.assert_success();
    let deadline = Instant::now() + PROPAGATION;
    loop {
        let out = kafka.run(
            Tool::ClientMetrics,
            &[
                "--bootstrap-server",
                broker,
                "--describe",
                "--name",
                "tools-sub",
            ],
        );
        if out.success() && out.stdout.contains("2500") {
            eprintln!("kafka-client-metrics --describe:\n{}", out.stdout.trim());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "tools-sub is not described:\n{out}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    kafka_configs_at_the_controller(kafka, &c.controller.endpoint());
}

/// `kafka-configs --bootstrap-controller`: an alter (which describes the resource first), and
/// describes of this controller's broker config and of the cluster default, answered by kraftd
/// itself. (A topic cannot be described there: the tool lists topics first, which no
/// controller serves, Java's included.)
fn kafka_configs_at_the_controller(kafka: &Kafka, controller: &str) {
    let run = |args: &[&str]| {
        let mut all = vec!["--bootstrap-controller", controller];
        all.extend_from_slice(args);
        let out = kafka.run(Tool::Configs, &all);
        out.assert_success();
        eprintln!(
            "kafka-configs --bootstrap-controller {args:?}:\n{}",
            out.stdout.trim()
        );
        out.stdout
    };
    let topic = ["--entity-type", "topics", "--entity-name", "t"];
    let mut alter_args = vec!["--alter"];
    alter_args.extend_from_slice(&topic);
    alter_args.extend_from_slice(&["--add-config", "retention.ms=3600000"]);
    run(&alter_args);
    let own = run(&[
        "--describe",
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--all",
    ]);
    assert!(own.contains("node.id=1"), "{own}");
    assert!(own.contains("log.retention.ms=123456789"), "{own}");
    let default = run(&["--describe", "--entity-type", "brokers", "--entity-default"]);
    assert!(default.contains("log.retention.ms=123456789"), "{default}");
}
