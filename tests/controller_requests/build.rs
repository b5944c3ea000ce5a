//! One directive per controller request, building the request a stock Kafka 4.4 broker or admin
//! tool sends (at the request's highest version unless `v=N`):
//!
//! * `register-broker ID [incarnation=N] [rack=R] [clean]`: BrokerRegistration from broker ID,
//!   supporting every feature this build supports (as a 4.4 broker does), one log dir;
//!   `clean`: after a clean shutdown (previousBrokerEpoch is its last epoch).
//! * `heartbeat ID [offset=N] [fence] [shutdown]`: BrokerHeartbeat with the broker's epoch and,
//!   by default, the committed offset as its metadata offset.
//! * `unregister-broker ID`, `allocate-producer-ids ID`.
//! * `register-controller ID [incarnation=N]`: ControllerRegistration.
//! * `create-topic NAME [partitions=N] [rf=N] [assign=1,2,3/2,3,1] [configs=k:v,...]
//!   [validate-only]`, `delete-topic NAME`, `create-partitions NAME count=N [assign=...]`.
//! * `alter-partition ID TOPIC-P isr=1,2 [leader-epoch=N] [partition-epoch=N] [recovering]`:
//!   AlterPartition from partition leader ID; the epochs default to the committed image's.
//! * `reassign TOPIC-P replicas=1,2,3` or `reassign TOPIC-P cancel`;
//!   `list-reassignments [TOPIC-P ...]`.
//! * `elect-leaders preferred|unclean [TOPIC-P ...]` (none named: every partition).
//! * `alter-config topic=NAME|broker=ID|broker=default set:KEY=VALUE delete:KEY append:KEY=V
//!   subtract:KEY=V [validate-only]`: IncrementalAlterConfigs.
//! * `alter-quota user=NAME|client-id=NAME set:KEY=VALUE delete:KEY [validate-only]`:
//!   AlterClientQuotas of one entity.
//! * `create-acl PRINCIPAL allow|deny OPERATION topic=NAME|group=NAME|cluster [prefixed]
//!   [host=H]`, `delete-acls [principal=P] [topic=NAME|group=NAME|cluster] [operation=OP]`,
//!   `describe-acls [principal=P] [topic=...]`.
//! * `create-token [owner=P] [renewers=P,...] [max-lifetime-ms=N]`, `renew-token N
//!   period-ms=N`, `expire-token N period-ms=N` (N: the Nth token created).
//! * `update-features FEATURE=LEVEL ... [type=upgrade|safe-downgrade|unsafe-downgrade]
//!   [validate-only]`.

use kraftd::controller::acls::{operation, pattern, permission, resource};
use kraftd::controller::quorum::request::{AclRequest, ControllerRequest as R};
use kraftd::protocol::codec::{Message, Uuid};
use kraftd::protocol::features::SUPPORTED_FEATURES;
use kraftd::protocol::messages::*;

use super::args::{id_list, topic_partition, Args};
use super::{Ask, Known, Learn, CLUSTER_ID};

/// `SecurityProtocol.PLAINTEXT`.
const PLAINTEXT: i16 = 0;

/// A deterministic id: `kind` and `n` in its last bytes.
fn uuid(kind: u8, a: i32, b: i32) -> Uuid {
    let mut id = [0u8; 16];
    id[0] = 0x40 | kind;
    id[8] = 0x80;
    id[12..14].copy_from_slice(&(a as u16).to_be_bytes());
    id[14..16].copy_from_slice(&(b as u16).to_be_bytes());
    Uuid(id)
}

fn version<M: Message>(args: &mut Args) -> Result<i16, String> {
    let v = args.number("v")?.unwrap_or(M::HIGHEST_VERSION);
    if !(M::LOWEST_VERSION..=M::HIGHEST_VERSION).contains(&v) {
        return Err(format!(
            "{} has versions {}..{}",
            M::NAME,
            M::LOWEST_VERSION,
            M::HIGHEST_VERSION
        ));
    }
    Ok(v)
}

fn ask(request: R, version: i16) -> Ask {
    Ask {
        request,
        version,
        learn: Learn::Nothing,
    }
}

/// The request a directive names, from what the node knows (epochs, tokens, the image).
pub fn build(node: &Known<'_>, args: &mut Args) -> Result<Ask, String> {
    let forwarded = args.flag("forwarded");
    let name = args.name.clone();
    let ask = match name.as_str() {
        "register-broker" => register_broker(node, args)?,
        "heartbeat" => heartbeat(node, args)?,
        "unregister-broker" => {
            let v = version::<UnregisterBrokerRequest>(args)?;
            let r = UnregisterBrokerRequest {
                broker_id: args.id("a broker id")?,
                ..Default::default()
            };
            ask(R::UnregisterBroker(r, v), v)
        }
        "allocate-producer-ids" => {
            let v = version::<AllocateProducerIdsRequest>(args)?;
            let id = args.id("a broker id")?;
            let r = AllocateProducerIdsRequest {
                broker_id: id,
                broker_epoch: node.broker_epoch(id, args)?,
                ..Default::default()
            };
            ask(R::AllocateProducerIds(r, v), v)
        }
        "register-controller" => register_controller(args)?,
        "create-topic" => create_topic(args)?,
        "delete-topic" => {
            let v = version::<DeleteTopicsRequest>(args)?;
            let names = args.rest();
            let mut r = DeleteTopicsRequest {
                timeout_ms: 30_000,
                ..Default::default()
            };
            if v >= 6 {
                r.topics = names
                    .into_iter()
                    .map(|n| delete_topics_request::DeleteTopicState {
                        name: Some(n),
                        ..Default::default()
                    })
                    .collect();
            } else {
                r.topic_names = names;
            }
            ask(R::DeleteTopics(r, v), v)
        }
        "create-partitions" => {
            let v = version::<CreatePartitionsRequest>(args)?;
            let topic = args.word("a topic")?;
            let count = args
                .number("count")?
                .ok_or("`create-partitions` needs count=N")?;
            let assignments = args.key("assign").map(|a| assignments(&a)).transpose()?;
            let r = CreatePartitionsRequest {
                topics: vec![create_partitions_request::CreatePartitionsTopic {
                    name: topic,
                    count,
                    assignments: assignments.map(|a| {
                        a.into_iter()
                            .map(|broker_ids| {
                                create_partitions_request::CreatePartitionsAssignment {
                                    broker_ids,
                                    ..Default::default()
                                }
                            })
                            .collect()
                    }),
                    ..Default::default()
                }],
                timeout_ms: 30_000,
                validate_only: args.flag("validate-only"),
                ..Default::default()
            };
            ask(R::CreatePartitions(r, v), v)
        }
        "alter-partition" => alter_partition(node, args)?,
        "reassign" => {
            let v = version::<AlterPartitionReassignmentsRequest>(args)?;
            let (topic, partition) = topic_partition(&args.word("a partition")?)?;
            let replicas = if args.flag("cancel") {
                None
            } else {
                Some(
                    args.ids("replicas")?
                        .ok_or("`reassign` needs replicas=1,2,3 or cancel")?,
                )
            };
            let r = AlterPartitionReassignmentsRequest {
                timeout_ms: 30_000,
                allow_replication_factor_change: true,
                topics: vec![alter_partition_reassignments_request::ReassignableTopic {
                    name: topic,
                    partitions: vec![
                        alter_partition_reassignments_request::ReassignablePartition {
                            partition_index: partition,
                            replicas,
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                }],
                ..Default::default()
            };
            ask(R::AlterPartitionReassignments(r, v), v)
        }
        "list-reassignments" => {
            let v = version::<ListPartitionReassignmentsRequest>(args)?;
            let named = partitions_by_topic(args.rest())?;
            let r = ListPartitionReassignmentsRequest {
                timeout_ms: 30_000,
                topics: named.map(|ts| {
                    ts.into_iter()
                        .map(|(name, partition_indexes)| {
                            list_partition_reassignments_request::ListPartitionReassignmentsTopics {
                                name,
                                partition_indexes,
                                ..Default::default()
                            }
                        })
                        .collect()
                }),
                ..Default::default()
            };
            ask(R::ListPartitionReassignments(r, v), v)
        }
        "elect-leaders" => {
            let v = version::<ElectLeadersRequest>(args)?;
            let election_type = match args.word("preferred or unclean")?.as_str() {
                "preferred" => 0,
                "unclean" => 1,
                other => return Err(format!("`{other}`: preferred or unclean")),
            };
            let named = partitions_by_topic(args.rest())?;
            let r = ElectLeadersRequest {
                election_type,
                topic_partitions: named.map(|ts| {
                    ts.into_iter()
                        .map(
                            |(topic, partitions)| elect_leaders_request::TopicPartitions {
                                topic,
                                partitions,
                                ..Default::default()
                            },
                        )
                        .collect()
                }),
                timeout_ms: 30_000,
                ..Default::default()
            };
            ask(R::ElectLeaders(r, v), v)
        }
        "alter-config" => alter_config(args)?,
        "alter-quota" => alter_quota(args)?,
        "create-acl" => create_acl(args)?,
        "delete-acls" => {
            let v = version::<DeleteAclsRequest>(args)?;
            let f = acl_filter(args)?;
            let r = DeleteAclsRequest {
                filters: vec![delete_acls_request::DeleteAclsFilter {
                    resource_type_filter: f.0,
                    resource_name_filter: f.1,
                    pattern_type_filter: f.2,
                    principal_filter: f.3,
                    host_filter: None,
                    operation: f.4,
                    permission_type: permission::ANY,
                    ..Default::default()
                }],
                ..Default::default()
            };
            ask(R::Acls(AclRequest::Delete(r), v), v)
        }
        "describe-acls" => {
            let v = version::<DescribeAclsRequest>(args)?;
            let f = acl_filter(args)?;
            let r = DescribeAclsRequest {
                resource_type_filter: f.0,
                resource_name_filter: f.1,
                pattern_type_filter: f.2,
                principal_filter: f.3,
                host_filter: None,
                operation: f.4,
                permission_type: permission::ANY,
                ..Default::default()
            };
            ask(R::Acls(AclRequest::Describe(r), v), v)
        }
        "create-token" => {
            let v = version::<CreateDelegationTokenRequest>(args)?;
            let owner = args.key("owner");
            let (owner_type, owner_name) = match owner.as_deref().map(|o| o.split_once(':')) {
                None => (None, None),
                Some(Some((t, n))) => (Some(t.to_string()), Some(n.to_string())),
                Some(None) => return Err("`owner=` takes a principal (e.g. User:alice)".into()),
            };
            let renewers = match args.key("renewers") {
                None => Vec::new(),
                Some(list) => list
                    .split(',')
                    .map(|p| {
                        let (t, n) = p
                            .split_once(':')
                            .ok_or_else(|| format!("`{p}` is not a principal"))?;
                        Ok(create_delegation_token_request::CreatableRenewers {
                            principal_type: t.into(),
                            principal_name: n.into(),
                            ..Default::default()
                        })
                    })
                    .collect::<Result<_, String>>()?,
            };
            let r = CreateDelegationTokenRequest {
                owner_principal_type: owner_type,
                owner_principal_name: owner_name,
                renewers,
                max_lifetime_ms: args.number("max-lifetime-ms")?.unwrap_or(-1),
                ..Default::default()
            };
            Ask {
                request: R::CreateDelegationToken(r, v, false),
                version: v,
                learn: Learn::Token,
            }
        }
        "renew-token" => {
            let v = version::<RenewDelegationTokenRequest>(args)?;
            let r = RenewDelegationTokenRequest {
                hmac: node.token(args)?,
                renew_period_ms: args.number("period-ms")?.unwrap_or(-1),
                ..Default::default()
            };
            ask(R::RenewDelegationToken(r, v, false), v)
        }
        "expire-token" => {
            let v = version::<ExpireDelegationTokenRequest>(args)?;
            let r = ExpireDelegationTokenRequest {
                hmac: node.token(args)?,
                expiry_time_period_ms: args.number("period-ms")?.unwrap_or(-1),
                ..Default::default()
            };
            ask(R::ExpireDelegationToken(r, v, false), v)
        }
        "update-features" => {
            let v = version::<UpdateFeaturesRequest>(args)?;
            let upgrade_type = match args.key("type").as_deref() {
                None | Some("upgrade") => 1,
                Some("safe-downgrade") => 2,
                Some("unsafe-downgrade") => 3,
                Some(other) => {
                    return Err(format!(
                        "`type={other}`: upgrade, safe-downgrade or unsafe-downgrade"
                    ))
                }
            };
            let validate_only = args.flag("validate-only");
            let feature_updates = args
                .take_keys(|k| k.contains('.'))
                .into_iter()
                .map(|(feature, level)| {
                    Ok(update_features_request::FeatureUpdateKey {
                        feature,
                        max_version_level: level
                            .parse()
                            .map_err(|_| format!("`{level}` is not a level"))?,
                        allow_downgrade: upgrade_type != 1,
                        upgrade_type,
                        ..Default::default()
                    })
                })
                .collect::<Result<_, String>>()?;
            let r = UpdateFeaturesRequest {
                timeout_ms: 60_000,
                feature_updates,
                validate_only,
                ..Default::default()
            };
            ask(R::UpdateFeatures(r, v), v)
        }
        other => return Err(format!("unknown directive `{other}`")),
    };
    Ok(if forwarded {
        Ask {
            request: ask.request.forwarded(),
            ..ask
        }
    } else {
        ask
    })
}

impl Known<'_> {
    /// Broker `id`'s epoch: `epoch=N`, else the one its registration's answer gave.
    fn broker_epoch(&self, id: i32, args: &mut Args) -> Result<i64, String> {
        match args.number("epoch")? {
            Some(e) => Ok(e),
            None => self
                .requester
                .broker_epochs
                .get(&id)
                .copied()
                .ok_or_else(|| format!("broker {id} has no epoch yet (or say epoch=N)")),
        }
    }

    /// The HMAC of the token the next word numbers.
    fn token(&self, args: &mut Args) -> Result<Vec<u8>, String> {
        let n = args.id("a token number (1 is the first created)")?;
        usize::try_from(n - 1)
            .ok()
            .and_then(|i| self.requester.tokens.get(i))
            .cloned()
            .ok_or_else(|| format!("no token {n} was created"))
    }
}

fn register_broker(node: &Known<'_>, args: &mut Args) -> Result<Ask, String> {
    let v = version::<BrokerRegistrationRequest>(args)?;
    let id = args.id("a broker id")?;
    let incarnation = args.number("incarnation")?.unwrap_or(1);
    let previous_broker_epoch = if args.flag("clean") {
        node.broker_epoch(id, args)?
    } else {
        -1
    };
    let r = BrokerRegistrationRequest {
        broker_id: id,
        cluster_id: args.key("cluster-id").unwrap_or_else(|| CLUSTER_ID.into()),
        incarnation_id: uuid(1, id, incarnation),
        listeners: vec![broker_registration_request::Listener {
            name: "PLAINTEXT".into(),
            host: "localhost".into(),
            port: 9092,
            security_protocol: PLAINTEXT,
            ..Default::default()
        }],
        features: SUPPORTED_FEATURES
            .iter()
            .map(|f| broker_registration_request::Feature {
                name: f.name.into(),
                min_supported_version: f.min,
                max_supported_version: f.max,
                ..Default::default()
            })
            .collect(),
        rack: args.key("rack"),
        is_migrating_zk_broker: false,
        log_dirs: vec![uuid(2, id, 0)],
        previous_broker_epoch,
        ..Default::default()
    };
    Ok(Ask {
        request: R::BrokerRegistration(r, v),
        version: v,
        learn: Learn::BrokerEpoch(id),
    })
}

fn heartbeat(node: &Known<'_>, args: &mut Args) -> Result<Ask, String> {
    let v = version::<BrokerHeartbeatRequest>(args)?;
    let id = args.id("a broker id")?;
    let r = BrokerHeartbeatRequest {
        broker_id: id,
        broker_epoch: node.broker_epoch(id, args)?,
        current_metadata_offset: args.number("offset")?.unwrap_or(node.committed),
        want_fence: args.flag("fence"),
        want_shut_down: args.flag("shutdown"),
        ..Default::default()
    };
    Ok(ask(R::BrokerHeartbeat(r, v), v))
}

fn register_controller(args: &mut Args) -> Result<Ask, String> {
    let v = version::<ControllerRegistrationRequest>(args)?;
    let id = args.id("a controller id")?;
    let incarnation = args.number("incarnation")?.unwrap_or(1);
    let r = ControllerRegistrationRequest {
        controller_id: id,
        incarnation_id: uuid(3, id, incarnation),
        zk_migration_ready: false,
        listeners: vec![controller_registration_request::Listener {
            name: "CONTROLLER".into(),
            host: "localhost".into(),
            port: 9090 + id as u16,
            security_protocol: PLAINTEXT,
            ..Default::default()
        }],
        features: SUPPORTED_FEATURES
            .iter()
            .map(|f| controller_registration_request::Feature {
                name: f.name.into(),
                min_supported_version: f.min,
                max_supported_version: f.max,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    Ok(ask(R::Register(r), v))
}

/// `1,2,3/2,3,1` -> [[1, 2, 3], [2, 3, 1]].
fn assignments(value: &str) -> Result<Vec<Vec<i32>>, String> {
    value.split('/').map(|a| id_list("assign", a)).collect()
}

fn create_topic(args: &mut Args) -> Result<Ask, String> {
    let v = version::<CreateTopicsRequest>(args)?;
    let name = args.word("a topic name")?;
    let assignments = args.key("assign").map(|a| assignments(&a)).transpose()?;
    let configs = match args.key("configs") {
        None => Vec::new(),
        Some(list) => list
            .split(',')
            .map(|c| {
                let (k, v) = c
                    .split_once(':')
                    .ok_or_else(|| format!("`configs`: `{c}` is not key:value"))?;
                Ok(create_topics_request::CreatableTopicConfig {
                    name: k.into(),
                    value: Some(v.into()),
                    ..Default::default()
                })
            })
            .collect::<Result<_, String>>()?,
    };
    let r = CreateTopicsRequest {
        topics: vec![create_topics_request::CreatableTopic {
            name,
            num_partitions: args.number("partitions")?.unwrap_or(-1),
            replication_factor: args.number("rf")?.unwrap_or(-1),
            assignments: assignments
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(
                    |(i, broker_ids)| create_topics_request::CreatableReplicaAssignment {
                        partition_index: i as i32,
                        broker_ids,
                        ..Default::default()
                    },
                )
                .collect(),
            configs,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        validate_only: args.flag("validate-only"),
        ..Default::default()
    };
    Ok(ask(R::CreateTopics(r, v), v))
}

fn alter_partition(node: &Known<'_>, args: &mut Args) -> Result<Ask, String> {
    let v = version::<AlterPartitionRequest>(args)?;
    let leader = args.id("the partition leader's broker id")?;
    let (topic, partition) = topic_partition(&args.word("a partition")?)?;
    let isr = args
        .ids("isr")?
        .ok_or("`alter-partition` needs isr=1,2,3")?;
    // The leader's view: the published (committed) image.
    let image = node.image;
    let topic_id = image.topics.by_name.get(topic.as_str()).copied();
    let registration = topic_id
        .and_then(|id| image.topics.by_id.get(&id))
        .and_then(|t| t.partitions.get(&partition));
    let leader_epoch = match (args.number("leader-epoch")?, registration) {
        (Some(e), _) => e,
        (None, Some(r)) => r.leader_epoch,
        (None, None) => {
            return Err(format!(
                "no partition {topic}-{partition}: say leader-epoch=N"
            ))
        }
    };
    let partition_epoch = match (args.number("partition-epoch")?, registration) {
        (Some(e), _) => e,
        (None, Some(r)) => r.partition_epoch,
        (None, None) => {
            return Err(format!(
                "no partition {topic}-{partition}: say partition-epoch=N"
            ))
        }
    };
    let new_isr_with_epochs = isr
        .iter()
        .map(|b| alter_partition_request::BrokerState {
            broker_id: *b,
            broker_epoch: node.requester.broker_epochs.get(b).copied().unwrap_or(-1),
            ..Default::default()
        })
        .collect();
    let r = AlterPartitionRequest {
        broker_id: leader,
        broker_epoch: node.broker_epoch(leader, args)?,
        topics: vec![alter_partition_request::TopicData {
            topic_id: topic_id.unwrap_or(Uuid::ZERO),
            partitions: vec![alter_partition_request::PartitionData {
                partition_index: partition,
                leader_epoch,
                new_isr: if v < 3 { isr } else { Vec::new() },
                new_isr_with_epochs: if v >= 3 {
                    new_isr_with_epochs
                } else {
                    Vec::new()
                },
                leader_recovery_state: if args.flag("recovering") { 1 } else { 0 },
                partition_epoch,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    Ok(ask(R::AlterPartition(r, v), v))
}

/// Partitions by topic, in the order first named.
type Named = Vec<(String, Vec<i32>)>;

/// `foo-0 foo-1 bar-0` -> [(foo, [0, 1]), (bar, [0])]; none named -> None (every partition).
fn partitions_by_topic(words: Vec<String>) -> Result<Option<Named>, String> {
    if words.is_empty() {
        return Ok(None);
    }
    let mut out: Named = Vec::new();
    for w in words {
        let (topic, p) = topic_partition(&w)?;
        match out.iter_mut().find(|(t, _)| *t == topic) {
            Some((_, ps)) => ps.push(p),
            None => out.push((topic, vec![p])),
        }
    }
    Ok(Some(out))
}

fn alter_config(args: &mut Args) -> Result<Ask, String> {
    let v = version::<IncrementalAlterConfigsRequest>(args)?;
    let (resource_type, resource_name) = if let Some(t) = args.key("topic") {
        (2, t)
    } else if let Some(b) = args.key("broker") {
        (4, if b == "default" { String::new() } else { b })
    } else if let Some(g) = args.key("group") {
        (32, g)
    } else {
        return Err("`alter-config` needs topic=, broker= (or broker=default) or group=".into());
    };
    let validate_only = args.flag("validate-only");
    let op = |prefix: &str| match prefix {
        "set" => Ok(0),
        "delete" => Ok(1),
        "append" => Ok(2),
        "subtract" => Ok(3),
        other => Err(format!("`{other}:`: set, delete, append or subtract")),
    };
    let mut configs = Vec::new();
    for (key, value) in args.take_keys(|k| k.contains(':')) {
        let (prefix, name) = key.split_once(':').expect("picked");
        configs.push(incremental_alter_configs_request::AlterableConfig {
            name: name.into(),
            config_operation: op(prefix)?,
            value: Some(value),
            ..Default::default()
        });
    }
    for word in args.rest() {
        let (prefix, name) = word.split_once(':').ok_or_else(|| {
            format!("`{word}`: e.g. set:retention.ms=1000 or delete:retention.ms")
        })?;
        configs.push(incremental_alter_configs_request::AlterableConfig {
            name: name.into(),
            config_operation: op(prefix)?,
            value: None,
            ..Default::default()
        });
    }
    let r = IncrementalAlterConfigsRequest {
        resources: vec![incremental_alter_configs_request::AlterConfigsResource {
            resource_type,
            resource_name,
            configs,
            ..Default::default()
        }],
        validate_only,
        ..Default::default()
    };
    Ok(ask(R::IncrementalAlterConfigs(r, v, false), v))
}

fn alter_quota(args: &mut Args) -> Result<Ask, String> {
    let v = version::<AlterClientQuotasRequest>(args)?;
    let entity: Vec<alter_client_quotas_request::EntityData> = ["user", "client-id"]
        .into_iter()
        .filter_map(|ty| {
            args.key(ty)
                .map(|name| alter_client_quotas_request::EntityData {
                    entity_type: ty.into(),
                    entity_name: (name != "default").then_some(name),
                    ..Default::default()
                })
        })
        .collect();
    if entity.is_empty() {
        return Err("`alter-quota` needs user=NAME or client-id=NAME".into());
    }
    let validate_only = args.flag("validate-only");
    let mut ops = Vec::new();
    for (key, value) in args.take_keys(|k| k.starts_with("set:")) {
        let value = value
            .parse()
            .map_err(|_| format!("`{key}={value}`: `{value}` is not a number"))?;
        ops.push(alter_client_quotas_request::OpData {
            key: key["set:".len()..].into(),
            value,
            remove: false,
            ..Default::default()
        });
    }
    for word in args.rest() {
        let key = word
            .strip_prefix("delete:")
            .ok_or_else(|| format!("`{word}`: set:KEY=VALUE or delete:KEY"))?;
        ops.push(alter_client_quotas_request::OpData {
            key: key.into(),
            remove: true,
            ..Default::default()
        });
    }
    let r = AlterClientQuotasRequest {
        entries: vec![alter_client_quotas_request::EntryData {
            entity,
            ops,
            ..Default::default()
        }],
        validate_only,
        ..Default::default()
    };
    Ok(ask(R::AlterClientQuotas(r, v), v))
}

fn acl_operation(name: &str) -> Result<i8, String> {
    Ok(match name {
        "any" => operation::ANY,
        "all" => operation::ALL,
        "read" => operation::READ,
        "write" => operation::WRITE,
        "create" => operation::CREATE,
        "delete" => operation::DELETE,
        "alter" => operation::ALTER,
        "describe" => operation::DESCRIBE,
        "cluster-action" => operation::CLUSTER_ACTION,
        "describe-configs" => operation::DESCRIBE_CONFIGS,
        "alter-configs" => operation::ALTER_CONFIGS,
        "idempotent-write" => operation::IDEMPOTENT_WRITE,
        "create-tokens" => operation::CREATE_TOKENS,
        "describe-tokens" => operation::DESCRIBE_TOKENS,
        other => return Err(format!("`{other}` is not an ACL operation")),
    })
}

/// `topic=NAME`, `group=NAME`, `user=NAME` or the word `cluster`: type and name.
fn acl_resource(args: &mut Args) -> Option<(i8, String)> {
    if args.flag("cluster") {
        return Some((resource::CLUSTER, "kafka-cluster".into()));
    }
    for (key, ty) in [
        ("topic", resource::TOPIC),
        ("group", resource::GROUP),
        ("user", resource::USER),
    ] {
        if let Some(name) = args.key(key) {
            return Some((ty, name));
        }
    }
    None
}

fn create_acl(args: &mut Args) -> Result<Ask, String> {
    let v = version::<CreateAclsRequest>(args)?;
    let principal = args.word("a principal")?;
    let permission_type = match args.word("allow or deny")?.as_str() {
        "allow" => permission::ALLOW,
        "deny" => permission::DENY,
        other => return Err(format!("`{other}`: allow or deny")),
    };
    let op = acl_operation(&args.word("an operation")?)?;
    let (resource_type, resource_name) =
        acl_resource(args).ok_or("`create-acl` needs topic=, group=, user= or cluster")?;
    let r = CreateAclsRequest {
        creations: vec![create_acls_request::AclCreation {
            resource_type,
            resource_name,
            resource_pattern_type: if args.flag("prefixed") {
                pattern::PREFIXED
            } else {
                pattern::LITERAL
            },
            principal,
            host: args.key("host").unwrap_or_else(|| "*".into()),
            operation: op,
            permission_type,
            ..Default::default()
        }],
        ..Default::default()
    };
    Ok(ask(R::Acls(AclRequest::Create(r), v), v))
}

/// A filter: resource type, name, pattern type, principal, operation (ANY where unsaid).
type Filter = (i8, Option<String>, i8, Option<String>, i8);

fn acl_filter(args: &mut Args) -> Result<Filter, String> {
    let (ty, name) = match acl_resource(args) {
        Some((ty, name)) => (ty, Some(name)),
        None => (resource::ANY, None),
    };
    let pattern = if name.is_some() {
        pattern::LITERAL
    } else {
        pattern::ANY
    };
    let op = match args.key("operation") {
        Some(op) => acl_operation(&op)?,
        None => operation::ANY,
    };
    Ok((ty, name, pattern, args.key("principal"), op))
}
