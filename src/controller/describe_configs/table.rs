//! Kafka 4.4's broker config definitions as a controller describes them, and the documentation
//! of every config definition a DescribeConfigs response can carry. Both files are what
//! `compat/java/BrokerConfigProbe.java` prints for the 4.4.0 jars (`table` and `docs`); the
//! compat test `configs::describe` checks that they still match.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::controller::topic_configs::{ConfigType, TopicConfigDef, Validator};

const BROKER_CONFIGS_TSV: &str = include_str!("broker-configs.tsv");
const CONFIG_DOCS_TSV: &str = include_str!("config-docs.tsv");

/// A broker config's default (`ConfigDef.ConfigKey.defaultValue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerDefault {
    /// Required: the config has no default.
    Required,
    /// The default is null.
    Null,
    /// `ConfigDef.convertToString` of the default.
    Value(&'static str),
}

/// One broker config.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerConfigDef {
    pub name: &'static str,
    pub ty: ConfigType,
    pub default: BrokerDefault,
    /// Updatable dynamically (`DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS`).
    pub dynamic: bool,
    /// The names that give it a value, most specific first
    /// (`DynamicBrokerConfig.brokerConfigSynonyms`); the first is the config itself.
    pub synonyms: Vec<&'static str>,
    pub internal: bool,
    /// Updatable for one broker only, never as the cluster default (`PER_BROKER_CONFIGS`).
    pub per_broker: bool,
    /// A security config updatable only with a listener prefix (`DYNAMIC_SECURITY_CONFIGS`).
    pub listener_prefix_only: bool,
    /// Defined by `KafkaConfig` (else only by `DynamicConfig.Broker`: the replication throttles).
    pub in_kafka_config: bool,
}

impl BrokerConfigDef {
    /// The definition as `ConfigDef.parseType` needs it.
    pub fn as_parse_def(&self) -> TopicConfigDef {
        TopicConfigDef {
            name: self.name,
            ty: self.ty,
            default: match self.default {
                BrokerDefault::Value(v) => Some(v),
                BrokerDefault::Required | BrokerDefault::Null => None,
            },
            validator: Validator::None,
            synonyms: &[],
            internal: self.internal,
        }
    }
}

fn flag(text: &str) -> bool {
    match text {
        "true" => true,
        "false" => false,
        other => panic!("broker-configs.tsv: {other:?} is no boolean"),
    }
}

fn parse_table() -> Vec<BrokerConfigDef> {
    let mut defs: Vec<BrokerConfigDef> = BROKER_CONFIGS_TSV
        .lines()
        .map(|line| {
            let f: Vec<&'static str> = line.split('\t').collect();
            assert_eq!(f.len(), 9, "broker-configs.tsv: {line:?}");
            BrokerConfigDef {
                name: f[0],
                ty: ConfigType::from_name(f[1])
                    .unwrap_or_else(|| panic!("broker-configs.tsv: unknown type {}", f[1])),
                default: match f[2] {
                    "<none>" => BrokerDefault::Required,
                    "<null>" => BrokerDefault::Null,
                    v => BrokerDefault::Value(v),
                },
                dynamic: flag(f[3]),
                synonyms: f[4].split(',').collect(),
                internal: flag(f[5]),
                per_broker: flag(f[6]),
                listener_prefix_only: flag(f[7]),
                in_kafka_config: flag(f[8]),
            }
        })
        .collect();
    defs.sort_by(|a, b| a.name.cmp(b.name));
    defs
}

/// Every broker config, sorted by name.
pub fn broker_configs() -> &'static [BrokerConfigDef] {
    static TABLE: OnceLock<Vec<BrokerConfigDef>> = OnceLock::new();
    TABLE.get_or_init(parse_table)
}

/// The definition of broker config `name` (`KafkaConfig` or `DynamicConfig.Broker`).
pub fn broker_config(name: &str) -> Option<&'static BrokerConfigDef> {
    let table = broker_configs();
    table
        .binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| &table[i])
}

/// Which definition a config's documentation comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocKind {
    Broker,
    Topic,
    Group,
    ClientMetrics,
}

impl DocKind {
    fn from_name(name: &str) -> DocKind {
        match name {
            "broker" => DocKind::Broker,
            "topic" => DocKind::Topic,
            "group" => DocKind::Group,
            "client-metrics" => DocKind::ClientMetrics,
            other => panic!("config-docs.tsv: unknown kind {other:?}"),
        }
    }
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The documentation of config `name` of a `kind` definition (`AbstractConfig.documentationOf`).
pub fn documentation(kind: DocKind, name: &str) -> Option<String> {
    static DOCS: OnceLock<HashMap<(DocKind, &'static str), &'static str>> = OnceLock::new();
    DOCS.get_or_init(|| {
        CONFIG_DOCS_TSV
            .lines()
            .map(|line| {
                let mut f = line.splitn(3, '\t');
                let kind = DocKind::from_name(f.next().unwrap_or_default());
                let name = f.next().expect("config-docs.tsv: a name");
                let doc = f.next().expect("config-docs.tsv: a documentation");
                ((kind, name), doc)
            })
            .collect()
    })
    .get(&(kind, name))
    .map(|doc| unescape(doc))
}

/// `AbstractKafkaConfig.configType`: the type of `name`, else of its first synonym with one
/// (a listener-prefixed name has its base config's type); `None` for a name Kafka does not know.
pub fn broker_config_type(name: &str) -> Option<ConfigType> {
    broker_config(name)
        .filter(|d| d.in_kafka_config)
        .map(|d| d.ty)
        .or_else(|| {
            broker_synonyms(name)
                .iter()
                .find_map(|s| broker_config(s).filter(|d| d.in_kafka_config).map(|d| d.ty))
        })
        .or_else(|| broker_config(name).map(|d| d.ty))
}

/// `listener.name.<listener>.<config>`: the listener override of a base config.
fn listener_base(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("listener.name.")?;
    rest.split_once('.').map(|(_, base)| base)
}

/// Configs a listener override may name with a SASL mechanism prefix
/// (`listener.name.<listener>.<mechanism>.<config>`; `LISTENER_MECHANISM_CONFIGS`).
const LISTENER_MECHANISM_CONFIGS: &[&str] = &[
    "sasl.jaas.config",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
];

/// `DynamicBrokerConfig.brokerConfigSynonyms(name, true)`: the names that give `name` its value,
/// most specific first.
pub fn broker_synonyms(name: &str) -> Vec<String> {
    if let Some(def) = broker_config(name) {
        return def.synonyms.iter().map(|s| s.to_string()).collect();
    }
    if let Some(base) = listener_base(name) {
        let base = LISTENER_MECHANISM_CONFIGS
            .iter()
            .find(|c| base.ends_with(*c))
            .copied()
            .unwrap_or(base);
        return vec![name.to_string(), base.to_string()];
    }
    vec![name.to_string()]
}
