//! DescribeConfigs, answered as a Java 4.4 controller answers it. The oracle is Kafka's own
//! `ConfigHelper` (`compat/image-dumper/ConfigsDescriber.java`), run on the controller's log
//! and properties file once it has stopped; `alter`'s clusters ask the same requests of the
//! live controller first:
//! - the Java controller's live answers equal the oracle's (the oracle is faithful);
//! - kraftd's live answers equal the oracle's on kraftd's own log.
//!
//! Two differences are by design: entries are compared sorted by name (Java lists them in
//! `HashMap` order), and a node's loggers are compared by their errors only (Java lists its
//! Log4j loggers; kraftd has one, `root`).
//!
//! `table` checks that kraftd's broker config table and documentation are what Kafka 4.4's
//! definitions print.

use std::path::Path;

use kraftd::protocol::codec::Message;
use kraftd::protocol::messages::describe_configs_request::DescribeConfigsResource;
use kraftd::protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use serde_json::Value;

use super::requests::{BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP, TOPIC};
use crate::harness::describe_configs_offline;
use crate::harness::java_probe::{line_differences, run_probe};
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

/// One DescribeConfigs request: version, synonyms, documentation, (type, name, keys).
pub struct Describe {
    pub version: i16,
    pub synonyms: bool,
    pub documentation: bool,
    pub resources: Vec<(i8, String, Option<Vec<String>>)>,
}

fn resource(ty: i8, name: &str) -> (i8, String, Option<Vec<String>>) {
    (ty, name.to_string(), None)
}

fn keyed(ty: i8, name: &str, keys: &[&str]) -> (i8, String, Option<Vec<String>>) {
    (
        ty,
        name.to_string(),
        Some(keys.iter().map(|k| k.to_string()).collect()),
    )
}

/// The requests, after `alter`'s cases: node 1 is the controller, `t` and `u` are topics with
/// configs, `j` a group with configs, `sub` a client-metrics subscription.
pub fn describes() -> Vec<Describe> {
    let everything = vec![
        resource(BROKER, "1"),
        resource(BROKER, ""),
        resource(TOPIC, "t"),
        resource(TOPIC, "u"),
        resource(GROUP, "j"),
        resource(GROUP, "never-configured"),
        resource(CLIENT_METRICS, "sub"),
        resource(CLIENT_METRICS, "never-configured"),
    ];
    let refused = vec![
        resource(BROKER, "2"),
        resource(BROKER, "x"),
        resource(BROKER, "+1"),
        resource(BROKER_LOGGER, ""),
        resource(BROKER_LOGGER, "2"),
        resource(BROKER_LOGGER, "x"),
        resource(BROKER_LOGGER, "1"),
        resource(TOPIC, "nope"),
        resource(TOPIC, ""),
        resource(TOPIC, "bad name"),
        resource(GROUP, ""),
        resource(CLIENT_METRICS, ""),
    ];
    vec![
        Describe {
            version: 4,
            synonyms: true,
            documentation: true,
            resources: everything.clone(),
        },
        Describe {
            version: 4,
            synonyms: false,
            documentation: false,
            resources: everything.clone(),
        },
        Describe {
            version: 1,
            synonyms: true,
            documentation: false,
            resources: everything,
        },
        Describe {
            version: 3,
            synonyms: true,
            documentation: false,
            resources: vec![
                keyed(
                    BROKER,
                    "1",
                    &[
                        "log.retention.ms",
                        "min.insync.replicas",
                        "no.such",
                        "node.id",
                    ],
                ),
                keyed(TOPIC, "t", &["retention.ms", "segment.ms"]),
                keyed(GROUP, "j", &[]),
            ],
        },
        Describe {
            version: 4,
            synonyms: true,
            documentation: false,
            resources: refused,
        },
        // An unknown resource type refuses the whole request.
        Describe {
            version: 4,
            synonyms: false,
            documentation: false,
            resources: vec![resource(BROKER, "1"), resource(99, "x")],
        },
    ]
}

fn request(d: &Describe) -> DescribeConfigsRequest {
    DescribeConfigsRequest {
        resources: d
            .resources
            .iter()
            .map(|(ty, name, keys)| DescribeConfigsResource {
                resource_type: *ty,
                resource_name: name.clone(),
                configuration_keys: keys.clone(),
                ..Default::default()
            })
            .collect(),
        include_synonyms: d.synonyms,
        include_documentation: d.documentation,
        ..Default::default()
    }
}

/// The live controller's answers to [`describes`], as Kafka's JSON.
pub fn live_answers(c: &TopicCluster) -> Vec<Value> {
    describes()
        .iter()
        .map(|d| {
            let body = c
                .send(d.version, &request(d))
                .unwrap_or_else(|e| panic!("DescribeConfigs v{} is not answered: {e}", d.version));
            DescribeConfigsResponse::decode_exact(&body, d.version)
                .expect("a DescribeConfigs response")
                .to_kafka_json(d.version)
        })
        .collect()
}

/// Kafka's `ConfigHelper` answers to [`describes`] for the stopped controller, its image as of
/// offset `at`.
pub fn oracle_answers(log_dir: &Path, config: &Path, at: i64) -> Vec<Value> {
    describes()
        .iter()
        .map(|d| {
            describe_configs_offline(
                log_dir,
                config,
                at,
                d.version,
                d.synonyms,
                d.documentation,
                &d.resources,
            )
        })
        .collect()
}

/// An answer with each result's entries sorted by name and a node's logger entries left out.
fn comparable(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(results) = answer.get_mut("results").and_then(Value::as_array_mut) {
        for result in results {
            let logger = result["resourceType"].as_i64() == Some(BROKER_LOGGER.into());
            if let Some(configs) = result.get_mut("configs").and_then(Value::as_array_mut) {
                if logger {
                    configs.clear();
                }
                configs.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
            }
        }
    }
    answer
}

/// Every difference between two answers, one line each: per result, per config entry.
fn answer_differences(label: &str, ours: &Value, java: &Value) -> Vec<String> {
    let (ours, java) = (comparable(ours), comparable(java));
    let results = |v: &Value| v["results"].as_array().cloned().unwrap_or_default();
    let (ours_results, java_results) = (results(&ours), results(&java));
    let mut out = Vec::new();
    if ours_results.len() != java_results.len() {
        out.push(format!(
            "{label}: {} results, Java {}",
            ours_results.len(),
            java_results.len()
        ));
    }
    for (o, j) in ours_results.iter().zip(&java_results) {
        let id = format!("{label} {}:{}", j["resourceType"], j["resourceName"]);
        for field in ["errorCode", "errorMessage", "resourceType", "resourceName"] {
            if o[field] != j[field] {
                out.push(format!("{id} {field}: {} vs Java {}", o[field], j[field]));
            }
        }
        let entries = |v: &Value| v["configs"].as_array().cloned().unwrap_or_default();
        let (oe, je) = (entries(o), entries(j));
        let name = |e: &Value| e["name"].as_str().unwrap_or_default().to_string();
        let mut names: Vec<String> = oe.iter().chain(&je).map(name).collect();
        names.sort();
        names.dedup();
        for n in names {
            let find = |es: &[Value]| es.iter().find(|e| name(e) == n).cloned();
            let (a, b) = (find(&oe), find(&je));
            if a != b {
                out.push(format!(
                    "{id} {n}:\n      kraftd: {}\n      java:   {}",
                    a.map_or("(absent)".into(), |v| v.to_string()),
                    b.map_or("(absent)".into(), |v| v.to_string())
                ));
            }
        }
    }
    out
}

/// Every difference between a controller's live answers and the oracle's.
pub fn describe_differences(kind: &str, live: &[Value], oracle: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (l, o)) in live.iter().zip(oracle).enumerate() {
        out.extend(answer_differences(&format!("{kind} request {i}"), l, o));
    }
    let described: usize = live
        .iter()
        .map(|a| a["results"].as_array().map_or(0, |r| r.len()))
        .sum();
    eprintln!(
        "DescribeConfigs, {kind}: {} requests, {described} resources; {} differences from \
         Kafka's ConfigHelper",
        live.len(),
        out.len()
    );
    out
}

#[test]
fn table() {
    let dir = TestDir::new();
    for (mode, file) in [("table", "broker-configs.tsv"), ("docs", "config-docs.tsv")] {
        let out = run_probe("BrokerConfigProbe", &[mode], "", dir.path());
        assert!(out.success(), "BrokerConfigProbe {mode} failed:\n{out}");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/controller/describe_configs")
            .join(file);
        let ours = std::fs::read_to_string(&path).expect("the table is in the checkout");
        let diffs = line_differences(&out.stdout, &ours);
        assert!(
            diffs.is_empty(),
            "{file} differs from what Kafka 4.4 prints (regenerate it with `BrokerConfigProbe \
             {mode}`):\n{}",
            diffs.join("\n")
        );
        eprintln!(
            "{file}: {} lines, as Kafka 4.4 prints them",
            ours.lines().count()
        );
    }
}
