//! CreateTopics at the active controller (Kafka 4.4's `ReplicationControlManager.createTopics`).
//!
//! The whole request is refused if it asks for more than 10,000 partitions. Then, topic by
//! topic in Java's passes: names (validity, then collisions), topics that exist, configs
//! without values, then each remaining topic's configs and partitions. A created topic is a
//! TopicRecord, its ConfigRecords and one PartitionRecord per partition, all in one batch with
//! the other topics' (none when validating only; more than 10,000 records refuse the request).

use std::collections::BTreeMap;

use super::errors::{AssignmentError, BatchError, TopicError};
use super::names::{has_collision_chars, unify_collision_chars, validate};
use super::placement::{place, UsableBroker};
use super::{
    active_of, has_uncordoned_dirs, metadata_version, partition_record, TopicRandom, TopicsContext,
    MAX_PARTITIONS_PER_BATCH, MAX_RECORDS_PER_USER_OP,
};
use crate::controller::configs::{BROKER_RESOURCE, TOPIC_RESOURCE};
use crate::controller::java::{string_map_order, DEFAULT_HASH_MAP_CAPACITY};
use crate::controller::topic_configs::{
    effective_topic_configs, validate_topic_configs, ConfigError, EffectiveConfig,
};
use crate::controller::{ControllerResult, MetadataImage};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::{ConfigRecord, TopicRecord};
use crate::protocol::records::MetadataRecordAndVersion;

/// One topic to create, as the request gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTopic {
    pub name: String,
    /// -1: `num.partitions`.
    pub num_partitions: i32,
    /// -1: `default.replication.factor`.
    pub replication_factor: i16,
    /// Manual assignments: partition index and brokers, in request order.
    pub assignments: Vec<(i32, Vec<i32>)>,
    /// Configs in request order (`None`: no value).
    pub configs: Vec<(String, Option<String>)>,
}

/// A topic created (or that would be, when validating only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedTopic {
    pub id: Uuid,
    pub num_partitions: i32,
    pub replication_factor: i16,
    /// Every topic config's effective value, sorted by name.
    pub configs: Vec<EffectiveConfig>,
}

/// Each requested topic, in request order, with its outcome.
pub type CreateOutcomes = Vec<(String, Result<CreatedTopic, TopicError>)>;

/// `validateTotalNumberOfPartitions`.
fn check_total_partitions(topics: &[NewTopic], default_partitions: i32) -> Result<(), BatchError> {
    let mut total: i64 = 0;
    for t in topics {
        total += if !t.assignments.is_empty() {
            t.assignments.len() as i64
        } else if t.num_partitions == -1 {
            i64::from(default_partitions)
        } else if t.num_partitions > 0 {
            i64::from(t.num_partitions)
        } else {
            0
        };
        if total > MAX_PARTITIONS_PER_BATCH {
            return Err(BatchError::TooManyPartitions);
        }
    }
    Ok(())
}

/// Decides CreateTopics for `topics` (already screened by [`super::api`]: unique names, no
/// metadata topic) against the latest image, placing on `brokers`.
pub fn create_topics(
    image: &MetadataImage,
    brokers: &[UsableBroker],
    ctx: &TopicsContext,
    topics: &[NewTopic],
    validate_only: bool,
    random: &mut TopicRandom,
) -> ControllerResult<Result<CreateOutcomes, BatchError>> {
    if let Err(e) = check_total_partitions(topics, ctx.default_partitions) {
        return ControllerResult::reply_only(Err(e));
    }
    let mut errors: BTreeMap<&str, TopicError> = BTreeMap::new();
    check_names(image, topics, &mut errors);
    for t in topics {
        if image.topics.by_name.contains_key(t.name.as_str()) {
            errors.insert(&t.name, TopicError::AlreadyExists(t.name.clone()));
        }
    }
    // `computeConfigChanges`: a config without a value refuses the topic.
    for t in topics {
        if errors.contains_key(t.name.as_str()) {
            continue;
        }
        let nulls: Vec<String> = t
            .configs
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        if !nulls.is_empty() {
            errors.insert(&t.name, TopicError::Config(ConfigError::NullValues(nulls)));
        }
    }
    let mut records = Vec::new();
    let mut created: BTreeMap<&str, CreatedTopic> = BTreeMap::new();
    for t in topics {
        if errors.contains_key(t.name.as_str()) {
            continue;
        }
        match create_topic(image, brokers, ctx, t, random, &mut records) {
            Ok(c) => {
                created.insert(&t.name, c);
            }
            Err(e) => {
                errors.insert(&t.name, e);
            }
        }
    }
    if records.len() > MAX_RECORDS_PER_USER_OP {
        return ControllerResult::reply_only(Err(BatchError::TooManyRecords));
    }
    let outcomes = topics
        .iter()
        .map(|t| {
            let outcome = match errors.remove(t.name.as_str()) {
                Some(e) => Err(e),
                None => Ok(created
                    .get(t.name.as_str())
                    .expect("a topic without an error was created")
                    .clone()),
            };
            (t.name.clone(), outcome)
        })
        .collect();
    if validate_only {
        records.clear();
    }
    ControllerResult::new(records, Ok(outcomes))
}

/// `validateNewTopicNames`: invalid names, then names colliding with an existing topic.
fn check_names<'t>(
    image: &MetadataImage,
    topics: &'t [NewTopic],
    errors: &mut BTreeMap<&'t str, TopicError>,
) {
    let mut colliding: BTreeMap<String, &str> = BTreeMap::new();
    for name in image.topics.by_name.keys() {
        if has_collision_chars(name) {
            colliding.entry(unify_collision_chars(name)).or_insert(name);
        }
    }
    for t in topics {
        if errors.contains_key(t.name.as_str()) {
            continue;
        }
        if let Err(e) = validate(&t.name) {
            errors.insert(&t.name, TopicError::InvalidName(e));
        }
        if has_collision_chars(&t.name) {
            if let Some(existing) = colliding.get(&unify_collision_chars(&t.name)) {
                errors.insert(
                    &t.name,
                    TopicError::Collides {
                        name: t.name.clone(),
                        existing: existing.to_string(),
                    },
                );
            }
        }
    }
}

/// One topic: its configs checked, its partitions assigned or placed, its records appended.
fn create_topic(
    image: &MetadataImage,
    brokers: &[UsableBroker],
    ctx: &TopicsContext,
    t: &NewTopic,
    random: &mut TopicRandom,
    records: &mut Vec<MetadataRecordAndVersion>,
) -> Result<CreatedTopic, TopicError> {
    let configs: Vec<(String, String)> = t
        .configs
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
        .collect();
    if !configs.is_empty() {
        validate_topic_configs(&configs, &ctx.statics).map_err(TopicError::Config)?;
    }
    let partitions = if !t.assignments.is_empty() {
        manual_partitions(image, t)?
    } else if t.replication_factor < -1 || t.replication_factor == 0 {
        return Err(TopicError::NonPositiveReplicationFactor);
    } else if t.num_partitions < -1 || t.num_partitions == 0 {
        return Err(TopicError::NonPositivePartitionCount);
    } else {
        let count = match t.num_partitions {
            -1 => ctx.default_partitions,
            n => n,
        };
        let rf = match t.replication_factor {
            -1 => ctx.default_replication_factor,
            n => n,
        };
        let unreplicable = |reason| TopicError::Unreplicable {
            replication_factor: rf,
            reason,
        };
        let placed =
            place(count, rf, brokers, &mut random.placer).map_err(|e| unreplicable(Some(e)))?;
        let mut parts = Vec::with_capacity(placed.len());
        for replicas in placed {
            let isr = active_of(image, &replicas);
            if isr.is_empty() {
                return Err(unreplicable(None));
            }
            parts.push((replicas, isr));
        }
        parts
    };
    let id = random.ids.uuid();
    let creation: BTreeMap<String, String> = configs.iter().cloned().collect();
    let node = image
        .configs
        .resources
        .get(&(BROKER_RESOURCE, ctx.node_id.to_string()));
    let cluster = image
        .configs
        .resources
        .get(&(BROKER_RESOURCE, String::new()));
    let created = CreatedTopic {
        id,
        num_partitions: partitions.len() as i32,
        replication_factor: partitions[0].0.len() as i16,
        configs: effective_topic_configs(&creation, node, cluster, &ctx.statics),
    };
    records.push(MetadataRecordAndVersion::new(
        TopicRecord {
            name: t.name.clone(),
            topic_id: id,
            ..Default::default()
        },
        0,
    ));
    for (name, value) in string_map_order(DEFAULT_HASH_MAP_CAPACITY, &configs) {
        records.push(MetadataRecordAndVersion::new(
            ConfigRecord {
                resource_type: TOPIC_RESOURCE,
                resource_name: t.name.clone(),
                name,
                value: Some(value),
                ..Default::default()
            },
            0,
        ));
    }
    let mv = metadata_version(image);
    for (i, (replicas, isr)) in partitions.into_iter().enumerate() {
        records.push(partition_record(image, mv, id, i as i32, &replicas, isr));
    }
    Ok(created)
}

/// A partition's replicas and ISR.
type Replicas = (Vec<i32>, Vec<i32>);

/// A topic's manual assignments: each partition's replicas and ISR, by partition index.
fn manual_partitions(image: &MetadataImage, t: &NewTopic) -> Result<Vec<Replicas>, TopicError> {
    if t.replication_factor != -1 {
        return Err(TopicError::AssignmentWithReplicationFactor);
    }
    if t.num_partitions != -1 {
        return Err(TopicError::AssignmentWithPartitionCount);
    }
    let mut parts: BTreeMap<i32, (Vec<i32>, Vec<i32>)> = BTreeMap::new();
    let mut rf = None;
    for (index, replicas) in &t.assignments {
        if parts.contains_key(index) {
            return Err(TopicError::Assignment(AssignmentError::DuplicatePartition(
                *index,
            )));
        }
        validate_manual_assignment(image, replicas, rf).map_err(TopicError::Assignment)?;
        rf = Some(replicas.len());
        let isr = active_of(image, replicas);
        if isr.is_empty() {
            return Err(TopicError::Assignment(AssignmentError::AllInactive(*index)));
        }
        parts.insert(*index, (replicas.clone(), isr));
    }
    let count = parts.len() as i32;
    if (0..count).any(|i| !parts.contains_key(&i)) {
        return Err(TopicError::Assignment(AssignmentError::NotConsecutive));
    }
    Ok(parts.into_values().collect())
}

/// `validateManualPartitionAssignment`: replicas present, registered, with a directory that is
/// not cordoned, each once, and as many as the other partitions have.
pub(crate) fn validate_manual_assignment(
    image: &MetadataImage,
    replicas: &[i32],
    expected: Option<usize>,
) -> Result<(), AssignmentError> {
    if replicas.is_empty() {
        return Err(AssignmentError::EmptyReplicas);
    }
    let mut sorted = replicas.to_vec();
    sorted.sort_unstable();
    let mut previous = None;
    for b in &sorted {
        let Some(reg) = image.cluster.brokers.get(b) else {
            return Err(AssignmentError::UnknownBroker(*b));
        };
        if !has_uncordoned_dirs(&reg.directories, reg.cordoned_directories.as_deref()) {
            return Err(AssignmentError::AllDirectoriesCordoned(*b));
        }
        if previous == Some(*b) {
            return Err(AssignmentError::BrokerTwice(*b));
        }
        previous = Some(*b);
    }
    if let Some(expected) = expected {
        if sorted.len() != expected {
            return Err(AssignmentError::InconsistentReplicationFactor {
                replicas: sorted.len(),
                expected,
            });
        }
    }
    Ok(())
}
