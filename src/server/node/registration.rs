//! Controller registration (KIP-919). Every controller, the active one included, registers its
//! listeners and supported feature ranges with the active controller, which writes a
//! `RegisterControllerRecord`; brokers and admin clients learn the controllers from these.
//!
//! * A kraftd leader answers Java controllers' `ControllerRegistration` requests once the record
//!   is committed, and registers itself by writing its own record.
//! * A kraftd follower sends `ControllerRegistration` to the active controller (Java or kraftd).
//!
//! The active controller's decision is the controller's (`controller::controller_registration`);
//! here are the node's own request and the responses.

use std::collections::BTreeMap;

use crate::protocol::codec::Uuid;
use crate::protocol::features::SUPPORTED_FEATURES;
use crate::protocol::messages::controller_registration_request::{Feature, Listener};
use crate::protocol::messages::ControllerRegistrationRequest;
use crate::raft::Endpoints;
use crate::raft::Instant;
use crate::server::config::SecurityProtocol;

/// This node's registration request to the active controller, each listener with its security
/// protocol from `protocols` (PLAINTEXT for one not in it).
pub fn own_request(
    node_id: i32,
    incarnation: Uuid,
    listeners: &Endpoints,
    protocols: &BTreeMap<String, SecurityProtocol>,
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
                security_protocol: protocols
                    .get(name)
                    .copied()
                    .unwrap_or(SecurityProtocol::Plaintext)
                    .id(),
                ..Default::default()
            })
            .collect(),
        features: SUPPORTED_FEATURES
            .iter()
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

/// This node's own registration.
pub(super) struct Registrations {
    /// This process's incarnation id (new at every start, as Java's).
    pub incarnation: Uuid,
    /// The token of this node's request in flight to the active controller.
    pub own_token: Option<u64>,
    /// No new attempt of this node's own registration before this.
    pub own_next_attempt: Instant,
}

impl Registrations {
    pub fn new() -> Registrations {
        Registrations {
            incarnation: crate::log::metadata_dir::random_directory_id(),
            own_token: None,
            own_next_attempt: Instant(0),
        }
    }
}
