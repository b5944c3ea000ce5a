//! The broker, client-metrics, group, broker-logger and legacy AlterConfigs requests of
//! `cases`.

use super::requests::{
    incremental, legacy, Request, APPEND, BROKER, BROKER_LOGGER, CLIENT_METRICS, DELETE, GROUP,
    SET, TOPIC,
};

pub(super) fn other_cases() -> Vec<(&'static str, Request<'static>)> {
    vec![
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
            "a group's configs",
            incremental(
                1,
                false,
                vec![(
                    GROUP,
                    "g",
                    vec![
                        ("consumer.session.timeout.ms", SET, Some("50000")),
                        ("share.auto.offset.reset", SET, Some("by_duration:P1DT2H")),
                        (
                            "streams.rack.aware.assignment.tags",
                            SET,
                            Some("zone, rack"),
                        ),
                    ],
                )],
            ),
        ),
        (
            "a group heartbeat beside the stored session timeout",
            incremental(
                1,
                false,
                vec![(
                    GROUP,
                    "g",
                    vec![("consumer.heartbeat.interval.ms", SET, Some("15000"))],
                )],
            ),
        ),
        (
            "bad group configs",
            incremental(
                1,
                false,
                vec![
                    (
                        GROUP,
                        "h",
                        vec![("consumer.session.timeout.ms", SET, Some("5000"))],
                    ),
                    (
                        GROUP,
                        "i",
                        vec![("share.isolation.level", SET, Some("dirty"))],
                    ),
                    (GROUP, "j", vec![("no.such.group.config", SET, Some("1"))]),
                    (
                        GROUP,
                        "k",
                        vec![("streams.assignor.name", SET, Some("greedy"))],
                    ),
                    (
                        GROUP,
                        "l",
                        vec![("errors.deadletterqueue.topic.name", SET, Some("__dlq"))],
                    ),
                    (
                        GROUP,
                        "m",
                        vec![("streams.rack.aware.assignment.tags", SET, Some("a , a"))],
                    ),
                    (
                        GROUP,
                        "n",
                        vec![("share.auto.offset.reset", SET, Some("none"))],
                    ),
                ],
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
