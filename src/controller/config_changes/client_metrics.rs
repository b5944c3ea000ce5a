//! Client-metrics subscriptions' configs as Kafka 4.4's `ClientMetricsConfigs.validate`
//! checks them: a name, known config names (in the order of Java's `HashMap` of the
//! resource's configs), `ConfigDef.parse` of the three definitions, the push interval's range,
//! and the shape of the match patterns.

use super::ChangeError;
use crate::controller::java::{hash_map_capacity, hash_order, string_hash, trim};
use crate::controller::topic_configs::parse::{parse_value, Value};
use crate::controller::topic_configs::{ConfigType, TopicConfigDef, Validator};
use crate::protocol::errors::ErrorCode;

/// `ValidList.anyNonDuplicateValues(true, false)`.
const ANY_LIST: Validator = Validator::ValidList {
    values: &[],
    empty_allowed: true,
    null_allowed: false,
};

/// `ClientMetricsConfigs.CONFIG`, in definition order.
pub const CLIENT_METRICS_DEFS: &[TopicConfigDef] = &[
    TopicConfigDef {
        name: "metrics",
        ty: ConfigType::List,
        default: Some(""),
        validator: ANY_LIST,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "interval.ms",
        ty: ConfigType::Int,
        default: Some("300000"),
        validator: Validator::None,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "match",
        ty: ConfigType::List,
        default: Some(""),
        validator: ANY_LIST,
        synonyms: &[],
        internal: false,
    },
];

const MATCH_PARAMS: &[&str] = &[
    "client_instance_id",
    "client_id",
    "client_software_name",
    "client_software_version",
    "client_source_address",
    "client_source_port",
];

fn request(message: String) -> ChangeError {
    ChangeError::ClientMetrics {
        code: ErrorCode::INVALID_REQUEST,
        message,
    }
}

/// `parseMatchingPatterns` without compiling the value as a `java.util.regex.Pattern`
/// (kraftd has no Java regex engine; docs/notes/configs.md).
fn check_pattern(pattern: &str) -> Result<(), ChangeError> {
    // `String.split("=")`: trailing empty pieces dropped.
    let mut pieces: Vec<&str> = pattern.split('=').collect();
    while pieces.len() > 1 && pieces.last() == Some(&"") {
        pieces.pop();
    }
    let illegal = || ChangeError::ClientMetrics {
        code: ErrorCode::INVALID_CONFIG,
        message: format!("Illegal client matching pattern: {pattern}"),
    };
    if pieces.len() != 2 || !MATCH_PARAMS.contains(&trim(pieces[0])) {
        return Err(illegal());
    }
    Ok(())
}

/// `ClientMetricsConfigs.validate(name, configs)` over the resource's configs after the change.
pub fn validate(name: &str, configs: &[(String, String)]) -> Result<(), ChangeError> {
    if name.is_empty() {
        return Err(request("Subscription name can't be empty".to_string()));
    }
    let ordered = hash_order(
        configs
            .iter()
            .map(|(k, _)| (string_hash(k), k.as_str()))
            .collect(),
        hash_map_capacity(configs.len()),
    );
    if let Some(unknown) = ordered
        .iter()
        .find(|k| !CLIENT_METRICS_DEFS.iter().any(|d| d.name == **k))
    {
        return Err(request(format!(
            "Unknown client metrics configuration: {unknown}"
        )));
    }
    let given = |n: &str| {
        configs
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
    };
    let mut parsed = Vec::new();
    for def in CLIENT_METRICS_DEFS {
        if let Some(raw) = given(def.name) {
            let value = parse_value(def, raw).map_err(ChangeError::ClientMetricsConfig)?;
            parsed.push((def.name, value));
        }
    }
    for (name, value) in &parsed {
        match (*name, value) {
            ("interval.ms", Value::Int(ms)) if !(100..=3_600_000).contains(ms) => {
                return Err(request(format!(
                    "Invalid value {ms} for interval.ms, interval must be between 100 and 3600000 (1 hour)"
                )));
            }
            ("match", Value::List(patterns)) => {
                for p in patterns {
                    check_pattern(p)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
