//! The requests of `bad_requests`, and their answers rendered as text to compare: topic ids
//! are random on both sides, so an id is shown as the name of the topic it belongs to (or as
//! zero / unknown), and DeleteTopics results (which Java shuffles) are sorted.

use std::collections::BTreeMap;

use kraftd::protocol::codec::{Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kraftd::protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kraftd::protocol::messages::delete_topics_request::DeleteTopicState;
use kraftd::protocol::messages::{
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse,
};

use super::cluster::TopicCluster;

/// An id no topic has, the same for both.
pub(super) const UNKNOWN_ID: Uuid = Uuid([7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

/// A topic to create: name, partitions, replication factor, configs, manual assignments.
pub(super) struct T<'a> {
    pub(super) name: &'a str,
    pub(super) partitions: i32,
    pub(super) rf: i16,
    pub(super) configs: &'a [(&'a str, Option<&'a str>)],
    pub(super) assignments: &'a [(i32, &'a [i32])],
}

pub(super) const fn t(name: &str, partitions: i32, rf: i16) -> T<'_> {
    T {
        name,
        partitions,
        rf,
        configs: &[],
        assignments: &[],
    }
}

pub(super) fn create(topics: &[T], validate_only: bool) -> CreateTopicsRequest {
    CreateTopicsRequest {
        topics: topics
            .iter()
            .map(|t| CreatableTopic {
                name: t.name.to_string(),
                num_partitions: t.partitions,
                replication_factor: t.rf,
                assignments: t
                    .assignments
                    .iter()
                    .map(|(p, b)| CreatableReplicaAssignment {
                        partition_index: *p,
                        broker_ids: b.to_vec(),
                        ..Default::default()
                    })
                    .collect(),
                configs: t
                    .configs
                    .iter()
                    .map(|(k, v)| CreatableTopicConfig {
                        name: k.to_string(),
                        value: v.map(str::to_string),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        timeout_ms: 30_000,
        validate_only,
        ..Default::default()
    }
}

/// A topic to grow: name, new count, assignments.
pub(super) type G<'a> = (&'a str, i32, Option<&'a [&'a [i32]]>);

pub(super) fn grow(topics: &[G], validate_only: bool) -> CreatePartitionsRequest {
    CreatePartitionsRequest {
        topics: topics
            .iter()
            .map(|(name, count, assignments)| CreatePartitionsTopic {
                name: name.to_string(),
                count: *count,
                assignments: assignments.map(|a| {
                    a.iter()
                        .map(|b| CreatePartitionsAssignment {
                            broker_ids: b.to_vec(),
                            ..Default::default()
                        })
                        .collect()
                }),
                ..Default::default()
            })
            .collect(),
        timeout_ms: 30_000,
        validate_only,
        ..Default::default()
    }
}

/// A deletion entry: a name, the id of a topic created earlier (by its name), or both.
pub(super) enum D<'a> {
    Name(&'a str),
    IdOf(&'a str),
    Id(Uuid),
    Both(&'a str),
    Neither,
}

pub(super) enum Request<'a> {
    Create(i16, CreateTopicsRequest),
    Grow(i16, CreatePartitionsRequest),
    /// v0-5 send names only.
    DeleteNames(i16, Vec<&'a str>),
    Delete(i16, Vec<D<'a>>),
}

pub(super) struct Case<'a> {
    pub(super) name: &'static str,
    pub(super) request: Request<'a>,
    /// The first result's error (DeleteTopics, which Java shuffles: the highest of the
    /// results'), as Kafka's code leads us to expect (the test checks Java gives it).
    pub(super) expected: ErrorCode,
}

/// Topic ids learnt from CreateTopics answers, by name.
pub(super) type Ids = BTreeMap<String, Uuid>;

pub(super) fn show_id(id: &Uuid, ids: &Ids) -> String {
    if *id == Uuid::ZERO {
        return "zero".into();
    }
    if *id == UNKNOWN_ID {
        return "the unknown id".into();
    }
    match ids.iter().find(|(_, v)| *v == id) {
        Some((name, _)) => format!("the id of {name}"),
        None => "a fresh id".into(),
    }
}

pub(super) fn code(c: i16) -> &'static str {
    ErrorCode(c).name()
}

/// Sends a case; its answer as text (ids masked) and the first result's error code.
pub(super) fn run_case(
    c: &TopicCluster,
    case: &Case,
    ids: &mut Ids,
) -> (String, Option<ErrorCode>) {
    match &case.request {
        Request::Create(v, r) => {
            let body = match c.send(*v, r) {
                Ok(b) => b,
                Err(e) => return (format!("no answer: {e}"), None),
            };
            let r = CreateTopicsResponse::decode_exact(&body, *v).expect("a CreateTopics response");
            let mut lines = vec![format!("throttle {}", r.throttle_time_ms)];
            for t in &r.topics {
                if t.error_code == 0 && t.topic_id != Uuid::ZERO && !r.topics.is_empty() {
                    ids.entry(t.name.clone()).or_insert(t.topic_id);
                }
                let configs: Vec<String> = t
                    .configs
                    .iter()
                    .flatten()
                    .map(|c| {
                        format!(
                            "{}={:?} source {} ro {} sensitive {}",
                            c.name, c.value, c.config_source, c.read_only, c.is_sensitive
                        )
                    })
                    .collect();
                lines.push(format!(
                    "{}: {} {:?} id {} partitions {} rf {} config error {} configs [{}]",
                    t.name,
                    code(t.error_code),
                    t.error_message,
                    show_id(&t.topic_id, ids),
                    t.num_partitions,
                    t.replication_factor,
                    code(t.topic_config_error_code),
                    configs.join("; ")
                ));
            }
            let first = r.topics.first().map(|t| ErrorCode(t.error_code));
            (lines.join("\n      "), first)
        }
        Request::Grow(v, r) => {
            let body = match c.send(*v, r) {
                Ok(b) => b,
                Err(e) => return (format!("no answer: {e}"), None),
            };
            let r = CreatePartitionsResponse::decode_exact(&body, *v)
                .expect("a CreatePartitions response");
            let mut lines = vec![format!("throttle {}", r.throttle_time_ms)];
            lines.extend(
                r.results
                    .iter()
                    .map(|t| format!("{}: {} {:?}", t.name, code(t.error_code), t.error_message)),
            );
            let first = r.results.first().map(|t| ErrorCode(t.error_code));
            (lines.join("\n      "), first)
        }
        Request::DeleteNames(v, names) => {
            let r = DeleteTopicsRequest {
                topic_names: names.iter().map(|n| n.to_string()).collect(),
                timeout_ms: 30_000,
                ..Default::default()
            };
            delete(c, *v, &r, ids)
        }
        Request::Delete(v, entries) => {
            let id_of = |n: &str| *ids.get(n).unwrap_or_else(|| panic!("no id known for {n}"));
            let r = DeleteTopicsRequest {
                topics: entries
                    .iter()
                    .map(|e| {
                        let (name, id) = match e {
                            D::Name(n) => (Some(n.to_string()), Uuid::ZERO),
                            D::IdOf(n) => (None, id_of(n)),
                            D::Id(id) => (None, *id),
                            D::Both(n) => (Some(n.to_string()), id_of(n)),
                            D::Neither => (None, Uuid::ZERO),
                        };
                        DeleteTopicState {
                            name,
                            topic_id: id,
                            ..Default::default()
                        }
                    })
                    .collect(),
                timeout_ms: 30_000,
                ..Default::default()
            };
            delete(c, *v, &r, ids)
        }
    }
}

pub(super) fn delete(
    c: &TopicCluster,
    v: i16,
    r: &DeleteTopicsRequest,
    ids: &Ids,
) -> (String, Option<ErrorCode>) {
    let body = match c.send(v, r) {
        Ok(b) => b,
        Err(e) => return (format!("no answer: {e}"), None),
    };
    let r = DeleteTopicsResponse::decode_exact(&body, v).expect("a DeleteTopics response");
    // Java shuffles the results: compared sorted.
    let mut lines: Vec<String> = r
        .responses
        .iter()
        .map(|t| {
            format!(
                "{:?} id {}: {} {:?}",
                t.name,
                show_id(&t.topic_id, ids),
                code(t.error_code),
                t.error_message
            )
        })
        .collect();
    lines.sort();
    let first = lines.first().map(|_| {
        let mut codes: Vec<i16> = r.responses.iter().map(|t| t.error_code).collect();
        codes.sort();
        ErrorCode(*codes.last().expect("a result"))
    });
    lines.insert(0, format!("throttle {}", r.throttle_time_ms));
    (lines.join("\n      "), first)
}
