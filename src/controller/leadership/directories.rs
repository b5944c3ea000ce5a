//! AssignReplicasToDirs (v0) from a broker with several log directories: which directory holds
//! each of its replicas, decided as Kafka 4.4's `ReplicationControlManager.
//! handleAssignReplicasToDirs` decides it. Each replica assigned gets a `PartitionChangeRecord`
//! with the new directory; a replica assigned to a directory the broker does not report online
//! then leaves its ISR and leadership as well (`generateLeaderAndIsrUpdates`, against the
//! partition as it was).

use std::collections::BTreeSet;

use super::{directory_is_online, Leadership, NO_LEADER};
use crate::controller::brokers::{check_broker_epoch, BrokerError};
use crate::controller::result::ControllerResult;
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::assign_replicas_to_dirs_response as response;
use crate::protocol::messages::{AssignReplicasToDirsRequest, AssignReplicasToDirsResponse};

/// Why a whole AssignReplicasToDirs is refused (the response then carries only the code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignDirsError {
    /// The metadata.version predates directory assignment (3.7-IV2).
    #[error("Directory assignment is not supported yet.")]
    NotSupported,
    #[error("{0}")]
    Broker(#[from] BrokerError),
}

impl AssignDirsError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            AssignDirsError::NotSupported => ErrorCode::UNSUPPORTED_VERSION,
            AssignDirsError::Broker(e) => e.error_code(),
        }
    }
}

/// What Java logs (at WARN) for a partition it refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: ErrorCode,
    pub why: String,
}

/// `handleAssignReplicasToDirs`: the records and the response, with the refusals to log.
pub fn assign_replicas_to_dirs(
    leadership: &Leadership,
    request: &AssignReplicasToDirsRequest,
) -> Result<ControllerResult<(AssignReplicasToDirsResponse, Vec<Refused>)>, AssignDirsError> {
    if !leadership
        .metadata_version
        .is_directory_assignment_supported()
    {
        return Err(AssignDirsError::NotSupported);
    }
    let broker = request.broker_id;
    let registration = check_broker_epoch(leadership.image, broker, request.broker_epoch)?;
    let topics = &leadership.image.topics.by_id;
    let mut records = Vec::new();
    let mut refusals = Vec::new();
    let mut offline: BTreeSet<(Uuid, i32)> = BTreeSet::new();
    let mut out = AssignReplicasToDirsResponse::default();
    for dir in &request.directories {
        let dir_offline = !directory_is_online(dir.id, &registration.directories);
        let mut dir_out = response::DirectoryData {
            id: dir.id,
            ..Default::default()
        };
        for t in &dir.topics {
            let topic = topics.get(&t.topic_id);
            if topic.is_none() {
                refusals.push(Refused {
                    code: ErrorCode::UNKNOWN_TOPIC_ID,
                    why: format!("references unknown topic ID {}", t.topic_id),
                });
            }
            let mut topic_out = response::TopicData {
                topic_id: t.topic_id,
                ..Default::default()
            };
            for p in &t.partitions {
                let index = p.partition_index;
                let code = match topic {
                    None => ErrorCode::UNKNOWN_TOPIC_ID,
                    Some(topic) => match topic.partitions.get(&index) {
                        None => {
                            refusals.push(Refused {
                                code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                                why: format!("references unknown partition {}-{index}", topic.name),
                            });
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                        }
                        Some(partition) if !partition.replicas.contains(&broker) => {
                            refusals.push(Refused {
                                code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                                why: format!(
                                    "references non assigned partition {}-{index}",
                                    topic.name
                                ),
                            });
                            ErrorCode::NOT_LEADER_OR_FOLLOWER
                        }
                        Some(partition) => {
                            let acceptable = |r: i32| {
                                leadership.is_active(r) && leadership.online_replica(partition, r)
                            };
                            let default_dir = |b| leadership.default_dir(b);
                            records.extend(
                                leadership
                                    .change(topic, index, partition, &acceptable, &default_dir)
                                    .directory(broker, dir.id)
                                    .build(),
                            );
                            if dir_offline {
                                offline.insert((t.topic_id, index));
                            }
                            ErrorCode::NONE
                        }
                    },
                };
                topic_out.partitions.push(response::PartitionData {
                    partition_index: index,
                    error_code: code.0,
                    ..Default::default()
                });
            }
            dir_out.topics.push(topic_out);
        }
        out.directories.push(dir_out);
    }
    // Replicas placed in an offline directory leave their ISRs and leaderships; Java builds
    // these from the partitions as they were, before the assignments above.
    for (topic_id, index) in offline {
        let topic = &topics[&topic_id];
        let partition = &topic.partitions[&index];
        records.extend(leadership.update(topic, index, partition, broker, NO_LEADER, NO_LEADER));
    }
    Ok(ControllerResult::new(records, (out, refusals)))
}
