//! Random images for the round-trip property: a list of small operations, turned into records
//! that Java's loader accepts and that the chosen metadata.version can hold whole (directories
//! from 3.7-IV2, ELR only with the ELR feature from 4.0-IV1, and so on).

use proptest::prelude::*;

use crate::controller::replication::{DIRECTORY_LOST, DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED};
use crate::controller::snapshot::ELR_FEATURE;
use crate::protocol::codec::Uuid;
use crate::protocol::features::{METADATA_VERSION, METADATA_VERSIONS};
use crate::protocol::messages::client_quota_record::EntityData;
use crate::protocol::messages::register_broker_record::{BrokerEndpoint, BrokerFeature};
use crate::protocol::messages::register_controller_record::ControllerEndpoint;
use crate::protocol::messages::*;
use crate::protocol::records::MetadataRecord;

#[derive(Debug, Clone)]
pub enum Op {
    Feature(u8, i16),
    Broker(u8, u8, bool, bool, bool),
    BrokerChange(u8, i8, bool),
    UnregisterBroker(u8),
    Controller(u8, u8),
    Topic(u8, u8, u8),
    RemoveTopic(u8),
    PartitionChange(u8, u8, u8, bool),
    Config(u8, u8, u8, Option<u8>),
    Quota(u8, u8, Option<u16>),
    ProducerIds,
    Acl(u8),
    RemoveAcl(u8),
    Scram(u8, u8, bool),
    Token(u8, u8, bool),
    ClearElr(Option<u8>),
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (any::<u8>(), 0i16..4).prop_map(|(n, l)| Op::Feature(n, l)),
        4 => (any::<u8>(), any::<u8>(), any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(a, b, c, d, e)| Op::Broker(a, b, c, d, e)),
        1 => (any::<u8>(), -1i8..2, any::<bool>()).prop_map(|(a, b, c)| Op::BrokerChange(a, b, c)),
        1 => any::<u8>().prop_map(Op::UnregisterBroker),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Controller(a, b)),
        4 => (any::<u8>(), 0u8..6, 1u8..4).prop_map(|(a, b, c)| Op::Topic(a, b, c)),
        1 => any::<u8>().prop_map(Op::RemoveTopic),
        4 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<bool>())
            .prop_map(|(a, b, c, d)| Op::PartitionChange(a, b, c, d)),
        3 => (any::<u8>(), any::<u8>(), any::<u8>(), proptest::option::of(any::<u8>()))
            .prop_map(|(a, b, c, d)| Op::Config(a, b, c, d)),
        2 => (any::<u8>(), any::<u8>(), proptest::option::of(any::<u16>()))
            .prop_map(|(a, b, c)| Op::Quota(a, b, c)),
        1 => Just(Op::ProducerIds),
        1 => any::<u8>().prop_map(Op::Acl),
        1 => any::<u8>().prop_map(Op::RemoveAcl),
        1 => (any::<u8>(), 1u8..3, any::<bool>()).prop_map(|(a, b, c)| Op::Scram(a, b, c)),
        1 => (any::<u8>(), 0u8..3, any::<bool>()).prop_map(|(a, b, c)| Op::Token(a, b, c)),
        1 => proptest::option::of(any::<u8>()).prop_map(Op::ClearElr),
    ]
}

/// A metadata.version Kafka 4.4 knows, and whether the ELR feature is on.
pub fn version() -> impl Strategy<Value = (i16, bool)> {
    let levels: Vec<i16> = METADATA_VERSIONS.iter().map(|(_, l)| *l).collect();
    (proptest::sample::select(levels), any::<bool>())
}

const FEATURES: &[&str] = &["group.version", "transaction.version", "share.version"];
const TOPIC_KEYS: &[&str] = &["cleanup.policy", "retention.ms", "min.insync.replicas"];
const QUOTA_KEYS: &[&str] = &[
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
];
const QUOTA_TYPES: &[&str] = &["user", "client-id", "ip"];

struct TopicState {
    id: Uuid,
    name: String,
    partitions: Vec<usize>,
}

/// Turns `ops` into the records of an image at `level`.
pub struct Builder {
    level: i16,
    elr: bool,
    uuids: u128,
    brokers: Vec<(i32, i64)>,
    topics: Vec<TopicState>,
    acls: Vec<Uuid>,
    next_producer_id: i64,
    pub records: Vec<MetadataRecord>,
}

impl Builder {
    pub fn new(level: i16, elr_feature: bool) -> Builder {
        let mut b = Builder {
            level,
            elr: elr_feature && level >= 23,
            uuids: 1 << 64,
            brokers: Vec::new(),
            topics: Vec::new(),
            acls: Vec::new(),
            next_producer_id: 0,
            records: Vec::new(),
        };
        b.feature(METADATA_VERSION, level);
        if elr_feature {
            b.feature(ELR_FEATURE, 1);
        }
        b
    }

    fn feature(&mut self, name: &str, level: i16) {
        self.push(FeatureLevelRecord {
            name: name.into(),
            feature_level: level,
            ..Default::default()
        });
    }

    fn push(&mut self, r: impl Into<MetadataRecord>) {
        self.records.push(r.into());
    }

    fn uuid(&mut self) -> Uuid {
        self.uuids += 0x1_0000_0001;
        Uuid(self.uuids.to_be_bytes())
    }

    fn dirs(&mut self, n: usize, seed: u8) -> Vec<Uuid> {
        if self.level < 17 {
            return Vec::new();
        }
        let reserved = [DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED, DIRECTORY_LOST];
        (0..n)
            .map(|i| match (seed as usize + i) % 5 {
                k @ 0..=2 => reserved[k],
                _ => self.uuid(),
            })
            .collect()
    }

    fn elr(&self, replicas: &[i32], seed: u8) -> Option<Vec<i32>> {
        (self.elr && seed % 3 != 0).then(|| replicas[..seed as usize % replicas.len()].to_vec())
    }

    pub fn apply(&mut self, op: &Op) {
        match *op {
            Op::Feature(n, level) => {
                self.feature(FEATURES[n as usize % FEATURES.len()], level);
            }
            Op::Broker(id, seed, fenced, shutdown, migrating) => {
                self.broker(id, seed, fenced, shutdown, migrating)
            }
            Op::BrokerChange(n, fence, shutdown) => {
                let Some(&(id, epoch)) = pick(&self.brokers, n) else {
                    return;
                };
                self.push(BrokerRegistrationChangeRecord {
                    broker_id: id,
                    broker_epoch: epoch,
                    fenced: fence,
                    in_controlled_shutdown: shutdown as i8,
                    ..Default::default()
                });
            }
            Op::UnregisterBroker(n) => {
                let Some(&(id, epoch)) = pick(&self.brokers, n) else {
                    return;
                };
                self.brokers.retain(|(b, _)| *b != id);
                self.push(UnregisterBrokerRecord {
                    broker_id: id,
                    broker_epoch: epoch,
                    ..Default::default()
                });
            }
            Op::Controller(id, seed) => {
                if self.level < 15 {
                    return;
                }
                let incarnation_id = self.uuid();
                self.push(RegisterControllerRecord {
                    controller_id: 3000 + (id % 4) as i32,
                    incarnation_id,
                    zk_migration_ready: seed % 2 == 0,
                    end_points: (0..seed % 3)
                        .map(|i| ControllerEndpoint {
                            name: format!("CONTROLLER{i}"),
                            host: "localhost".into(),
                            port: 9093 + i as u16,
                            security_protocol: (seed % 4) as i16,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                });
            }
            Op::Topic(n, partitions, replicas) => self.topic(n, partitions, replicas),
            Op::RemoveTopic(n) => {
                if self.topics.is_empty() {
                    return;
                }
                let t = self.topics.remove(n as usize % self.topics.len());
                self.push(RemoveTopicRecord {
                    topic_id: t.id,
                    ..Default::default()
                });
            }
            Op::PartitionChange(t, p, seed, reassign) => {
                self.partition_change(t, p, seed, reassign)
            }
            Op::Config(kind, name, key, value) => {
                let (resource_type, resource_name, key) = match kind % 3 {
                    0 => (
                        2,
                        format!("t{}", name % 4),
                        TOPIC_KEYS[key as usize % TOPIC_KEYS.len()].to_string(),
                    ),
                    1 => (
                        4,
                        if name % 2 == 0 {
                            String::new()
                        } else {
                            (name % 3).to_string()
                        },
                        format!("broker.key.{}", key % 5),
                    ),
                    // Keys images drop (a topic key Kafka does not know, a BROKER_LOGGER resource).
                    _ => (
                        if name % 2 == 0 { 2 } else { 8 },
                        "x".into(),
                        "not.a.config".into(),
                    ),
                };
                self.push(ConfigRecord {
                    resource_type,
                    resource_name,
                    name: key,
                    value: value.map(|v| format!("v{v}")),
                    ..Default::default()
                });
            }
            Op::Quota(entity, key, value) => {
                let mut parts = vec![(QUOTA_TYPES[entity as usize % 3], entity % 2 == 0)];
                if entity % 5 == 0 {
                    parts.push((QUOTA_TYPES[(entity as usize + 1) % 3], false));
                }
                self.push(ClientQuotaRecord {
                    entity: parts
                        .into_iter()
                        .map(|(t, default)| EntityData {
                            entity_type: t.into(),
                            entity_name: (!default).then(|| format!("{t}-{}", entity % 3)),
                            ..Default::default()
                        })
                        .collect(),
                    key: QUOTA_KEYS[key as usize % QUOTA_KEYS.len()].into(),
                    value: value.map_or(0.0, |v| v as f64 * 1.5),
                    remove: value.is_none(),
                    ..Default::default()
                });
            }
            Op::ProducerIds => {
                self.next_producer_id += 1000;
                let next_producer_id = self.next_producer_id;
                self.push(ProducerIdsRecord {
                    broker_id: 1,
                    broker_epoch: 5,
                    next_producer_id,
                    ..Default::default()
                });
            }
            Op::Acl(seed) => {
                let id = self.uuid();
                self.acls.push(id);
                self.push(AccessControlEntryRecord {
                    id,
                    resource_type: (seed % 7) as i8 + 1,
                    resource_name: format!("r{}", seed % 5),
                    pattern_type: (seed % 2) as i8 + 3,
                    principal: format!("User:u{}", seed % 3),
                    host: if seed % 2 == 0 {
                        "*".into()
                    } else {
                        "10.0.0.1".into()
                    },
                    operation: (seed % 12) as i8 + 1,
                    permission_type: (seed % 2) as i8 + 2,
                    ..Default::default()
                });
            }
            Op::RemoveAcl(n) => {
                if self.acls.is_empty() {
                    return;
                }
                let id = self.acls.remove(n as usize % self.acls.len());
                self.push(RemoveAccessControlEntryRecord {
                    id,
                    ..Default::default()
                });
            }
            Op::Scram(user, mechanism, remove) => {
                if self.level < 11 {
                    return;
                }
                let name = format!("user{}", user % 4);
                if remove {
                    self.push(RemoveUserScramCredentialRecord {
                        name,
                        mechanism: mechanism as i8,
                        ..Default::default()
                    });
                } else {
                    self.push(UserScramCredentialRecord {
                        name,
                        mechanism: mechanism as i8,
                        salt: vec![user; 3],
                        stored_key: vec![user ^ 0x55; 4],
                        server_key: vec![user ^ 0xaa; 5],
                        iterations: 4096 + user as i32,
                        ..Default::default()
                    });
                }
            }
            Op::Token(id, renewers, remove) => {
                if self.level < 14 {
                    return;
                }
                let token_id = format!("token{}", id % 4);
                if remove {
                    self.push(RemoveDelegationTokenRecord {
                        token_id,
                        ..Default::default()
                    });
                } else {
                    self.push(DelegationTokenRecord {
                        owner: "User:alice".into(),
                        requester: "User:bob".into(),
                        renewers: (0..renewers).map(|r| format!("User:r{r}")).collect(),
                        issue_timestamp: id as i64,
                        max_timestamp: id as i64 + 1000,
                        expiration_timestamp: id as i64 + 500,
                        token_id,
                        ..Default::default()
                    });
                }
            }
            Op::ClearElr(n) => {
                let topic_name = match n {
                    None => String::new(),
                    Some(n) => match pick(&self.topics, n) {
                        Some(t) => t.name.clone(),
                        None => return,
                    },
                };
                self.push(ClearElrRecord {
                    topic_name,
                    ..Default::default()
                });
            }
        }
    }

    fn broker(&mut self, id: u8, seed: u8, fenced: bool, shutdown: bool, migrating: bool) {
        let id = (id % 5) as i32;
        let epoch = self.records.len() as i64;
        self.brokers.retain(|(b, _)| *b != id);
        self.brokers.push((id, epoch));
        let log_dirs = if self.level >= 17 {
            (0..seed % 3).map(|_| self.uuid()).collect()
        } else {
            Vec::new()
        };
        let cordoned_log_dirs =
            (self.level >= 30 && seed % 2 == 0).then(|| log_dirs.iter().take(1).copied().collect());
        let incarnation_id = self.uuid();
        self.push(RegisterBrokerRecord {
            broker_id: id,
            is_migrating_zk_broker: migrating && self.level >= 8,
            incarnation_id,
            broker_epoch: epoch,
            end_points: (0..seed % 3)
                .map(|i| BrokerEndpoint {
                    name: format!("L{i}"),
                    host: format!("h{id}"),
                    port: 9092 + i as u16,
                    security_protocol: i as i16,
                    ..Default::default()
                })
                .collect(),
            features: (0..seed % 2)
                .map(|_| BrokerFeature {
                    name: METADATA_VERSION.into(),
                    min_supported_version: 7,
                    max_supported_version: 33,
                    ..Default::default()
                })
                .collect(),
            rack: (seed % 3 != 0).then(|| format!("rack{}", seed % 2)),
            fenced,
            in_controlled_shutdown: shutdown,
            log_dirs,
            cordoned_log_dirs,
            ..Default::default()
        });
    }

    fn topic(&mut self, n: u8, partitions: u8, replicas: u8) {
        let id = self.uuid();
        let name = format!("topic{n}");
        if self.topics.iter().any(|t| t.name == name) {
            return;
        }
        self.push(TopicRecord {
            name: name.clone(),
            topic_id: id,
            ..Default::default()
        });
        let replicas: Vec<i32> = (0..replicas as i32).collect();
        for p in 0..partitions {
            let directories = self.dirs(replicas.len(), p);
            let eligible_leader_replicas = self.elr(&replicas, p);
            let last_known_elr = self.elr(&replicas, p + 1);
            self.push(PartitionRecord {
                partition_id: p as i32,
                topic_id: id,
                replicas: replicas.clone(),
                isr: replicas[..1 + p as usize % replicas.len()].to_vec(),
                removing_replicas: replicas[..p as usize % 2].to_vec(),
                leader: if p % 4 == 3 { -1 } else { 0 },
                leader_recovery_state: (p % 5 == 4) as i8,
                leader_epoch: p as i32,
                partition_epoch: 2 * p as i32,
                directories,
                eligible_leader_replicas,
                last_known_elr,
                ..Default::default()
            });
        }
        self.topics.push(TopicState {
            id,
            name,
            partitions: vec![replicas.len(); partitions as usize],
        });
    }

    fn partition_change(&mut self, t: u8, p: u8, seed: u8, reassign: bool) {
        let Some(topic) = pick(&self.topics, t) else {
            return;
        };
        if topic.partitions.is_empty() {
            return;
        }
        let (topic_id, partition) = (topic.id, p as usize % topic.partitions.len());
        let count = if reassign {
            1 + seed as usize % 4
        } else {
            topic.partitions[partition]
        };
        let replicas: Vec<i32> = (0..count as i32).map(|r| r + seed as i32 % 3).collect();
        let directories = reassign
            .then(|| self.dirs(count, seed))
            .filter(|d| !d.is_empty());
        // Below 3.7-IV2 every directory is MIGRATING, which Java refills for any replica count.
        let index = self
            .topics
            .iter()
            .position(|s| s.id == topic_id)
            .expect("picked");
        self.topics[index].partitions[partition] = count;
        let eligible_leader_replicas = self.elr(&replicas, seed);
        self.push(PartitionChangeRecord {
            partition_id: partition as i32,
            topic_id,
            isr: (seed % 2 == 0).then(|| replicas[..1].to_vec()),
            leader: if seed % 3 == 0 { -2 } else { replicas[0] },
            replicas: reassign.then_some(replicas),
            leader_recovery_state: if seed % 7 == 0 { 1 } else { -1 },
            directories,
            eligible_leader_replicas,
            ..Default::default()
        });
    }
}

fn pick<T>(items: &[T], n: u8) -> Option<&T> {
    (!items.is_empty()).then(|| &items[n as usize % items.len()])
}
