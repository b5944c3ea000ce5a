//! Transcripts of DescribeConfigs on a controller (node 1): its properties file and the
//! configs its image holds, then what each resource is described as. Compat
//! `configs::describe` compares the same with Kafka's own `ConfigHelper`.

use std::collections::BTreeMap;

use super::*;
use crate::controller::image::MetadataImage;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::describe_configs_response::DescribeConfigsResourceResult;
use crate::protocol::messages::{ConfigRecord, TopicRecord};
use crate::protocol::records::metadata::MetadataRecord;

const NODE: i32 = 1;

fn properties() -> BTreeMap<String, String> {
    [
        ("process.roles", "controller"),
        ("node.id", "1"),
        ("listeners", "CONTROLLER://127.0.0.1:9093"),
        ("controller.listener.names", "CONTROLLER"),
        ("log.dirs", "/var/lib/kraftd"),
        ("log.retention.hours", "24"),
        ("custom.setting", "mine"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// An image whose configs are `(type, resource, name, value)`, with topic `t`.
fn image(configs: &[(i8, &str, &str, &str)]) -> MetadataImage {
    let mut image = MetadataImage::default();
    let topic = TopicRecord {
        name: "t".into(),
        topic_id: Uuid([7; 16]),
        ..Default::default()
    };
    image.replay(&MetadataRecord::Topic(topic)).unwrap();
    for (ty, resource, name, value) in configs {
        let record = ConfigRecord {
            resource_type: *ty,
            resource_name: resource.to_string(),
            name: name.to_string(),
            value: Some(value.to_string()),
            ..Default::default()
        };
        image.replay(&MetadataRecord::Config(record)).unwrap();
    }
    image
}

fn describe(
    image: &MetadataImage,
    resources: &[(i8, &str)],
    synonyms: bool,
    allowed: &dyn Fn(&DescribeConfigsResource) -> bool,
) -> DescribeConfigsResponse {
    let originals = properties();
    let statics = StaticLogConfig {
        originals: originals.clone(),
    };
    let ctx = DescribeContext {
        node_id: NODE,
        originals: &originals,
        statics: &statics,
        image,
        root_log_level: "INFO",
    };
    let request = DescribeConfigsRequest {
        resources: resources
            .iter()
            .map(|(ty, name)| DescribeConfigsResource {
                resource_type: *ty,
                resource_name: name.to_string(),
                configuration_keys: None,
                ..Default::default()
            })
            .collect(),
        include_synonyms: synonyms,
        include_documentation: false,
        ..Default::default()
    };
    describe_configs(&ctx, &request, allowed)
}

/// One entry as a line: name=value source [synonyms] (ro: read-only, s: sensitive).
fn line(e: &DescribeConfigsResourceResult) -> String {
    let synonyms: Vec<String> = e
        .synonyms
        .iter()
        .map(|s| format!("{}={:?}@{}", s.name, s.value, s.source))
        .collect();
    format!(
        "{}={:?} source {}{}{} type {} [{}]",
        e.name,
        e.value,
        e.config_source,
        if e.read_only { " ro" } else { "" },
        if e.is_sensitive { " s" } else { "" },
        e.config_type,
        synonyms.join(", ")
    )
}

fn entry(r: &DescribeConfigsResponse, result: usize, name: &str) -> String {
    let found = r.results[result].configs.iter().find(|e| e.name == name);
    found.map_or_else(|| format!("{name} absent"), line)
}

const ALL: &dyn Fn(&DescribeConfigsResource) -> bool = &|_| true;

#[test]
fn own_broker_config_layers_file_cluster_default_and_node() {
    let image = image(&[
        (BROKER_RESOURCE, "", "log.retention.ms", "1000"),
        (BROKER_RESOURCE, "", "log.cleaner.threads", "3"),
        (BROKER_RESOURCE, "1", "log.cleaner.threads", "2"),
        // Not dynamic: Kafka ignores it in a dynamic layer.
        (BROKER_RESOURCE, "1", "process.roles", "broker"),
        // Another node's: not this controller's.
        (BROKER_RESOURCE, "2", "log.cleaner.threads", "9"),
    ]);
    let r = describe(&image, &[(BROKER_RESOURCE, "1")], true, ALL);
    let transcript = [
        "node.id",
        "broker.id",
        "process.roles",
        "log.cleaner.threads",
        "log.retention.ms",
        "log.retention.hours",
        "custom.setting",
        "ssl.key.password",
        "num.io.threads",
    ]
    .map(|n| entry(&r, 0, n));
    assert_eq!(
        transcript,
        [
            "node.id=Some(\"1\") source 4 ro type 3 [node.id=Some(\"1\")@4]",
            // broker.id stands in for node.id (KafkaConfig.populateSynonyms).
            "broker.id=Some(\"1\") source 4 ro type 3 [broker.id=Some(\"1\")@4, broker.id=Some(\"-1\")@5]",
            "process.roles=Some(\"controller\") source 4 ro type 7 [process.roles=Some(\"controller\")@4]",
            "log.cleaner.threads=Some(\"2\") source 2 type 3 [log.cleaner.threads=Some(\"2\")@2, log.cleaner.threads=Some(\"3\")@3, log.cleaner.threads=Some(\"1\")@5]",
            // The cluster default overrides the file's hours (overrideProps drops synonyms).
            "log.retention.ms=Some(\"1000\") source 3 type 5 [log.retention.ms=Some(\"1000\")@3, log.retention.hours=Some(\"24\")@4, log.retention.hours=Some(\"168\")@5]",
            // Its value is the default once the cluster default replaced the file's hours, but
            // the file's layer still names it (as Java's staticBrokerConfigs does).
            "log.retention.hours=Some(\"168\") source 4 ro type 3 [log.retention.hours=Some(\"24\")@4, log.retention.hours=Some(\"168\")@5]",
            // A name Kafka does not know is shown as written would be: sensitive, unknown type.
            "custom.setting=None source 4 ro s type 0 [custom.setting=None@4]",
            "ssl.key.password=None source 5 s type 9 []",
            "num.io.threads=Some(\"8\") source 5 type 3 [num.io.threads=Some(\"8\")@5]",
        ]
    );
}

#[test]
fn the_cluster_default_lists_its_own_configs_with_their_default_synonyms_only() {
    let image = image(&[
        (BROKER_RESOURCE, "", "log.cleaner.threads", "3"),
        (BROKER_RESOURCE, "1", "log.cleaner.threads", "2"),
    ]);
    let r = describe(&image, &[(BROKER_RESOURCE, "")], true, ALL);
    let lines: Vec<String> = r.results[0].configs.iter().map(line).collect();
    assert_eq!(
        lines,
        ["log.cleaner.threads=Some(\"3\") source 3 type 3 [log.cleaner.threads=Some(\"3\")@3]"]
    );
}

#[test]
fn a_topic_takes_its_own_configs_then_the_brokers() {
    let image = image(&[
        (TOPIC_RESOURCE, "t", "retention.ms", "5000"),
        (BROKER_RESOURCE, "", "log.segment.bytes", "2097152"),
    ]);
    let r = describe(&image, &[(TOPIC_RESOURCE, "t")], true, ALL);
    let transcript = ["retention.ms", "segment.bytes", "cleanup.policy"].map(|n| entry(&r, 0, n));
    assert_eq!(
        transcript,
        [
            "retention.ms=Some(\"5000\") source 1 type 5 [retention.ms=Some(\"5000\")@1]",
            "segment.bytes=Some(\"2097152\") source 3 type 3 [log.segment.bytes=Some(\"2097152\")@3, log.segment.bytes=Some(\"1073741824\")@5]",
            "cleanup.policy=Some(\"delete\") source 5 type 7 [log.cleanup.policy=Some(\"delete\")@5]",
        ]
    );
}

#[test]
fn refusals_per_resource_and_for_the_whole_request() {
    let image = image(&[]);
    let r = describe(
        &image,
        &[
            (TOPIC_RESOURCE, "missing"),
            (TOPIC_RESOURCE, "a b"),
            (BROKER_RESOURCE, "2"),
            (BROKER_RESOURCE, "x"),
            (BROKER_LOGGER_RESOURCE, "1"),
            (GROUP_RESOURCE, ""),
            (GROUP_RESOURCE, "denied"),
        ],
        false,
        &|r: &DescribeConfigsResource| r.resource_name != "denied",
    );
    let lines: Vec<String> = r
        .results
        .iter()
        .map(|r| {
            format!(
                "{}:{} {} {:?} {} entries",
                r.resource_type,
                r.resource_name,
                ErrorCode(r.error_code).name(),
                r.error_message.as_deref().unwrap_or("null"),
                r.configs.len()
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "2:missing UNKNOWN_TOPIC_OR_PARTITION \"\" 0 entries",
            "2:a b INVALID_TOPIC_EXCEPTION \"Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'\" 0 entries",
            "4:2 INVALID_REQUEST \"Unexpected broker id, expected 1 or empty string, but received 2\" 0 entries",
            "4:x INVALID_REQUEST \"Broker id must be an integer, but it is: x\" 0 entries",
            "8:1 NONE \"\" 1 entries",
            "32: INVALID_REQUEST \"Group name must not be empty\" 0 entries",
            // Unauthorized resources come last.
            "32:denied GROUP_AUTHORIZATION_FAILED \"Group authorization failed.\" 0 entries",
        ]
    );
    let whole = describe(&image, &[(BROKER_RESOURCE, "1"), (99, "x")], false, ALL);
    assert!(whole
        .results
        .iter()
        .all(|r| r.error_code == ErrorCode::INVALID_REQUEST.0 && r.configs.is_empty()));
    assert_eq!(whole.results.len(), 2);
}
