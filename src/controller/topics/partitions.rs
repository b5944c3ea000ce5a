//! CreatePartitions at the active controller (Kafka 4.4's
//! `ReplicationControlManager.createPartitions`): more than 10,000 new partitions in one
//! request refuse it whole; then each topic may only grow, with manual assignments (one per
//! new partition, as many replicas as the topic has) or placed replicas. New partitions are
//! PartitionRecords, in one batch (none when validating only).

use super::create::validate_manual_assignment;
use super::errors::{AssignmentError, BatchError, TopicError};
use super::placement::{place, UsableBroker};
use super::{active_of, metadata_version, partition_record, TopicRandom, MAX_PARTITIONS_PER_BATCH};
use crate::controller::{ControllerResult, MetadataImage};
use crate::protocol::records::MetadataRecordAndVersion;

/// One topic to grow, as the request gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPartitions {
    pub name: String,
    /// The partition count wanted.
    pub count: i32,
    /// Brokers for each new partition, if given.
    pub assignments: Option<Vec<Vec<i32>>>,
}

/// Each topic, in the order given, with its outcome.
pub type PartitionsOutcomes = Vec<(String, Result<(), TopicError>)>;

/// `validateTotalNumberOfPartitions` of CreatePartitions: the growth of the existing topics.
fn check_total(image: &MetadataImage, topics: &[NewPartitions]) -> Result<(), BatchError> {
    let mut total: i64 = 0;
    for t in topics {
        if t.count < 0 {
            continue;
        }
        let Some(topic) = image
            .topics
            .by_name
            .get(t.name.as_str())
            .and_then(|id| image.topics.by_id.get(id))
        else {
            continue;
        };
        let additional = i64::from(t.count) - topic.partitions.len() as i64;
        if additional <= 0 {
            continue;
        }
        total += additional;
        if total > MAX_PARTITIONS_PER_BATCH {
            return Err(BatchError::TooManyAdditionalPartitions);
        }
    }
    Ok(())
}

/// Decides CreatePartitions for `topics` (screened by [`super::api`]) against the latest image.
pub fn create_partitions(
    image: &MetadataImage,
    brokers: &[UsableBroker],
    topics: &[NewPartitions],
    validate_only: bool,
    random: &mut TopicRandom,
) -> ControllerResult<Result<PartitionsOutcomes, BatchError>> {
    if let Err(e) = check_total(image, topics) {
        return ControllerResult::reply_only(Err(e));
    }
    let mut records = Vec::new();
    let outcomes = topics
        .iter()
        .map(|t| {
            let outcome = grow(image, brokers, t, random, &mut records);
            (t.name.clone(), outcome)
        })
        .collect();
    if validate_only {
        records.clear();
    }
    ControllerResult::new(records, Ok(outcomes))
}

fn grow(
    image: &MetadataImage,
    brokers: &[UsableBroker],
    t: &NewPartitions,
    random: &mut TopicRandom,
    records: &mut Vec<MetadataRecordAndVersion>,
) -> Result<(), TopicError> {
    let unknown = TopicError::UnknownTopic {
        with_message: false,
    };
    let id = *image
        .topics
        .by_name
        .get(t.name.as_str())
        .ok_or(unknown.clone())?;
    let topic = image.topics.by_id.get(&id).ok_or(unknown)?;
    let current = topic.partitions.len();
    if t.count as i64 == current as i64 {
        return Err(TopicError::AlreadyHasPartitions(current));
    }
    if (t.count as i64) < current as i64 {
        return Err(TopicError::NotAnIncrease {
            name: t.name.clone(),
            current,
            requested: t.count,
        });
    }
    let additional = t.count as i64 - current as i64;
    if let Some(a) = &t.assignments {
        if a.len() as i64 != additional {
            return Err(TopicError::Assignment(AssignmentError::CountMismatch {
                additional,
                given: a.len(),
            }));
        }
    }
    // Java reads the replication factor off the topic's first partition in its map's order,
    // which for partition ids below the table size is partition 0.
    let rf = topic
        .partitions
        .values()
        .next()
        .map_or(0, |p| p.replicas.len());
    let start = current as i32;
    let assigned: Vec<(Vec<i32>, Vec<i32>)> =
        match &t.assignments {
            Some(assignments) => {
                let mut out = Vec::with_capacity(assignments.len());
                for (i, replicas) in assignments.iter().enumerate() {
                    validate_manual_assignment(image, replicas, Some(rf))
                        .map_err(TopicError::Assignment)?;
                    let isr = active_of(image, replicas);
                    if isr.is_empty() {
                        return Err(TopicError::Assignment(AssignmentError::AllInactive(
                            start + i as i32,
                        )));
                    }
                    out.push((replicas.clone(), isr));
                }
                out
            }
            None => {
                let placed = place(additional as i32, rf as i16, brokers, &mut random.placer)
                    .map_err(|e| TopicError::Unreplicable {
                        replication_factor: rf as i16,
                        reason: Some(e),
                    })?;
                placed
                    .into_iter()
                    .map(|r| {
                        let isr = r.clone();
                        (r, isr)
                    })
                    .collect()
            }
        };
    let mv = metadata_version(image);
    // As in Java, partitions written before one that cannot be replicated stay in the batch.
    for (i, (replicas, isr)) in assigned.into_iter().enumerate() {
        let isr = active_of(image, &isr);
        if isr.is_empty() {
            return Err(TopicError::Unreplicable {
                replication_factor: rf as i16,
                reason: None,
            });
        }
        records.push(partition_record(
            image,
            mv,
            id,
            start + i as i32,
            &replicas,
            isr,
        ));
    }
    Ok(())
}
