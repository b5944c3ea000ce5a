//! Brokers' lifecycle as the active controller decides it: registration, heartbeats and the
//! fencing state machine, session expiry, controlled shutdown, unregistration (Kafka 4.4's
//! `ClusterControlManager`, `BrokerHeartbeatManager` and the broker parts of
//! `ReplicationControlManager`).
//!
//! Each decision reads the latest controller state (records written, committed or not) and
//! returns the records to write with the reply; `Controller::replay` applies the records. The
//! soft state of sessions ([`BrokerSessions`]) is the active controller's own and is updated
//! by the decisions themselves, as Java's heartbeat manager is: it never reaches the log.
//!
//! Partitions: a broker that is fenced, shuts down, re-registers or is unregistered leaves the
//! ISRs and leaderships it holds, and one unfenced may lead leaderless partitions
//! (`controller::leadership`).

mod heartbeat;
mod registration;
mod sessions;
#[cfg(test)]
pub(crate) mod tests;

pub use heartbeat::{expire_one, heartbeat, BrokerControlState, Expiry, HeartbeatReply};
pub use registration::{register_broker, unregister_broker, RegistrationContext};
pub use sessions::{BrokerSessions, HeartbeatState};

use crate::controller::MetadataImage;
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;

/// Why a broker request is refused: Java's exception, its error code and its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerError {
    #[error("Expected cluster ID {expected}, but got cluster ID {got}")]
    InconsistentClusterId { expected: String, got: String },
    #[error("Another broker is registered with that broker id. If the broker was recently restarted this should self-resolve once the heartbeat manager expires the broker's session.")]
    DuplicateRegistration,
    #[error("Controller does not support registering ZK brokers.")]
    ZkBroker,
    #[error("the metadata log has no metadata.version")]
    NoMetadataVersion,
    #[error("No directories specified in request")]
    NoDirectories,
    #[error("Reserved directory ID in request")]
    ReservedDirectory,
    #[error("Duplicate directory ID in request")]
    DuplicateDirectory,
    #[error("Broker {owner} is already registered with directory {directory}")]
    DirectoryOwned { owner: i32, directory: Uuid },
    #[error("Request features do not contain 'metadata.version'")]
    NoMetadataVersionRange,
    #[error("Unable to register because the broker does not support finalized version {level} of {feature}. The broker wants a version between {min} and {max}, inclusive.")]
    UnsupportedFeature {
        feature: String,
        level: i16,
        min: i16,
        max: i16,
    },
    #[error("Receive a heartbeat from broker {broker} before registration")]
    HeartbeatBeforeRegistration { broker: i32 },
    #[error("No broker registration found for broker id {broker}")]
    NoRegistration { broker: i32 },
    #[error("Expected broker epoch {expected}, but got broker epoch {got}")]
    StaleEpoch { expected: i64, got: i64 },
    #[error("Broker {broker} is not registered.")]
    NoHeartbeatState { broker: i32 },
    #[error("Broker ID {broker} is not currently registered")]
    NotRegistered { broker: i32 },
}

impl BrokerError {
    pub fn error_code(&self) -> ErrorCode {
        use BrokerError as E;
        match self {
            E::InconsistentClusterId { .. } => ErrorCode::INCONSISTENT_CLUSTER_ID,
            E::DuplicateRegistration => ErrorCode::DUPLICATE_BROKER_REGISTRATION,
            E::ZkBroker | E::NotRegistered { .. } => ErrorCode::BROKER_ID_NOT_REGISTERED,
            E::NoDirectories
            | E::ReservedDirectory
            | E::DuplicateDirectory
            | E::DirectoryOwned { .. }
            | E::NoMetadataVersionRange => ErrorCode::INVALID_REGISTRATION,
            E::UnsupportedFeature { .. } => ErrorCode::UNSUPPORTED_VERSION,
            E::HeartbeatBeforeRegistration { .. }
            | E::NoRegistration { .. }
            | E::StaleEpoch { .. } => ErrorCode::STALE_BROKER_EPOCH,
            E::NoMetadataVersion | E::NoHeartbeatState { .. } => ErrorCode::UNKNOWN_SERVER_ERROR,
        }
    }
}

/// Java's `ClusterControlManager.checkBrokerEpoch`: `broker` is registered with `epoch`.
pub fn check_broker_epoch(
    image: &MetadataImage,
    broker: i32,
    epoch: i64,
) -> Result<&crate::controller::cluster::BrokerRegistration, BrokerError> {
    let registration = image
        .cluster
        .brokers
        .get(&broker)
        .ok_or(BrokerError::NoRegistration { broker })?;
    if registration.epoch != epoch {
        return Err(BrokerError::StaleEpoch {
            expected: registration.epoch,
            got: epoch,
        });
    }
    Ok(registration)
}

/// Whether `broker` leads any partition.
pub fn leads_partitions(image: &MetadataImage, broker: i32) -> bool {
    image
        .topics
        .by_id
        .values()
        .flat_map(|t| t.partitions.values())
        .any(|p| p.leader == broker)
}
