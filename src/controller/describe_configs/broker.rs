//! The broker configs a controller runs with, layer by layer, as Kafka's `DynamicBrokerConfig`
//! keeps them: the properties file, the cluster-wide dynamic defaults and this node's own
//! dynamic configs (each as `removeInvalidConfigs` leaves them), and Kafka's defaults; and a
//! config's synonyms across those layers (`ConfigHelper.configSynonyms`).

use std::collections::BTreeMap;

use imbl::OrdMap;

use super::table::{broker_config, broker_configs, broker_synonyms, BrokerDefault};
use crate::controller::configs::{ConfigsImage, BROKER_RESOURCE};
use crate::controller::topic_configs::parse::parse_type;
use crate::controller::topic_configs::ConfigSource;

/// One synonym of a described config: its name, value (null when sensitive) and source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synonym {
    pub name: String,
    pub value: Option<String>,
    pub source: ConfigSource,
}

/// A controller's broker config layers.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerLayers {
    pub node_id: i32,
    /// The properties file, `broker.id` and `node.id` standing in for each other
    /// (`KafkaConfig.populateSynonyms`): `STATIC_BROKER_CONFIG`.
    pub statics: BTreeMap<String, String>,
    /// The dynamic configs of this node's id: `DYNAMIC_BROKER_CONFIG`.
    pub node: OrdMap<String, String>,
    /// The cluster-wide dynamic defaults: `DYNAMIC_DEFAULT_BROKER_CONFIG`.
    pub cluster: OrdMap<String, String>,
}

/// `DynamicBrokerConfig.removeInvalidConfigs`: a dynamic layer keeps neither configs that are
/// not dynamic, nor security configs without a listener prefix, nor (as the cluster default)
/// configs only a single broker may set. Names Kafka does not know are kept.
fn kept_dynamically(name: &str, per_broker_layer: bool) -> bool {
    match broker_config(name) {
        None => true,
        Some(def) => {
            (def.dynamic || !def.in_kafka_config)
                && !def.listener_prefix_only
                && (per_broker_layer || !def.per_broker)
        }
    }
}

impl BrokerLayers {
    pub fn new(node_id: i32, originals: &BTreeMap<String, String>, configs: &ConfigsImage) -> Self {
        let mut statics = originals.clone();
        for (from, to) in [("node.id", "broker.id"), ("broker.id", "node.id")] {
            if let (Some(v), false) = (statics.get(from).cloned(), statics.contains_key(to)) {
                statics.insert(to.to_string(), v);
            }
        }
        let layer = |name: String, per_broker: bool| -> OrdMap<String, String> {
            configs
                .resources
                .get(&(BROKER_RESOURCE, name))
                .map(|c| {
                    c.iter()
                        .filter(|(k, _)| kept_dynamically(k, per_broker))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        BrokerLayers {
            node_id,
            statics,
            node: layer(node_id.to_string(), true),
            cluster: layer(String::new(), false),
        }
    }

    /// The properties the controller runs with (`DynamicBrokerConfig.updateCurrentConfig`):
    /// the file's, overridden by the cluster defaults, then by this node's own; a dynamic
    /// config first removes the names it stands in for (`overrideProps`).
    pub fn current(&self) -> BTreeMap<String, String> {
        let mut props = self.statics.clone();
        for layer in [&self.cluster, &self.node] {
            for (k, v) in layer {
                let overridden = broker_config(k)
                    .map(|d| d.synonyms.clone())
                    .unwrap_or_default();
                for s in overridden {
                    props.remove(s);
                }
                props.insert(k.clone(), v.clone());
            }
        }
        props
    }

    /// Every config of `KafkaConfig` that is not internal, with `ConfigDef.convertToString` of
    /// its parsed value in `props` or of its default (`nonInternalValues`). `None` if a value
    /// does not parse (Kafka then keeps its previous config).
    pub fn values(
        props: &BTreeMap<String, String>,
    ) -> Option<BTreeMap<&'static str, Option<String>>> {
        broker_configs()
            .iter()
            .filter(|d| d.in_kafka_config && !d.internal)
            .map(|d| {
                let value = match (props.get(d.name), d.default) {
                    (Some(raw), _) => parse_type(&d.as_parse_def(), raw).ok()?.config_string(),
                    (None, BrokerDefault::Value(v)) => {
                        parse_type(&d.as_parse_def(), v).ok()?.config_string()
                    }
                    (None, BrokerDefault::Null | BrokerDefault::Required) => None,
                };
                Some((d.name, value))
            })
            .collect()
    }

    /// The values the controller runs with: its current properties, or, if the dynamic
    /// configs make them invalid, its properties file alone.
    pub fn current_values(&self) -> BTreeMap<&'static str, Option<String>> {
        Self::values(&self.current())
            .or_else(|| Self::values(&self.statics))
            .unwrap_or_default()
    }

    /// `ConfigHelper.configSynonyms`: each name of `names` set in each layer, most specific
    /// layer first, from the first entry for `name` itself on.
    pub fn synonyms(&self, name: &str, names: &[String], sensitive: bool) -> Vec<Synonym> {
        let mut out = Vec::new();
        let mut add = |layer: &dyn Fn(&str) -> Option<String>, source: ConfigSource| {
            for n in names {
                if let Some(v) = layer(n) {
                    out.push(Synonym {
                        name: n.clone(),
                        value: (!sensitive).then_some(v),
                        source,
                    });
                }
            }
        };
        add(
            &|n| self.node.get(n).cloned(),
            ConfigSource::DynamicBrokerConfig,
        );
        add(
            &|n| self.cluster.get(n).cloned(),
            ConfigSource::DynamicDefaultBrokerConfig,
        );
        add(
            &|n| self.statics.get(n).cloned(),
            ConfigSource::StaticBrokerConfig,
        );
        add(&static_default, ConfigSource::DefaultConfig);
        let first = out.iter().position(|s| s.name == name).unwrap_or(out.len());
        out.split_off(first)
    }

    /// The synonyms of broker config `name` (`brokerConfigSynonyms` with listener overrides).
    pub fn synonyms_of(&self, name: &str, sensitive: bool) -> Vec<Synonym> {
        self.synonyms(name, &broker_synonyms(name), sensitive)
    }
}

/// `DynamicBrokerConfig.staticDefaultConfigs`: Kafka's non-null default of `name`.
fn static_default(name: &str) -> Option<String> {
    match broker_config(name)?.default {
        BrokerDefault::Value(v) => Some(v.to_string()),
        BrokerDefault::Null | BrokerDefault::Required => None,
    }
}
