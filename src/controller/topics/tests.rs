//! Topic transcripts: a controller with registered brokers, one request at a time, each
//! decision's records replayed as the node's pipeline replays them. Messages are Java 4.4's
//! (the compat test `topics::bad_requests` compares them with a Java controller's answers);
//! placements are Java's `StripedReplicaPlacer`'s for the same `Random` seed (printed by
//! `compat/java/PlacementProbe.java`).

use super::api::{screen_create_partitions, screen_create_topics};
use super::create::{create_topics, CreateOutcomes, NewTopic};
use super::delete::{delete_topics, Deletion};
use super::partitions::{create_partitions, NewPartitions};
use super::placement::{place, UsableBroker};
use super::*;
use crate::controller::java::JavaRandom;
use crate::controller::Controller;
use crate::protocol::messages::{FeatureLevelRecord, RegisterBrokerRecord};
use crate::protocol::records::{MetadataRecord, Offset};

/// metadata.version 4.4-IV2.
const MV: i16 = 33;

struct Cluster {
    controller: Controller,
    next_offset: Offset,
    ctx: TopicsContext,
    random: TopicRandom,
}

fn dir(broker: i32) -> Uuid {
    let mut b = [0u8; 16];
    b[0] = 0x11;
    b[15] = broker as u8;
    Uuid(b)
}

impl Cluster {
    /// Brokers `(id, rack, fenced)` registered, each with one log dir.
    fn new(brokers: &[(i32, Option<&str>, bool)]) -> Cluster {
        let mut c = Cluster {
            controller: Controller::new(),
            next_offset: 0,
            ctx: TopicsContext {
                node_id: 3000,
                default_partitions: 1,
                default_replication_factor: 1,
                statics: Default::default(),
            },
            random: TopicRandom::seeded(5),
        };
        c.replay(FeatureLevelRecord {
            name: "metadata.version".into(),
            feature_level: MV,
            ..Default::default()
        });
        for (id, rack, fenced) in brokers {
            c.replay(RegisterBrokerRecord {
                broker_id: *id,
                broker_epoch: 100 + i64::from(*id),
                rack: rack.map(str::to_string),
                fenced: *fenced,
                log_dirs: vec![dir(*id)],
                ..Default::default()
            });
        }
        c
    }

    fn replay(&mut self, r: impl Into<MetadataRecord>) {
        self.controller.replay(&r.into(), self.next_offset).unwrap();
        self.next_offset += 1;
    }

    fn write(&mut self, records: &[MetadataRecordAndVersion]) {
        for r in records {
            self.replay(r.record.clone());
        }
    }

    fn brokers(&self) -> Vec<UsableBroker> {
        let sessions = BrokerSessions::activate(self.controller.image(), 9000, 0);
        usable_brokers(self.controller.image(), &sessions)
    }

    fn create(
        &mut self,
        topics: &[NewTopic],
        validate_only: bool,
    ) -> (
        Vec<MetadataRecordAndVersion>,
        Result<CreateOutcomes, BatchError>,
    ) {
        let brokers = self.brokers();
        let r = create_topics(
            self.controller.image(),
            &brokers,
            &self.ctx,
            topics,
            validate_only,
            &mut self.random,
        );
        self.write(&r.records);
        (r.records, r.reply)
    }

    /// The outcome of creating one topic, as (code, message) or the records.
    fn create_one(
        &mut self,
        t: NewTopic,
    ) -> Result<Vec<MetadataRecordAndVersion>, (ErrorCodeName, String)> {
        let (records, reply) = self.create(&[t], false);
        let (_, outcome) = reply.unwrap().pop().unwrap();
        match outcome {
            Ok(_) => Ok(records),
            Err(e) => {
                assert!(records.is_empty());
                Err((e.error_code().name(), e.message().unwrap_or_default()))
            }
        }
    }

    fn grow(&mut self, topics: &[NewPartitions]) -> Result<Vec<(String, Outcome)>, BatchError> {
        let brokers = self.brokers();
        let r = create_partitions(
            self.controller.image(),
            &brokers,
            topics,
            false,
            &mut self.random,
        );
        self.write(&r.records);
        r.reply.map(|o| {
            o.into_iter()
                .map(|(n, r)| (n, r.map_err(|e| (e.error_code().name(), e.message()))))
                .collect()
        })
    }

    fn delete(&mut self, names: &[&str], entries: &[(Option<&str>, Uuid)]) -> Vec<Deletion> {
        self.delete_as(|_| super::delete::Access::ALL, names, entries)
    }

    /// DeleteTopics by a requester with `access` to each topic.
    fn delete_as(
        &mut self,
        access: impl Fn(&str) -> super::delete::Access,
        names: &[&str],
        entries: &[(Option<&str>, Uuid)],
    ) -> Vec<Deletion> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let entries: Vec<(Option<String>, Uuid)> = entries
            .iter()
            .map(|(n, id)| (n.map(str::to_string), *id))
            .collect();
        let image = self.controller.image().clone();
        let r = delete_topics(&image, &image, &names, &entries, access, &mut self.random);
        self.write(&r.records);
        let mut results = r.reply;
        results.sort_by_key(|d| (d.name.clone(), d.id.to_string()));
        results
    }

    fn topic_id(&self, name: &str) -> Uuid {
        *self.controller.image().topics.by_name.get(name).unwrap()
    }

    fn partitions(&self, name: &str) -> Vec<(Vec<i32>, Vec<i32>, i32)> {
        let t = &self.controller.image().topics.by_id[&self.topic_id(name)];
        t.partitions
            .values()
            .map(|p| (p.replicas.clone(), p.isr.clone(), p.leader))
            .collect()
    }
}

type ErrorCodeName = &'static str;
/// A refusal as (code name, message).
type Refused = (ErrorCodeName, Option<String>);
type Outcome = Result<(), Refused>;

fn topic(name: &str, partitions: i32, rf: i16) -> NewTopic {
    NewTopic {
        name: name.into(),
        num_partitions: partitions,
        replication_factor: rf,
        assignments: Vec::new(),
        configs: Vec::new(),
    }
}

fn with_configs(mut t: NewTopic, configs: &[(&str, Option<&str>)]) -> NewTopic {
    t.configs = configs
        .iter()
        .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
        .collect();
    t
}

fn manual(name: &str, assignments: &[(i32, &[i32])]) -> NewTopic {
    NewTopic {
        assignments: assignments.iter().map(|(p, b)| (*p, b.to_vec())).collect(),
        ..topic(name, -1, -1)
    }
}

fn three_brokers() -> Cluster {
    Cluster::new(&[(1, None, false), (2, None, false), (3, None, false)])
}

#[test]
fn placement_is_javas_for_the_same_seed() {
    let plain: Vec<UsableBroker> = (1..=3)
        .map(|id| UsableBroker {
            id,
            rack: None,
            fenced: false,
        })
        .collect();
    let text = |p: Vec<Vec<i32>>| {
        p.iter()
            .map(|r| r.iter().map(i32::to_string).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
            .join(";")
    };
    let mut r = JavaRandom::new(42);
    assert_eq!(
        text(place(12, 3, &plain, &mut r).unwrap()),
        "3,1,2;1,2,3;2,3,1;1,2,3;2,3,1;3,1,2;2,1,3;1,3,2;3,2,1;2,1,3;1,3,2;3,2,1"
    );
    let racked: Vec<UsableBroker> = [
        (1, "a", false),
        (2, "a", false),
        (3, "b", false),
        (4, "b", true),
        (5, "c", false),
    ]
    .iter()
    .map(|(id, rack, fenced)| UsableBroker {
        id: *id,
        rack: Some(rack.to_string()),
        fenced: *fenced,
    })
    .collect();
    let mut r = JavaRandom::new(7);
    assert_eq!(
        text(place(6, 2, &racked, &mut r).unwrap()),
        "3,5;5,1;2,3;3,5;3,1;2,5"
    );
    // The same Random, a second placement.
    assert_eq!(
        text(place(3, 3, &racked, &mut r).unwrap()),
        "2,3,5;3,5,1;5,2,3"
    );
    assert_eq!(
        place(1, 4, &plain, &mut r).unwrap_err().to_string(),
        "The target replication factor of 4 cannot be reached because only 3 broker(s) are registered or some brokers have all their log directories cordoned."
    );
    let fenced = vec![UsableBroker {
        id: 1,
        rack: None,
        fenced: true,
    }];
    assert_eq!(
        place(1, 1, &fenced, &mut r).unwrap_err().to_string(),
        "All brokers are currently fenced, or have all their log directories cordoned."
    );
}

#[test]
fn a_topic_is_a_topic_record_and_one_partition_record_per_partition() {
    let mut c = three_brokers();
    let records = c
        .create_one(with_configs(
            topic("orders", 12, 3),
            &[
                ("retention.ms", Some("1000")),
                ("cleanup.policy", Some("compact")),
            ],
        ))
        .unwrap();
    assert_eq!(records.len(), 1 + 2 + 12);
    assert!(matches!(records[0].record, MetadataRecord::Topic(_)));
    // ConfigRecords in Java's HashMap order of the names (Java 17 prints that map's keys as
    // [cleanup.policy, retention.ms]), then the partitions.
    let names: Vec<String> = records[1..3]
        .iter()
        .map(|r| match &r.record {
            MetadataRecord::Config(c) => c.name.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["cleanup.policy", "retention.ms"]);
    let MetadataRecord::Partition(p) = &records[3].record else {
        panic!()
    };
    assert_eq!(records[3].version, 2, "PartitionRecord v2 at 4.4-IV2");
    assert_eq!(p.partition_id, 0);
    assert_eq!(
        p.directories,
        p.replicas.iter().map(|b| dir(*b)).collect::<Vec<_>>()
    );
    assert_eq!(
        (
            p.leader_epoch,
            p.partition_epoch,
            p.eligible_leader_replicas.clone()
        ),
        (0, 0, None)
    );
    let parts = c.partitions("orders");
    assert_eq!(parts.len(), 12);
    for (replicas, isr, leader) in &parts {
        let mut distinct = replicas.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{replicas:?}");
        assert_eq!((isr, *leader), (replicas, replicas[0]));
    }
    let leaders: std::collections::BTreeSet<i32> = parts.iter().map(|p| p.2).collect();
    assert_eq!(leaders.len(), 3, "leaders spread: {parts:?}");
    let configs = &c.controller.image().configs.resources[&(2, "orders".to_string())];
    assert_eq!(
        configs.get("retention.ms").map(String::as_str),
        Some("1000")
    );
}

#[test]
fn a_fenced_replica_is_left_out_of_the_isr_and_never_leads() {
    let mut c = Cluster::new(&[(1, None, false), (2, None, true)]);
    c.create_one(topic("t", 4, 2)).unwrap();
    for (replicas, isr, leader) in c.partitions("t") {
        assert_eq!((isr, leader), (vec![1], 1), "{replicas:?}");
    }
}

#[test]
fn refusals_carry_javas_codes_and_messages() {
    let mut c = three_brokers();
    c.create_one(topic("a.b", 1, 1)).unwrap();
    c.create_one(topic("taken", 1, 1)).unwrap();
    let cases: Vec<(NewTopic, ErrorCodeName, &str)> = vec![
        (topic("bad name", 1, 1), "INVALID_TOPIC_EXCEPTION", "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
        (topic("a_b", 1, 1), "INVALID_TOPIC_EXCEPTION", "Topic 'a_b' collides with existing topic: a.b"),
        (topic("a.b", 1, 1), "TOPIC_ALREADY_EXISTS", "Topic 'a.b' already exists."),
        (topic("taken", 1, 1), "TOPIC_ALREADY_EXISTS", "Topic 'taken' already exists."),
        (topic("t", 1, 4), "INVALID_REPLICATION_FACTOR", "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered or some brokers have all their log directories cordoned."),
        (topic("t", 1, 0), "INVALID_REPLICATION_FACTOR", "Replication factor must be larger than 0, or -1 to use the default value."),
        (topic("t", 0, 1), "INVALID_PARTITIONS", "Number of partitions was set to an invalid non-positive value."),
        (topic("t", -2, 1), "INVALID_PARTITIONS", "Number of partitions was set to an invalid non-positive value."),
        (with_configs(topic("t", 1, 1), &[("retention.ms", None), ("a", None)]), "INVALID_CONFIG", "Null value not supported for topic configs: retention.ms,a"),
        (with_configs(topic("t", 1, 1), &[("no.such.config", Some("1"))]), "INVALID_CONFIG", "Unknown topic config name: no.such.config"),
        (with_configs(topic("t", 1, 1), &[("cleanup.policy", Some("sometimes"))]), "INVALID_CONFIG", "Invalid value sometimes for configuration cleanup.policy: String must be one of: compact, delete"),
        // A bad config is reported before a bad replication factor.
        (with_configs(topic("t", 1, 9), &[("min.insync.replicas", Some("0"))]), "INVALID_CONFIG", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        (NewTopic { replication_factor: 2, ..manual("t", &[(0, &[1, 2])]) }, "INVALID_REQUEST", "A manual partition assignment was specified, but replication factor was not set to -1."),
        (NewTopic { num_partitions: 1, ..manual("t", &[(0, &[1, 2])]) }, "INVALID_REQUEST", "A manual partition assignment was specified, but numPartitions was not set to -1."),
        (manual("t", &[(0, &[1, 2]), (0, &[2, 3])]), "INVALID_REPLICA_ASSIGNMENT", "Found multiple manual partition assignments for partition 0"),
        (manual("t", &[(0, &[])]), "INVALID_REPLICA_ASSIGNMENT", "The manual partition assignment includes an empty replica list."),
        (manual("t", &[(0, &[1, 9])]), "INVALID_REPLICA_ASSIGNMENT", "The manual partition assignment includes broker 9, but no such broker is registered."),
        (manual("t", &[(0, &[2, 1, 2])]), "INVALID_REPLICA_ASSIGNMENT", "The manual partition assignment includes the broker 2 more than once."),
        (manual("t", &[(0, &[1, 2]), (1, &[3])]), "INVALID_REPLICA_ASSIGNMENT", "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."),
        (manual("t", &[(0, &[1]), (2, &[3])]), "INVALID_REPLICA_ASSIGNMENT", "partitions should be a consecutive 0-based integer sequence"),
    ];
    for (t, code, message) in cases {
        let name = t.name.clone();
        assert_eq!(c.create_one(t), Err((code, message.to_string())), "{name}");
    }
    // A manual assignment is written as given.
    c.create_one(manual("m", &[(1, &[3, 1]), (0, &[2, 3])]))
        .unwrap();
    assert_eq!(
        c.partitions("m"),
        vec![(vec![2, 3], vec![2, 3], 2), (vec![3, 1], vec![3, 1], 3)]
    );
}

#[test]
fn a_cluster_without_active_brokers_cannot_host_a_topic() {
    let mut c = Cluster::new(&[(1, None, true), (2, None, true)]);
    assert_eq!(
        c.create_one(topic("t", 1, 1)),
        Err(("INVALID_REPLICATION_FACTOR", "Unable to replicate the partition 1 time(s): All brokers are currently fenced, or have all their log directories cordoned.".into()))
    );
    assert_eq!(
        c.create_one(manual("t", &[(0, &[1, 2])])),
        Err(("INVALID_REPLICA_ASSIGNMENT", "All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled shutdown.".into()))
    );
}

#[test]
fn validate_only_answers_without_records_and_limits_refuse_the_whole_request() {
    let mut c = three_brokers();
    let (records, reply) = c.create(&[topic("v", 3, 2), topic("bad name", 1, 1)], true);
    assert!(records.is_empty());
    let outcomes = reply.unwrap();
    let created = outcomes[0].1.as_ref().unwrap();
    assert_eq!((created.num_partitions, created.replication_factor), (3, 2));
    assert_ne!(created.id, Uuid::ZERO);
    assert_eq!(
        created.configs.len(),
        crate::controller::topic_configs::TOPIC_CONFIG_DEFS.len() - 1
    );
    assert!(outcomes[1].1.is_err());
    assert!(c.controller.image().topics.by_name.is_empty());
    // 10,001 partitions in one request.
    let (_, reply) = c.create(
        &[topic("x", 5000, 1), topic("y", 5000, 1), topic("z", -1, 1)],
        false,
    );
    assert_eq!(
        reply.unwrap_err().to_string(),
        "Excessively large number of partitions per request."
    );
    // 10,000 partitions pass that check, but with their TopicRecord they are 10,001 records.
    let (records, reply) = c.create(&[topic("x", 10_000, 1)], true);
    assert!(records.is_empty());
    assert_eq!(
        reply.unwrap_err().to_string(),
        "Unable to perform excessively large batch operation."
    );
    assert!(c.controller.image().topics.by_name.is_empty());
}

#[test]
fn partitions_only_grow() {
    let mut c = three_brokers();
    c.create_one(topic("t", 2, 2)).unwrap();
    let grown = c
        .grow(&[NewPartitions {
            name: "t".into(),
            count: 5,
            assignments: None,
        }])
        .unwrap();
    assert_eq!(grown, vec![("t".to_string(), Ok(()))]);
    let parts = c.partitions("t");
    assert_eq!(parts.len(), 5);
    assert!(parts.iter().all(|(r, _, _)| r.len() == 2));
    let refused = c
        .grow(&[
            NewPartitions {
                name: "t".into(),
                count: 5,
                assignments: None,
            },
            NewPartitions {
                name: "t".into(),
                count: 3,
                assignments: None,
            },
            NewPartitions {
                name: "nope".into(),
                count: 3,
                assignments: None,
            },
            NewPartitions {
                name: "t".into(),
                count: 7,
                assignments: Some(vec![vec![1, 2]]),
            },
            NewPartitions {
                name: "t".into(),
                count: 6,
                assignments: Some(vec![vec![1]]),
            },
            NewPartitions {
                name: "t".into(),
                count: 6,
                assignments: Some(vec![vec![1, 7]]),
            },
        ])
        .unwrap();
    let expected: Vec<(ErrorCodeName, Option<&str>)> = vec![
        ("INVALID_PARTITIONS", Some("Topic already has 5 partition(s).")),
        ("INVALID_PARTITIONS", Some("The topic t currently has 5 partition(s); 3 would not be an increase.")),
        ("UNKNOWN_TOPIC_OR_PARTITION", None),
        ("INVALID_REPLICA_ASSIGNMENT", Some("Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")),
        ("INVALID_REPLICA_ASSIGNMENT", Some("The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s).")),
        ("INVALID_REPLICA_ASSIGNMENT", Some("The manual partition assignment includes broker 7, but no such broker is registered.")),
    ];
    let got: Vec<(ErrorCodeName, Option<String>)> =
        refused.into_iter().map(|(_, r)| r.unwrap_err()).collect();
    let expected: Vec<(ErrorCodeName, Option<String>)> = expected
        .into_iter()
        .map(|(c, m)| (c, m.map(str::to_string)))
        .collect();
    assert_eq!(got, expected);
    c.grow(&[NewPartitions {
        name: "t".into(),
        count: 6,
        assignments: Some(vec![vec![3, 1]]),
    }])
    .unwrap();
    assert_eq!(c.partitions("t")[5], (vec![3, 1], vec![3, 1], 3));
    assert_eq!(
        c.grow(&[NewPartitions {
            name: "t".into(),
            count: 10_007,
            assignments: None
        }])
        .unwrap_err()
        .to_string(),
        "Excessively large number of additional partitions per request."
    );
}

#[test]
fn topics_are_deleted_by_name_or_id() {
    let mut c = three_brokers();
    for n in ["a", "b", "c"] {
        c.create_one(with_configs(topic(n, 2, 1), &[("retention.ms", Some("5"))]))
            .unwrap();
    }
    let (a, b) = (c.topic_id("a"), c.topic_id("b"));
    let unknown = Uuid([9; 16]);
    let results = c.delete(
        &[],
        &[
            (Some("a"), Uuid::ZERO),
            (None, b),
            (None, unknown),
            (Some("nope"), Uuid::ZERO),
        ],
    );
    let show: Vec<(Option<String>, String, Result<(), Refused>)> = results
        .into_iter()
        .map(|d| {
            (
                d.name,
                d.id.to_string(),
                d.outcome.map_err(|e| (e.error_code().name(), e.message())),
            )
        })
        .collect();
    assert_eq!(
        show,
        vec![
            (
                None,
                unknown.to_string(),
                Err((
                    "UNKNOWN_TOPIC_ID",
                    Some("This server does not host this topic ID.".into())
                ))
            ),
            (Some("a".into()), a.to_string(), Ok(())),
            (Some("b".into()), b.to_string(), Ok(())),
            (
                Some("nope".into()),
                Uuid::ZERO.to_string(),
                Err((
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    Some("This server does not host this topic-partition.".into())
                ))
            ),
        ]
    );
    let image = c.controller.image();
    assert_eq!(
        image
            .topics
            .by_name
            .keys()
            .map(|k| k.to_string())
            .collect::<Vec<_>>(),
        ["c"]
    );
    assert!(
        !image.configs.resources.contains_key(&(2, "a".to_string())),
        "configs go with the topic"
    );
}

#[test]
fn bad_deletion_entries_are_refused_as_controller_apis_refuses_them() {
    let mut c = three_brokers();
    c.create_one(topic("a", 1, 1)).unwrap();
    c.create_one(topic("b", 1, 1)).unwrap();
    let (a, b) = (c.topic_id("a"), c.topic_id("b"));
    let results = c.delete(
        &[],
        &[
            (None, Uuid::ZERO),
            (Some("a"), a),
            (Some("b"), Uuid::ZERO),
            (None, b),
            (None, a),
            (None, a),
        ],
    );
    let show: Vec<(Option<String>, String, String)> = results
        .into_iter()
        .map(|d| (d.name, d.id.to_string(), d.outcome.unwrap_err().to_string()))
        .collect();
    assert_eq!(
        show,
        vec![
            (
                None,
                Uuid::ZERO.to_string(),
                "Neither topic name nor id were specified.".into()
            ),
            (None, a.to_string(), "Duplicate topic id.".into()),
            (
                Some("a".into()),
                a.to_string(),
                "You may not specify both topic name and topic id.".into()
            ),
            (
                Some("b".into()),
                b.to_string(),
                "The provided topic name maps to an ID that was already supplied.".into()
            ),
        ]
    );
    assert_eq!(
        c.controller.image().topics.by_name.len(),
        2,
        "nothing deleted"
    );
}

#[test]
fn controller_apis_answers_duplicates_after_the_controller_in_hash_set_order() {
    let s = screen_create_topics(&["x", "BB", "__cluster_metadata", "Aa", "BB", "Aa", "y", "Aa"]);
    assert_eq!(s.decided, vec![0, 6]);
    assert_eq!(s.duplicates, vec!["BB", "Aa"]);
    assert!(s.metadata_topic);
    let s = screen_create_partitions(&["b", "a", "c", "a"]);
    assert_eq!(s.duplicates, vec!["a"]);
    // HashSet order: "b" (98) before "c" (99).
    assert_eq!(s.decided, vec![0, 2]);
}

#[test]
fn a_topic_is_deleted_only_by_whom_may_delete_it() {
    use super::delete::Access;
    let mut c = three_brokers();
    for n in ["mine", "seen", "hidden"] {
        c.create_one(topic(n, 1, 1)).unwrap();
    }
    let (seen, hidden) = (c.topic_id("seen"), c.topic_id("hidden"));
    // May delete "mine"; may only describe "seen" and "missing"; nothing else.
    let access = |name: &str| Access {
        describe: matches!(name, "mine" | "seen" | "missing"),
        delete: name == "mine",
    };
    let results = c.delete_as(
        access,
        &[],
        &[
            (Some("mine"), Uuid::ZERO),
            (Some("seen"), Uuid::ZERO),
            (Some("hidden"), Uuid::ZERO),
            (Some("missing"), Uuid::ZERO),
            (Some("gone"), Uuid::ZERO),
            (None, seen),
            (None, hidden),
        ],
    );
    let show: Vec<(Option<String>, bool, Result<(), Refused>)> = results
        .into_iter()
        .map(|d| {
            let by_id = d.id != Uuid::ZERO && d.name.as_deref() != Some("mine");
            (
                d.name,
                by_id,
                d.outcome.map_err(|e| (e.error_code().name(), e.message())),
            )
        })
        .collect();
    let denied = || {
        Err((
            "TOPIC_AUTHORIZATION_FAILED",
            Some("Topic authorization failed.".into()),
        ))
    };
    assert_eq!(
        show,
        vec![
            // An id not describable is answered without its name.
            (None, true, denied()),
            (Some("gone".into()), false, denied()),
            (Some("hidden".into()), false, denied()),
            (Some("mine".into()), false, Ok(())),
            // Describable but missing: looked up, so UNKNOWN_TOPIC_OR_PARTITION.
            (
                Some("missing".into()),
                false,
                Err((
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    Some("This server does not host this topic-partition.".into())
                ))
            ),
            (Some("seen".into()), false, denied()),
            (Some("seen".into()), true, denied()),
        ]
    );
    assert_eq!(
        c.controller.image().topics.by_name.len(),
        2,
        "only mine deleted"
    );
}

#[test]
fn create_topics_lists_the_names_given_once_in_hash_set_order() {
    // "Aa" and "BB" share a hash; "x" (120) and "y" (121) follow in their buckets.
    let s = screen_create_topics(&["y", "BB", "x", "Aa", "z", "z"]);
    assert_eq!(s.unique, vec!["BB", "Aa", "x", "y"]);
}
