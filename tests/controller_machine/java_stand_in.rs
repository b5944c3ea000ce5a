//! What a stand-in for a Java active controller proposes (a node with Kafka's election rules in
//! a mixed quorum): metadata records decided from its latest image, so that every record is
//! valid where it lands, and metadata transactions spread over several batches, as a Java
//! controller writes a large non-atomic result (its bootstrap records) and may die between
//! them. The kraftd nodes' controllers inherit those transactions. Proposal `n` draws its
//! choices from `n`; each record is replayed on a scratch copy of the image before the next is
//! decided, so a proposal of several records is valid record by record.

use kraftd::controller::{MetadataImage, OpenTransaction};
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::features::{metadata_version_name, METADATA_VERSION};
use kraftd::protocol::messages::client_quota_record::EntityData;
use kraftd::protocol::messages::register_broker_record::{BrokerEndpoint, BrokerFeature};
use kraftd::protocol::messages::*;
use kraftd::protocol::records::MetadataRecord;

use super::draws::Draws;

/// The highest metadata.version (Kafka 4.4's latest, 4.4-IV2): what brokers support.
const LATEST_METADATA_VERSION: i16 = 33;
/// Broker ids the workload registers.
const BROKERS: i32 = 5;

/// The records of one proposal and a short description of each step.
pub struct Decided {
    pub records: Vec<MetadataRecord>,
    pub labels: Vec<String>,
}

/// The image the next record is decided against, and the records so far.
struct Scratch {
    image: MetadataImage,
    decided: Decided,
    /// The proposal number, for unique names and ids.
    n: u64,
}

impl Scratch {
    fn push(&mut self, record: impl Into<MetadataRecord>, label: String) {
        let record = record.into();
        if let Err(e) = self.image.replay(&record) {
            panic!("the workload decided {record:?}, which its own image refuses: {e}");
        }
        self.decided.records.push(record);
        self.decided.labels.push(label);
    }
    /// Unique within the run: the proposal and how many records it has so far.
    fn unique(&self) -> (u64, u64) {
        (self.n, self.decided.records.len() as u64)
    }
    fn brokers(&self) -> Vec<(i32, i64, bool)> {
        let b = &self.image.cluster.brokers;
        b.values().map(|b| (b.id, b.epoch, b.fenced)).collect()
    }
    /// (topic id, name, partition ids).
    fn topics(&self) -> Vec<(Uuid, String, Vec<i32>)> {
        let t = &self.image.topics.by_id;
        t.values()
            .map(|t| {
                (
                    t.id,
                    t.name.to_string(),
                    t.partitions.keys().copied().collect(),
                )
            })
            .collect()
    }
}

fn directory(broker: i32) -> Uuid {
    Uuid::from_u64s(0xd1d1_0000 + broker as u64, 0x77)
}

/// Decides proposal `n` from the latest image. `open` is the transaction open there, `own`
/// whether this leader began it (an inherited one is aborted first, as Kafka's activation does).
pub fn decide(
    image: &MetadataImage,
    open: Option<OpenTransaction>,
    own: bool,
    n: u64,
    bootstrap_metadata_version: i16,
) -> Decided {
    let mut d = Draws::new(n ^ 0x00c0_ffee);
    let mut s = Scratch {
        image: image.clone(),
        decided: Decided {
            records: Vec::new(),
            labels: Vec::new(),
        },
        n,
    };
    if s.image.features.metadata_version().is_none() {
        let level = bootstrap_metadata_version;
        s.push(
            feature(METADATA_VERSION, level),
            format!("metadata.version={level}"),
        );
        return s.decided;
    }
    match open {
        Some(_) if !own => s.push(AbortTransactionRecord::default(), "abort-inherited".into()),
        Some(_) => match d.below(6) {
            0 => s.push(AbortTransactionRecord::default(), "abort".into()),
            1 | 2 => {
                steps(&mut s, &mut d, 0);
                s.push(EndTransactionRecord::default(), "end".into());
            }
            _ => steps(&mut s, &mut d, 1),
        },
        None if d.one_in(8) => {
            let name = Some(format!("txn{n}"));
            let begin = BeginTransactionRecord {
                name,
                ..Default::default()
            };
            s.push(begin, "begin".into());
            steps(&mut s, &mut d, 0);
        }
        None => steps(&mut s, &mut d, 1),
    }
    s.decided
}

/// `at_least`..=3 steps.
fn steps(s: &mut Scratch, d: &mut Draws, at_least: usize) {
    let count = at_least + d.below(4 - at_least);
    for _ in 0..count {
        step(s, d);
    }
}

/// One step of the workload: some records valid on the scratch image.
fn step(s: &mut Scratch, d: &mut Draws) {
    let roll = d.below(100);
    let done = match roll {
        0..=11 => register_broker(s, d),
        12..=23 => change_broker(s, d),
        24..=35 => create_topic(s, d),
        36..=51 => change_partition(s, d),
        52..=61 => config(s, d),
        62..=67 => producer_ids(s, d),
        68..=75 => false, // a quota, below
        76..=83 => remove_topic(s, d),
        84..=87 => feature_level(s, d),
        88..=91 => acl(s, d),
        92..=93 => unregister_broker(s, d),
        _ => {
            s.push(NoOpRecord::default(), "no-op".into());
            true
        }
    };
    if !done {
        client_quota(s, d);
    }
}

fn feature(name: &str, level: i16) -> FeatureLevelRecord {
    FeatureLevelRecord {
        name: name.into(),
        feature_level: level,
        ..Default::default()
    }
}

fn register_broker(s: &mut Scratch, d: &mut Draws) -> bool {
    let id = 1 + d.below(BROKERS as usize) as i32;
    let epoch = s.n as i64 * 4 + d.below(4) as i64;
    let r = RegisterBrokerRecord {
        broker_id: id,
        incarnation_id: Uuid::from_u64s(0x1c1c_0000 + id as u64, s.n),
        broker_epoch: epoch,
        end_points: vec![BrokerEndpoint {
            name: "PLAINTEXT".into(),
            host: format!("broker{id}"),
            port: 9092,
            security_protocol: 0,
            ..Default::default()
        }],
        features: vec![BrokerFeature {
            name: METADATA_VERSION.into(),
            min_supported_version: 7,
            max_supported_version: LATEST_METADATA_VERSION,
            ..Default::default()
        }],
        rack: (id % 2 == 0).then(|| format!("rack{}", id % 3)),
        fenced: true,
        log_dirs: vec![directory(id)],
        ..Default::default()
    };
    s.push(r, format!("register b{id}@{epoch}"));
    true
}

fn change_broker(s: &mut Scratch, d: &mut Draws) -> bool {
    let Some(&(id, epoch, fenced)) = d.pick(&s.brokers()) else {
        return false;
    };
    match d.below(4) {
        0 if fenced => s.push(
            UnfenceBrokerRecord {
                id,
                epoch,
                ..Default::default()
            },
            format!("unfence b{id}"),
        ),
        0 => s.push(
            FenceBrokerRecord {
                id,
                epoch,
                ..Default::default()
            },
            format!("fence b{id}"),
        ),
        1 => s.push(
            BrokerRegistrationChangeRecord {
                broker_id: id,
                broker_epoch: epoch,
                in_controlled_shutdown: 1,
                ..Default::default()
            },
            format!("b{id} shuts down"),
        ),
        _ => s.push(
            BrokerRegistrationChangeRecord {
                broker_id: id,
                broker_epoch: epoch,
                fenced: if fenced { -1 } else { 1 },
                ..Default::default()
            },
            format!("{} b{id}", if fenced { "unfence" } else { "fence" }),
        ),
    }
    true
}

/// `count` replicas from the registered brokers, starting at the `from`-th.
fn placement(s: &Scratch, from: usize, count: usize) -> Vec<i32> {
    let ids: Vec<i32> = s.brokers().iter().map(|b| b.0).collect();
    (0..count.min(ids.len()))
        .map(|i| ids[(from + i) % ids.len()])
        .collect()
}

fn create_topic(s: &mut Scratch, d: &mut Draws) -> bool {
    let brokers = s.brokers().len();
    if brokers == 0 {
        return register_broker(s, d);
    }
    let (n, k) = s.unique();
    let name = format!("t{n}.{k}");
    let topic_id = Uuid::from_u64s(0x7070_0000 + n, 1 + k);
    s.push(
        TopicRecord {
            name: name.clone(),
            topic_id,
            ..Default::default()
        },
        format!("create {name}"),
    );
    let partitions = 1 + d.below(3);
    let factor = 1 + d.below(3);
    let first = d.below(brokers);
    for p in 0..partitions {
        let replicas = placement(s, first + p, factor);
        let r = PartitionRecord {
            partition_id: p as i32,
            topic_id,
            isr: replicas.clone(),
            leader: replicas[0],
            directories: replicas.iter().map(|b| directory(*b)).collect(),
            replicas,
            ..Default::default()
        };
        s.push(r, format!("{name}-{p}"));
    }
    true
}

fn change_partition(s: &mut Scratch, d: &mut Draws) -> bool {
    let topics = s.topics();
    let Some((topic_id, name, partitions)) = d.pick(&topics) else {
        return create_topic(s, d);
    };
    let Some(&p) = d.pick(partitions) else {
        return false;
    };
    let reg = s.image.topics.by_id[topic_id].partitions[&p].clone();
    let mut r = PartitionChangeRecord {
        partition_id: p,
        topic_id: *topic_id,
        ..Default::default()
    };
    let full = reg.isr.len() == reg.replicas.len();
    let what = match d.below(4) {
        0 | 1 if !full => {
            r.isr = Some(reg.replicas.clone());
            if !reg.replicas.contains(&reg.leader) {
                r.leader = reg.replicas[0];
            }
            format!("expand ISR of {name}-{p}")
        }
        0 if reg.isr.len() > 1 => {
            let out = *d.pick(&reg.isr[1..]).expect("non-empty");
            let isr: Vec<i32> = reg.isr.iter().copied().filter(|b| *b != out).collect();
            if reg.leader == out {
                r.leader = isr[0];
            }
            r.isr = Some(isr);
            format!("shrink ISR of {name}-{p} without b{out}")
        }
        1 if reg.isr.len() > 1 => {
            let others: Vec<i32> = reg
                .isr
                .iter()
                .copied()
                .filter(|b| *b != reg.leader)
                .collect();
            let leader = *d.pick(&others).expect("another ISR member");
            r.leader = leader;
            format!("{name}-{p} led by b{leader}")
        }
        _ if !s.brokers().is_empty() => {
            let replicas = placement(s, d.below(BROKERS as usize), 1 + d.below(3));
            r.leader = replicas[0];
            r.isr = Some(replicas.clone());
            r.directories = Some(replicas.iter().map(|b| directory(*b)).collect());
            r.replicas = Some(replicas.clone());
            format!("reassign {name}-{p} to {replicas:?}")
        }
        _ => {
            r.leader = -1;
            r.isr = Some(Vec::new());
            format!("{name}-{p} goes offline")
        }
    };
    s.push(r, what);
    true
}

fn config(s: &mut Scratch, d: &mut Draws) -> bool {
    let topics = s.topics();
    let (resource_type, resource_name, key) = match d.pick(&topics) {
        Some((_, name, _)) if !d.one_in(4) => {
            let key = [
                "retention.ms",
                "max.message.bytes",
                "segment.bytes",
                "x.unknown",
            ];
            (2, name.clone(), *d.pick(&key).expect("keys"))
        }
        _ => {
            let name = ["", "1", "2"][d.below(3)];
            (4, name.to_string(), "log.retention.ms")
        }
    };
    let set = !d.one_in(3);
    let r = ConfigRecord {
        resource_type,
        resource_name: resource_name.clone(),
        name: key.into(),
        value: set.then(|| (1000 * (1 + d.below(100))).to_string()),
        ..Default::default()
    };
    let verb = if set { "set" } else { "delete" };
    s.push(
        r,
        format!("{verb} {key} of {resource_type}:{resource_name}"),
    );
    true
}

fn producer_ids(s: &mut Scratch, d: &mut Draws) -> bool {
    let Some(&(broker_id, broker_epoch, _)) = d.pick(&s.brokers()) else {
        return false;
    };
    let next = s.image.producer_ids.next_producer_id.max(0) + 1000;
    let r = ProducerIdsRecord {
        broker_id,
        broker_epoch,
        next_producer_id: next,
        ..Default::default()
    };
    s.push(r, format!("producer ids to {next}"));
    true
}

fn client_quota(s: &mut Scratch, d: &mut Draws) {
    let user = format!("u{}", d.below(4));
    let key = *d
        .pick(&[
            "producer_byte_rate",
            "consumer_byte_rate",
            "request_percentage",
        ])
        .expect("keys");
    let remove = d.one_in(3);
    let r = ClientQuotaRecord {
        entity: vec![EntityData {
            entity_type: "user".into(),
            entity_name: Some(user.clone()),
            ..Default::default()
        }],
        key: key.into(),
        value: (1 + d.below(100)) as f64 * 1024.0,
        remove,
        ..Default::default()
    };
    let verb = if remove { "remove" } else { "set" };
    s.push(r, format!("{verb} {key} of {user}"));
}

fn remove_topic(s: &mut Scratch, d: &mut Draws) -> bool {
    let topics = s.topics();
    let Some((topic_id, name, _)) = d.pick(&topics) else {
        return false;
    };
    let r = RemoveTopicRecord {
        topic_id: *topic_id,
        ..Default::default()
    };
    s.push(r, format!("remove {name}"));
    true
}

/// A feature level; metadata.version only upgrades, as Kafka 4.x refuses its downgrades.
fn feature_level(s: &mut Scratch, d: &mut Draws) -> bool {
    let current = s
        .image
        .features
        .metadata_version()
        .unwrap_or(LATEST_METADATA_VERSION);
    let upgrades: Vec<i16> = (current + 1..=LATEST_METADATA_VERSION)
        .filter(|l| metadata_version_name(*l).is_some())
        .collect();
    let (name, level) = match d.pick(&upgrades) {
        Some(level) if d.one_in(3) => (METADATA_VERSION, *level),
        _ => {
            let names = ["group.version", "transaction.version", "share.version"];
            (*d.pick(&names).expect("names"), d.below(3) as i16)
        }
    };
    s.push(feature(name, level), format!("{name}={level}"));
    true
}

fn acl(s: &mut Scratch, d: &mut Draws) -> bool {
    let existing: Vec<Uuid> = s.image.acls.by_id.keys().copied().collect();
    if let Some(id) = d.pick(&existing).filter(|_| d.one_in(2)) {
        let r = RemoveAccessControlEntryRecord {
            id: *id,
            ..Default::default()
        };
        s.push(r, "remove ACL".into());
        return true;
    }
    let (n, k) = s.unique();
    let r = AccessControlEntryRecord {
        id: Uuid::from_u64s(0xac1a_0000 + n, 1 + k),
        resource_type: 2,
        resource_name: format!("t{}", d.below(10)),
        pattern_type: 3,
        principal: format!("User:u{}", d.below(4)),
        host: "*".into(),
        operation: 3,
        permission_type: 3,
        ..Default::default()
    };
    s.push(r, "add ACL".into());
    true
}

fn unregister_broker(s: &mut Scratch, d: &mut Draws) -> bool {
    let Some(&(broker_id, ..)) = d.pick(&s.brokers()) else {
        return false;
    };
    let r = UnregisterBrokerRecord {
        broker_id,
        ..Default::default()
    };
    s.push(r, format!("unregister b{broker_id}"));
    true
}
