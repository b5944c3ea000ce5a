//! IncrementalAlterConfigs and AlterConfigs: the very same requests, in the same order, to a
//! Java 4.4 controller and to kraftd (node 1 each), each with two stock brokers (11, 12)
//! registered and topics `t` and `u` created; the answers compared field by field (codes and
//! messages), then the configs each controller's log holds (Java's image of either log), so
//! the records written count too. kraftd's cluster then serves `kafka-configs` (see
//! `tools`), and Java's image of kraftd's log must equal kraftd's.

use kraftd::protocol::codec::Message;
use kraftd::protocol::messages::create_topics_request::CreatableTopic;
use kraftd::protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};
use serde_json::Value;

use super::requests::{
    incremental, legacy, run, Request, APPEND, BROKER, BROKER_LOGGER, CLIENT_METRICS, DELETE,
    GROUP, SET, SUBTRACT, TOPIC,
};
use super::tools::kafka_configs_take_effect;
use crate::harness::dump_java_image;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, image_differences};
use crate::harness::quorum_probe::describe_quorum;
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

const BROKERS: [i32; 2] = [11, 12];

fn cases() -> Vec<(&'static str, Request<'static>)> {
    // Replica lists of about 20,000 characters each: either fits in a request (a string of
    // more than 32,767 bytes does not even parse), both together exceed a record's value.
    let replicas = |from: usize| {
        let list: Vec<String> = (from..from + 2500).map(|p| format!("{p}:11")).collect();
        &*Box::leak(list.join(",").into_boxed_str())
    };
    let (first, second) = (replicas(10_000), replicas(20_000));
    vec![
        (
            "set a topic config",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("retention.ms", SET, Some("86400000"))])],
            ),
        ),
        (
            "set it again (no record)",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("retention.ms", SET, Some("86400000"))])],
            ),
        ),
        (
            "v0",
            incremental(
                0,
                false,
                vec![(TOPIC, "t", vec![("segment.ms", SET, Some("3600000"))])],
            ),
        ),
        (
            "an unknown topic",
            incremental(
                1,
                false,
                vec![(TOPIC, "nope", vec![("retention.ms", SET, Some("1"))])],
            ),
        ),
        (
            "the default topic",
            incremental(
                1,
                false,
                vec![(TOPIC, "", vec![("retention.ms", SET, Some("1"))])],
            ),
        ),
        (
            "an invalid topic name",
            incremental(
                1,
                false,
                vec![(TOPIC, "bad name", vec![("retention.ms", SET, Some("1"))])],
            ),
        ),
        (
            "an unknown config name",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("retention.msec", SET, Some("1"))])],
            ),
        ),
        (
            "two unknown config names",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("zz.top", SET, Some("1")), ("aa.bottom", SET, Some("2"))],
                )],
            ),
        ),
        (
            "not a number",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("retention.ms", SET, Some("soon"))])],
            ),
        ),
        (
            "below the range",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("min.insync.replicas", SET, Some("0"))])],
            ),
        ),
        (
            "not a valid string",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("cleanup.policy", SET, Some("sometimes"))])],
            ),
        ),
        (
            "a bad throttled replica list",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("leader.replication.throttled.replicas", SET, Some("0-11"))],
                )],
            ),
        ),
        (
            "compaction lags crossed",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![
                        ("min.compaction.lag.ms", SET, Some("10")),
                        ("max.compaction.lag.ms", SET, Some("5")),
                    ],
                )],
            ),
        ),
        (
            "remote storage on a controller without it",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("remote.storage.enable", SET, Some("true"))],
                )],
            ),
        ),
        (
            "a long list",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![("leader.replication.throttled.replicas", SET, Some(first))],
                )],
            ),
        ),
        (
            "appended past a record's value size",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![(
                        "leader.replication.throttled.replicas",
                        APPEND,
                        Some(second),
                    )],
                )],
            ),
        ),
        (
            "the long list removed",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![("leader.replication.throttled.replicas", DELETE, None)],
                )],
            ),
        ),
        (
            "one bad op fails the resource",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![
                        ("retention.ms", SET, Some("5")),
                        ("segment.bytes", SET, Some("1")),
                    ],
                )],
            ),
        ),
        (
            "delete a config",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("segment.ms", DELETE, None)])],
            ),
        ),
        (
            "delete a config not set",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("flush.ms", DELETE, None)])],
            ),
        ),
        (
            "delete an unknown config",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("no.such", DELETE, None)])],
            ),
        ),
        (
            "append to the default list",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("cleanup.policy", APPEND, Some("compact"))],
                )],
            ),
        ),
        (
            "append what is there",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("cleanup.policy", APPEND, Some("delete,compact"))],
                )],
            ),
        ),
        (
            "subtract one",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("cleanup.policy", SUBTRACT, Some("delete,absent"))],
                )],
            ),
        ),
        (
            "subtract the last",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("cleanup.policy", SUBTRACT, Some("compact"))],
                )],
            ),
        ),
        (
            "append to a list with a validator",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![(
                        "follower.replication.throttled.replicas",
                        APPEND,
                        Some("0:11,0:12"),
                    )],
                )],
            ),
        ),
        (
            "append a bad entry",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "t",
                    vec![("follower.replication.throttled.replicas", APPEND, Some("x"))],
                )],
            ),
        ),
        (
            "append to a long",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("retention.ms", APPEND, Some("1"))])],
            ),
        ),
        (
            "subtract from an unknown name",
            incremental(
                1,
                false,
                vec![(TOPIC, "t", vec![("no.such", SUBTRACT, Some("1"))])],
            ),
        ),
        (
            "validate only",
            incremental(
                1,
                true,
                vec![(TOPIC, "u", vec![("retention.bytes", SET, Some("1048576"))])],
            ),
        ),
        (
            "validate only, refused",
            incremental(
                1,
                true,
                vec![(TOPIC, "u", vec![("retention.bytes", SET, Some("lots"))])],
            ),
        ),
        (
            "the cluster default",
            incremental(
                1,
                false,
                vec![(
                    BROKER,
                    "",
                    vec![("log.retention.ms", SET, Some("604800000"))],
                )],
            ),
        ),
        (
            "a broker",
            incremental(
                1,
                false,
                vec![(BROKER, "11", vec![("log.cleaner.threads", SET, Some("2"))])],
            ),
        ),
        (
            "the controller itself",
            incremental(
                1,
                false,
                vec![(BROKER, "1", vec![("log.cleaner.threads", SET, Some("2"))])],
            ),
        ),
        (
            "any name for a broker",
            incremental(
                1,
                false,
                vec![(BROKER, "12", vec![("not.a.broker.config", SET, Some("x"))])],
            ),
        ),
        (
            "a broker name that is not a number",
            incremental(
                1,
                false,
                vec![(
                    BROKER,
                    "eleven",
                    vec![("log.cleaner.threads", SET, Some("2"))],
                )],
            ),
        ),
        (
            "a negative broker id",
            incremental(
                1,
                false,
                vec![(BROKER, "-1", vec![("log.cleaner.threads", SET, Some("2"))])],
            ),
        ),
        (
            "a broker not registered",
            incremental(
                1,
                false,
                vec![(BROKER, "99", vec![("log.cleaner.threads", SET, Some("2"))])],
            ),
        ),
        (
            "a broker list config from its default",
            incremental(
                1,
                false,
                vec![(
                    BROKER,
                    "12",
                    vec![("sasl.enabled.mechanisms", APPEND, Some("PLAIN"))],
                )],
            ),
        ),
        (
            "append to a broker int",
            incremental(
                1,
                false,
                vec![(
                    BROKER,
                    "12",
                    vec![("log.cleaner.threads", APPEND, Some("1"))],
                )],
            ),
        ),
        (
            "broker-level min.insync.replicas with ELR",
            incremental(
                1,
                false,
                vec![(BROKER, "11", vec![("min.insync.replicas", SET, Some("1"))])],
            ),
        ),
        (
            "cluster min.insync.replicas removed with ELR",
            incremental(
                1,
                false,
                vec![(BROKER, "", vec![("min.insync.replicas", DELETE, None)])],
            ),
        ),
        (
            "cluster min.insync.replicas set with ELR",
            incremental(
                1,
                false,
                vec![(BROKER, "", vec![("min.insync.replicas", SET, Some("1"))])],
            ),
        ),
        (
            "topic min.insync.replicas with ELR",
            incremental(
                1,
                false,
                vec![(TOPIC, "u", vec![("min.insync.replicas", SET, Some("1"))])],
            ),
        ),
        (
            "cordoning a directory at the controller",
            incremental(
                1,
                false,
                vec![(
                    BROKER,
                    "11",
                    vec![("cordoned.log.dirs", SET, Some("/some/dir"))],
                )],
            ),
        ),
        (
            "an empty cordon at the controller",
            incremental(
                1,
                false,
                vec![(BROKER, "11", vec![("cordoned.log.dirs", SET, Some(" "))])],
            ),
        ),
        (
            "several resources, some refused",
            incremental(
                1,
                false,
                vec![
                    (TOPIC, "t", vec![("retention.ms", SET, Some("1000"))]),
                    (TOPIC, "nope", vec![("retention.ms", SET, Some("1000"))]),
                    (BROKER, "12", vec![("log.cleaner.threads", SET, Some("2"))]),
                    (BROKER, "x", vec![("log.cleaner.threads", SET, Some("3"))]),
                ],
            ),
        ),
        (
            "duplicates and an unknown type",
            incremental(
                1,
                false,
                vec![
                    (TOPIC, "t", vec![("retention.ms", SET, Some("2000"))]),
                    (99, "what", vec![]),
                    (TOPIC, "t", vec![("retention.ms", SET, Some("3000"))]),
                    (TOPIC, "u", vec![("retention.ms", SET, Some("4000"))]),
                    (TOPIC, "t", vec![("retention.ms", SET, Some("5000"))]),
                ],
            ),
        ),
        (
            "only duplicates",
            incremental(1, false, vec![(TOPIC, "t", vec![]), (TOPIC, "t", vec![])]),
        ),
        ("no resources", incremental(1, false, vec![])),
        (
            "a config named twice",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![
                        ("retention.ms", SET, Some("7000")),
                        ("retention.ms", SET, Some("8000")),
                    ],
                )],
            ),
        ),
        (
            "the default group",
            incremental(
                1,
                false,
                vec![(
                    GROUP,
                    "",
                    vec![("consumer.session.timeout.ms", SET, Some("45000"))],
                )],
            ),
        ),
        (
            "a client-metrics subscription",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![
                        ("interval.ms", SET, Some("1000")),
                        (
                            "metrics",
                            SET,
                            Some("org.apache.kafka.producer., org.apache.kafka.consumer."),
                        ),
                        (
                            "match",
                            SET,
                            Some("client_id=app-.*,client_software_name=apache-kafka-java"),
                        ),
                    ],
                )],
            ),
        ),
        (
            "a subscription without a name",
            incremental(
                1,
                false,
                vec![(CLIENT_METRICS, "", vec![("interval.ms", SET, Some("1000"))])],
            ),
        ),
        (
            "an unknown client-metrics config",
            incremental(
                1,
                false,
                vec![(CLIENT_METRICS, "sub", vec![("colour", SET, Some("red"))])],
            ),
        ),
        (
            "an interval that is not a number",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("interval.ms", SET, Some("fast"))],
                )],
            ),
        ),
        (
            "an interval too short",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("interval.ms", SET, Some("99"))],
                )],
            ),
        ),
        (
            "an interval too long",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("interval.ms", SET, Some("3600001"))],
                )],
            ),
        ),
        (
            "a match on an unknown selector",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("match", SET, Some("client_colour=red"))],
                )],
            ),
        ),
        (
            "a match without a value",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("match", SET, Some("client_id"))],
                )],
            ),
        ),
        (
            "a match with two values",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("match", SET, Some("client_id=a=b"))],
                )],
            ),
        ),
        (
            "duplicate metrics",
            incremental(
                1,
                false,
                vec![(CLIENT_METRICS, "sub", vec![("metrics", SET, Some("a,,b"))])],
            ),
        ),
        (
            "append to client metrics",
            incremental(
                1,
                false,
                vec![(
                    CLIENT_METRICS,
                    "sub",
                    vec![("metrics", APPEND, Some("org.apache.kafka.stream."))],
                )],
            ),
        ),
        (
            "a client-metrics config deleted",
            incremental(
                1,
                false,
                vec![(CLIENT_METRICS, "sub", vec![("interval.ms", DELETE, None)])],
            ),
        ),
        (
            "broker logger: another node",
            incremental(
                1,
                false,
                vec![(BROKER_LOGGER, "2", vec![("root", SET, Some("INFO"))])],
            ),
        ),
        (
            "broker logger: not a number",
            incremental(
                1,
                false,
                vec![(BROKER_LOGGER, "one", vec![("root", SET, Some("INFO"))])],
            ),
        ),
        (
            "broker logger: append",
            incremental(
                1,
                false,
                vec![(BROKER_LOGGER, "1", vec![("root", APPEND, Some("INFO"))])],
            ),
        ),
        (
            "broker logger: a bad level",
            incremental(
                1,
                false,
                vec![(BROKER_LOGGER, "1", vec![("root", SET, Some("LOUD"))])],
            ),
        ),
        (
            "broker logger: the root level removed",
            incremental(
                1,
                false,
                vec![(BROKER_LOGGER, "1", vec![("root", DELETE, None)])],
            ),
        ),
        (
            "broker logger: an unknown logger",
            incremental(
                1,
                false,
                vec![(
                    BROKER_LOGGER,
                    "1",
                    vec![("no.such.logger", SET, Some("INFO"))],
                )],
            ),
        ),
        (
            "legacy: replace a topic's configs",
            legacy(
                2,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![
                        ("retention.ms", Some("5000")),
                        ("segment.ms", Some("100000")),
                    ],
                )],
            ),
        ),
        (
            "legacy: replace again, dropping some",
            legacy(
                2,
                false,
                vec![(TOPIC, "u", vec![("max.message.bytes", Some("2000"))])],
            ),
        ),
        (
            "legacy v0",
            legacy(
                0,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![
                        ("max.message.bytes", Some("3000")),
                        ("flush.ms", Some("1000")),
                    ],
                )],
            ),
        ),
        (
            "legacy: a null value",
            legacy(
                2,
                false,
                vec![(TOPIC, "u", vec![("max.message.bytes", None)])],
            ),
        ),
        (
            "legacy: an unknown name",
            legacy(2, false, vec![(TOPIC, "u", vec![("bogus", Some("1"))])]),
        ),
        (
            "legacy: a bad value",
            legacy(
                2,
                false,
                vec![(TOPIC, "u", vec![("segment.bytes", Some("1"))])],
            ),
        ),
        (
            "legacy: validate only",
            legacy(
                1,
                true,
                vec![(TOPIC, "u", vec![("retention.ms", Some("1"))])],
            ),
        ),
        (
            "legacy: a broker",
            legacy(
                2,
                false,
                vec![(BROKER, "12", vec![("log.cleaner.threads", Some("2"))])],
            ),
        ),
        (
            "legacy: the cluster default drops its min.insync.replicas",
            legacy(
                2,
                false,
                vec![(BROKER, "", vec![("log.retention.ms", Some("1000"))])],
            ),
        ),
        (
            "legacy: a broker logger",
            legacy(
                2,
                false,
                vec![
                    (BROKER_LOGGER, "1", vec![("root", Some("INFO"))]),
                    (
                        TOPIC,
                        "t",
                        vec![
                            ("retention.ms", Some("7200000")),
                            ("cleanup.policy", Some("compact,delete")),
                        ],
                    ),
                ],
            ),
        ),
        (
            "legacy: duplicates and an unknown type",
            legacy(
                2,
                false,
                vec![
                    (TOPIC, "t", vec![]),
                    (7, "seven", vec![]),
                    (TOPIC, "t", vec![]),
                ],
            ),
        ),
        (
            "the last word on u",
            incremental(
                1,
                false,
                vec![(
                    TOPIC,
                    "u",
                    vec![
                        ("segment.bytes", SET, Some("10485760")),
                        ("cleanup.policy", APPEND, Some("compact")),
                        ("flush.ms", DELETE, None),
                    ],
                )],
            ),
        ),
    ]
}

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

fn run_all(kind: Kind, dir: &TestDir) -> (Vec<String>, Value) {
    let mut c = TopicCluster::start(dir, kind, &BROKERS);
    create_topics(&c);
    let answers: Vec<String> = cases().iter().map(|(_, r)| run(&c, r)).collect();
    // Every answer was released after its records committed: the high watermark covers them.
    let cases_end = describe_quorum(c.controller.port)
        .expect("the controller describes its quorum")
        .high_watermark
        - 1;
    if kind == Kind::Kraftd {
        kafka_configs_take_effect(&c);
    }
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    let configs = dump_java_image(&log, Some(cases_end))["configs"].clone();
    if kind == Kind::Kraftd {
        let (offset, _, _) = assert_image_equals_javas(&log, None);
        eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
    }
    (answers, configs)
}

#[test]
fn config_changes_get_javas_answers_and_records() {
    let dir = TestDir::new();
    let (java, java_configs) = run_all(Kind::Java, &dir);
    let (kraftd, kraftd_configs) = run_all(Kind::Kraftd, &dir);
    let mut failures = Vec::new();
    eprintln!("Config changes, the same bytes to Java 4.4 and to kraftd:");
    for (((name, _), j), k) in cases().iter().zip(&java).zip(&kraftd) {
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
    let diffs = image_differences(&java_configs, &kraftd_configs);
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
