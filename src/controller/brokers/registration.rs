//! Deciding a broker's registration (Kafka 4.4's `ClusterControlManager.registerBroker`) and
//! unregistration (`ReplicationControlManager.unregisterBroker`).

use std::collections::{BTreeMap, HashSet};

use super::sessions::BrokerSessions;
use super::BrokerError;
use crate::controller::leadership::Leadership;
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::result::ControllerResult;
use crate::controller::topics::TopicsContext;
use crate::controller::ControllerState;
use crate::protocol::codec::Uuid;
use crate::protocol::features::METADATA_VERSION;
use crate::protocol::messages::register_broker_record::{BrokerEndpoint, BrokerFeature};
use crate::protocol::messages::{
    BrokerRegistrationRequest, RegisterBrokerRecord, UnregisterBrokerRecord,
};
use crate::protocol::records::MetadataRecordAndVersion;

/// What a registration is decided against besides the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationContext {
    /// The cluster id of this quorum.
    pub cluster_id: String,
    /// The offset the next record will have: a new incarnation's broker epoch.
    pub next_offset: i64,
    /// The quorum's current `kraft.version` (not a feature level in the image, but finalized
    /// all the same: Java adds it to the finalized features a broker must support).
    pub kraft_version: i16,
    /// The request's version is 3 or more: its `PreviousBrokerEpoch` tells a clean shutdown.
    pub clean_shutdown_detection: bool,
    /// What partition changes read (an earlier incarnation leaves its partitions).
    pub topics: TopicsContext,
}

/// Kafka's reserved directory ids: the first 100 UUIDs (`DirectoryId.reserved`).
fn reserved_directory(id: &Uuid) -> bool {
    id.0[..15].iter().all(|&b| b == 0) && id.0[15] < 100
}

/// The finalized features a broker must support: the image's levels plus `kraft.version`.
fn finalized(state: &ControllerState, kraft_version: i16) -> BTreeMap<String, i16> {
    let mut f: BTreeMap<String, i16> = state
        .image
        .features
        .levels
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    f.insert("kraft.version".into(), kraft_version);
    f
}

/// The registration, decided: a `RegisterBrokerRecord` (preceded by the records that take an
/// earlier incarnation out of partitions) and the broker epoch to answer with.
pub fn register_broker(
    state: &ControllerState,
    sessions: &mut BrokerSessions,
    ctx: &RegistrationContext,
    request: &BrokerRegistrationRequest,
    now_ms: u64,
) -> Result<ControllerResult<i64>, BrokerError> {
    let image = &state.image;
    if request.cluster_id != ctx.cluster_id {
        return Err(BrokerError::InconsistentClusterId {
            expected: ctx.cluster_id.clone(),
            got: request.cluster_id.clone(),
        });
    }
    let broker = request.broker_id;
    let existing = image.cluster.brokers.get(&broker);
    if let Some(e) = existing {
        if sessions.has_valid_session(broker, e.epoch, now_ms)
            && e.incarnation_id != request.incarnation_id
        {
            return Err(BrokerError::DuplicateRegistration);
        }
    }
    if request.is_migrating_zk_broker {
        return Err(BrokerError::ZkBroker);
    }
    let mv = image
        .features
        .metadata_version()
        .and_then(|l| MetadataVersion::from_level(l).ok())
        .ok_or(BrokerError::NoMetadataVersion)?;
    if mv.is_directory_assignment_supported() {
        check_directories(state, broker, &request.log_dirs)?;
    }
    let finalized = finalized(state, ctx.kraft_version);
    if !request.features.iter().any(|f| f.name == METADATA_VERSION) {
        return Err(BrokerError::NoMetadataVersionRange);
    }
    // Every range the broker sends must hold the finalized level (0 when not finalized), and
    // every finalized feature it does not send counts as the range [0, 0].
    let supports = |name: &str, min: i16, max: i16| {
        let level = finalized.get(name).copied().unwrap_or(0);
        if (min..=max).contains(&level) {
            Ok(())
        } else {
            Err(BrokerError::UnsupportedFeature {
                feature: name.to_string(),
                level,
                min,
                max,
            })
        }
    };
    for f in &request.features {
        supports(&f.name, f.min_supported_version, f.max_supported_version)?;
    }
    for (name, level) in &finalized {
        if *level != 0 && !request.features.iter().any(|f| &f.name == name) {
            supports(name, 0, 0)?;
        }
    }
    let new_incarnation = existing.map(|e| e.incarnation_id) != Some(request.incarnation_id);
    let mut records = Vec::new();
    let mut record = RegisterBrokerRecord {
        broker_id: broker,
        is_migrating_zk_broker: request.is_migrating_zk_broker,
        incarnation_id: request.incarnation_id,
        end_points: request
            .listeners
            .iter()
            .map(|l| BrokerEndpoint {
                name: l.name.clone(),
                host: l.host.clone(),
                port: l.port,
                security_protocol: l.security_protocol,
                ..Default::default()
            })
            .collect(),
        features: request
            .features
            .iter()
            .map(|f| BrokerFeature {
                name: f.name.clone(),
                min_supported_version: f.min_supported_version,
                max_supported_version: f.max_supported_version,
                ..Default::default()
            })
            .collect(),
        rack: request.rack.clone(),
        log_dirs: if mv.is_directory_assignment_supported() {
            request.log_dirs.clone()
        } else {
            Vec::new()
        },
        ..Default::default()
    };
    match existing {
        Some(e) if !new_incarnation => {
            record.fenced = e.fenced;
            record.in_controlled_shutdown = e.in_controlled_shutdown;
            record.broker_epoch = e.epoch;
        }
        _ => {
            // An earlier incarnation may still be in ISRs: it leaves them first, as an unclean
            // shutdown (with ELR on) unless its previous epoch says it shut down cleanly.
            let previous_epoch = existing.map_or(-2, |e| e.epoch);
            let clean =
                ctx.clean_shutdown_detection && previous_epoch == request.previous_broker_epoch;
            let leadership =
                Leadership::new(image, &ctx.topics).ok_or(BrokerError::NoMetadataVersion)?;
            records.extend(leadership.broker_restarted(broker, clean));
            record.fenced = true;
            record.broker_epoch = ctx.next_offset;
        }
    }
    let epoch = record.broker_epoch;
    let fenced = record.fenced;
    records.push(MetadataRecordAndVersion::new(
        record,
        mv.register_broker_record_version(),
    ));
    if new_incarnation {
        sessions.remove(broker);
    }
    sessions.register(broker, fenced);
    Ok(ControllerResult::new(records, epoch))
}

fn check_directories(
    state: &ControllerState,
    broker: i32,
    dirs: &[Uuid],
) -> Result<(), BrokerError> {
    if dirs.is_empty() {
        return Err(BrokerError::NoDirectories);
    }
    if dirs.iter().any(reserved_directory) {
        return Err(BrokerError::ReservedDirectory);
    }
    if dirs.iter().collect::<HashSet<_>>().len() != dirs.len() {
        return Err(BrokerError::DuplicateDirectory);
    }
    for dir in dirs {
        let owner = state
            .image
            .cluster
            .brokers
            .values()
            .find(|b| b.id != broker && b.directories.contains(dir));
        if let Some(b) = owner {
            return Err(BrokerError::DirectoryOwned {
                owner: b.id,
                directory: *dir,
            });
        }
    }
    Ok(())
}

/// Unregistering a broker: it leaves every partition, then an `UnregisterBrokerRecord`.
pub fn unregister_broker(
    state: &ControllerState,
    topics: &TopicsContext,
    broker: i32,
) -> Result<ControllerResult<()>, BrokerError> {
    let registration = state
        .image
        .cluster
        .brokers
        .get(&broker)
        .ok_or(BrokerError::NotRegistered { broker })?;
    let leadership = Leadership::new(&state.image, topics).ok_or(BrokerError::NoMetadataVersion)?;
    let mut records = leadership.broker_unregistered(broker);
    records.push(MetadataRecordAndVersion::new(
        UnregisterBrokerRecord {
            broker_id: broker,
            broker_epoch: registration.epoch,
            ..Default::default()
        },
        0,
    ));
    Ok(ControllerResult::new(records, ()))
}
