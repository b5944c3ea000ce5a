//! Dynamic config changes at the active controller: IncrementalAlterConfigs and the legacy
//! AlterConfigs, decided as Kafka 4.4's `ConfigurationControlManager` decides them, with the
//! request-level screening of `ControllerApis` ([`api`]) and the checks of
//! `ControllerConfigurationValidator` and `QuorumController`'s existence checker
//! ([`validate`]). Every decision reads the latest image and returns records and per-resource
//! outcomes; nothing here mutates the controller.

pub mod api;
pub mod client_metrics;
mod errors;
pub mod group;
pub mod schema;
mod validate;

#[cfg(test)]
mod tests;

pub use errors::{ChangeError, MAX_CONFIG_VALUE_LENGTH};

use crate::controller::configs::{ConfigResource, BROKER_RESOURCE, TOPIC_RESOURCE};
use crate::controller::java::{string_map_order, DEFAULT_HASH_MAP_CAPACITY};
use crate::controller::topic_configs::StaticLogConfig;
use crate::controller::topics::MAX_RECORDS_PER_USER_OP;
use crate::controller::{ControllerResult, MetadataImage};
use crate::protocol::messages::{ClearElrRecord, ConfigRecord};
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};

/// `AlterConfigOp.OpType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpType {
    Set,
    Delete,
    Append,
    Subtract,
}

impl OpType {
    /// `OpType.forId`; `None` for an id Java does not know.
    pub fn from_id(id: i8) -> Option<OpType> {
        Some(match id {
            0 => OpType::Set,
            1 => OpType::Delete,
            2 => OpType::Append,
            3 => OpType::Subtract,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            OpType::Set => "SET",
            OpType::Delete => "DELETE",
            OpType::Append => "APPEND",
            OpType::Subtract => "SUBTRACT",
        }
    }
}

/// One operation of an IncrementalAlterConfigs resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub op: OpType,
    pub value: Option<String>,
}

/// What config decisions need of this controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigsContext {
    /// The controller's own log configs (topic configs are validated over them).
    pub statics: StaticLogConfig,
    /// Node ids of the controller quorum (`QuorumFeatures.isControllerId`): a BROKER resource
    /// naming one exists even before it registers.
    pub controller_ids: Vec<i32>,
}

/// Why a whole request fails (Kafka's `BoundedListTooLongException`, mapped to
/// POLICY_VIOLATION by the quorum controller).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unable to perform excessively large batch operation.")]
pub struct TooManyRecords;

/// Each resource decided, in the order given, with its outcome.
pub type Outcomes = Vec<(ConfigResource, Result<(), ChangeError>)>;

/// A decision: its records, and the outcomes or the whole request's failure.
pub type Decision = ControllerResult<Result<Outcomes, TooManyRecords>>;

/// One IncrementalAlterConfigs resource: its operations by config name.
pub type IncrementalChange = (ConfigResource, Vec<(String, Op)>);

/// One AlterConfigs resource: its new configs (a null value deletes).
pub type LegacyChange = (ConfigResource, Vec<(String, Option<String>)>);

/// The entries of a Java `HashMap<String, V>` of the default capacity filled in order from
/// `entries` (a key given twice keeps its first place and its last value), in its order.
fn keyed<V: Clone>(entries: &[(String, V)]) -> Vec<(String, V)> {
    string_map_order(DEFAULT_HASH_MAP_CAPACITY, entries)
}

fn config_record(resource: &ConfigResource, name: &str, value: Option<String>) -> ConfigRecord {
    ConfigRecord {
        resource_type: resource.0,
        resource_name: resource.1.clone(),
        name: name.to_string(),
        value,
        ..Default::default()
    }
}

/// `getParts`: the current value, else the schema's default, split on commas without empties.
fn parts(value: Option<&str>, resource: &ConfigResource, key: &str) -> Vec<String> {
    let value = value.or_else(|| schema::default_value(resource.0, key));
    value.map_or_else(Vec::new, |v| {
        v.split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    })
}

/// `incrementalAlterConfigResource`: the records one resource's operations write, once
/// validated.
fn incremental_resource(
    image: &MetadataImage,
    ctx: &ConfigsContext,
    resource: &ConfigResource,
    ops: &[(String, Op)],
    forwarded: bool,
) -> Result<Vec<ConfigRecord>, ChangeError> {
    let current = image.configs.resources.get(resource);
    let mut records = Vec::new();
    for (key, op) in keyed(ops) {
        let current_value = current.and_then(|c| c.get(&key)).cloned();
        let new_value = match op.op {
            OpType::Set => op.value.clone(),
            OpType::Delete => None,
            OpType::Append | OpType::Subtract => {
                if !schema::is_list(resource.0, &key) {
                    return Err(ChangeError::NotAList {
                        op: op.op.name(),
                        key,
                    });
                }
                let mut list = parts(current_value.as_deref(), resource, &key);
                // Java splits a null operand with a NullPointerException; kraftd reads it
                // as empty (docs/notes/configs.md).
                let operand = op.value.as_deref().unwrap_or("");
                for v in java_split(operand) {
                    if op.op == OpType::Append {
                        if !list.iter().any(|x| x == v) {
                            list.push(v.to_string());
                        }
                    } else if let Some(i) = list.iter().position(|x| x == v) {
                        list.remove(i);
                    }
                }
                Some(list.join(","))
            }
        };
        // KAFKA-14136: broker configs are written even when unchanged, to make brokers reload.
        if current_value != new_value || resource.0 == BROKER_RESOURCE {
            records.push(config_record(resource, &key, new_value));
        }
    }
    validate::validate_alter(image, ctx, resource, &records, &[], forwarded)?;
    Ok(records)
}

/// Java's `String.split(",")`: trailing empty strings removed (a leading one is kept).
fn java_split(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(',').collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts == [""] && !s.is_empty() {
        parts.clear();
    }
    parts
}

/// `legacyAlterConfigResource`: the resource's configs become exactly `configs`; what it had
/// besides is deleted.
fn legacy_resource(
    image: &MetadataImage,
    ctx: &ConfigsContext,
    resource: &ConfigResource,
    configs: &[(String, Option<String>)],
    forwarded: bool,
) -> Result<Vec<ConfigRecord>, ChangeError> {
    let current = image.configs.resources.get(resource);
    let configs = keyed(configs);
    let mut altered = Vec::new();
    for (key, value) in &configs {
        let current_value = current.and_then(|c| c.get(key));
        if current_value != value.as_ref() || resource.0 == BROKER_RESOURCE {
            altered.push(config_record(resource, key, value.clone()));
        }
    }
    // Java walks its `TimelineHashMap` of the resource's configs, whose order depends on the
    // history of that map; kraftd deletes in name order (the image is the same).
    let deleted: Vec<ConfigRecord> = current
        .into_iter()
        .flat_map(|c| c.keys())
        .filter(|k| !configs.iter().any(|(n, _)| n == *k))
        .map(|k| config_record(resource, k, None))
        .collect();
    validate::validate_alter(image, ctx, resource, &altered, &deleted, forwarded)?;
    altered.extend(deleted);
    Ok(altered)
}

/// `createClearElrRecordsAsNeeded`: with ELR enabled, every `min.insync.replicas` change
/// clears the ELR of its topic (a topic resource) or of every topic.
fn clear_elr_records(image: &MetadataImage, records: &[ConfigRecord]) -> Vec<ClearElrRecord> {
    if !validate::elr_enabled(image) {
        return Vec::new();
    }
    records
        .iter()
        .filter(|r| r.name == "min.insync.replicas")
        .map(|r| ClearElrRecord {
            topic_name: if r.resource_type == TOPIC_RESOURCE {
                r.resource_name.clone()
            } else {
                String::new()
            },
            ..Default::default()
        })
        .collect()
}

/// The batch of a decision: the ConfigRecords of every accepted resource, then the ELR
/// clearing they call for; nothing when validating only.
fn finish(
    image: &MetadataImage,
    outcomes: Vec<(ConfigResource, Result<Vec<ConfigRecord>, ChangeError>)>,
    validate_only: bool,
) -> Decision {
    let configs: Vec<ConfigRecord> = outcomes
        .iter()
        .filter_map(|(_, o)| o.as_ref().ok())
        .flatten()
        .cloned()
        .collect();
    let clears = clear_elr_records(image, &configs);
    let mut records: Vec<MetadataRecordAndVersion> = configs
        .into_iter()
        .map(|r| MetadataRecordAndVersion::new(MetadataRecord::from(r), 0))
        .collect();
    records.extend(
        clears
            .into_iter()
            .map(|r| MetadataRecordAndVersion::new(MetadataRecord::from(r), 0)),
    );
    // Java's `BoundedList` fails the operation, validate-only or not.
    if records.len() > MAX_RECORDS_PER_USER_OP {
        return ControllerResult::reply_only(Err(TooManyRecords));
    }
    let outcomes = outcomes
        .into_iter()
        .map(|(r, o)| (r, o.map(|_| ())))
        .collect();
    if validate_only {
        records.clear();
    }
    ControllerResult::new(records, Ok(outcomes))
}

/// IncrementalAlterConfigs over `resources` (each resource once; ControllerApis has screened
/// them).
pub fn incremental_alter_configs(
    image: &MetadataImage,
    ctx: &ConfigsContext,
    resources: &[IncrementalChange],
    validate_only: bool,
    forwarded: bool,
) -> Decision {
    let outcomes = resources
        .iter()
        .map(|(resource, ops)| {
            let o = incremental_resource(image, ctx, resource, ops, forwarded);
            (resource.clone(), o)
        })
        .collect();
    finish(image, outcomes, validate_only)
}

/// The legacy AlterConfigs over `resources` (each resource once).
pub fn legacy_alter_configs(
    image: &MetadataImage,
    ctx: &ConfigsContext,
    resources: &[LegacyChange],
    validate_only: bool,
    forwarded: bool,
) -> Decision {
    let outcomes = resources
        .iter()
        .map(|(resource, configs)| {
            let o = legacy_resource(image, ctx, resource, configs, forwarded);
            (resource.clone(), o)
        })
        .collect();
    finish(image, outcomes, validate_only)
}
