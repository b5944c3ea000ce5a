//! Controller registration (KIP-919). Every controller, the active one included, registers its
//! listeners and supported feature ranges with the active controller, which writes a
//! `RegisterControllerRecord`; brokers and admin clients learn the controllers from these.
//!
//! * A kraftd leader answers Java controllers' `ControllerRegistration` requests once the record
//!   is committed, and registers itself by writing its own record.
//! * A kraftd follower sends `ControllerRegistration` to the active controller (Java or kraftd).
//!
//! Registration needs `metadata.version` 3.7-IV0 (level 15) or later, as in Kafka.

use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::controller_registration_request::{Feature, Listener};
use crate::protocol::messages::register_controller_record::{
    ControllerEndpoint, ControllerFeature,
};
use crate::protocol::messages::{
    ControllerRegistrationRequest, ControllerRegistrationResponse, RegisterControllerRecord,
};
use crate::protocol::records::MetadataRecordAndVersion;
use crate::raft::Endpoints;
use crate::server::api::supported_features;

/// `MetadataVersion.IBP_3_7_IV0`: the first level with controller registration.
pub const FIRST_REGISTRATION_LEVEL: i16 = 15;
/// `SecurityProtocol.PLAINTEXT`.
const PLAINTEXT: i16 = 0;

/// This node's registration request to the active controller.
pub fn own_request(
    node_id: i32,
    incarnation: Uuid,
    listeners: &Endpoints,
) -> ControllerRegistrationRequest {
    ControllerRegistrationRequest {
        controller_id: node_id,
        incarnation_id: incarnation,
        zk_migration_ready: false,
        listeners: listeners
            .iter()
            .map(|(name, addr)| Listener {
                name: name.clone(),
                host: addr.host.clone(),
                port: addr.port,
                security_protocol: PLAINTEXT,
                ..Default::default()
            })
            .collect(),
        features: supported_features()
            .into_iter()
            .map(|f| Feature {
                name: f.name.to_string(),
                min_supported_version: f.min,
                max_supported_version: f.max,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Kafka's check before accepting a registration: the controller must support every finalized
/// feature level (`kraft.version` is not a finalized feature of the metadata log).
pub fn check(
    request: &ControllerRegistrationRequest,
    finalized: &std::collections::BTreeMap<String, i16>,
) -> Result<(), ControllerRegistrationResponse> {
    for (name, level) in finalized {
        let supported = request
            .features
            .iter()
            .find(|f| &f.name == name)
            .is_some_and(|f| (f.min_supported_version..=f.max_supported_version).contains(level));
        if !supported {
            return Err(refusal(
                ErrorCode::UNSUPPORTED_VERSION,
                format!(
                    "Unable to register controller {}: it does not support finalized version {level} of {name}",
                    request.controller_id
                ),
            ));
        }
    }
    Ok(())
}

/// The record a registration request becomes (version 0, as Java writes it).
pub fn record(request: &ControllerRegistrationRequest) -> Vec<u8> {
    let record = RegisterControllerRecord {
        controller_id: request.controller_id,
        incarnation_id: request.incarnation_id,
        zk_migration_ready: request.zk_migration_ready,
        end_points: request
            .listeners
            .iter()
            .map(|l| ControllerEndpoint {
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
            .map(|f| ControllerFeature {
                name: f.name.clone(),
                min_supported_version: f.min_supported_version,
                max_supported_version: f.max_supported_version,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    MetadataRecordAndVersion::new(record, 0)
        .encode()
        .expect("RegisterControllerRecord v0 encodes")
}

pub fn refusal(error: ErrorCode, message: String) -> ControllerRegistrationResponse {
    ControllerRegistrationResponse {
        error_code: error.0,
        error_message: Some(message),
        ..Default::default()
    }
}

pub fn accepted() -> ControllerRegistrationResponse {
    ControllerRegistrationResponse::default()
}
