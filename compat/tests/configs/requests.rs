//! The requests of `alter_configs`, and their answers rendered as text to compare. Java answers
//! the resources a request hands its quorum controller in the order of a `HashMap` keyed by
//! `ConfigResource`, whose hash mixes in the identity hash of an enum (it differs from run to
//! run), so the answers of a request are sorted before they are compared.

use kraftd::protocol::codec::Message;
use kraftd::protocol::messages::alter_configs_request::{AlterConfigsResource, AlterableConfig};
use kraftd::protocol::messages::incremental_alter_configs_request as inc;
use kraftd::protocol::messages::{
    AlterConfigsRequest, AlterConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};

use crate::topics::cluster::TopicCluster;

pub const TOPIC: i8 = 2;
pub const BROKER: i8 = 4;
pub const BROKER_LOGGER: i8 = 8;
pub const CLIENT_METRICS: i8 = 16;
pub const GROUP: i8 = 32;

pub const SET: i8 = 0;
pub const DELETE: i8 = 1;
pub const APPEND: i8 = 2;
pub const SUBTRACT: i8 = 3;

/// One resource of an IncrementalAlterConfigs: type, name, (config, op, value).
pub type Inc<'a> = (i8, &'a str, Vec<(&'a str, i8, Option<&'a str>)>);
/// One resource of an AlterConfigs: type, name, (config, value).
pub type Legacy<'a> = (i8, &'a str, Vec<(&'a str, Option<&'a str>)>);

pub enum Request<'a> {
    Incremental {
        version: i16,
        validate_only: bool,
        resources: Vec<Inc<'a>>,
    },
    Legacy {
        version: i16,
        validate_only: bool,
        resources: Vec<Legacy<'a>>,
    },
}

pub fn incremental(version: i16, validate_only: bool, resources: Vec<Inc>) -> Request {
    Request::Incremental {
        version,
        validate_only,
        resources,
    }
}

pub fn legacy(version: i16, validate_only: bool, resources: Vec<Legacy>) -> Request {
    Request::Legacy {
        version,
        validate_only,
        resources,
    }
}

fn incremental_request(validate_only: bool, resources: &[Inc]) -> IncrementalAlterConfigsRequest {
    IncrementalAlterConfigsRequest {
        resources: resources
            .iter()
            .map(|(ty, name, configs)| inc::AlterConfigsResource {
                resource_type: *ty,
                resource_name: name.to_string(),
                configs: configs
                    .iter()
                    .map(|(k, op, v)| inc::AlterableConfig {
                        name: k.to_string(),
                        config_operation: *op,
                        value: v.map(str::to_string),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        validate_only,
        ..Default::default()
    }
}

fn legacy_request(validate_only: bool, resources: &[Legacy]) -> AlterConfigsRequest {
    AlterConfigsRequest {
        resources: resources
            .iter()
            .map(|(ty, name, configs)| AlterConfigsResource {
                resource_type: *ty,
                resource_name: name.to_string(),
                configs: configs
                    .iter()
                    .map(|(k, v)| AlterableConfig {
                        name: k.to_string(),
                        value: v.map(str::to_string),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        validate_only,
        ..Default::default()
    }
}

fn line(ty: i8, name: &str, code: i16, message: &Option<String>) -> String {
    let code = kraftd::protocol::errors::ErrorCode(code).name();
    format!("{ty}:{name:?} {code} {message:?}")
}

/// Sends `request` to the cluster's controller; its answers, one line per resource, sorted.
pub fn run(c: &TopicCluster, request: &Request) -> String {
    let lines: Result<Vec<String>, String> = match request {
        Request::Incremental {
            version,
            validate_only,
            resources,
        } => c
            .send(*version, &incremental_request(*validate_only, resources))
            .and_then(|body| {
                IncrementalAlterConfigsResponse::decode_exact(&body, *version)
                    .map_err(|e| format!("undecodable answer: {e}"))
            })
            .map(|r| {
                r.responses
                    .iter()
                    .map(|e| {
                        line(
                            e.resource_type,
                            &e.resource_name,
                            e.error_code,
                            &e.error_message,
                        )
                    })
                    .collect()
            }),
        Request::Legacy {
            version,
            validate_only,
            resources,
        } => c
            .send(*version, &legacy_request(*validate_only, resources))
            .and_then(|body| {
                AlterConfigsResponse::decode_exact(&body, *version)
                    .map_err(|e| format!("undecodable answer: {e}"))
            })
            .map(|r| {
                r.responses
                    .iter()
                    .map(|e| {
                        line(
                            e.resource_type,
                            &e.resource_name,
                            e.error_code,
                            &e.error_message,
                        )
                    })
                    .collect()
            }),
    };
    match lines {
        Ok(mut lines) => {
            lines.sort();
            lines.join("\n")
        }
        Err(e) => format!("no answer: {e}"),
    }
}
