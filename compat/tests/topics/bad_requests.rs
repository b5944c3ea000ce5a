//! CreateTopics, DeleteTopics and CreatePartitions: the very same requests, in the same order,
//! to a Java 4.4 controller and to kraftd, each with two stock brokers (11, 12) registered, and
//! the answers compared field by field: error codes and messages, partition counts and
//! replication factors, and the full list of effective configs of created topics (see
//! `requests` for how answers are rendered).

use kraftd::protocol::errors::ErrorCode;

use super::cluster::TopicCluster;
use super::requests::{create, grow, run_case, t, Case, Ids, Request, D, T, UNKNOWN_ID};
use crate::harness::dynamic_quorum::Kind;
use crate::harness::TestDir;

const BROKERS: [i32; 2] = [11, 12];

fn cases() -> Vec<Case<'static>> {
    use ErrorCode as E;
    let c = |name, request, expected| Case {
        name,
        request,
        expected,
    };
    let long_name: &'static str = Box::leak("x".repeat(250).into_boxed_str());
    let bad_config: &'static [(&'static str, Option<&'static str>)] =
        &[("cleanup.policy", Some("sometimes"))];
    vec![
        c(
            "setup",
            Request::Create(
                7,
                create(
                    &[
                        t("exists", 1, 1),
                        t("a.b", 1, 1),
                        t("victim", 1, 2),
                        t("victim2", 2, 1),
                        t("grow", 2, 2),
                    ],
                    false,
                ),
            ),
            E::NONE,
        ),
        c(
            "a topic with configs",
            Request::Create(
                7,
                create(
                    &[T {
                        configs: &[
                            ("retention.ms", Some("1234")),
                            ("cleanup.policy", Some("compact")),
                            ("min.insync.replicas", Some("2")),
                        ],
                        ..t("with-configs", 3, 2)
                    }],
                    false,
                ),
            ),
            E::NONE,
        ),
        c(
            "defaults (-1, -1)",
            Request::Create(7, create(&[t("defaults", -1, -1)], false)),
            E::NONE,
        ),
        c(
            "replication factor 0",
            Request::Create(7, create(&[t("rf0", 1, 0)], false)),
            E::INVALID_REPLICATION_FACTOR,
        ),
        c(
            "replication factor -2",
            Request::Create(7, create(&[t("rf-2", 1, -2)], false)),
            E::INVALID_REPLICATION_FACTOR,
        ),
        c(
            "0 partitions",
            Request::Create(7, create(&[t("p0", 0, 1)], false)),
            E::INVALID_PARTITIONS,
        ),
        c(
            "-5 partitions",
            Request::Create(7, create(&[t("p-5", -5, 1)], false)),
            E::INVALID_PARTITIONS,
        ),
        c(
            "replication factor above the brokers",
            Request::Create(7, create(&[t("rf3", 4, 3)], false)),
            E::INVALID_REPLICATION_FACTOR,
        ),
        c(
            "an existing topic",
            Request::Create(7, create(&[t("exists", 1, 1)], false)),
            E::TOPIC_ALREADY_EXISTS,
        ),
        c(
            "a name with a space",
            Request::Create(7, create(&[t("bad name", 1, 1)], false)),
            E::INVALID_TOPIC_EXCEPTION,
        ),
        c(
            "the name ..",
            Request::Create(7, create(&[t("..", 1, 1)], false)),
            E::INVALID_TOPIC_EXCEPTION,
        ),
        c(
            "an empty name",
            Request::Create(7, create(&[t("", 1, 1)], false)),
            E::INVALID_TOPIC_EXCEPTION,
        ),
        c(
            "a 250-character name",
            Request::Create(7, create(&[t(long_name, 1, 1)], false)),
            E::INVALID_TOPIC_EXCEPTION,
        ),
        c(
            "the metadata topic",
            Request::Create(7, create(&[t("__cluster_metadata", 1, 1)], false)),
            E::INVALID_REQUEST,
        ),
        c(
            "a name colliding with a.b",
            Request::Create(7, create(&[t("a_b", 1, 1)], false)),
            E::INVALID_TOPIC_EXCEPTION,
        ),
        c(
            "a duplicate in one request",
            Request::Create(
                7,
                create(
                    &[
                        t("dup", 1, 1),
                        t("once", 1, 1),
                        t("dup", 2, 1),
                        t("dup2", 1, 1),
                        t("dup2", 1, 1),
                    ],
                    false,
                ),
            ),
            E::NONE,
        ),
        c(
            "a bad config value",
            Request::Create(
                7,
                create(
                    &[T {
                        configs: bad_config,
                        ..t("bad-config", 1, 1)
                    }],
                    false,
                ),
            ),
            E::INVALID_CONFIG,
        ),
        c(
            "an unknown config",
            Request::Create(
                7,
                create(
                    &[T {
                        configs: &[("no.such.config", Some("1"))],
                        ..t("unknown-config", 1, 1)
                    }],
                    false,
                ),
            ),
            E::INVALID_CONFIG,
        ),
        c(
            "a config without a value",
            Request::Create(
                7,
                create(
                    &[T {
                        configs: &[("retention.ms", None), ("segment.ms", None)],
                        ..t("null-config", 1, 1)
                    }],
                    false,
                ),
            ),
            E::INVALID_CONFIG,
        ),
        c(
            "a bad config and a bad replication factor",
            Request::Create(
                7,
                create(
                    &[T {
                        configs: &[("min.insync.replicas", Some("0"))],
                        ..t("two-faults", 1, 9)
                    }],
                    false,
                ),
            ),
            E::INVALID_CONFIG,
        ),
        c(
            "validate only",
            Request::Create(
                7,
                create(
                    &[
                        T {
                            configs: &[("retention.ms", Some("1000"))],
                            ..t("validated", 3, 2)
                        },
                        t("validated-bad", 1, 5),
                    ],
                    true,
                ),
            ),
            E::NONE,
        ),
        c(
            "validate only, then for real",
            Request::Create(7, create(&[t("validated", 3, 2)], false)),
            E::NONE,
        ),
        c(
            "a manual assignment with a replication factor",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(0, &[11])],
                        ..t("m1", -1, 1)
                    }],
                    false,
                ),
            ),
            E::INVALID_REQUEST,
        ),
        c(
            "a manual assignment to an unknown broker",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(0, &[11, 99])],
                        ..t("m2", -1, -1)
                    }],
                    false,
                ),
            ),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "a manual assignment naming a broker twice",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(0, &[12, 11, 12])],
                        ..t("m3", -1, -1)
                    }],
                    false,
                ),
            ),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "manual assignments of different sizes",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(0, &[11, 12]), (1, &[12])],
                        ..t("m4", -1, -1)
                    }],
                    false,
                ),
            ),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "manual assignments with a gap",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(0, &[11]), (2, &[12])],
                        ..t("m5", -1, -1)
                    }],
                    false,
                ),
            ),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "a partition assigned twice",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(0, &[11]), (0, &[12])],
                        ..t("m6", -1, -1)
                    }],
                    false,
                ),
            ),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "a manual assignment",
            Request::Create(
                7,
                create(
                    &[T {
                        assignments: &[(1, &[11, 12]), (0, &[12, 11])],
                        ..t("manual", -1, -1)
                    }],
                    false,
                ),
            ),
            E::NONE,
        ),
        c(
            "more than 10,000 partitions",
            Request::Create(
                7,
                create(
                    &[
                        t("big-1", 5000, 1),
                        t("big-2", 5001, 1),
                        t("big-3", 1, 1),
                        t("big-3", 1, 1),
                        t("__cluster_metadata", 1, 1),
                    ],
                    false,
                ),
            ),
            E::POLICY_VIOLATION,
        ),
        c(
            "10,000 partitions and a TopicRecord",
            Request::Create(7, create(&[t("big", 10_000, 1)], true)),
            E::POLICY_VIOLATION,
        ),
        c(
            "CreateTopics v2",
            Request::Create(
                2,
                create(&[t("old-client", 2, 1), t("exists", 1, 1)], false),
            ),
            E::NONE,
        ),
        c(
            "CreateTopics v4",
            Request::Create(4, create(&[t("older-bad", 0, 1)], false)),
            E::INVALID_PARTITIONS,
        ),
        c(
            "delete by unknown name",
            Request::Delete(6, vec![D::Name("nope")]),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
        c(
            "delete by unknown id",
            Request::Delete(6, vec![D::Id(UNKNOWN_ID)]),
            E::UNKNOWN_TOPIC_ID,
        ),
        c(
            "delete naming both name and id",
            Request::Delete(6, vec![D::Both("victim")]),
            E::INVALID_REQUEST,
        ),
        c(
            "delete naming neither",
            Request::Delete(6, vec![D::Neither]),
            E::INVALID_REQUEST,
        ),
        c(
            "delete a name twice",
            Request::Delete(6, vec![D::Name("victim"), D::Name("victim")]),
            E::INVALID_REQUEST,
        ),
        c(
            "delete an id twice",
            Request::Delete(6, vec![D::IdOf("victim"), D::IdOf("victim")]),
            E::INVALID_REQUEST,
        ),
        c(
            "delete a name and its id",
            Request::Delete(6, vec![D::IdOf("victim"), D::Name("victim")]),
            E::INVALID_REQUEST,
        ),
        c(
            "delete by name and by id",
            Request::Delete(
                6,
                vec![D::Name("victim"), D::IdOf("victim2"), D::Name("nope")],
            ),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
        c(
            "delete v3 by names",
            Request::DeleteNames(3, vec!["nope", "dup", "nope", "once"]),
            E::INVALID_REQUEST,
        ),
        c(
            "delete v5 an unknown name",
            Request::DeleteNames(5, vec!["nope"]),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
        c(
            "grow to the same count",
            Request::Grow(3, grow(&[("grow", 2, None)], false)),
            E::INVALID_PARTITIONS,
        ),
        c(
            "shrink",
            Request::Grow(3, grow(&[("grow", 1, None)], false)),
            E::INVALID_PARTITIONS,
        ),
        c(
            "grow an unknown topic",
            Request::Grow(3, grow(&[("nope", 3, None)], false)),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
        c(
            "grow a topic named twice",
            Request::Grow(
                3,
                grow(
                    &[("grow", 3, None), ("exists", 2, None), ("grow", 4, None)],
                    false,
                ),
            ),
            E::INVALID_REQUEST,
        ),
        c(
            "too few assignments",
            Request::Grow(3, grow(&[("grow", 4, Some(&[&[11, 12]]))], false)),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "an assignment of the wrong size",
            Request::Grow(3, grow(&[("grow", 3, Some(&[&[11]]))], false)),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "an assignment to an unknown broker",
            Request::Grow(3, grow(&[("grow", 3, Some(&[&[11, 98]]))], false)),
            E::INVALID_REPLICA_ASSIGNMENT,
        ),
        c(
            "more than 10,000 new partitions",
            Request::Grow(
                3,
                grow(&[("grow", 6000, None), ("with-configs", 5000, None)], false),
            ),
            E::POLICY_VIOLATION,
        ),
        c(
            "grow, validate only",
            Request::Grow(3, grow(&[("grow", 5, None)], true)),
            E::NONE,
        ),
        c(
            "grow with an assignment",
            Request::Grow(3, grow(&[("grow", 3, Some(&[&[12, 11]]))], false)),
            E::NONE,
        ),
        c(
            "grow placed",
            Request::Grow(3, grow(&[("grow", 6, None), ("exists", 3, None)], false)),
            E::NONE,
        ),
        c(
            "grow again to the new count",
            Request::Grow(3, grow(&[("grow", 6, None)], false)),
            E::INVALID_PARTITIONS,
        ),
        c(
            "grow v0",
            Request::Grow(0, grow(&[("grow", 1, None)], false)),
            E::INVALID_PARTITIONS,
        ),
    ]
}

fn run_all(kind: Kind, dir: &TestDir) -> Vec<(String, Option<ErrorCode>)> {
    let mut c = TopicCluster::start(dir, kind, &BROKERS);
    assert_eq!(c.kind(), kind);
    let mut ids = Ids::new();
    let answers = cases()
        .iter()
        .map(|case| run_case(&c, case, &mut ids))
        .collect();
    c.stop();
    answers
}

#[test]
fn refused_topic_requests_get_javas_answers() {
    let dir = TestDir::new();
    let java = run_all(Kind::Java, &dir);
    let kraftd = run_all(Kind::Kraftd, &dir);
    let mut failures = Vec::new();
    eprintln!("Topic requests, the same bytes to Java 4.4 and to kraftd:");
    for ((case, (j, jc)), (k, _)) in cases().iter().zip(&java).zip(&kraftd) {
        eprintln!("  {}:\n    java:   {j}", case.name);
        if *jc != Some(case.expected) {
            failures.push(format!(
                "{}: Java answered {j}, the test expects {}",
                case.name, case.expected
            ));
        }
        if j != k {
            eprintln!("    kraftd: {k}");
            let (jl, kl): (Vec<&str>, Vec<&str>) = (j.lines().collect(), k.lines().collect());
            let mut diff = Vec::new();
            for i in 0..jl.len().max(kl.len()) {
                let (a, b) = (jl.get(i).copied(), kl.get(i).copied());
                if a != b {
                    diff.push(format!(
                        "    java:   {}\n    kraftd: {}",
                        a.unwrap_or("-"),
                        b.unwrap_or("-")
                    ));
                }
            }
            failures.push(format!("{}:\n{}", case.name, diff.join("\n")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases().len(),
        failures.join("\n")
    );
}

/// With `delete.topic.enable=false` every DeleteTopics is refused before anything is looked
/// up: `TOPIC_DELETION_DISABLED`, or `INVALID_REQUEST` below v3. Controllers without brokers.
#[test]
fn deletions_are_refused_when_topic_deletion_is_disabled() {
    let dir = TestDir::new();
    let disabled = [("delete.topic.enable", "false".to_string())];
    let versions = |kind| {
        let mut c = TopicCluster::start_with(&dir, kind, &[], &disabled);
        let mut ids = Ids::new();
        let answers: Vec<(String, Option<ErrorCode>)> = (1..=6)
            .map(|v| {
                let case = if v < 6 {
                    Case {
                        name: "disabled",
                        request: Request::DeleteNames(v, vec!["a", "b", "a"]),
                        expected: ErrorCode::NONE,
                    }
                } else {
                    Case {
                        name: "disabled",
                        request: Request::Delete(v, vec![D::Name("a"), D::Id(UNKNOWN_ID)]),
                        expected: ErrorCode::NONE,
                    }
                };
                run_case(&c, &case, &mut ids)
            })
            .collect();
        c.stop();
        answers
    };
    let (java, kraftd) = (versions(Kind::Java), versions(Kind::Kraftd));
    for (v, ((j, jc), (k, _))) in (1..=6).zip(java.iter().zip(&kraftd)) {
        eprintln!("DeleteTopics v{v} with deletion disabled:\n    java:   {j}\n    kraftd: {k}");
        let expected = if v < 3 {
            ErrorCode::INVALID_REQUEST
        } else {
            ErrorCode::TOPIC_DELETION_DISABLED
        };
        assert_eq!(*jc, Some(expected), "v{v}: Java answered {j}");
        assert_eq!(j, k, "v{v}");
    }
}
