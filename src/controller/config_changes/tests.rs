//! Config-change transcripts: a controller with a topic and registered brokers, one request at
//! a time, each decision's records replayed as the node's pipeline replays them. Messages are
//! Java 4.4's (the compat test `configs` compares them with a Java controller's answers).

use super::api::{broker_logger, screen_incremental, screen_legacy};
use super::*;
use crate::controller::configs::{CLIENT_METRICS_RESOURCE, GROUP_RESOURCE};
use crate::controller::Controller;
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{FeatureLevelRecord, RegisterBrokerRecord, TopicRecord};
use crate::protocol::records::{MetadataRecord, Offset};

/// metadata.version 4.4-IV2 (cordoned log dirs supported).
const MV: i16 = 33;
/// metadata.version 4.2-IV1, before cordoned log dirs.
const MV_4_2: i16 = 29;

/// A resource's outcome: accepted, or Java's code and message.
type Answer = Result<(), (ErrorCode, String)>;

struct Cluster {
    controller: Controller,
    next_offset: Offset,
    ctx: ConfigsContext,
}

fn topic(name: &str) -> ConfigResource {
    (TOPIC_RESOURCE, name.to_string())
}

fn broker(name: &str) -> ConfigResource {
    (BROKER_RESOURCE, name.to_string())
}

fn set(name: &str, value: &str) -> (String, Op) {
    op(name, OpType::Set, Some(value))
}

fn op(name: &str, op: OpType, value: Option<&str>) -> (String, Op) {
    (
        name.to_string(),
        Op {
            op,
            value: value.map(str::to_string),
        },
    )
}

impl Cluster {
    /// Brokers 1 and 2 registered, controller 3000 in the quorum, topic `t` created.
    fn new(mv: i16, elr: bool) -> Cluster {
        let mut c = Cluster {
            controller: Controller::new(),
            next_offset: 0,
            ctx: ConfigsContext {
                statics: Default::default(),
                controller_ids: vec![3000],
            },
        };
        c.replay(FeatureLevelRecord {
            name: "metadata.version".into(),
            feature_level: mv,
            ..Default::default()
        });
        if elr {
            c.replay(FeatureLevelRecord {
                name: "eligible.leader.replicas.version".into(),
                feature_level: 1,
                ..Default::default()
            });
        }
        for id in [1, 2] {
            c.replay(RegisterBrokerRecord {
                broker_id: id,
                broker_epoch: 100,
                ..Default::default()
            });
        }
        c.replay(TopicRecord {
            name: "t".into(),
            topic_id: Uuid([7; 16]),
            ..Default::default()
        });
        c
    }

    fn replay(&mut self, r: impl Into<MetadataRecord>) {
        self.controller.replay(&r.into(), self.next_offset).unwrap();
        self.next_offset += 1;
    }

    /// Decides an IncrementalAlterConfigs and replays its records; the outcomes as
    /// (resource name, Ok or (code, message)).
    fn incremental(
        &mut self,
        changes: &[IncrementalChange],
        validate_only: bool,
        forwarded: bool,
    ) -> (Vec<MetadataRecord>, Vec<Answer>) {
        let result = incremental_alter_configs(
            self.controller.image(),
            &self.ctx,
            changes,
            validate_only,
            forwarded,
        );
        self.finish(result)
    }

    fn legacy(&mut self, changes: &[LegacyChange]) -> (Vec<MetadataRecord>, Vec<Answer>) {
        let result =
            legacy_alter_configs(self.controller.image(), &self.ctx, changes, false, false);
        self.finish(result)
    }

    fn finish(&mut self, result: Decision) -> (Vec<MetadataRecord>, Vec<Answer>) {
        let records: Vec<MetadataRecord> =
            result.records.iter().map(|r| r.record.clone()).collect();
        for r in &records {
            self.replay(r.clone());
        }
        let outcomes = result
            .reply
            .expect("not too many records")
            .into_iter()
            .map(|(_, o)| o.map_err(|e| (e.error_code(), e.to_string())))
            .collect();
        (records, outcomes)
    }

    fn configs(&self, resource: &ConfigResource) -> Vec<(String, String)> {
        self.controller
            .image()
            .configs
            .resources
            .get(resource)
            .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }
}

fn config(resource: &ConfigResource, name: &str, value: Option<&str>) -> MetadataRecord {
    MetadataRecord::from(ConfigRecord {
        resource_type: resource.0,
        resource_name: resource.1.clone(),
        name: name.into(),
        value: value.map(str::to_string),
        ..Default::default()
    })
}

fn refused(code: ErrorCode, message: &str) -> Answer {
    Err((code, message.to_string()))
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_topic_config_is_set_then_deleted() {
    let mut c = Cluster::new(MV, false);
    let (records, outcomes) = c.incremental(
        &[(topic("t"), vec![set("retention.ms", "1000")])],
        false,
        false,
    );
    assert_eq!(outcomes, vec![Ok(())]);
    assert_eq!(
        records,
        vec![config(&topic("t"), "retention.ms", Some("1000"))]
    );
    assert_eq!(c.configs(&topic("t")), pairs(&[("retention.ms", "1000")]));

    // The same value again writes nothing for a topic.
    let (records, outcomes) = c.incremental(
        &[(topic("t"), vec![set("retention.ms", "1000")])],
        false,
        false,
    );
    assert_eq!((records, outcomes), (vec![], vec![Ok(())]));

    let (records, _) = c.incremental(
        &[(topic("t"), vec![op("retention.ms", OpType::Delete, None)])],
        false,
        false,
    );
    assert_eq!(records, vec![config(&topic("t"), "retention.ms", None)]);
    assert_eq!(c.configs(&topic("t")), vec![]);
}

#[test]
fn broker_configs_are_written_even_when_unchanged() {
    let mut c = Cluster::new(MV, false);
    for _ in 0..2 {
        let (records, outcomes) = c.incremental(
            &[(broker(""), vec![set("log.retention.ms", "5")])],
            false,
            false,
        );
        assert_eq!(outcomes, vec![Ok(())]);
        assert_eq!(
            records,
            vec![config(&broker(""), "log.retention.ms", Some("5"))]
        );
    }
}

#[test]
fn validate_only_writes_nothing() {
    let mut c = Cluster::new(MV, false);
    let (records, outcomes) =
        c.incremental(&[(topic("t"), vec![set("retention.ms", "1")])], true, false);
    assert_eq!((records, outcomes), (vec![], vec![Ok(())]));
    assert_eq!(c.configs(&topic("t")), vec![]);
}

#[test]
fn topic_refusals_carry_javas_codes_and_messages() {
    let mut c = Cluster::new(MV, false);
    let cases = [
        (topic("missing"), set("retention.ms", "1"), refused(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist.")),
        (topic(""), set("retention.ms", "1"), refused(ErrorCode::INVALID_REQUEST, "Default topic resources are not allowed.")),
        (topic("a b"), set("retention.ms", "1"), refused(ErrorCode::INVALID_TOPIC_EXCEPTION, "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")),
        (topic("t"), set("no.such.config", "1"), refused(ErrorCode::INVALID_CONFIG, "Unknown topic config name: no.such.config")),
        (topic("t"), set("retention.ms", "soon"), refused(ErrorCode::INVALID_CONFIG, "Invalid value soon for configuration retention.ms: Not a number of type LONG")),
        (topic("t"), set("min.insync.replicas", "0"), refused(ErrorCode::INVALID_CONFIG, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1")),
        (topic("t"), set("cleanup.policy", "sometimes"), refused(ErrorCode::INVALID_CONFIG, "Invalid value sometimes for configuration cleanup.policy: String must be one of: compact, delete")),
        (topic("t"), op("retention.ms", OpType::Append, Some("1")), refused(ErrorCode::INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")),
        (topic("t"), op("nope", OpType::Subtract, Some("1")), refused(ErrorCode::INVALID_CONFIG, "Can't SUBTRACT to key nope because its type is not LIST.")),
        (topic("t"), set("retention.ms", &"1".repeat(32768)), refused(ErrorCode::INVALID_CONFIG, "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.")),
    ];
    for (resource, o, expected) in cases {
        let (records, outcomes) = c.incremental(&[(resource.clone(), vec![o])], false, false);
        assert_eq!(outcomes, vec![expected], "{resource:?}");
        assert!(records.is_empty());
    }
}

#[test]
fn one_refused_resource_leaves_the_others_to_change() {
    let mut c = Cluster::new(MV, false);
    let (records, outcomes) = c.incremental(
        &[
            (topic("missing"), vec![set("retention.ms", "1")]),
            (broker("1"), vec![set("background.threads", "4")]),
        ],
        false,
        false,
    );
    assert_eq!(
        outcomes,
        vec![
            refused(
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                "The topic 'missing' does not exist."
            ),
            Ok(())
        ]
    );
    assert_eq!(
        records,
        vec![config(&broker("1"), "background.threads", Some("4"))]
    );
}

#[test]
fn broker_names_are_checked_as_java_does() {
    let mut c = Cluster::new(MV, false);
    let cases = [
        (
            "x",
            refused(
                ErrorCode::INVALID_REQUEST,
                "Unable to parse broker name as a base 10 number.",
            ),
        ),
        (
            "-1",
            refused(ErrorCode::INVALID_REQUEST, "Invalid negative broker ID."),
        ),
        (
            "7",
            refused(
                ErrorCode::BROKER_ID_NOT_REGISTERED,
                "No node with id 7 found.",
            ),
        ),
        ("3000", Ok(())),
        ("2", Ok(())),
        ("", Ok(())),
    ];
    for (name, expected) in cases {
        let (_, outcomes) = c.incremental(
            &[(broker(name), vec![set("any.name.at.all", "x")])],
            false,
            false,
        );
        assert_eq!(outcomes, vec![expected], "{name:?}");
    }
}

#[test]
fn append_and_subtract_start_from_the_default_and_keep_list_semantics() {
    let mut c = Cluster::new(MV, false);
    let (records, _) = c.incremental(
        &[(
            topic("t"),
            vec![op("cleanup.policy", OpType::Append, Some("compact"))],
        )],
        false,
        false,
    );
    assert_eq!(
        records,
        vec![config(
            &topic("t"),
            "cleanup.policy",
            Some("delete,compact")
        )]
    );
    let (records, _) = c.incremental(
        &[(
            topic("t"),
            vec![op("cleanup.policy", OpType::Append, Some("delete"))],
        )],
        false,
        false,
    );
    assert_eq!(records, vec![], "appending what is there changes nothing");
    let (records, _) = c.incremental(
        &[(
            topic("t"),
            vec![op(
                "cleanup.policy",
                OpType::Subtract,
                Some("delete,nothing"),
            )],
        )],
        false,
        false,
    );
    assert_eq!(
        records,
        vec![config(&topic("t"), "cleanup.policy", Some("compact"))]
    );
    // Subtracting everything leaves the empty list, which cleanup.policy allows.
    let (records, outcomes) = c.incremental(
        &[(
            topic("t"),
            vec![op("cleanup.policy", OpType::Subtract, Some("compact"))],
        )],
        false,
        false,
    );
    assert_eq!(outcomes, vec![Ok(())]);
    assert_eq!(
        records,
        vec![config(&topic("t"), "cleanup.policy", Some(""))]
    );
    // A broker list config starts from the broker schema's default.
    let (records, _) = c.incremental(
        &[(
            broker("1"),
            vec![op("sasl.enabled.mechanisms", OpType::Append, Some("PLAIN"))],
        )],
        false,
        false,
    );
    assert_eq!(
        records,
        vec![config(
            &broker("1"),
            "sasl.enabled.mechanisms",
            Some("GSSAPI,PLAIN")
        )]
    );
}

#[test]
fn legacy_alter_configs_replaces_the_whole_set() {
    let mut c = Cluster::new(MV, false);
    c.incremental(
        &[(
            topic("t"),
            vec![set("retention.ms", "1"), set("segment.ms", "5000")],
        )],
        false,
        false,
    );
    let (records, outcomes) = c.legacy(&[(
        topic("t"),
        vec![
            ("retention.ms".into(), Some("1".into())),
            ("max.message.bytes".into(), Some("2000".into())),
        ],
    )]);
    assert_eq!(outcomes, vec![Ok(())]);
    assert_eq!(
        records,
        vec![
            config(&topic("t"), "max.message.bytes", Some("2000")),
            config(&topic("t"), "segment.ms", None),
        ]
    );
    assert_eq!(
        c.configs(&topic("t")),
        pairs(&[("max.message.bytes", "2000"), ("retention.ms", "1")])
    );
}

#[test]
fn elr_guards_min_insync_replicas_and_clears_elr() {
    let mut c = Cluster::new(MV, true);
    let (records, outcomes) = c.incremental(
        &[(broker("1"), vec![set("min.insync.replicas", "2")])],
        false,
        false,
    );
    assert_eq!(
        outcomes,
        vec![refused(
            ErrorCode::INVALID_CONFIG,
            "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
        )]
    );
    assert!(records.is_empty());
    let (_, outcomes) = c.incremental(
        &[(
            broker(""),
            vec![op("min.insync.replicas", OpType::Delete, None)],
        )],
        false,
        false,
    );
    assert_eq!(
        outcomes,
        vec![refused(
            ErrorCode::INVALID_CONFIG,
            "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
        )]
    );

    let (records, _) = c.incremental(
        &[
            (broker(""), vec![set("min.insync.replicas", "2")]),
            (topic("t"), vec![set("min.insync.replicas", "1")]),
        ],
        false,
        false,
    );
    assert_eq!(
        records,
        vec![
            config(&broker(""), "min.insync.replicas", Some("2")),
            config(&topic("t"), "min.insync.replicas", Some("1")),
            MetadataRecord::from(ClearElrRecord {
                topic_name: String::new(),
                ..Default::default()
            }),
            MetadataRecord::from(ClearElrRecord {
                topic_name: "t".into(),
                ..Default::default()
            }),
        ]
    );
}

#[test]
fn cordoned_log_dirs_need_4_3_and_may_only_shrink_at_the_controller() {
    let mut c = Cluster::new(MV_4_2, false);
    let (_, outcomes) = c.incremental(
        &[(broker("1"), vec![set("cordoned.log.dirs", "/a")])],
        false,
        true,
    );
    assert_eq!(outcomes, vec![refused(ErrorCode::INVALID_CONFIG, "The cordoned.log.dirs configuration value cannot be set because it requires metadata.version >= 4.3-IV0")]);

    let mut c = Cluster::new(MV, false);
    // Forwarded from the owning broker: any value.
    let (_, outcomes) = c.incremental(
        &[(broker("1"), vec![set("cordoned.log.dirs", "/a, /b")])],
        false,
        true,
    );
    assert_eq!(outcomes, vec![Ok(())]);
    let (_, outcomes) = c.incremental(
        &[(broker("1"), vec![set("cordoned.log.dirs", "/a,/c")])],
        false,
        false,
    );
    assert_eq!(outcomes, vec![refused(ErrorCode::INVALID_CONFIG, "When updating cordoned.log.dirs via controllers,  the new value must be a subset of the current configuration value.")]);
    let (_, outcomes) = c.incremental(
        &[(broker("1"), vec![set("cordoned.log.dirs", " /b ")])],
        false,
        false,
    );
    assert_eq!(outcomes, vec![Ok(())]);
}

#[test]
fn client_metrics_subscriptions_are_checked_as_java_does() {
    let mut c = Cluster::new(MV, false);
    let sub = |name: &str| (CLIENT_METRICS_RESOURCE, name.to_string());
    let cases = [
        (sub("s"), vec![set("interval.ms", "1000"), set("metrics", "org.apache.kafka.producer."), set("match", "client_id=app-.*")], Ok(())),
        (sub(""), vec![set("interval.ms", "1000")], refused(ErrorCode::INVALID_REQUEST, "Subscription name can't be empty")),
        (sub("s"), vec![set("colour", "red")], refused(ErrorCode::INVALID_REQUEST, "Unknown client metrics configuration: colour")),
        (sub("s"), vec![set("interval.ms", "fast")], refused(ErrorCode::INVALID_CONFIG, "Invalid value fast for configuration interval.ms: Not a number of type INT")),
        (sub("s"), vec![set("interval.ms", "99")], refused(ErrorCode::INVALID_REQUEST, "Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)")),
        (sub("s"), vec![set("match", "client_colour=red")], refused(ErrorCode::INVALID_CONFIG, "Illegal client matching pattern: client_colour=red")),
        (sub("s"), vec![set("match", "client_id")], refused(ErrorCode::INVALID_CONFIG, "Illegal client matching pattern: client_id")),
    ];
    for (resource, ops, expected) in cases {
        let (_, outcomes) = c.incremental(&[(resource.clone(), ops)], false, false);
        assert_eq!(outcomes, vec![expected], "{resource:?}");
    }
    assert_eq!(
        c.configs(&sub("s")),
        pairs(&[
            ("interval.ms", "1000"),
            ("match", "client_id=app-.*"),
            ("metrics", "org.apache.kafka.producer.")
        ])
    );
}

#[test]
fn group_configs_are_checked_against_the_controllers_group_coordinator_configs() {
    let mut c = Cluster::new(MV, false);
    for (key, value) in [
        ("group.consumer.min.session.timeout.ms", "10000"),
        ("group.consumer.max.session.timeout.ms", "70000"),
    ] {
        c.ctx.statics.originals.insert(key.into(), value.into());
    }
    let group = |name: &str| (GROUP_RESOURCE, name.to_string());
    let (records, outcomes) = c.incremental(
        &[
            (
                group("g"),
                vec![set("consumer.session.timeout.ms", "65000")],
            ),
            (group(""), vec![set("consumer.session.timeout.ms", "50000")]),
            (
                group("h"),
                vec![set("consumer.session.timeout.ms", "75000")],
            ),
            (
                group("i"),
                vec![set("share.auto.offset.reset", "by_duration:-PT1S")],
            ),
            (group("j"), vec![set("no.such.config", "1")]),
        ],
        false,
        false,
    );
    assert_eq!(
        records,
        vec![MetadataRecord::from(ConfigRecord {
            resource_type: GROUP_RESOURCE,
            resource_name: "g".into(),
            name: "consumer.session.timeout.ms".into(),
            value: Some("65000".into()),
            ..Default::default()
        })]
    );
    assert_eq!(
        outcomes,
        vec![
            Ok(()),
            refused(
                ErrorCode::INVALID_REQUEST,
                "Default group resources are not allowed."
            ),
            refused(
                ErrorCode::INVALID_CONFIG,
                "consumer.session.timeout.ms must be in the range 10000 to 70000 inclusive."
            ),
            refused(
                ErrorCode::INVALID_CONFIG,
                "Invalid value by_duration:-PT1S for configuration share.auto.offset.reset: \
                 Invalid value `by_duration:-PT1S` for configuration share.auto.offset.reset. \
                 The value must be either 'earliest', 'latest' or of the format \
                 'by_duration:<PnDTnHnMn.nS>'."
            ),
            refused(
                ErrorCode::INVALID_CONFIG,
                "Unknown group config name: no.such.config"
            ),
        ]
    );
    // The group's stored session timeout counts: a heartbeat may not reach it.
    let (records, outcomes) = c.incremental(
        &[(
            group("g"),
            vec![set("consumer.heartbeat.interval.ms", "15000")],
        )],
        false,
        false,
    );
    assert_eq!((records.len(), outcomes), (1, vec![Ok(())]));
    let (records, outcomes) = c.incremental(
        &[(
            group("g"),
            vec![set("consumer.session.timeout.ms", "12000")],
        )],
        false,
        false,
    );
    assert!(records.is_empty());
    assert_eq!(
        outcomes,
        vec![refused(
            ErrorCode::INVALID_CONFIG,
            "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"
        )]
    );
}

#[test]
fn screening_answers_unknown_types_and_duplicates_first() {
    let s = screen_incremental(&[(2, "a"), (99, "x"), (2, "a"), (8, "1"), (4, ""), (2, "a")]);
    let refused: Vec<(i8, &str, ErrorCode, &str)> = s
        .refused
        .iter()
        .map(|r| {
            (
                r.resource_type,
                r.resource_name.as_str(),
                r.code,
                r.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        vec![
            (
                99,
                "x",
                ErrorCode::UNSUPPORTED_VERSION,
                "Unknown resource type 99."
            ),
            (2, "a", ErrorCode::INVALID_REQUEST, "Duplicate resource."),
        ]
    );
    assert_eq!(s.decided, vec![4]);
    assert_eq!(s.loggers, vec![3]);

    let s = screen_legacy(&[(8, "1"), (2, "a")]);
    assert_eq!(s.decided, vec![1]);
    assert_eq!(
        s.refused[0].message,
        "Unexpected resource type BROKER_LOGGER."
    );
}

#[test]
fn broker_loggers_are_the_controllers_own() {
    let set_root = |level: &str| vec![("root".to_string(), 0, Some(level.to_string()))];
    assert_eq!(broker_logger(3000, "3000", &set_root("INFO")), Ok(()));
    assert_eq!(
        broker_logger(3000, "x", &set_root("INFO")),
        Err((
            ErrorCode::INVALID_REQUEST,
            "Node id must be an integer, but it is: x".into()
        ))
    );
    assert_eq!(
        broker_logger(3000, "1", &set_root("INFO")),
        Err((
            ErrorCode::INVALID_REQUEST,
            "Unexpected node id. Expected 3000, but received 1".into()
        ))
    );
    assert_eq!(
        broker_logger(3000, "3000", &set_root("LOUD")),
        Err((ErrorCode::INVALID_CONFIG, "Cannot set the log level of root to LOUD as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN".into()))
    );
}
