//! One described config per entry, for each resource type, as Kafka 4.4's `ConfigHelper`
//! builds them: the value, where it comes from, its synonyms, type and documentation.

use imbl::OrdMap;

use super::broker::{BrokerLayers, Synonym};
use super::table::{broker_config, broker_config_type, documentation, DocKind};
use crate::controller::config_changes::api::ROOT_LOGGER;
use crate::controller::config_changes::client_metrics::CLIENT_METRICS_DEFS;
use crate::controller::config_changes::group::GROUP_CONFIG_DEFS;
use crate::controller::topic_configs::parse::parse_type;
use crate::controller::topic_configs::{
    effective_topic_config, ConfigSource, ConfigType, StaticLogConfig, TopicConfigDef,
    TOPIC_CONFIG_DEFS,
};
use crate::protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult as Entry, DescribeConfigsSynonym,
};

/// What the request asks to be included in each entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Include {
    pub synonyms: bool,
    pub documentation: bool,
}

/// One entry: the value, the synonyms (the first gives the source), and how it is shown.
struct Described {
    name: String,
    value: Option<String>,
    synonyms: Vec<Synonym>,
    read_only: bool,
    sensitive: bool,
    ty: Option<ConfigType>,
    documentation: Option<String>,
}

impl Described {
    /// A config of a topic, group or client-metrics definition: writable, never sensitive.
    fn defined(
        def: &TopicConfigDef,
        value: Option<String>,
        synonyms: Vec<Synonym>,
        kind: DocKind,
    ) -> Self {
        Described {
            name: def.name.to_string(),
            value,
            synonyms,
            read_only: false,
            sensitive: false,
            ty: Some(def.ty),
            documentation: documentation(kind, def.name),
        }
    }

    fn entry(self, include: Include) -> Entry {
        let source = self
            .synonyms
            .first()
            .map_or(ConfigSource::DefaultConfig, |s| s.source);
        Entry {
            name: self.name,
            value: self.value,
            read_only: self.read_only,
            config_source: source.id(),
            is_sensitive: self.sensitive,
            synonyms: if include.synonyms {
                self.synonyms
                    .into_iter()
                    .map(|s| DescribeConfigsSynonym {
                        name: s.name,
                        value: s.value,
                        source: s.source.id(),
                        ..Default::default()
                    })
                    .collect()
            } else {
                Vec::new()
            },
            config_type: self.ty.map_or(0, ConfigType::describe_id),
            documentation: self.documentation.filter(|_| include.documentation),
            ..Default::default()
        }
    }
}

/// `ConfigDef.convertToString` of `raw` parsed as `def`'s type (`raw` itself if it does not
/// parse).
fn converted(def: &TopicConfigDef, raw: &str) -> Option<String> {
    match parse_type(def, raw) {
        Ok(v) => v.config_string(),
        Err(_) => Some(raw.to_string()),
    }
}

/// `createBrokerConfigEntry`: a broker config of this controller (`per_broker`) or of the
/// cluster default (only dynamic-default synonyms).
pub fn broker_entry(
    layers: &BrokerLayers,
    name: &str,
    value: Option<String>,
    per_broker: bool,
    include: Include,
) -> Entry {
    let ty = broker_config_type(name);
    let sensitive = ty.is_none_or(|t| t == ConfigType::Password);
    let mut synonyms = layers.synonyms_of(name, sensitive);
    if !per_broker {
        synonyms.retain(|s| s.source == ConfigSource::DynamicDefaultBrokerConfig);
    }
    Described {
        name: name.to_string(),
        value: value.filter(|_| !sensitive),
        synonyms,
        read_only: !broker_config(name).is_some_and(|d| d.dynamic),
        sensitive,
        ty,
        documentation: documentation(DocKind::Broker, name),
    }
    .entry(include)
}

/// Every config of this controller's broker config (`ConfigHelperUtils.createResponseConfig`
/// of its `KafkaConfig`): names set but not among Kafka's non-internal configs, as written,
/// then every non-internal config with its current value.
pub fn own_broker_entries(layers: &BrokerLayers, include: Include) -> Vec<Entry> {
    let values = layers.current_values();
    let current = layers.current();
    let extra: Vec<(String, Option<String>)> = current
        .iter()
        .filter(|(k, _)| !values.contains_key(k.as_str()))
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    let known = values.into_iter().map(|(k, v)| (k.to_string(), v));
    extra
        .into_iter()
        .chain(known)
        .map(|(k, v)| broker_entry(layers, &k, v, true, include))
        .collect()
}

/// The cluster-wide dynamic defaults, as written.
pub fn default_broker_entries(layers: &BrokerLayers, include: Include) -> Vec<Entry> {
    layers
        .cluster
        .iter()
        .map(|(k, v)| broker_entry(layers, k, Some(v.clone()), false, include))
        .collect()
}

/// A config its own resource sets, as the first synonym.
fn own_synonym(name: &str, value: &Option<String>, source: ConfigSource) -> Synonym {
    Synonym {
        name: name.to_string(),
        value: value.clone(),
        source,
    }
}

/// A topic's configs (`createTopicConfigEntry` over `LogConfig.fromProps` of the controller's
/// log defaults and the topic's own configs).
pub fn topic_entries(
    layers: &BrokerLayers,
    statics: &StaticLogConfig,
    topic: Option<&OrdMap<String, String>>,
    include: Include,
) -> Vec<Entry> {
    let own = |name: &str| topic.and_then(|t| t.get(name));
    let defs = TOPIC_CONFIG_DEFS.iter().filter(|d| !d.internal);
    // Configs the topic sets that are not among the non-internal ones, as written.
    let extra = topic.into_iter().flat_map(|t| t.iter()).filter(|(k, _)| {
        !TOPIC_CONFIG_DEFS
            .iter()
            .any(|d| d.name == k.as_str() && !d.internal)
    });
    let extra = extra.map(|(k, v)| {
        let def = TOPIC_CONFIG_DEFS.iter().find(|d| d.name == k.as_str());
        let ty = def.map(|d| d.ty);
        Described {
            name: k.clone(),
            value: ty.map(|_| v.clone()),
            synonyms: vec![own_synonym(
                k,
                &ty.map(|_| v.clone()),
                ConfigSource::TopicConfig,
            )],
            read_only: false,
            sensitive: ty.is_none(),
            ty,
            documentation: documentation(DocKind::Topic, k),
        }
    });
    let known = defs.map(|def| {
        let raw = effective_topic_config(
            def.name,
            topic,
            Some(&layers.node),
            Some(&layers.cluster),
            statics,
        );
        let value = raw.as_deref().and_then(|r| converted(def, r));
        let mut synonyms = Vec::new();
        if own(def.name).is_some() {
            synonyms.push(own_synonym(def.name, &value, ConfigSource::TopicConfig));
        }
        if let Some((broker_name, _)) = def.synonyms.first() {
            synonyms.extend(layers.synonyms_of(broker_name, false));
        }
        Described::defined(def, value, synonyms, DocKind::Topic)
    });
    extra.chain(known).map(|d| d.entry(include)).collect()
}

/// A group's configs (`createGroupConfigEntry` over `GroupConfig.fromProps` of the
/// controller's group defaults and the group's own configs).
pub fn group_entries(
    layers: &BrokerLayers,
    group: Option<&OrdMap<String, String>>,
    include: Include,
) -> Vec<Entry> {
    let values = layers.current_values();
    GROUP_CONFIG_DEFS
        .iter()
        .filter(|d| !d.internal)
        .map(|def| {
            let own = group.and_then(|g| g.get(def.name));
            let broker_name = def.synonyms.first().map(|(n, _)| *n);
            let value = match (own, broker_name) {
                (Some(raw), _) => converted(def, raw),
                (None, Some(b)) => values.get(b).cloned().flatten().map(|v| {
                    // A list of the broker's (the streams assignors) gives its first entry.
                    match broker_config(b).map(|d| d.ty) {
                        Some(ConfigType::List) if def.ty != ConfigType::List => {
                            v.split(',').next().unwrap_or_default().to_string()
                        }
                        _ => v,
                    }
                }),
                (None, None) => def.default.and_then(|d| converted(def, d)),
            };
            let mut synonyms = Vec::new();
            if own.is_some() {
                synonyms.push(own_synonym(def.name, &value, ConfigSource::GroupConfig));
            }
            match broker_name {
                Some(b) => synonyms.extend(layers.synonyms_of(b, false)),
                None => synonyms.extend(def.default.map(|d| Synonym {
                    name: def.name.to_string(),
                    value: converted(def, d),
                    source: ConfigSource::DefaultConfig,
                })),
            }
            Described::defined(def, value, synonyms, DocKind::Group).entry(include)
        })
        .collect()
}

/// A client-metrics subscription's configs (`createClientMetricsConfigEntry`).
pub fn client_metrics_entries(
    subscription: Option<&OrdMap<String, String>>,
    include: Include,
) -> Vec<Entry> {
    CLIENT_METRICS_DEFS
        .iter()
        .map(|def| {
            let own = subscription.and_then(|s| s.get(def.name));
            let value = own
                .map(String::as_str)
                .or(def.default)
                .and_then(|raw| converted(def, raw));
            let synonyms = own
                .map(|_| own_synonym(def.name, &value, ConfigSource::ClientMetricsConfig))
                .into_iter()
                .collect();
            Described::defined(def, value, synonyms, DocKind::ClientMetrics).entry(include)
        })
        .collect()
}

/// The controller's loggers (`LoggingController.loggers`): kraftd has one, the root logger.
pub fn logger_entries(root_level: &str) -> Vec<Entry> {
    vec![Entry {
        name: ROOT_LOGGER.to_string(),
        value: Some(root_level.to_string()),
        config_source: ConfigSource::DynamicBrokerLoggerConfig.id(),
        ..Default::default()
    }]
}
