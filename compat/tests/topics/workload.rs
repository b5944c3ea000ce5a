//! Topic changes against one kraftd controller and three stock Kafka 4.4 brokers, once with
//! `kafka-topics --bootstrap-server` (the broker forwards each request in an Envelope) and once
//! as requests straight to kraftd's listener (Kafka 4.4 has no tool for that: kafka-topics has
//! no `--bootstrap-controller`, and an admin client bootstrapped from controllers refuses topic
//! changes with UnsupportedEndpointTypeException): a topic of 12 partitions with 3 replicas is
//! created, described through a broker (every partition on 3 distinct brokers, led by the
//! first, leaders spread), grown to 16 partitions, produced to (idempotently: kraftd
//! hands the brokers producer ids) and consumed from (which also creates
//! `__consumer_offsets` through the broker's auto-creation), and deleted. Last, Java's
//! image of kraftd's log equals kraftd's.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kraftd::protocol::messages::create_topics_request::CreatableTopic;
use kraftd::protocol::messages::delete_topics_request::DeleteTopicState;
use kraftd::protocol::messages::{
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse,
};

use super::cluster::TopicCluster;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::{Kafka, Output, TestDir, Tool, ToolOptions};

const BROKERS: [i32; 3] = [11, 12, 13];
const PROPAGATION: Duration = Duration::from_secs(60);

/// One partition as `kafka-topics --describe` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Described {
    pub leader: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
}

fn ids(s: &str) -> Vec<i32> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| x.trim().parse().expect("a broker id"))
        .collect()
}

/// The partitions of `topic` in a `--describe` output, by partition id.
pub(crate) fn parse_describe(stdout: &str, topic: &str) -> BTreeMap<i32, Described> {
    let mut out = BTreeMap::new();
    for line in stdout.lines() {
        let fields: BTreeMap<&str, &str> = line
            .split('\t')
            .filter_map(|f| {
                f.trim()
                    .split_once(": ")
                    .or_else(|| f.trim().strip_suffix(':').map(|k| (k, "")))
            })
            .collect();
        if fields.get("Topic") != Some(&topic) {
            continue;
        }
        let Some(p) = fields.get("Partition") else {
            continue;
        };
        out.insert(
            p.parse().expect("a partition id"),
            Described {
                leader: fields["Leader"].parse().expect("a leader id"),
                replicas: ids(fields["Replicas"]),
                isr: ids(fields["Isr"]),
            },
        );
    }
    out
}

struct Tools<'a> {
    kafka: &'a Kafka,
    cluster: &'a TopicCluster,
    broker: String,
}

#[derive(Debug, Clone, Copy)]
enum Via {
    Broker,
    Controller,
}

impl Tools<'_> {
    fn topics(&self, flag: &str, endpoint: &str, args: &[&str]) -> Output {
        let mut all = vec![flag, endpoint];
        all.extend_from_slice(args);
        self.kafka.run(Tool::Topics, &all)
    }

    /// A topic change: `kafka-topics` through the broker, or an admin client bootstrapped
    /// from kraftd itself. `Ok` or the tool's error text.
    fn change(&self, via: Via, args: &[&str]) -> Result<(), String> {
        match via {
            Via::Broker => {
                let mut tool_args: Vec<&str> = Vec::new();
                match args {
                    ["create", topic, partitions, rf] => tool_args.extend([
                        "--create",
                        "--topic",
                        topic,
                        "--partitions",
                        partitions,
                        "--replication-factor",
                        rf,
                    ]),
                    ["partitions", topic, count] => {
                        tool_args.extend(["--alter", "--topic", topic, "--partitions", count])
                    }
                    ["delete", topic] => tool_args.extend(["--delete", "--topic", topic]),
                    _ => panic!("unknown change {args:?}"),
                }
                let out = self.topics("--bootstrap-server", &self.broker, &tool_args);
                if out.success() {
                    Ok(())
                } else {
                    Err(out.to_string())
                }
            }
            Via::Controller => self.raw(args),
        }
    }

    /// The change as a raw request to kraftd's own listener (CreateTopics v7, CreatePartitions
    /// v3, DeleteTopics v6): `Ok`, or the error code and message of the one result.
    fn raw(&self, args: &[&str]) -> Result<(), String> {
        let num = |s: &str| s.parse::<i32>().expect("a number");
        let (code, message) = match args {
            ["create", topic, partitions, rf] => {
                let r = CreateTopicsRequest {
                    topics: vec![CreatableTopic {
                        name: topic.to_string(),
                        num_partitions: num(partitions),
                        replication_factor: num(rf) as i16,
                        ..Default::default()
                    }],
                    timeout_ms: 30_000,
                    ..Default::default()
                };
                let body = self.cluster.send(7, &r)?;
                let r =
                    CreateTopicsResponse::decode_exact(&body, 7).map_err(|e| format!("{e:?}"))?;
                (r.topics[0].error_code, r.topics[0].error_message.clone())
            }
            ["partitions", topic, count] => {
                let r = CreatePartitionsRequest {
                    topics: vec![CreatePartitionsTopic {
                        name: topic.to_string(),
                        count: num(count),
                        assignments: None,
                        ..Default::default()
                    }],
                    timeout_ms: 30_000,
                    ..Default::default()
                };
                let body = self.cluster.send(3, &r)?;
                let r = CreatePartitionsResponse::decode_exact(&body, 3)
                    .map_err(|e| format!("{e:?}"))?;
                (r.results[0].error_code, r.results[0].error_message.clone())
            }
            ["delete", topic] => {
                let r = DeleteTopicsRequest {
                    topics: vec![DeleteTopicState {
                        name: Some(topic.to_string()),
                        topic_id: Uuid::ZERO,
                        ..Default::default()
                    }],
                    timeout_ms: 30_000,
                    ..Default::default()
                };
                let body = self.cluster.send(6, &r)?;
                let r =
                    DeleteTopicsResponse::decode_exact(&body, 6).map_err(|e| format!("{e:?}"))?;
                (
                    r.responses[0].error_code,
                    r.responses[0].error_message.clone(),
                )
            }
            _ => panic!("unknown change {args:?}"),
        };
        if code == 0 {
            Ok(())
        } else {
            Err(format!(
                "{}: {}",
                ErrorCode(code).name(),
                message.unwrap_or_default()
            ))
        }
    }

    /// The partitions a broker describes, and the tool's output.
    fn describe(&self, topic: &str) -> (BTreeMap<i32, Described>, Output) {
        let args = ["--describe", "--topic", topic];
        let out = self.topics("--bootstrap-server", &self.broker, &args);
        let parsed = if out.success() {
            parse_describe(&out.stdout, topic)
        } else {
            BTreeMap::new()
        };
        (parsed, out)
    }

    /// Describes `topic` through a broker until `done` holds (brokers learn of changes when
    /// they replay the committed records).
    fn describe_until(
        &self,
        topic: &str,
        what: &str,
        done: impl Fn(&BTreeMap<i32, Described>) -> bool,
    ) -> BTreeMap<i32, Described> {
        let deadline = Instant::now() + PROPAGATION;
        loop {
            let (d, out) = self.describe(topic);
            if done(&d) {
                return d;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: the brokers describe {topic} as {d:?}:\n{out}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn listed(&self) -> Vec<String> {
        let out = self.topics("--bootstrap-server", &self.broker, &["--list"]);
        out.assert_success();
        out.stdout.lines().map(str::to_string).collect()
    }
}

/// The console producer, idempotent (the default) with acks=all: the brokers get producer
/// ids from the controller.
pub(crate) fn produce(kafka: &Kafka, broker: &str, topic: &str, lines: &[&str]) -> Output {
    let mut stdin = lines.join("\n").into_bytes();
    stdin.push(b'\n');
    let options = ToolOptions {
        stdin: Some(stdin),
        ..ToolOptions::default()
    };
    let args = [
        "--bootstrap-server",
        broker,
        "--topic",
        topic,
        "--producer-property",
        "acks=all",
    ];
    kafka.tool_with(kafka.main_class(Tool::ConsoleProducer), &args, &options)
}

/// Every partition on `rf` distinct brokers of the cluster, led by its first replica, all in
/// sync; leaders spread over every broker.
fn check_layout(topic: &str, d: &BTreeMap<i32, Described>, partitions: i32, rf: usize) {
    assert_eq!(
        d.keys().copied().collect::<Vec<_>>(),
        (0..partitions).collect::<Vec<_>>(),
        "{topic}"
    );
    for (p, part) in d {
        let distinct: BTreeSet<i32> = part.replicas.iter().copied().collect();
        assert_eq!(distinct.len(), rf, "{topic}-{p}: {part:?}");
        assert!(
            distinct.iter().all(|b| BROKERS.contains(b)),
            "{topic}-{p}: {part:?}"
        );
        assert_eq!(part.leader, part.replicas[0], "{topic}-{p}: {part:?}");
        let isr: BTreeSet<i32> = part.isr.iter().copied().collect();
        assert_eq!(isr, distinct, "{topic}-{p}: {part:?}");
    }
    let leaders: BTreeSet<i32> = d.values().map(|p| p.leader).collect();
    assert_eq!(leaders.len(), BROKERS.len(), "{topic}: leaders {leaders:?}");
}

#[test]
fn kafka_topics_creates_grows_and_deletes_topics_through_a_broker_and_straight_to_kraftd() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut c = TopicCluster::start(&dir, Kind::Kraftd, &BROKERS);
    let t = Tools {
        kafka,
        cluster: &c,
        broker: c.bootstrap_server(),
    };
    for via in [Via::Broker, Via::Controller] {
        let topic = format!("orders-via-{via:?}").to_lowercase();
        t.change(via, &["create", &topic, "12", "3"]).unwrap();
        let d = t.describe_until(&topic, "created", |d| {
            d.len() == 12 && d.values().all(|p| p.leader >= 0)
        });
        check_layout(&topic, &d, 12, 3);
        // A second create is refused with Java's message.
        let again = t.change(via, &["create", &topic, "1", "3"]).unwrap_err();
        assert!(
            again.contains(&format!("Topic '{topic}' already exists.")),
            "{again}"
        );
        t.change(via, &["partitions", &topic, "16"]).unwrap();
        let d = t.describe_until(&topic, "grown", |d| {
            d.len() == 16 && d.values().all(|p| p.leader >= 0)
        });
        for p in 12..16 {
            assert_eq!(d[&p].replicas.len(), 3, "{topic}-{p}: {:?}", d[&p]);
        }
        // Partitions only grow.
        let lower = t.change(via, &["partitions", &topic, "4"]).unwrap_err();
        assert!(
            lower.contains(&format!(
                "The topic {topic} currently has 16 partition(s); 4 would not be an increase."
            )),
            "{lower}"
        );
        // The brokers serve it: records go in and come out.
        let lines = ["one", "two", "three"];
        produce(kafka, &t.broker, &topic, &lines).assert_success();
        let consumed = kafka.console_consume(&t.broker, &topic, lines.len(), 30_000);
        let mut got: Vec<&str> = consumed.stdout.lines().collect();
        got.sort();
        let mut want = lines.to_vec();
        want.sort();
        assert_eq!(got, want, "{consumed}");
        t.change(via, &["delete", &topic]).unwrap();
        let deadline = Instant::now() + PROPAGATION;
        while t.listed().contains(&topic) {
            assert!(
                Instant::now() < deadline,
                "{topic} is still listed after its deletion"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        eprintln!("{topic}: created, described, grown, used and deleted via the {via:?}");
    }
    // The consumers' group offsets topic, created by a broker's auto-creation.
    let listed = t.listed();
    assert!(
        listed.iter().any(|n| n == "__consumer_offsets"),
        "{listed:?}"
    );
    drop(t);
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}
