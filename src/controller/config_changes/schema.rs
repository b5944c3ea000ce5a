//! What `KafkaConfigSchema` of a Kafka 4.4 controller knows of config types: the topic configs
//! (`LogConfig`) and the broker configs (`KafkaConfig.configDef`); no other resource type has
//! a schema there, so nothing else is a list or has a default.

use crate::controller::configs::{BROKER_RESOURCE, TOPIC_RESOURCE};
use crate::controller::describe_configs::table::{broker_config, BrokerDefault};
use crate::controller::topic_configs::{topic_config_def, ConfigType};

/// `ConfigDef.convertToString` of the default of broker config `key` if it is a LIST config of
/// `KafkaConfig.configDef` (`Some(None)`: no default, or null).
fn broker_list(key: &str) -> Option<Option<&'static str>> {
    broker_config(key)
        .filter(|d| d.in_kafka_config && d.ty == ConfigType::List)
        .map(|d| match d.default {
            BrokerDefault::Value(v) => Some(v),
            BrokerDefault::Null | BrokerDefault::Required => None,
        })
}

/// `KafkaConfigSchema.isSplittable`: whether `key` is a LIST config of resource type `kind`.
pub fn is_list(kind: i8, key: &str) -> bool {
    match kind {
        TOPIC_RESOURCE => topic_config_def(key).is_some_and(|d| d.ty == ConfigType::List),
        BROKER_RESOURCE => broker_list(key).is_some(),
        _ => false,
    }
}

/// `KafkaConfigSchema.getDefault` for a LIST config (the only ones APPEND and SUBTRACT read).
pub fn default_value(kind: i8, key: &str) -> Option<&'static str> {
    match kind {
        TOPIC_RESOURCE => topic_config_def(key).and_then(|d| d.default),
        BROKER_RESOURCE => broker_list(key).flatten(),
        _ => None,
    }
}
