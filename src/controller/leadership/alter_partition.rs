//! AlterPartition (v2-3) from a partition leader: ISR expansions and shrinks, and a leader's
//! recovery after an unclean election, decided as Kafka 4.4's
//! `ReplicationControlManager.alterPartition` decides them (Java's checks in Java's order).

use super::{Election, Leadership, RECOVERED, RECOVERING};
use crate::controller::brokers::{check_broker_epoch, BrokerError};
use crate::controller::replication::{PartitionRegistration, Topic, NO_LEADER_CHANGE};
use crate::controller::result::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::{BrokerState, PartitionData};
use crate::protocol::messages::alter_partition_response as response;
use crate::protocol::messages::{AlterPartitionRequest, AlterPartitionResponse};
use crate::protocol::records::MetadataRecord;

/// Why one partition of an AlterPartition is refused, with what Java logs for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: ErrorCode,
    pub why: String,
}

fn refused(code: ErrorCode, why: String) -> Refused {
    Refused { code, why }
}

/// An AlterPartition, decided: the records and the response, or the broker's own epoch
/// refused for the whole request (`STALE_BROKER_EPOCH`). Refusals are listed for the log.
pub fn alter_partition(
    leadership: &Leadership,
    version: i16,
    request: &AlterPartitionRequest,
) -> Result<ControllerResult<(AlterPartitionResponse, Vec<Refused>)>, BrokerError> {
    check_broker_epoch(leadership.image, request.broker_id, request.broker_epoch)?;
    let mut records = Vec::new();
    let mut refusals = Vec::new();
    let mut out = AlterPartitionResponse::default();
    for t in &request.topics {
        let mut topic_out = response::TopicData {
            topic_id: t.topic_id,
            ..Default::default()
        };
        let topic = leadership.image.topics.by_id.get(&t.topic_id);
        for p in &t.partitions {
            let Some(topic) = topic else {
                refusals.push(refused(
                    ErrorCode::UNKNOWN_TOPIC_ID,
                    format!("unknown topic ID {}", t.topic_id),
                ));
                topic_out
                    .partitions
                    .push(error(p.partition_index, ErrorCode::UNKNOWN_TOPIC_ID));
                continue;
            };
            let isr = new_isr(version, p);
            let partition = topic.partitions.get(&p.partition_index);
            let checked = partition.ok_or_else(|| {
                refused(
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("unknown partition {}-{}", topic.name, p.partition_index),
                )
            });
            let checked = checked.and_then(|partition| {
                validate(leadership, request.broker_id, topic, partition, p, &isr)
                    .map(|()| partition)
            });
            let partition = match checked {
                Ok(partition) => partition,
                Err(r) => {
                    topic_out.partitions.push(error(p.partition_index, r.code));
                    refusals.push(r);
                    continue;
                }
            };
            let acceptable =
                |r: i32| leadership.is_active(r) && leadership.online_replica(partition, r);
            let default_dir = |b| leadership.default_dir(b);
            let mut change = leadership
                .change(
                    topic,
                    p.partition_index,
                    partition,
                    &acceptable,
                    &default_dir,
                )
                .target_isr(isr.iter().map(|s| s.broker_id).collect())
                .target_recovery_state(p.leader_recovery_state);
            if leadership.unclean_enabled(topic) {
                change = change.election(Election::Unclean);
            }
            let mut after = (**partition).clone();
            if let Some(record) = change.build() {
                let MetadataRecord::PartitionChange(c) = &record.record else {
                    unreachable!("a partition change builds a PartitionChangeRecord")
                };
                after = partition
                    .merge(c)
                    .expect("a change built from a partition merges into it");
                let leader = c.leader;
                records.push(record);
                if leader != request.broker_id && leader != NO_LEADER_CHANGE {
                    // The change completed a reassignment that moved the leadership away:
                    // the sender must learn the new leader first (records and an error).
                    refusals.push(refused(
                        ErrorCode::NEW_LEADER_ELECTED,
                        format!(
                            "{}-{} completed the ongoing partition reassignment and triggered a \
                             leadership change",
                            topic.name, p.partition_index
                        ),
                    ));
                    topic_out
                        .partitions
                        .push(error(p.partition_index, ErrorCode::NEW_LEADER_ELECTED));
                    continue;
                }
            }
            topic_out.partitions.push(response::PartitionData {
                partition_index: p.partition_index,
                error_code: ErrorCode::NONE.0,
                leader_id: after.leader,
                leader_epoch: after.leader_epoch,
                isr: after.isr.clone(),
                leader_recovery_state: after.leader_recovery_state,
                partition_epoch: after.partition_epoch,
                ..Default::default()
            });
        }
        out.topics.push(topic_out);
    }
    Ok(ControllerResult::new(records, (out, refusals)))
}

/// The new ISR with its members' broker epochs: v3 carries them, v2 only ids (epoch -1:
/// not checked).
fn new_isr(version: i16, p: &PartitionData) -> Vec<BrokerState> {
    if version < 3 {
        p.new_isr
            .iter()
            .map(|b| BrokerState {
                broker_id: *b,
                broker_epoch: -1,
                ..Default::default()
            })
            .collect()
    } else {
        p.new_isr_with_epochs.clone()
    }
}

fn error(partition: i32, code: ErrorCode) -> response::PartitionData {
    response::PartitionData {
        partition_index: partition,
        error_code: code.0,
        ..Default::default()
    }
}

/// `validateAlterPartitionData`, in Java's order.
fn validate(
    leadership: &Leadership,
    broker: i32,
    topic: &Topic,
    partition: &PartitionRegistration,
    p: &PartitionData,
    isr: &[BrokerState],
) -> Result<(), Refused> {
    let at = format!("{}-{}", topic.name, p.partition_index);
    if p.leader_epoch > partition.leader_epoch {
        // The sender knows a newer state: this controller is likely no longer active.
        return Err(refused(
            ErrorCode::NOT_CONTROLLER,
            format!(
                "{at}: the current leader epoch is {}, which is lower than the request value {}",
                partition.leader_epoch, p.leader_epoch
            ),
        ));
    }
    if p.partition_epoch > partition.partition_epoch {
        return Err(refused(
            ErrorCode::NOT_CONTROLLER,
            format!(
                "{at}: the current partition epoch is {}, which is lower than the request value {}",
                partition.partition_epoch, p.partition_epoch
            ),
        ));
    }
    if p.leader_epoch < partition.leader_epoch {
        return Err(refused(
            ErrorCode::FENCED_LEADER_EPOCH,
            format!(
                "{at}: the current leader epoch is {}, not {}",
                partition.leader_epoch, p.leader_epoch
            ),
        ));
    }
    if broker != partition.leader {
        return Err(refused(
            ErrorCode::INVALID_REQUEST,
            format!("{at}: the current leader is {}", partition.leader),
        ));
    }
    if p.partition_epoch < partition.partition_epoch {
        return Err(refused(
            ErrorCode::INVALID_UPDATE_VERSION,
            format!(
                "{at}: the current partition epoch is {}, not {}",
                partition.partition_epoch, p.partition_epoch
            ),
        ));
    }
    let ids: Vec<i32> = isr.iter().map(|s| s.broker_id).collect();
    if !valid_isr(&partition.replicas, &ids) {
        return Err(refused(
            ErrorCode::INVALID_REQUEST,
            format!("{at}: an invalid ISR {ids:?}"),
        ));
    }
    if !ids.contains(&partition.leader) {
        return Err(refused(
            ErrorCode::INVALID_REQUEST,
            format!("{at}: an ISR {ids:?} that does not include the leader itself"),
        ));
    }
    let recovery = p.leader_recovery_state;
    if recovery != RECOVERED && recovery != RECOVERING {
        // Java's `LeaderRecoveryState.of` throws, which its controller answers as an
        // unexpected error; kraftd refuses the partition as a bad request.
        return Err(refused(
            ErrorCode::INVALID_REQUEST,
            format!("{at}: unknown leader recovery state {recovery}"),
        ));
    }
    if recovery == RECOVERING && ids.len() > 1 {
        return Err(refused(
            ErrorCode::INVALID_REQUEST,
            format!(
                "{at}: the ISR had more than one replica while the leader was still recovering \
                 from an unclean leader election"
            ),
        ));
    }
    if partition.leader_recovery_state == RECOVERED && recovery == RECOVERING {
        return Err(refused(
            ErrorCode::INVALID_REQUEST,
            format!("{at}: the leader recovery state cannot change from RECOVERED to RECOVERING"),
        ));
    }
    let ineligible = ineligible_replicas(leadership, isr);
    if !ineligible.is_empty() {
        return Err(refused(
            ErrorCode::INELIGIBLE_REPLICA,
            format!(
                "{at}: ineligible replicas {} in the new ISR",
                ineligible.join(", ")
            ),
        ));
    }
    Ok(())
}

/// `Replicas.validateIsr`: every member a replica, none twice.
fn valid_isr(replicas: &[i32], isr: &[i32]) -> bool {
    isr.iter()
        .enumerate()
        .all(|(i, r)| replicas.contains(r) && !isr[..i].contains(r))
}

/// `ineligibleReplicasForIsr`: members not registered, shutting down, fenced, or (v3) of
/// another broker epoch.
fn ineligible_replicas(leadership: &Leadership, isr: &[BrokerState]) -> Vec<String> {
    isr.iter()
        .filter_map(|s| {
            let why = match leadership.image.cluster.brokers.get(&s.broker_id) {
                None => "not registered".to_string(),
                Some(b) if b.in_controlled_shutdown => "shutting down".to_string(),
                Some(b) if b.fenced => "fenced".to_string(),
                Some(b) if s.broker_epoch != -1 && b.epoch != s.broker_epoch => format!(
                    "broker epoch mismatch: requested={} VS expected={}",
                    s.broker_epoch, b.epoch
                ),
                Some(_) => return None,
            };
            Some(format!("{} ({why})", s.broker_id))
        })
        .collect()
}
