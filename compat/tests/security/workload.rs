//! kraftd as the active controller of a stock Kafka 4.4 broker, driven by Kafka's own tools
//! through the broker: an idempotent producer (Kafka 4's default, here spelled out with
//! acks=all) and a transactional one get their producer ids from blocks kraftd allocates (the
//! broker creates `__transaction_state` through CreateTopics on the way); `kafka-configs` sets
//! and deletes user and client quotas (forwarded to kraftd in Envelopes) and describes them
//! through the broker once it has them. Last, Java's image of kraftd's log equals kraftd's.

use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::{Kafka, KraftdProcess, TestDir, Tool, ToolOptions, KRAFTD_COMMAND_TIMEOUT};
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 11;
/// How long the broker may take to learn of a committed change.
const PROPAGATION: Duration = Duration::from_secs(60);

struct Tools<'a> {
    kafka: &'a Kafka,
    broker: String,
}

impl Tools<'_> {
    fn admin(&self, tool: Tool, args: &[&str]) -> crate::harness::Output {
        let mut all = vec!["--bootstrap-server", self.broker.as_str()];
        all.extend_from_slice(args);
        self.kafka.run(tool, &all)
    }

    fn producers(&self) {
        self.admin(
            Tool::Topics,
            &[
                "--create",
                "--topic",
                "ids",
                "--partitions",
                "3",
                "--replication-factor",
                "1",
            ],
        )
        .assert_success();
        let lines = ["one", "two", "three"];
        let options = ToolOptions {
            stdin: Some(format!("{}\n", lines.join("\n")).into_bytes()),
            ..ToolOptions::default()
        };
        let args = [
            "--bootstrap-server",
            self.broker.as_str(),
            "--topic",
            "ids",
            "--producer-property",
            "enable.idempotence=true",
            "--producer-property",
            "acks=all",
        ];
        let main = self.kafka.main_class(Tool::ConsoleProducer);
        self.kafka.tool_with(main, &args, &options).assert_success();
        let consumed = self
            .kafka
            .console_consume(&self.broker, "ids", lines.len(), 30_000);
        let mut got: Vec<&str> = consumed.stdout.lines().collect();
        got.sort();
        assert_eq!(got, ["one", "three", "two"], "{consumed}");
        let transactional = self.admin(
            Tool::ProducerPerformance,
            &[
                "--topic",
                "ids",
                "--num-records",
                "500",
                "--record-size",
                "100",
                "--throughput",
                "-1",
                "--transactional-id",
                "security-tx",
                "--transaction-duration-ms",
                "100",
                "--producer-props",
                "acks=all",
            ],
        );
        assert!(
            transactional.stdout.contains("500 records sent"),
            "the transactional producer did not send its 500 records:\n{transactional}"
        );
        eprintln!("an idempotent and a transactional producer wrote through broker {BROKER}");
    }
}

impl Tools<'_> {
    /// `kafka-configs --describe` of `entity` through the broker until its output holds
    /// `done`.
    fn describe_until(&self, entity: &[&str], done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PROPAGATION;
        loop {
            let mut args = vec!["--describe"];
            args.extend_from_slice(entity);
            let out = self.admin(Tool::Configs, &args);
            if out.success() && done(&out.stdout) {
                return out.stdout;
            }
            assert!(
                Instant::now() < deadline,
                "the broker describes {entity:?} as:\n{out}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn quotas(&self) {
        let alice = ["--entity-type", "users", "--entity-name", "alice"];
        let clients = ["--entity-type", "clients", "--entity-default"];
        let alter = |entity: &[&str], change: &[&str]| {
            let mut args = vec!["--alter"];
            args.extend_from_slice(entity);
            args.extend_from_slice(change);
            self.admin(Tool::Configs, &args).assert_success();
        };
        alter(
            &alice,
            &[
                "--add-config",
                "producer_byte_rate=1024,consumer_byte_rate=2048",
            ],
        );
        alter(&clients, &["--add-config", "request_percentage=12.5"]);
        self.describe_until(&alice, |o| {
            o.contains("producer_byte_rate=1024.0") && o.contains("consumer_byte_rate=2048.0")
        });
        self.describe_until(&clients, |o| o.contains("request_percentage=12.5"));
        // A refusal comes back with the controller's message.
        let mut args = vec!["--alter"];
        args.extend_from_slice(&alice);
        args.extend(["--add-config", "consumer_byte_rate=-1"]);
        let refused = self.admin(Tool::Configs, &args);
        assert!(
            refused
                .to_string()
                .contains("Quota consumer_byte_rate must be greater than 0"),
            "{refused}"
        );
        alter(&alice, &["--delete-config", "producer_byte_rate"]);
        self.describe_until(&alice, |o| {
            !o.contains("producer_byte_rate") && o.contains("consumer_byte_rate=2048.0")
        });
        eprintln!("kafka-configs set, refused and deleted quotas through broker {BROKER}");
    }
}

/// The ProducerIdsRecords in kraftd's log (`kraftd dump-log --json`), as (broker, next
/// producer id), in log order.
fn producer_id_blocks(metadata_dir: &std::path::Path) -> Vec<(i64, i64)> {
    let dir = metadata_dir.display().to_string();
    let out = KraftdProcess::run(&["dump-log", "--json", &dir], &[], KRAFTD_COMMAND_TIMEOUT);
    out.assert_success();
    let mut blocks = Vec::new();
    for line in out.stdout.lines() {
        let batch: serde_json::Value = serde_json::from_str(line).expect("dump-log prints JSON");
        for r in batch["records"].as_array().into_iter().flatten() {
            let payload = &r["payload"];
            if payload["type"] == "PRODUCER_IDS_RECORD" {
                let data = &payload["data"];
                blocks.push((
                    data["brokerId"].as_i64().expect("brokerId"),
                    data["nextProducerId"].as_i64().expect("nextProducerId"),
                ));
            }
        }
    }
    blocks
}

#[test]
fn stock_tools_through_a_broker_on_kraftd() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut c = TopicCluster::start(&dir, Kind::Kraftd, &[BROKER]);
    let t = Tools {
        kafka,
        broker: c.bootstrap_server(),
    };
    t.producers();
    t.quotas();
    drop(t);
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    let blocks = producer_id_blocks(&log);
    assert!(!blocks.is_empty(), "kraftd wrote no ProducerIdsRecord");
    let nexts: Vec<i64> = blocks.iter().map(|b| b.1).collect();
    let expected: Vec<i64> = (1..=blocks.len() as i64).map(|k| 1000 * k).collect();
    assert_eq!(
        nexts, expected,
        "one block of 1000 after another: {blocks:?}"
    );
    assert!(
        blocks.iter().all(|b| b.0 == i64::from(BROKER)),
        "{blocks:?}"
    );
    let image = kraftd_image(&log, None);
    assert_eq!(
        image["producerIds"]["nextProducerId"],
        *expected.last().unwrap()
    );
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}
