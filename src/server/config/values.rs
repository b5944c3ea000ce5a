//! Parsers for Kafka's scalar setting types with kraftd's error messages. Rules follow Kafka
//! 4.4's `ConfigDef`: values are trimmed, numbers are 32/64-bit, booleans are `true`/`false` in
//! any case, and list entries must not be empty.

use super::error::ConfigError;

/// `String.trim()` as Java does it: strips every char up to U+0020, not just whitespace.
pub fn trim_java(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// A unit hint for messages, from Kafka's key naming convention.
fn unit(key: &str) -> &'static str {
    if key.ends_with(".ms") {
        " (milliseconds)"
    } else if key.ends_with(".bytes") || key.ends_with(".in.bytes") {
        " (bytes)"
    } else {
        ""
    }
}

fn describe_min(min: i64) -> String {
    match min {
        0 => "a non-negative integer".to_owned(),
        1 => "a positive integer".to_owned(),
        m if m == i64::MIN || m == i64::from(i32::MIN) => "an integer".to_owned(),
        m => format!("an integer of at least {m}"),
    }
}

fn parse_bounded(key: &str, raw: &str, min: i64, max: i64) -> Result<i64, ConfigError> {
    let v = trim_java(raw);
    // i128 so that "too big" and "not a number" can be told apart.
    match v.parse::<i128>() {
        Ok(n) if n >= i128::from(min) && n <= i128::from(max) => Ok(n as i64),
        Ok(n) if n > i128::from(max) => {
            let range = match min {
                0 | 1 => format!("{} no larger than {max}", describe_min(min)),
                m if m == i64::MIN || m == i64::from(i32::MIN) => {
                    format!("an integer no larger than {max}")
                }
                m => format!("an integer from {m} to {max}"),
            };
            Err(ConfigError::invalid(
                key,
                v,
                format!("{range}{}", unit(key)),
            ))
        }
        _ => Err(ConfigError::invalid(
            key,
            v,
            format!("{}{}", describe_min(min), unit(key)),
        )),
    }
}

/// A Kafka INT setting with an `atLeast(min)` validator (`i32::MIN` for none).
pub fn parse_int(key: &str, raw: &str, min: i32) -> Result<i32, ConfigError> {
    parse_bounded(key, raw, min.into(), i32::MAX.into()).map(|n| n as i32)
}

/// A Kafka LONG setting with an `atLeast(min)` validator (`i64::MIN` for none).
pub fn parse_long(key: &str, raw: &str, min: i64) -> Result<i64, ConfigError> {
    parse_bounded(key, raw, min, i64::MAX)
}

/// A Kafka BOOLEAN: `true` or `false`, any case.
pub fn parse_bool(key: &str, raw: &str) -> Result<bool, ConfigError> {
    let v = trim_java(raw);
    if v.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if v.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(ConfigError::invalid(key, v, "true or false"))
    }
}

/// A Kafka LIST: comma-separated, entries trimmed. Empty text is an empty list; an empty entry
/// (e.g. a trailing comma) is an error, as in Kafka.
pub fn parse_list(key: &str, raw: &str) -> Result<Vec<String>, ConfigError> {
    let v = trim_java(raw);
    if v.is_empty() {
        return Ok(Vec::new());
    }
    let items: Vec<String> = v.split(',').map(|s| trim_java(s).to_owned()).collect();
    if items.iter().any(String::is_empty) {
        return Err(ConfigError::invalid(
            key,
            v,
            "a comma-separated list without empty entries",
        ));
    }
    Ok(items)
}
#[cfg(test)]
mod tests {
    use super::*;

    fn msg<T: std::fmt::Debug>(r: Result<T, ConfigError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn ints_follow_kafka_rules() {
        assert_eq!(parse_int("node.id", " 7 ", 0).unwrap(), 7);
        assert_eq!(
            parse_int("node.id", "+7", 0).unwrap(),
            7,
            "Java parseInt accepts a plus sign"
        );
        assert_eq!(parse_int("node.id", "007", 0).unwrap(), 7);
        assert_eq!(
            msg(parse_int("node.id", "abc", 0)),
            "invalid value 'abc' for node.id: expected a non-negative integer"
        );
        assert_eq!(
            msg(parse_int("node.id", "-1", 0)),
            "invalid value '-1' for node.id: expected a non-negative integer"
        );
        assert_eq!(
            msg(parse_int("x.ms", "2147483648", 0)),
            "invalid value '2147483648' for x.ms: expected a non-negative integer no larger than \
             2147483647 (milliseconds)"
        );
        assert!(msg(parse_int("a.bytes", "0", 1)).ends_with("expected a positive integer (bytes)"));
        assert!(msg(parse_int("a", "1", 8)).ends_with("expected an integer of at least 8"));
        assert!(msg(parse_int("a", "", i32::MIN)).ends_with("expected an integer"));
        assert!(parse_int("a", "0x10", i32::MIN).is_err());
        assert_eq!(parse_long("a", "-1", i64::MIN).unwrap(), -1);
        assert!(parse_long("a", "9223372036854775808", i64::MIN).is_err());
    }

    #[test]
    fn bools() {
        assert!(parse_bool("b", " TRUE ").unwrap());
        assert!(!parse_bool("b", "False").unwrap());
        assert_eq!(
            msg(parse_bool("b", "yes")),
            "invalid value 'yes' for b: expected true or false"
        );
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list("l", "  ").unwrap(), Vec::<String>::new());
        assert_eq!(parse_list("l", " a , b ").unwrap(), vec!["a", "b"]);
        assert!(msg(parse_list("l", "a,")).contains("without empty entries"));
        assert!(parse_list("l", "a,,b").is_err());
    }
}
