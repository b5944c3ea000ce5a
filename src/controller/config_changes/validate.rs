//! `ConfigurationControlManager.validateAlterConfig` of Kafka 4.4: the checks on each record
//! (ELR's `min.insync.replicas` rules, `cordoned.log.dirs`, the value size), then the
//! resource's validator (`ControllerConfigurationValidator`: names, then topic configs as
//! `LogConfig.validate` checks them over the controller's own log configs, group configs as
//! `GroupConfig.validate` checks them over its group-coordinator configs), then that the
//! resource exists.

use std::collections::BTreeMap;

use super::group::GroupLimits;
use super::{ChangeError, ConfigsContext, MAX_CONFIG_VALUE_LENGTH};
use crate::controller::configs::{
    ConfigResource, BROKER_RESOURCE, CLIENT_METRICS_RESOURCE, GROUP_RESOURCE, TOPIC_RESOURCE,
};
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::topic_configs::parse::Value;
use crate::controller::topic_configs::{validate_topic_configs, ConfigError};
use crate::controller::topics::names;
use crate::controller::MetadataImage;
use crate::protocol::messages::ConfigRecord;

const MIN_ISR: &str = "min.insync.replicas";
const CORDONED_LOG_DIRS: &str = "cordoned.log.dirs";
const ELR_FEATURE: &str = "eligible.leader.replicas.version";

/// `FeatureControlManager.isElrFeatureEnabled`.
pub fn elr_enabled(image: &MetadataImage) -> bool {
    image
        .features
        .levels
        .get(ELR_FEATURE)
        .is_some_and(|l| *l >= 1)
}

fn cordoned_supported(image: &MetadataImage) -> bool {
    image
        .features
        .metadata_version()
        .and_then(|l| MetadataVersion::from_level(l).ok())
        .is_some_and(|mv| mv.is_cordoned_log_dirs_supported())
}

/// The pieces of a `cordoned.log.dirs` value (`String.trim`, then a split on commas with the
/// whitespace around them, empty pieces kept).
fn dirs(value: &str) -> Vec<&str> {
    crate::controller::java::trim(value)
        .split(',')
        .map(|p| p.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r')))
        .collect()
}

/// The per-record checks, in Java's order.
fn check_record(
    image: &MetadataImage,
    r: &ConfigRecord,
    current_cordoned: Option<&str>,
    forwarded: bool,
) -> Result<(), ChangeError> {
    let broker = r.resource_type == BROKER_RESOURCE;
    if broker && r.name == MIN_ISR && elr_enabled(image) {
        if !r.resource_name.is_empty() {
            return Err(ChangeError::BrokerMinIsrWithElr);
        }
        if r.value.is_none() {
            return Err(ChangeError::ClusterMinIsrRemovalWithElr);
        }
    }
    if broker && r.name == CORDONED_LOG_DIRS {
        if !cordoned_supported(image) {
            return Err(ChangeError::CordonedLogDirsUnsupported);
        }
        // Only a broker may cordon its own directories: straight at the controller a value
        // may only shrink.
        if let Some(value) = r.value.as_deref() {
            if !forwarded && !crate::controller::java::trim(value).is_empty() {
                let current = current_cordoned.map(dirs).unwrap_or_default();
                if !dirs(value).iter().all(|d| current.contains(d)) {
                    return Err(ChangeError::CordonedLogDirsNotSubset);
                }
            }
        }
    }
    Ok(())
}

/// `Integer.valueOf` of a broker resource's name.
fn broker_id(name: &str) -> Result<i32, ChangeError> {
    name.parse::<i32>()
        .map_err(|_| ChangeError::BrokerNameNotANumber)
}

/// `validateAlterConfig` for one resource: `altered` are the records the request writes,
/// `deleted` those the legacy API writes for configs it leaves out.
pub fn validate_alter(
    image: &MetadataImage,
    ctx: &ConfigsContext,
    resource: &ConfigResource,
    altered: &[ConfigRecord],
    deleted: &[ConfigRecord],
    forwarded: bool,
) -> Result<(), ChangeError> {
    let existing: BTreeMap<String, String> = image
        .configs
        .resources
        .get(resource)
        .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let current_cordoned = existing.get(CORDONED_LOG_DIRS).map(String::as_str);
    let mut all: Vec<(String, String)> = existing
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for r in altered {
        check_record(image, r, current_cordoned, forwarded)?;
        all.retain(|(k, _)| *k != r.name);
        if let Some(v) = &r.value {
            if v.encode_utf16().count() > MAX_CONFIG_VALUE_LENGTH {
                return Err(ChangeError::ValueTooLong);
            }
            all.push((r.name.clone(), v.clone()));
        }
    }
    for r in deleted {
        check_record(image, r, current_cordoned, forwarded)?;
        all.retain(|(k, _)| *k != r.name);
    }
    validate_resource(ctx, resource, &all, &existing)?;
    exists(image, ctx, resource)
}

/// `ControllerConfigurationValidator.validate(resource, newConfigs, oldConfigs)`.
fn validate_resource(
    ctx: &ConfigsContext,
    resource: &ConfigResource,
    all: &[(String, String)],
    existing: &BTreeMap<String, String>,
) -> Result<(), ChangeError> {
    let (kind, name) = (resource.0, resource.1.as_str());
    match kind {
        TOPIC_RESOURCE => {
            if name.is_empty() {
                return Err(ChangeError::DefaultTopic);
            }
            names::validate(name).map_err(ChangeError::InvalidTopicName)?;
            let parsed =
                validate_topic_configs(all, &ctx.statics).map_err(ChangeError::TopicConfig)?;
            // `validateTurningOffRemoteStorageWithDelete` (remote storage is never on here:
            // validate_topic_configs refuses it).
            let was_remote = existing
                .get("remote.storage.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
            let delete_on_disable = parsed
                .get("remote.log.delete.on.disable")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if was_remote && !delete_on_disable {
                return Err(ChangeError::TopicConfig(
                    ConfigError::RemoteStorageOffWithoutDelete,
                ));
            }
            Ok(())
        }
        BROKER_RESOURCE => {
            if !name.is_empty() && broker_id(name)? < 0 {
                return Err(ChangeError::NegativeBrokerId);
            }
            Ok(())
        }
        CLIENT_METRICS_RESOURCE => super::client_metrics::validate(name, all),
        GROUP_RESOURCE => {
            if name.is_empty() {
                return Err(ChangeError::DefaultGroup);
            }
            super::group::validate(all, GroupLimits(&ctx.statics.originals))
                .map_err(ChangeError::GroupConfig)
        }
        // ControllerApis hands the quorum controller no other type.
        _ => Err(ChangeError::UnexpectedResourceType("UNKNOWN")),
    }
}

/// `QuorumController.ConfigResourceExistenceChecker`.
fn exists(
    image: &MetadataImage,
    ctx: &ConfigsContext,
    resource: &ConfigResource,
) -> Result<(), ChangeError> {
    let name = resource.1.as_str();
    match resource.0 {
        TOPIC_RESOURCE if !image.topics.by_name.contains_key(name) => {
            Err(ChangeError::UnknownTopic(name.to_string()))
        }
        BROKER_RESOURCE if !name.is_empty() => {
            let id = broker_id(name)?;
            let known = image.cluster.brokers.contains_key(&id)
                || ctx.controller_ids.contains(&id)
                || image.cluster.controllers.contains_key(&id);
            if known {
                Ok(())
            } else {
                Err(ChangeError::BrokerNotRegistered(id))
            }
        }
        _ => Ok(()),
    }
}
