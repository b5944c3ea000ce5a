//! Dynamic configs by resource (Kafka's `ConfigurationsImage`).

use imbl::OrdMap;
use serde_json::Value;

use crate::protocol::messages::ConfigRecord;

/// `ConfigResource.Type` code of topics.
pub const TOPIC_RESOURCE: i8 = 2;

/// A config resource: its type code and name ("" for a cluster-wide default).
pub type ConfigResource = (i8, String);

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigsImage {
    /// Invariant: no resource maps to an empty set of configs.
    pub resources: OrdMap<ConfigResource, OrdMap<String, String>>,
}

impl ConfigsImage {
    /// A null value deletes the key.
    pub fn replay(&mut self, r: &ConfigRecord) {
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
