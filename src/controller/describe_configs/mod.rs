//! DescribeConfigs as a Kafka 4.4 controller answers it (`ConfigHelper`, which every
//! controller runs on its own committed image, active or not): this controller's own broker
//! config and the cluster defaults, topics, groups, client-metrics subscriptions and its
//! loggers, each described with values, sources, synonyms, types and documentation as Java
//! describes them. Entries are sorted by name (Java lists them in `HashMap` order).

pub mod broker;
mod entries;
pub mod table;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::controller::acls::authorizer::Denied;
use crate::controller::configs::{
    BROKER_RESOURCE, CLIENT_METRICS_RESOURCE, GROUP_RESOURCE, TOPIC_RESOURCE,
};
use crate::controller::image::MetadataImage;
use crate::controller::topic_configs::StaticLogConfig;
use crate::controller::topics::names;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::describe_configs_request::DescribeConfigsResource;
use crate::protocol::messages::describe_configs_response::DescribeConfigsResult;
use crate::protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};

pub use broker::BrokerLayers;
pub use entries::Include;

/// `ConfigResource.Type` id of the loggers of a node.
pub const BROKER_LOGGER_RESOURCE: i8 = 8;

/// `Errors.INVALID_REQUEST.message()`: what every resource of a request refused as a whole
/// carries.
const INVALID_REQUEST_MESSAGE: &str = "This most likely occurs because of a request being \
     malformed by the client library or the message was sent to an incompatible broker. See \
     the broker logs for more details.";

/// What a controller describes from.
#[derive(Debug, Clone, Copy)]
pub struct DescribeContext<'a> {
    pub node_id: i32,
    /// The controller's properties file.
    pub originals: &'a BTreeMap<String, String>,
    pub statics: &'a StaticLogConfig,
    /// The committed image.
    pub image: &'a MetadataImage,
    /// The level of the controller's root logger (`INFO`, `DEBUG`, ...).
    pub root_log_level: &'a str,
}

/// Why one resource is not described (`ApiError.fromThrowable` of what `ConfigHelper` throws).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescribeError {
    #[error("Unexpected broker id, expected {expected} or empty string, but received {given}")]
    OtherBroker { expected: i32, given: String },
    #[error("Unexpected broker id, expected {expected} but received {given}")]
    OtherLoggerNode { expected: i32, given: String },
    #[error("Broker id must be an integer, but it is: {0}")]
    NotABrokerId(String),
    #[error("Broker id must not be empty")]
    EmptyLoggerNode,
    #[error("Client metrics subscription name must not be empty")]
    EmptySubscription,
    #[error("Group name must not be empty")]
    EmptyGroup,
    #[error("{0}")]
    InvalidTopic(#[from] names::InvalidName),
    /// The topic does not exist: UNKNOWN_TOPIC_OR_PARTITION, with no message of its own.
    #[error("")]
    UnknownTopic,
}

impl DescribeError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            DescribeError::InvalidTopic(_) => ErrorCode::INVALID_TOPIC_EXCEPTION,
            DescribeError::UnknownTopic => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            _ => ErrorCode::INVALID_REQUEST,
        }
    }
}

/// Whether the requester may describe a resource (`DESCRIBE_CONFIGS` on it, or on the cluster).
pub type Authorized<'a> = &'a dyn Fn(&DescribeConfigsResource) -> bool;

/// `ConfigHelper.handleDescribeConfigsRequest`: the resources the requester may describe,
/// described in order, then the others refused. A resource type Kafka does not know refuses
/// the whole request.
pub fn describe_configs(
    ctx: &DescribeContext,
    request: &DescribeConfigsRequest,
    authorized: Authorized,
) -> DescribeConfigsResponse {
    let known = |ty: i8| {
        matches!(
            ty,
            TOPIC_RESOURCE
                | BROKER_RESOURCE
                | BROKER_LOGGER_RESOURCE
                | CLIENT_METRICS_RESOURCE
                | GROUP_RESOURCE
        )
    };
    if let Some(unknown) = request.resources.iter().find(|r| !known(r.resource_type)) {
        tracing::info!(
            target: "kraftd::controller",
            "DescribeConfigs refused as a whole: resource {:?} has the unknown type {}",
            unknown.resource_name,
            unknown.resource_type
        );
        return refused_as_a_whole(request);
    }
    let include = Include {
        synonyms: request.include_synonyms,
        documentation: request.include_documentation,
    };
    let (allowed, denied): (Vec<_>, Vec<_>) = request.resources.iter().partition(|r| authorized(r));
    let layers = BrokerLayers::new(ctx.node_id, ctx.originals, &ctx.image.configs);
    let described = allowed.into_iter().map(|r| {
        let mut result = match describe(ctx, &layers, r, include) {
            Ok(configs) => DescribeConfigsResult {
                configs,
                ..Default::default()
            },
            Err(e) => DescribeConfigsResult {
                error_code: e.error_code().0,
                error_message: match e {
                    DescribeError::UnknownTopic => Some(String::new()),
                    e => Some(e.to_string()),
                },
                ..Default::default()
            },
        };
        result.configs.sort_by(|a, b| a.name.cmp(&b.name));
        result.resource_type = r.resource_type;
        result.resource_name = r.resource_name.clone();
        result
    });
    let refused = denied.into_iter().map(|r| {
        let denied = match r.resource_type {
            TOPIC_RESOURCE => Denied::Topic,
            GROUP_RESOURCE => Denied::Group,
            _ => Denied::Cluster,
        };
        DescribeConfigsResult {
            error_code: denied.error_code().0,
            error_message: Some(denied.to_string()),
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            ..Default::default()
        }
    });
    DescribeConfigsResponse {
        results: described.chain(refused).collect(),
        ..Default::default()
    }
}

/// `DescribeConfigsRequest.getErrorResponse` of an `InvalidRequestException`: every resource
/// INVALID_REQUEST with the code's own message.
fn refused_as_a_whole(request: &DescribeConfigsRequest) -> DescribeConfigsResponse {
    DescribeConfigsResponse {
        results: request
            .resources
            .iter()
            .map(|r| DescribeConfigsResult {
                error_code: ErrorCode::INVALID_REQUEST.0,
                error_message: Some(INVALID_REQUEST_MESSAGE.to_string()),
                resource_type: r.resource_type,
                resource_name: r.resource_name.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `ConfigHelper.resourceNameToBrokerId`.
fn broker_id(name: &str) -> Result<i32, DescribeError> {
    crate::controller::java::parse_int(name)
        .ok_or_else(|| DescribeError::NotABrokerId(name.to_string()))
}

/// One resource's entries, those of its configuration keys only if it names any.
fn describe(
    ctx: &DescribeContext,
    layers: &BrokerLayers,
    r: &DescribeConfigsResource,
    include: Include,
) -> Result<
    Vec<crate::protocol::messages::describe_configs_response::DescribeConfigsResourceResult>,
    DescribeError,
> {
    let configs = &ctx.image.configs.resources;
    let own = |ty: i8| configs.get(&(ty, r.resource_name.clone()));
    let name = r.resource_name.as_str();
    let mut entries = match r.resource_type {
        TOPIC_RESOURCE => {
            names::validate(name)?;
            if !ctx.image.topics.by_name.contains_key(name) {
                return Err(DescribeError::UnknownTopic);
            }
            entries::topic_entries(layers, ctx.statics, own(TOPIC_RESOURCE), include)
        }
        BROKER_RESOURCE if name.is_empty() => entries::default_broker_entries(layers, include),
        BROKER_RESOURCE if broker_id(name)? == ctx.node_id => {
            entries::own_broker_entries(layers, include)
        }
        BROKER_RESOURCE => {
            return Err(DescribeError::OtherBroker {
                expected: ctx.node_id,
                given: name.to_string(),
            })
        }
        BROKER_LOGGER_RESOURCE if name.is_empty() => return Err(DescribeError::EmptyLoggerNode),
        BROKER_LOGGER_RESOURCE if broker_id(name)? != ctx.node_id => {
            return Err(DescribeError::OtherLoggerNode {
                expected: ctx.node_id,
                given: name.to_string(),
            })
        }
        BROKER_LOGGER_RESOURCE => entries::logger_entries(ctx.root_log_level),
        CLIENT_METRICS_RESOURCE if name.is_empty() => return Err(DescribeError::EmptySubscription),
        CLIENT_METRICS_RESOURCE => {
            entries::client_metrics_entries(own(CLIENT_METRICS_RESOURCE), include)
        }
        GROUP_RESOURCE if name.is_empty() => return Err(DescribeError::EmptyGroup),
        _ => entries::group_entries(layers, own(GROUP_RESOURCE), include),
    };
    if let Some(keys) = r.configuration_keys.as_ref().filter(|k| !k.is_empty()) {
        entries.retain(|e| keys.contains(&e.name));
    }
    Ok(entries)
}
