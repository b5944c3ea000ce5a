//! The requests `alter` sends to both controllers, in order, each named: accepted and refused
//! topic changes through IncrementalAlterConfigs (v0-1), then `other_cases` (brokers, client
//! metrics, groups, broker loggers, AlterConfigs v0-2).

use super::requests::{incremental, Request, APPEND, DELETE, SET, SUBTRACT, TOPIC};

pub(super) fn cases() -> Vec<(&'static str, Request<'static>)> {
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
    ]
    .into_iter()
    .chain(super::other_cases::other_cases())
    .collect()
}
