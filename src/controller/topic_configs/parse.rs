//! Kafka's `ConfigDef.parseType` and the validators topic configs use, with Java's messages
//! and Java's way of printing the value they refuse.

use super::{ConfigError, ConfigType, InvalidReason, TopicConfigDef, Validator};
use crate::controller::java::{parse_int, parse_long, trim};

/// A parsed config value (the Java object `ConfigDef.parse` yields).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Boolean(bool),
    String(String),
    Int(i32),
    Long(i64),
    Double(f64),
    List(Vec<String>),
}

impl Value {
    /// The value as Java's `toString` prints it (what a `ConfigException` names).
    pub fn java_string(&self) -> String {
        match self {
            Value::Null => "null".to_string(),
            Value::Boolean(b) => b.to_string(),
            Value::String(s) => s.clone(),
            Value::Int(i) => i.to_string(),
            Value::Long(l) => l.to_string(),
            Value::Double(d) => java_double_string(*d),
            Value::List(items) => format!("[{}]", items.join(", ")),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(f64::from(*i)),
            Value::Long(l) => Some(*l as f64),
            Value::Double(d) => Some(*d),
            _ => None,
        }
    }

    pub fn as_long(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(i64::from(*i)),
            Value::Long(l) => Some(*l),
            _ => None,
        }
    }

    /// `ConfigDef.convertToString` of the parsed value: lists joined by commas, null as null.
    pub fn config_string(&self) -> Option<String> {
        match self {
            Value::Null => None,
            Value::List(items) => Some(items.join(",")),
            other => Some(other.java_string()),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }
}

/// `ConfigDef.parseType` of a string value.
pub fn parse_type(def: &TopicConfigDef, raw: &str) -> Result<Value, ConfigError> {
    let trimmed = trim(raw);
    let invalid = |reason| ConfigError::InvalidValue {
        name: def.name.to_string(),
        value: raw.to_string(),
        reason,
    };
    let not_a_number = || invalid(InvalidReason::NotANumber(def.ty));
    Ok(match def.ty {
        ConfigType::Boolean => {
            if trimmed.eq_ignore_ascii_case("true") {
                Value::Boolean(true)
            } else if trimmed.eq_ignore_ascii_case("false") {
                Value::Boolean(false)
            } else {
                return Err(invalid(InvalidReason::NotABoolean));
            }
        }
        // A class name stands for the class Java loads; a password is never shown.
        ConfigType::String | ConfigType::Class | ConfigType::Password => {
            Value::String(trimmed.to_string())
        }
        ConfigType::Short => Value::Int(
            parse_int(trimmed)
                .filter(|v| i16::try_from(*v).is_ok())
                .ok_or_else(not_a_number)?,
        ),
        ConfigType::Int => Value::Int(parse_int(trimmed).ok_or_else(not_a_number)?),
        ConfigType::Long => Value::Long(parse_long(trimmed).ok_or_else(not_a_number)?),
        ConfigType::Double => Value::Double(parse_java_double(trimmed).ok_or_else(not_a_number)?),
        ConfigType::List => {
            if trimmed.is_empty() {
                Value::List(Vec::new())
            } else {
                Value::List(split_list(trimmed))
            }
        }
    })
}

/// The default of `def`, parsed.
pub fn default_value(def: &TopicConfigDef) -> Value {
    match def.default {
        None => Value::Null,
        Some(text) => parse_type(def, text).expect("Kafka's defaults parse"),
    }
}

/// `Pattern.compile("\\s*,\\s*").split(s, -1)`: trailing empty entries are kept.
fn split_list(s: &str) -> Vec<String> {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r');
    s.split(',')
        .map(|part| part.trim_matches(is_ws).to_string())
        .collect()
}

/// `Double.parseDouble` for decimal notation (an optional sign, digits with an optional point
/// and exponent, an optional `f`/`d` suffix), `NaN` and `Infinity`. Hexadecimal floating-point
/// literals are not accepted (Java accepts them; no topic config is written that way).
fn parse_java_double(s: &str) -> Option<f64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = match body {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        _ => {
            let body = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
            let (mantissa, exponent) = match body.find(['e', 'E']) {
                Some(i) => (&body[..i], Some(&body[i + 1..])),
                None => (body, None),
            };
            let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
            if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
                return None;
            }
            if let Some(e) = exponent {
                let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                if e.is_empty() || !digits(e) {
                    return None;
                }
            }
            body.parse::<f64>().ok()?
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `Double.toString`: plain notation from 10^-3 up to 10^7, else `d.dddE±n`, with at least one
/// digit after the point.
pub fn java_double_string(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let magnitude = d.abs();
    if (1e-3..1e7).contains(&magnitude) {
        let s = format!("{d}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{d:e}");
        let (mantissa, exponent) = s.split_once('e').expect("{:e} has an exponent");
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exponent}")
    }
}

/// The validator of `def` on a parsed value.
pub fn ensure_valid(def: &TopicConfigDef, value: &Value) -> Result<(), ConfigError> {
    let invalid = |reason| ConfigError::InvalidValue {
        name: def.name.to_string(),
        value: value.java_string(),
        reason,
    };
    match def.validator {
        Validator::None => Ok(()),
        Validator::Range { min, max } => {
            let Some(n) = value.number() else {
                return Ok(());
            };
            if let Some(min) = min {
                if n < min as f64 {
                    return Err(invalid(InvalidReason::AtLeast(min)));
                }
            }
            if let Some(max) = max {
                if n > max as f64 {
                    return Err(invalid(InvalidReason::NoMoreThan(max)));
                }
            }
            Ok(())
        }
        Validator::ValidString(values) => match value {
            Value::String(s) if !values.contains(&s.as_str()) => {
                Err(invalid(InvalidReason::OneOf(values)))
            }
            _ => Ok(()),
        },
        Validator::ValidList {
            values,
            empty_allowed,
            null_allowed: _,
        } => {
            let Value::List(items) = value else {
                return Ok(());
            };
            let name = def.name.to_string();
            if !empty_allowed && items.is_empty() {
                let valid = if values.is_empty() {
                    "any non-empty value".to_string()
                } else {
                    values.join(", ")
                };
                return Err(ConfigError::EmptyList { name, valid });
            }
            let mut unique: Vec<&String> = items.iter().collect();
            unique.sort();
            unique.dedup();
            if unique.len() != items.len() {
                return Err(ConfigError::DuplicateListValues { name });
            }
            for item in items {
                if item.is_empty() {
                    return Err(ConfigError::EmptyListValue { name });
                }
                if !values.is_empty() && !values.contains(&item.as_str()) {
                    return Err(ConfigError::InvalidValue {
                        name,
                        value: item.clone(),
                        reason: InvalidReason::OneOf(values),
                    });
                }
            }
            Ok(())
        }
        Validator::GzipLevel => match value {
            Value::Int(level) if *level != -1 && !(1..=9).contains(level) => {
                Err(invalid(InvalidReason::GzipLevel))
            }
            _ => Ok(()),
        },
        Validator::ShareAutoOffsetReset => match value {
            Value::String(s) if !share_auto_offset_reset_valid(s) => {
                Err(invalid(InvalidReason::ShareAutoOffsetReset {
                    name: def.name.to_string(),
                    value: s.clone(),
                }))
            }
            _ => Ok(()),
        },
        Validator::ThrottledReplicas => {
            let Value::List(items) = value else {
                return Ok(());
            };
            let pair = |s: &str| {
                s.is_empty()
                    || s.split_once(':').is_some_and(|(p, b)| {
                        !p.is_empty()
                            && !b.is_empty()
                            && p.bytes().all(|c| c.is_ascii_digit())
                            && b.bytes().all(|c| c.is_ascii_digit())
                    })
            };
            let trimmed: Vec<&str> = items.iter().map(|s| trim(s)).collect();
            if trimmed.iter().all(|s| pair(s)) || trimmed.concat() == "*" {
                Ok(())
            } else {
                Err(invalid(InvalidReason::ThrottledReplicas(
                    def.name.to_string(),
                )))
            }
        }
    }
}

/// `ShareGroupAutoOffsetResetStrategy.fromString` succeeds: the strategy names are matched
/// exactly (`none` is a consumer's strategy, not a share group's), a duration must not be
/// negative.
fn share_auto_offset_reset_valid(s: &str) -> bool {
    match s {
        "earliest" | "latest" => true,
        _ => {
            s.strip_prefix("by_duration:")
                .and_then(crate::controller::java::duration_is_negative)
                == Some(false)
        }
    }
}

/// `ConfigDef.parseValue` of a set value: parsed, a list under a `ValidList` without its
/// duplicates (Kafka 4.4 drops them with a warning), then validated.
pub fn parse_value(def: &TopicConfigDef, raw: &str) -> Result<Value, ConfigError> {
    let mut value = parse_type(def, raw)?;
    if let (Validator::ValidList { .. }, Value::List(items)) = (def.validator, &mut value) {
        let mut distinct: Vec<String> = Vec::with_capacity(items.len());
        for item in items.drain(..) {
            if !distinct.contains(&item) {
                distinct.push(item);
            }
        }
        *items = distinct;
    }
    ensure_valid(def, &value)?;
    Ok(value)
}
