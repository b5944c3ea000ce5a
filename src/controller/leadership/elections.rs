//! Leader elections asked for by an operator (ElectLeaders: preferred or unclean) and the
//! active controller's periodic ones (`auto.leader.rebalance.enable`'s preferred elections,
//! and unclean elections of leaderless partitions whose topic enables them), as Kafka 4.4's
//! `ReplicationControlManager` decides them.

use super::{Election, Leadership, NO_LEADER};
use crate::controller::replication::{PartitionRegistration, Topic};
use crate::controller::result::ControllerResult;
use crate::controller::topics::MAX_RECORDS_PER_USER_OP;
use crate::protocol::errors::ErrorCode;
use crate::protocol::records::MetadataRecordAndVersion;

/// `ElectionType`: 0 preferred, 1 unclean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElectionType {
    Preferred,
    Unclean,
}

impl ElectionType {
    pub fn from_wire(value: i8) -> Option<ElectionType> {
        match value {
            0 => Some(ElectionType::Preferred),
            1 => Some(ElectionType::Unclean),
            _ => None,
        }
    }
}

/// One partition's election outcome: Java's error code and message (`ApiError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionOutcome {
    pub code: ErrorCode,
    pub message: Option<String>,
}

impl ElectionOutcome {
    fn of(code: ErrorCode) -> ElectionOutcome {
        ElectionOutcome {
            code,
            message: default_message(code).map(str::to_string),
        }
    }
}

/// `Errors.message()` for the codes an election answers (`new ApiError(Errors)` carries it).
fn default_message(code: ErrorCode) -> Option<&'static str> {
    match code {
        ErrorCode::ELECTION_NOT_NEEDED => Some("Leader election not needed for topic partition."),
        ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE => {
            Some("The preferred leader was not available.")
        }
        ErrorCode::ELIGIBLE_LEADERS_NOT_AVAILABLE => {
            Some("Eligible topic partition leaders are not available.")
        }
        _ => None,
    }
}

/// Results by topic name, each a list of (partition, outcome).
pub type ElectionResults = Vec<(String, Vec<(i32, ElectionOutcome)>)>;

/// Why a whole ElectLeaders is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElectLeadersError {
    #[error("Unknown election type {0}")]
    UnknownElectionType(i8),
}

impl ElectLeadersError {
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::INVALID_REQUEST
    }
}

/// `electLeaders`: the partitions named, or every partition when `partitions` is `None` (then
/// partitions that need no election are left out of the results).
pub fn elect_leaders(
    leadership: &Leadership,
    election_type: i8,
    partitions: Option<&[(String, Vec<i32>)]>,
) -> Result<ControllerResult<ElectionResults>, ElectLeadersError> {
    let kind = ElectionType::from_wire(election_type)
        .ok_or(ElectLeadersError::UnknownElectionType(election_type))?;
    let mut records = Vec::new();
    let mut results = Vec::new();
    match partitions {
        None => {
            let image = leadership.image;
            for (name, id) in &image.topics.by_name {
                let topic = &image.topics.by_id[id];
                let outcomes = topic
                    .partitions
                    .keys()
                    .map(|p| (*p, elect_leader(leadership, name, *p, kind, &mut records)))
                    .filter(|(_, o)| o.code != ErrorCode::ELECTION_NOT_NEEDED)
                    .collect();
                results.push((name.to_string(), outcomes));
            }
        }
        Some(named) => {
            for (name, ids) in named {
                let outcomes = ids
                    .iter()
                    .map(|p| (*p, elect_leader(leadership, name, *p, kind, &mut records)))
                    .collect();
                results.push((name.clone(), outcomes));
            }
        }
    }
    Ok(ControllerResult::new(records, results))
}

/// `electLeader`: one partition.
fn elect_leader(
    leadership: &Leadership,
    topic_name: &str,
    partition_id: i32,
    kind: ElectionType,
    records: &mut Vec<MetadataRecordAndVersion>,
) -> ElectionOutcome {
    let image = leadership.image;
    let Some(topic) = image
        .topics
        .by_name
        .get(topic_name)
        .and_then(|id| image.topics.by_id.get(id))
    else {
        return ElectionOutcome {
            code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            message: Some(format!("No such topic as {topic_name}")),
        };
    };
    let Some(partition) = topic.partitions.get(&partition_id) else {
        return ElectionOutcome {
            code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            message: Some(format!("No such partition as {topic_name}-{partition_id}")),
        };
    };
    let not_needed = match kind {
        ElectionType::Preferred => has_preferred_leader(partition),
        ElectionType::Unclean => partition.leader != NO_LEADER,
    };
    if not_needed {
        return ElectionOutcome::of(ErrorCode::ELECTION_NOT_NEEDED);
    }
    if records.len() >= MAX_RECORDS_PER_USER_OP {
        // Java's bounded record list refuses the request once full; kraftd answers the
        // partitions past the bound as not elected.
        return ElectionOutcome::of(not_elected(kind));
    }
    let election = match kind {
        ElectionType::Preferred => Election::Preferred,
        ElectionType::Unclean => Election::Unclean,
    };
    match preferred_or_unclean(leadership, topic, partition_id, partition, election) {
        Some(record) => {
            records.push(record);
            ElectionOutcome {
                code: ErrorCode::NONE,
                message: None,
            }
        }
        None => ElectionOutcome::of(not_elected(kind)),
    }
}

fn not_elected(kind: ElectionType) -> ErrorCode {
    match kind {
        ElectionType::Preferred => ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE,
        ElectionType::Unclean => ErrorCode::ELIGIBLE_LEADERS_NOT_AVAILABLE,
    }
}

/// `PartitionRegistration.hasPreferredLeader`: led by its first replica (`NO_LEADER` for a
/// partition without replicas).
fn has_preferred_leader(p: &PartitionRegistration) -> bool {
    p.leader == p.replicas.first().copied().unwrap_or(NO_LEADER)
}

/// One election's change, with the acceptor every active broker's online replica passes.
fn preferred_or_unclean(
    leadership: &Leadership,
    topic: &Topic,
    partition_id: i32,
    partition: &PartitionRegistration,
    election: Election,
) -> Option<MetadataRecordAndVersion> {
    let acceptable = |r: i32| leadership.is_active(r) && leadership.online_replica(partition, r);
    let default_dir = |b| leadership.default_dir(b);
    leadership
        .change(topic, partition_id, partition, &acceptable, &default_dir)
        .election(election)
        .build()
}

/// `maybeBalancePartitionLeaders`: preferred elections for partitions not led by their first
/// replica, at most `max_elections` records. `true` when more may be due at once.
pub fn balance_leaders(
    leadership: &Leadership,
    max_elections: usize,
) -> (Vec<MetadataRecordAndVersion>, bool) {
    let mut records = Vec::new();
    for topic in leadership.image.topics.by_id.values() {
        for (id, p) in &topic.partitions {
            if records.len() >= max_elections {
                return (records, true);
            }
            if is_imbalanced(p) {
                records.extend(preferred_or_unclean(
                    leadership,
                    topic,
                    *id,
                    p,
                    Election::Preferred,
                ));
            }
        }
    }
    let more = records.len() >= max_elections;
    (records, more)
}

/// Java's `imbalancedPartitions`: a partition not led by its first replica (leaderless
/// ones included).
pub fn is_imbalanced(p: &PartitionRegistration) -> bool {
    !has_preferred_leader(p)
}

/// `maybeElectUncleanLeaders`: unclean elections for leaderless partitions of topics that
/// enable `unclean.leader.election.enable`, at most `max_elections` records.
pub fn elect_unclean_leaders(
    leadership: &Leadership,
    max_elections: usize,
) -> (Vec<MetadataRecordAndVersion>, bool) {
    let mut records = Vec::new();
    let topics = &leadership.image.topics;
    for &partition in topics.leaderless() {
        let (topic, p) = topics
            .partition(partition)
            .expect("the index names only partitions of the image");
        if !leadership.unclean_enabled(topic) {
            continue;
        }
        if records.len() >= max_elections {
            return (records, true);
        }
        records.extend(preferred_or_unclean(
            leadership,
            topic,
            partition.1,
            p,
            Election::Unclean,
        ));
    }
    // As Java's walk: at the limit, more may be due.
    let more = records.len() >= max_elections;
    (records, more)
}
