//! The one error type of configuration loading. Every message is a single line that names the
//! key (and value) at fault and, where it helps, what to do about it.

/// Why a configuration could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    /// The file is not valid `.properties` syntax.
    #[error("{path}: {source}")]
    Syntax {
        path: String,
        #[source]
        source: crate::properties::SyntaxError,
    },
    /// A value does not parse or is out of range; `expected` says what is allowed.
    #[error("invalid value '{value}' for {key}: expected {expected}")]
    InvalidValue {
        key: String,
        value: String,
        expected: String,
    },
    /// A required key is absent; `hint` says what to set.
    #[error("missing required configuration {key}: {hint}")]
    Missing { key: String, hint: String },
    /// Keys that are fine alone but break a rule together (Kafka's cross-key checks).
    #[error("{0}")]
    Inconsistent(String),
    /// Valid for Java Kafka, but a feature kraftd does not have.
    #[error("{0}")]
    Unsupported(String),
    /// A `sasl.jaas.config` value that Kafka's `JaasConfig` would refuse too.
    #[error("invalid {key}: {source}")]
    Jaas {
        key: String,
        #[source]
        source: crate::server::sasl::jaas::JaasError,
    },
    /// `super.users` or another setting of the authorizer is malformed.
    #[error(transparent)]
    Authorizer(#[from] crate::controller::acls::authorizer::AuthorizerConfigError),
}

impl ConfigError {
    pub(crate) fn invalid(key: &str, value: &str, expected: impl Into<String>) -> Self {
        ConfigError::InvalidValue {
            key: key.to_owned(),
            value: value.to_owned(),
            expected: expected.into(),
        }
    }

    pub(crate) fn missing(key: &str, hint: impl Into<String>) -> Self {
        ConfigError::Missing {
            key: key.to_owned(),
            hint: hint.into(),
        }
    }
}
