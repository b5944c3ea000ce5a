//! One answer per API, as a Java controller that is not the active one gives it. Most are the
//! request class's `getErrorResponse(NotControllerException)`; the checks Java's
//! `ControllerApis` makes before it reaches its quorum controller come first where their
//! answer does not depend on metadata (the quorum controller also answers an empty request
//! at once, without asking whether it is active).

use std::collections::{BTreeSet, HashSet};

use crate::protocol::codec::Uuid;

use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_client_quotas_response as quotas;
use crate::protocol::messages::alter_configs_response as alter_configs_resp;
use crate::protocol::messages::alter_partition_reassignments_response as reassign;
use crate::protocol::messages::alter_user_scram_credentials_response as scram;
use crate::protocol::messages::create_acls_response::AclCreationResult;
use crate::protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use crate::protocol::messages::create_topics_response::CreatableTopicResult;
use crate::protocol::messages::delete_acls_response::DeleteAclsFilterResult;
use crate::protocol::messages::delete_topics_response::DeletableTopicResult;
use crate::protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use crate::protocol::messages::incremental_alter_configs_response as incremental_resp;
use crate::protocol::messages::list_partition_reassignments_response as list_reassign;
use crate::protocol::messages::*;

/// What a controller that is not the active one needs to know to answer as Java does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonActive {
    /// The node this controller believes leads the quorum, when that is another node. kraftd
    /// never names itself here: a controller that is active answers for itself.
    pub active_elsewhere: Option<i32>,
    /// `delete.topic.enable`.
    pub delete_topic_enable: bool,
    /// The request came inside an Envelope (a broker forwarded it).
    pub forwarded: bool,
}

impl NonActive {
    /// The answer context of controller `own`, which knows `leader` as the leader.
    pub fn of(own: i32, leader: Option<i32>, delete_topic_enable: bool) -> NonActive {
        NonActive {
            active_elsewhere: leader.filter(|&l| l != own),
            delete_topic_enable,
            forwarded: false,
        }
    }

    /// Java's `NotControllerException` message (`ControllerExceptions.newWrongControllerException`).
    pub fn message(&self) -> String {
        match self.active_elsewhere {
            Some(id) => format!("The active controller appears to be node {id}."),
            None => "No controller appears to be active.".to_string(),
        }
    }
}

const NOT_CONTROLLER: i16 = ErrorCode::NOT_CONTROLLER.0;

/// Kafka's `Errors.NOT_CONTROLLER.message()`, used where Java takes the code's own text.
const NOT_CONTROLLER_TEXT: &str = "This is not the correct controller for this cluster.";

/// Kafka's config resource types (`ConfigResource.Type`) that exist; others are UNKNOWN.
fn known_resource_type(id: i8) -> bool {
    // TOPIC 2, BROKER 4, BROKER_LOGGER 8, CLIENT_METRICS 16, GROUP 32.
    matches!(id, 2 | 4 | 8 | 16 | 32)
}

mod cluster;
mod configs;
mod leadership;
mod security;
mod topics;

pub use cluster::*;
pub use configs::*;
pub use leadership::*;
pub use security::*;
pub use topics::*;
