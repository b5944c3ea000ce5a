//! kraftd as the active controller of a stock Kafka 4.4 broker, driven by Kafka's own tools
//! through the broker: an idempotent producer (Kafka 4's default, here spelled out with
//! acks=all) and a transactional one get their producer ids from blocks kraftd allocates (the
//! broker creates `__transaction_state` through CreateTopics on the way). Last, Java's image
//! of kraftd's log equals kraftd's.

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::{Kafka, KraftdProcess, TestDir, Tool, ToolOptions, KRAFTD_COMMAND_TIMEOUT};
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 11;

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
