//! IncrementalAlterConfigs and AlterConfigs: the very same requests, in the same order, to a
//! Java 4.4 controller and to kraftd (node 1 each), each with two stock brokers (11, 12)
//! registered and topics `t` and `u` created; the answers compared field by field (codes and
//! messages), then the configs each controller's log holds (Java's image of either log), so
//! the records written count too. Both then answer `describe`'s DescribeConfigs requests as
//! Kafka's `ConfigHelper` answers them on their logs. kraftd's cluster then serves
//! `kafka-configs` (see `tools`), and Java's image of kraftd's log must equal kraftd's.

use kraftd::protocol::codec::Message;
use kraftd::protocol::messages::create_topics_request::CreatableTopic;
use kraftd::protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};
use serde_json::Value;

use super::cases::cases;
use super::describe::{describe_differences, live_answers, oracle_answers};
use super::requests::run;
use super::tools::kafka_configs_take_effect;
use crate::harness::dump_java_image;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, image_differences};
use crate::harness::quorum_probe::describe_quorum;
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

const BROKERS: [i32; 2] = [11, 12];

/// Creates topics `t` and `u` (1 partition, 2 replicas) through the controller.
fn create_topics(c: &TopicCluster) {
    let r = CreateTopicsRequest {
        topics: ["t", "u"]
            .iter()
            .map(|n| CreatableTopic {
                name: n.to_string(),
                num_partitions: 1,
                replication_factor: 2,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 30_000,
        ..Default::default()
    };
    let body = c.send(7, &r).expect("CreateTopics is answered");
    let r = CreateTopicsResponse::decode_exact(&body, 7).expect("a CreateTopics response");
    assert!(r.topics.iter().all(|t| t.error_code == 0), "{r:?}");
}

/// What one controller answered and logged: the answers to the cases, the configs its log
/// holds, and the differences of its DescribeConfigs answers from Kafka's `ConfigHelper` on
/// its log.
struct Run {
    answers: Vec<String>,
    configs: Value,
    describe_differences: Vec<String>,
}

fn run_all(kind: Kind, dir: &TestDir) -> Run {
    let mut c = TopicCluster::start(dir, kind, &BROKERS);
    create_topics(&c);
    let answers: Vec<String> = cases().iter().map(|(_, r)| run(&c, r)).collect();
    // Every answer was released after its records committed: the high watermark covers them.
    let cases_end = describe_quorum(c.controller.port)
        .expect("the controller describes its quorum")
        .high_watermark
        - 1;
    let described = live_answers(&c);
    let described_at = describe_quorum(c.controller.port)
        .expect("the controller describes its quorum")
        .high_watermark
        - 1;
    if kind == Kind::Kraftd {
        kafka_configs_take_effect(&c);
    }
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    let oracle = oracle_answers(&log, &c.controller.config, described_at);
    let label = if kind == Kind::Kraftd {
        "kraftd"
    } else {
        "java"
    };
    let configs = dump_java_image(&log, Some(cases_end))["configs"].clone();
    if kind == Kind::Kraftd {
        let (offset, _, _) = assert_image_equals_javas(&log, None);
        eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
    }
    Run {
        answers,
        configs,
        describe_differences: describe_differences(label, &described, &oracle),
    }
}

#[test]
fn config_changes_get_javas_answers_and_records() {
    let dir = TestDir::new();
    let java_run = run_all(Kind::Java, &dir);
    let kraftd_run = run_all(Kind::Kraftd, &dir);
    let (java, java_configs) = (&java_run.answers, &java_run.configs);
    let (kraftd, kraftd_configs) = (&kraftd_run.answers, &kraftd_run.configs);
    let mut failures = Vec::new();
    // The oracle answers as the live Java controller does, and kraftd as the oracle does.
    for d in java_run
        .describe_differences
        .iter()
        .chain(&kraftd_run.describe_differences)
    {
        failures.push(format!("DescribeConfigs: {d}"));
    }
    eprintln!("Config changes, the same bytes to Java 4.4 and to kraftd:");
    for (((name, _), j), k) in cases().iter().zip(java).zip(kraftd) {
        eprintln!(
            "  {name}:\n    java:   {}",
            j.replace('\n', "\n            ")
        );
        if j != k {
            eprintln!("    kraftd: {}", k.replace('\n', "\n            "));
            failures.push(format!("{name}:\n    java:   {j}\n    kraftd: {k}"));
        }
    }
    // What the logs hold once the cases are done, as Java's image reads either log.
    let diffs = image_differences(java_configs, kraftd_configs);
    eprintln!("Configs after the cases (Java's image of Java's log):\n  {java_configs}");
    if !diffs.is_empty() {
        failures.push(format!(
            "the logged configs differ:\n  {}",
            diffs.join("\n  ")
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases().len(),
        failures.join("\n")
    );
}
