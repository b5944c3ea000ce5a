//! The effective configs of a new topic, as a CreateTopics response lists them (Kafka's
//! `KafkaConfigSchema.resolveEffectiveTopicConfigs`): for every topic config, the topic's own
//! value, else a synonym set dynamically for this controller's node, else one set as the
//! cluster default, else one in the controller's properties, else Kafka's default.

use std::collections::BTreeMap;

use super::validate::{convert, StaticLogConfig};
use super::{TopicConfigDef, TOPIC_CONFIG_DEFS};

/// Where an effective value comes from (`DescribeConfigsResponse.ConfigSource`, by wire id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    TopicConfig,
    DynamicBrokerConfig,
    DynamicDefaultBrokerConfig,
    StaticBrokerConfig,
    DefaultConfig,
    DynamicBrokerLoggerConfig,
    ClientMetricsConfig,
    GroupConfig,
}

impl ConfigSource {
    pub fn id(self) -> i8 {
        match self {
            ConfigSource::TopicConfig => 1,
            ConfigSource::DynamicBrokerConfig => 2,
            ConfigSource::DynamicDefaultBrokerConfig => 3,
            ConfigSource::StaticBrokerConfig => 4,
            ConfigSource::DefaultConfig => 5,
            ConfigSource::DynamicBrokerLoggerConfig => 6,
            ConfigSource::ClientMetricsConfig => 7,
            ConfigSource::GroupConfig => 8,
        }
    }
}

/// One entry of a CreateTopics response's configs. No topic config is sensitive or read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveConfig {
    pub name: &'static str,
    pub value: Option<String>,
    pub source: ConfigSource,
}

/// Every (not internal) topic config's effective value, sorted by name. `topic` holds the new topic's own
/// configs; `node` and `cluster` the dynamic broker configs of this controller's id and the
/// cluster default.
pub fn effective_topic_configs(
    topic: &BTreeMap<String, String>,
    node: Option<&imbl::OrdMap<String, String>>,
    cluster: Option<&imbl::OrdMap<String, String>>,
    statics: &StaticLogConfig,
) -> Vec<EffectiveConfig> {
    // Kafka 4.4 leaves internal configs (`internal.segment.bytes`) out.
    let mut out: Vec<EffectiveConfig> = TOPIC_CONFIG_DEFS
        .iter()
        .filter(|def| !def.internal)
        .map(|def| {
            let entry = |value: Option<String>, source| EffectiveConfig {
                name: def.name,
                value,
                source,
            };
            let (value, source) = resolve(def, topic.get(def.name), node, cluster, statics);
            entry(value, source)
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(b.name));
    out
}

/// One topic config's effective value (`ConfigurationControlManager.getTopicConfig`): the
/// topic's own, else a synonym set for this controller's node, else the cluster default, else
/// the controller's properties, else Kafka's default. `None` for a name that is no topic config.
pub fn effective_topic_config(
    name: &str,
    topic: Option<&imbl::OrdMap<String, String>>,
    node: Option<&imbl::OrdMap<String, String>>,
    cluster: Option<&imbl::OrdMap<String, String>>,
    statics: &StaticLogConfig,
) -> Option<String> {
    let def = TOPIC_CONFIG_DEFS.iter().find(|d| d.name == name)?;
    resolve(def, topic.and_then(|t| t.get(name)), node, cluster, statics).0
}

/// The value of `def` and where it comes from, given the topic's own value if any.
fn resolve(
    def: &TopicConfigDef,
    own: Option<&String>,
    node: Option<&imbl::OrdMap<String, String>>,
    cluster: Option<&imbl::OrdMap<String, String>>,
    statics: &StaticLogConfig,
) -> (Option<String>, ConfigSource) {
    if let Some(v) = own {
        return (Some(v.clone()), ConfigSource::TopicConfig);
    }
    let layers = [
        (node, ConfigSource::DynamicBrokerConfig),
        (cluster, ConfigSource::DynamicDefaultBrokerConfig),
    ];
    for (configs, source) in layers {
        let Some(configs) = configs else { continue };
        if let Some(v) = def
            .synonyms
            .iter()
            .find_map(|(s, f)| configs.get(*s).map(|v| convert(v, *f)))
        {
            return (Some(v), source);
        }
    }
    if let Some(v) = statics.configured(def.name) {
        return (Some(v), ConfigSource::StaticBrokerConfig);
    }
    (def.default.map(str::to_string), ConfigSource::DefaultConfig)
}
