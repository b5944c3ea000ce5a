//! Deciding a broker heartbeat (Kafka 4.4's `ReplicationControlManager.processBrokerHeartbeat`
//! and `BrokerHeartbeatManager.calculateNextBrokerState`), and session expiry
//! (`maybeFenceOneStaleBroker`).

use super::sessions::BrokerSessions;
use super::{leads_partitions, BrokerError};
use crate::controller::leadership::Leadership;
use crate::controller::result::ControllerResult;
use crate::controller::topics::TopicsContext;
use crate::controller::{ControllerState, MetadataImage};
use crate::protocol::messages::{BrokerHeartbeatRequest, BrokerRegistrationChangeRecord};
use crate::protocol::records::MetadataRecordAndVersion;

/// Where a broker stands (Java's `BrokerControlState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerControlState {
    Fenced,
    Unfenced,
    ControlledShutdown,
    ShutdownNow,
}

impl BrokerControlState {
    pub fn fenced(self) -> bool {
        matches!(
            self,
            BrokerControlState::Fenced | BrokerControlState::ShutdownNow
        )
    }
    pub fn in_controlled_shutdown(self) -> bool {
        self == BrokerControlState::ControlledShutdown
    }
    pub fn should_shut_down(self) -> bool {
        self == BrokerControlState::ShutdownNow
    }
}

/// The answer to a heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatReply {
    pub is_caught_up: bool,
    pub is_fenced: bool,
    pub in_controlled_shutdown: bool,
    pub should_shut_down: bool,
}

/// A heartbeat, decided. The caller tells `sessions` where the records of a controlled
/// shutdown end (`BrokerSessions::controlled_shutdown_written`) once they are appended.
pub fn heartbeat(
    state: &ControllerState,
    topics: &TopicsContext,
    sessions: &mut BrokerSessions,
    request: &BrokerHeartbeatRequest,
    now_ms: u64,
) -> Result<ControllerResult<HeartbeatReply>, BrokerError> {
    let broker = request.broker_id;
    sessions.track_contact(broker, request.broker_epoch, now_ms);
    let registration_offset = *state
        .registration_offsets
        .get(&broker)
        .ok_or(BrokerError::HeartbeatBeforeRegistration { broker })?;
    let registration = super::check_broker_epoch(&state.image, broker, request.broker_epoch)?;
    let Some(soft) = sessions.state(broker).copied() else {
        return Err(BrokerError::NoHeartbeatState { broker });
    };
    let current = if soft.controlled_shutdown_offset.is_some() {
        BrokerControlState::ControlledShutdown
    } else if soft.fenced {
        BrokerControlState::Fenced
    } else {
        BrokerControlState::Unfenced
    };
    let leads = || leads_partitions(&state.image, broker);
    use BrokerControlState as S;
    let next = match current {
        S::Fenced if request.want_shut_down => S::ShutdownNow,
        S::Fenced
            if !request.want_fence && request.current_metadata_offset >= registration_offset =>
        {
            S::Unfenced
        }
        S::Fenced => S::Fenced,
        S::Unfenced if request.want_fence && request.want_shut_down => S::ShutdownNow,
        S::Unfenced if request.want_fence => S::Fenced,
        S::Unfenced if request.want_shut_down && leads() => S::ControlledShutdown,
        S::Unfenced if request.want_shut_down => S::ShutdownNow,
        S::Unfenced => S::Unfenced,
        S::ControlledShutdown if leads() => S::ControlledShutdown,
        S::ControlledShutdown
            if soft.controlled_shutdown_offset.unwrap_or(i64::MAX)
                <= sessions.lowest_active_offset() =>
        {
            S::ShutdownNow
        }
        S::ControlledShutdown => S::ControlledShutdown,
        S::ShutdownNow => S::ShutdownNow,
    };
    let epoch = registration.epoch;
    let leadership = Leadership::new(&state.image, topics).ok_or(BrokerError::NoMetadataVersion)?;
    let mut records = Vec::new();
    if current != next {
        match next {
            S::Fenced | S::ShutdownNow => records.extend(fence_records(&leadership, broker)),
            S::Unfenced => {
                records.push(change(broker, epoch, -1, 0, 0));
                records.extend(leadership.broker_unfenced(broker));
            }
            S::ControlledShutdown => {
                if !registration.in_controlled_shutdown {
                    records.push(change(broker, epoch, 0, 1, 1));
                }
                records.extend(leadership.broker_in_controlled_shutdown(broker));
            }
        }
    }
    sessions.touch(broker, next.fenced(), request.current_metadata_offset);
    let mv = leadership.metadata_version;
    if mv.is_directory_assignment_supported() {
        let offline: Vec<_> = registration
            .directories
            .iter()
            .filter(|d| request.offline_log_dirs.contains(d))
            .collect();
        if !offline.is_empty() {
            // `handleDirectoriesOffline`: the replicas in each newly offline directory leave
            // their ISRs and leaderships, then the registration keeps the online ones.
            for dir in &offline {
                records.extend(leadership.replicas_offline(broker, **dir));
            }
            let online = registration
                .directories
                .iter()
                .filter(|d| !request.offline_log_dirs.contains(d))
                .copied()
                .collect();
            records.push(MetadataRecordAndVersion::new(
                BrokerRegistrationChangeRecord {
                    broker_id: broker,
                    broker_epoch: epoch,
                    log_dirs: online,
                    ..Default::default()
                },
                2,
            ));
        }
    }
    if mv.is_cordoned_log_dirs_supported() {
        if let Some(cordoned) = &request.cordoned_log_dirs {
            let changed = match &registration.cordoned_directories {
                None => true,
                Some(known) => {
                    let a: std::collections::BTreeSet<_> = known.iter().collect();
                    let b: std::collections::BTreeSet<_> = cordoned.iter().collect();
                    a != b
                }
            };
            if changed {
                records.push(MetadataRecordAndVersion::new(
                    BrokerRegistrationChangeRecord {
                        broker_id: broker,
                        broker_epoch: epoch,
                        cordoned_log_dirs: Some(cordoned.clone()),
                        ..Default::default()
                    },
                    3,
                ));
            }
        }
    }
    let reply = HeartbeatReply {
        is_caught_up: request.current_metadata_offset >= registration_offset,
        is_fenced: next.fenced(),
        in_controlled_shutdown: next.in_controlled_shutdown(),
        should_shut_down: next.should_shut_down(),
    };
    Ok(ControllerResult::new(records, reply))
}

/// A `BrokerRegistrationChangeRecord` changing fencing (-1 unfence, 1 fence) or entering
/// controlled shutdown, at `version`.
fn change(
    broker: i32,
    epoch: i64,
    fenced: i8,
    in_controlled_shutdown: i8,
    version: i16,
) -> MetadataRecordAndVersion {
    MetadataRecordAndVersion::new(
        BrokerRegistrationChangeRecord {
            broker_id: broker,
            broker_epoch: epoch,
            fenced,
            in_controlled_shutdown,
            ..Default::default()
        },
        version,
    )
}

/// Fencing a broker (Java's `handleBrokerFenced`): it leaves every partition, then the record.
fn fence_records(leadership: &Leadership, broker: i32) -> Vec<MetadataRecordAndVersion> {
    let mut records = leadership.broker_fenced(broker);
    let epoch = leadership
        .image
        .cluster
        .brokers
        .get(&broker)
        .map_or(-1, |b| b.epoch);
    records.push(change(broker, epoch, 1, 0, 0));
    records
}

/// What one expiry check found (Java's `maybeFenceOneStaleBroker`).
#[derive(Debug, Clone, PartialEq)]
pub enum Expiry {
    /// No session has expired.
    None,
    /// An expired session of a broker id or epoch no longer registered: dropped.
    Dropped { broker: i32, epoch: i64 },
    /// The broker's session expired: it is fenced by these records.
    Fence {
        broker: i32,
        epoch: i64,
        result: ControllerResult<()>,
    },
}

/// Fences at most one broker whose session has expired by `now_ms`; call again at once after
/// anything but `Expiry::None`.
pub fn expire_one(
    image: &MetadataImage,
    topics: &TopicsContext,
    sessions: &mut BrokerSessions,
    now_ms: u64,
) -> Expiry {
    let Some((broker, epoch)) = sessions.remove_expired(now_ms) else {
        return Expiry::None;
    };
    match image.cluster.brokers.get(&broker) {
        Some(b) if b.epoch == epoch => {
            sessions.fence(broker);
            let records = Leadership::new(image, topics)
                .map(|l| fence_records(&l, broker))
                .unwrap_or_default();
            Expiry::Fence {
                broker,
                epoch,
                result: ControllerResult::new(records, ()),
            }
        }
        _ => {
            if image.cluster.brokers.get(&broker).is_none() {
                sessions.remove(broker);
            }
            Expiry::Dropped { broker, epoch }
        }
    }
}
