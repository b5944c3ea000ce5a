//! Dynamic configs by resource (Kafka's `ConfigurationsImage`).

use imbl::OrdMap;
use serde_json::Value;

use super::config_names::{CLIENT_METRICS_CONFIGS, GROUP_CONFIGS, TOPIC_CONFIGS};
use crate::protocol::messages::ConfigRecord;

/// `ConfigResource.Type` code of topics.
pub const TOPIC_RESOURCE: i8 = 2;

/// `ConfigResource.Type` codes of the other resources an image holds configs for.
pub const BROKER_RESOURCE: i8 = 4;
pub const CLIENT_METRICS_RESOURCE: i8 = 16;
pub const GROUP_RESOURCE: i8 = 32;

/// Whether Kafka 4.4's images keep `key` for resources of type `kind`: every broker config,
/// only the named topic, client-metrics and group configs, and nothing for other types.
pub fn supported(kind: i8, key: &str) -> bool {
    match kind {
        BROKER_RESOURCE => true,
        TOPIC_RESOURCE => TOPIC_CONFIGS.binary_search(&key).is_ok(),
        CLIENT_METRICS_RESOURCE => CLIENT_METRICS_CONFIGS.binary_search(&key).is_ok(),
        GROUP_RESOURCE => GROUP_CONFIGS.binary_search(&key).is_ok(),
        _ => false,
    }
}

/// A config resource: its type code and name ("" for a cluster-wide default).
pub type ConfigResource = (i8, String);

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigsImage {
    /// Invariant: no resource maps to an empty set of configs.
    pub resources: OrdMap<ConfigResource, OrdMap<String, String>>,
}

impl ConfigsImage {
    /// A null value deletes the key. Keys the image does not support for the resource type are
    /// ignored, set or deleted, as by Java's `DefaultSupportedConfigChecker`.
    pub fn replay(&mut self, r: &ConfigRecord) {
        if !supported(r.resource_type, &r.name) {
            return;
        }
        let resource = (r.resource_type, r.resource_name.clone());
        match &r.value {
            Some(value) => {
                self.resources
                    .entry(resource)
                    .or_default()
                    .insert(r.name.clone(), value.clone());
            }
            None => {
                if let Some(configs) = self.resources.get_mut(&resource) {
                    configs.remove(&r.name);
                    if configs.is_empty() {
                        self.resources.remove(&resource);
                    }
                }
            }
        }
    }

    /// A removed topic's configs go with it.
    pub fn remove_topic(&mut self, name: &str) {
        self.resources.remove(&(TOPIC_RESOURCE, name.to_string()));
    }

    pub fn to_json(&self) -> Value {
        self.resources
            .iter()
            .map(|((kind, name), configs)| {
                let configs: serde_json::Map<String, Value> = configs
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                (format!("{kind}:{name}"), Value::Object(configs))
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}
