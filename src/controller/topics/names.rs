//! Topic names (Kafka's `org.apache.kafka.common.internals.Topic`): what a valid name is, and
//! which names collide because `.` and `_` read the same in metric names.

use std::fmt;

/// The metadata log's own topic, which no request may create.
pub const CLUSTER_METADATA_TOPIC: &str = "__cluster_metadata";
const MAX_NAME_LENGTH: usize = 249;

/// Why a name is not a valid topic name (`Topic.validate`; `Display` is the
/// `InvalidTopicException` message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidName {
    Empty,
    Dot,
    DotDot,
    TooLong(String),
    IllegalChars(String),
}

impl fmt::Display for InvalidName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Topic name is invalid: ")?;
        match self {
            InvalidName::Empty => f.write_str("the empty string is not allowed"),
            InvalidName::Dot => f.write_str("'.' is not allowed"),
            InvalidName::DotDot => f.write_str("'..' is not allowed"),
            InvalidName::TooLong(name) => write!(
                f,
                "the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
            ),
            InvalidName::IllegalChars(name) => write!(
                f,
                "'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
            ),
        }
    }
}

impl std::error::Error for InvalidName {}

/// `Topic.validate`: the checks in Java's order (the length counts UTF-16 code units).
pub fn validate(name: &str) -> Result<(), InvalidName> {
    if name.is_empty() {
        return Err(InvalidName::Empty);
    }
    if name == "." {
        return Err(InvalidName::Dot);
    }
    if name == ".." {
        return Err(InvalidName::DotDot);
    }
    if name.encode_utf16().count() > MAX_NAME_LENGTH {
        return Err(InvalidName::TooLong(name.to_string()));
    }
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if !name.chars().all(legal) {
        return Err(InvalidName::IllegalChars(name.to_string()));
    }
    Ok(())
}

/// `Topic.hasCollisionChars`.
pub fn has_collision_chars(name: &str) -> bool {
    name.contains(['.', '_'])
}

/// `Topic.unifyCollisionChars`: `.` read as `_`.
pub fn unify_collision_chars(name: &str) -> String {
    name.replace('.', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_in_javas_order_with_its_messages() {
        assert_eq!(
            validate("").unwrap_err().to_string(),
            "Topic name is invalid: the empty string is not allowed"
        );
        assert_eq!(
            validate("..").unwrap_err().to_string(),
            "Topic name is invalid: '..' is not allowed"
        );
        let long = "a".repeat(250);
        assert_eq!(
            validate(&long).unwrap_err().to_string(),
            format!("Topic name is invalid: the length of '{long}' is longer than the max allowed length 249")
        );
        assert!(validate(&"a".repeat(249)).is_ok());
        // Too long is reported before bad characters.
        assert!(matches!(
            validate(&"é".repeat(250)),
            Err(InvalidName::TooLong(_))
        ));
        assert_eq!(
            validate("bad name").unwrap_err().to_string(),
            "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        );
        assert!(validate("a.b_c-D9").is_ok());
        assert_eq!(unify_collision_chars("a.b_c"), "a_b_c");
        assert!(has_collision_chars("a.b") && !has_collision_chars("ab-c"));
    }
}
