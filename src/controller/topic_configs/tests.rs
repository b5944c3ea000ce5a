//! Topic config checks with the messages a Java 4.4 controller gives (as
//! `compat/java/TopicConfigProbe.java validate` prints them; the compat test
//! `topics::config_validation` runs many more cases against Java itself).

use std::collections::BTreeMap;

use super::parse::java_double_string;
use super::*;

fn check(configs: &[(&str, &str)]) -> Result<(), String> {
    let configs: Vec<(String, String)> = configs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    validate_topic_configs(&configs, &StaticLogConfig::default())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn values_are_parsed_and_validated_with_javas_messages() {
    type Case<'a> = (&'a [(&'a str, &'a str)], Result<(), &'a str>);
    let cases: &[Case] = &[
        (&[("segment.bytes", "abc")], Err("Invalid value abc for configuration segment.bytes: Not a number of type INT")),
        (&[("segment.bytes", "10")], Err("Invalid value 10 for configuration segment.bytes: Value must be at least 1048576")),
        (&[("segment.bytes", " 2000000 ")], Ok(())),
        (&[("segment.bytes", "99999999999")], Err("Invalid value 99999999999 for configuration segment.bytes: Not a number of type INT")),
        (&[("retention.ms", "-5")], Err("Invalid value -5 for configuration retention.ms: Value must be at least -1")),
        (&[("min.cleanable.dirty.ratio", "2")], Err("Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1")),
        (&[("min.cleanable.dirty.ratio", "x")], Err("Invalid value x for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE")),
        (&[("cleanup.policy", "foo")], Err("Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete")),
        (&[("cleanup.policy", "")], Ok(())),
        (&[("cleanup.policy", "delete, compact")], Ok(())),
        (&[("cleanup.policy", "compact,compact")], Ok(())),
        (&[("cleanup.policy", "compact,")], Err("Configuration 'cleanup.policy' values must not be empty.")),
        (&[("min.cleanable.dirty.ratio", "1e7")], Err("Invalid value 1.0E7 for configuration min.cleanable.dirty.ratio: Value must be no more than 1")),
        (&[("min.cleanable.dirty.ratio", "1.5d")], Err("Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1")),
        (&[("leader.replication.throttled.replicas", "*,1:2")], Err("Invalid value [*, 1:2] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")),
        (&[("cleanup.policy", "compact,,delete")], Err("Configuration 'cleanup.policy' values must not be empty.")),
        (&[("compression.type", "LZ4")], Err("Invalid value LZ4 for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer")),
        (&[("unclean.leader.election.enable", "yes")], Err("Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or false")),
        (&[("preallocate", "TRUE")], Ok(())),
        (&[("compression.gzip.level", "0")], Err("Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1")),
        (&[("leader.replication.throttled.replicas", "abc")], Err("Invalid value [abc] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")),
        (&[("leader.replication.throttled.replicas", "*")], Ok(())),
        (&[("leader.replication.throttled.replicas", "0:1,1:2")], Ok(())),
        (&[("foo.bar", "1")], Err("Unknown topic config name: foo.bar")),
        (&[("min.compaction.lag.ms", "10"), ("max.compaction.lag.ms", "5")], Err("conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)")),
        (&[("remote.storage.enable", "true")], Err("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")),
        (&[("message.timestamp.type", "createtime")], Err("Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime")),
        (&[("flush.ms", "1.5")], Err("Invalid value 1.5 for configuration flush.ms: Not a number of type LONG")),
        (&[("min.insync.replicas", "0")], Err("Invalid value 0 for configuration min.insync.replicas: Value must be at least 1")),
        (&[("internal.segment.bytes", "1")], Ok(())),
    ];
    for (configs, expected) in cases {
        let expected = expected.map_err(str::to_string);
        assert_eq!(check(configs), expected, "{configs:?}");
    }
}

#[test]
fn unknown_names_come_before_bad_values_and_definitions_are_checked_in_order() {
    // The unknown name wins although the bad value is listed first.
    assert_eq!(
        check(&[("segment.bytes", "x"), ("no.such", "1")]),
        Err("Unknown topic config name: no.such".into())
    );
    // segment.ms is defined before retention.ms.
    assert_eq!(
        check(&[("retention.ms", "-9"), ("segment.ms", "0")]),
        Err("Invalid value 0 for configuration segment.ms: Value must be at least 1".into())
    );
}

#[test]
fn doubles_print_as_java_does() {
    assert_eq!(java_double_string(2.0), "2.0");
    assert_eq!(java_double_string(0.5), "0.5");
    assert_eq!(java_double_string(1e7), "1.0E7");
    assert_eq!(java_double_string(1.5e-4), "1.5E-4");
    assert_eq!(java_double_string(123456.75), "123456.75");
}

#[test]
fn effective_configs_take_the_topic_then_the_dynamic_then_the_static_value() {
    let mut statics = StaticLogConfig::default();
    statics
        .originals
        .insert("log.retention.hours".into(), "2".into());
    statics
        .originals
        .insert("log.segment.bytes".into(), "2000000".into());
    let cluster: imbl::OrdMap<String, String> =
        [("min.insync.replicas".to_string(), "2".to_string())]
            .into_iter()
            .collect();
    let topic: BTreeMap<String, String> = [("segment.bytes".to_string(), "3000000".to_string())]
        .into_iter()
        .collect();
    let all = effective_topic_configs(&topic, None, Some(&cluster), &statics);
    assert_eq!(
        all.len(),
        TOPIC_CONFIG_DEFS.len() - 1,
        "all but internal.segment.bytes"
    );
    let names: Vec<&str> = all.iter().map(|c| c.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sorted by name");
    let get = |n: &str| all.iter().find(|c| c.name == n).unwrap();
    assert_eq!(get("segment.bytes").value.as_deref(), Some("3000000"));
    assert_eq!(get("segment.bytes").source, ConfigSource::TopicConfig);
    assert_eq!(get("retention.ms").value.as_deref(), Some("7200000"));
    assert_eq!(get("retention.ms").source, ConfigSource::StaticBrokerConfig);
    assert_eq!(
        get("min.insync.replicas").source,
        ConfigSource::DynamicDefaultBrokerConfig
    );
    assert_eq!(get("cleanup.policy").value.as_deref(), Some("delete"));
    assert_eq!(get("cleanup.policy").source, ConfigSource::DefaultConfig);
    assert!(all.iter().all(|c| c.name != "internal.segment.bytes"));
}
