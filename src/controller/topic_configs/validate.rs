//! A new topic's configs, checked as Kafka 4.4's controller checks them
//! (`ControllerConfigurationValidator.validate` then `LogConfig.validate`): unknown names first
//! (in the order of Java's `HashMap` of the configs), then every definition in order, each
//! value parsed and validated over the controller's own log configs, then the checks across
//! configs.

use std::collections::BTreeMap;

use super::parse::{default_value, parse_value, Value};
use super::{topic_config_def, ConfigError, TOPIC_CONFIG_DEFS};
use crate::controller::java::{hash_map_capacity, hash_order, string_hash};
use crate::properties::Properties;

/// The controller's static log configs by topic config name (Kafka's
/// `KafkaConfig.extractLogConfigMap`): the first broker synonym the controller's properties
/// set, converted to the topic config's unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticLogConfig {
    /// The controller's properties as written (Kafka's `KafkaConfig.originals`): the source of
    /// `STATIC_BROKER_CONFIG` values.
    pub originals: BTreeMap<String, String>,
}

impl StaticLogConfig {
    pub fn from_properties(props: &Properties) -> StaticLogConfig {
        StaticLogConfig {
            originals: props
                .iter()
                .map(|(k, e)| (k.to_string(), e.value.clone()))
                .collect(),
        }
    }

    /// The value a synonym of topic config `name` gives it, converted, with the synonym.
    pub fn synonym_value(
        &self,
        name: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Option<String> {
        let def = topic_config_def(name)?;
        def.synonyms
            .iter()
            .find_map(|(synonym, factor)| lookup(synonym).map(|v| convert(&v, *factor)))
    }

    /// The controller's own value of topic config `name`, if its properties set a synonym.
    pub fn configured(&self, name: &str) -> Option<String> {
        self.synonym_value(name, |s| self.originals.get(s).cloned())
    }
}

/// `ConfigSynonym`'s converters: identity, or whole hours or minutes to milliseconds (a value
/// that is not an int counts as 0, as Java's `valueToInt` falls back).
pub fn convert(value: &str, factor: i64) -> String {
    if factor == 1 {
        return value.to_string();
    }
    let n = crate::controller::java::trim(value)
        .parse::<i32>()
        .unwrap_or(0);
    (i64::from(n).saturating_mul(factor)).to_string()
}

/// The configs of a topic being created (name, value, in request order; a name given twice
/// keeps its first place and its last value), checked against `statics`. `Ok` holds each
/// config's parsed value.
pub fn validate_topic_configs(
    configs: &[(String, String)],
    statics: &StaticLogConfig,
) -> Result<BTreeMap<&'static str, Value>, ConfigError> {
    let mut unique: Vec<(String, String)> = Vec::new();
    for (k, v) in configs {
        match unique.iter_mut().find(|(n, _)| n == k) {
            Some(entry) => entry.1 = v.clone(),
            None => unique.push((k.clone(), v.clone())),
        }
    }
    let ordered = hash_order(
        unique
            .iter()
            .map(|(k, _)| (string_hash(k), k.clone()))
            .collect(),
        hash_map_capacity(unique.len()),
    );
    for name in &ordered {
        if topic_config_def(name).is_none() {
            return Err(ConfigError::UnknownName(name.clone()));
        }
    }
    let given: BTreeMap<&str, &str> = unique
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut parsed = BTreeMap::new();
    for def in TOPIC_CONFIG_DEFS {
        let value = match given.get(def.name) {
            Some(raw) => parse_value(def, raw)?,
            None => match statics.configured(def.name) {
                // A static value Java would have refused at start-up counts as the default.
                Some(raw) => parse_value(def, &raw).unwrap_or_else(|_| default_value(def)),
                None => default_value(def),
            },
        };
        parsed.insert(def.name, value);
    }
    let long = |name: &str| parsed.get(name).and_then(Value::as_long).unwrap_or(0);
    let (min, max) = (long("min.compaction.lag.ms"), long("max.compaction.lag.ms"));
    if min > max {
        return Err(ConfigError::CompactionLag { min, max });
    }
    if parsed
        .get("remote.storage.enable")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        // kraftd runs as a controller with `remote.log.storage.system.enable=false`.
        return Err(ConfigError::TieredStorageDisabled);
    }
    Ok(parsed)
}
