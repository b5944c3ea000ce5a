//! `kraftd format --add-scram MECHANISM=[name=..,password=..]`: what Kafka 4.4's `ScramParser`
//! accepts, the `UserScramCredentialRecord` it makes of each argument, and its refusals, with
//! Kafka's messages (each checked against `kafka-storage format`, see
//! `compat/tests/tools/add_scram.rs`).
//!
//! The syntax, as Java reads it: the argument is trimmed (`String.trim`) and cut at its first
//! `=` into a mechanism (`SCRAM-SHA-256` or `SCRAM-SHA-512`, exactly) and a configuration that
//! must start with `[` and end with `]`. Inside, components are split at every comma
//! (`String.split(",")`: trailing empty components dropped, no escaping, so quotes do not
//! protect a comma) and each at its first `=` into a key (not trimmed) and a value, from which
//! one pair of surrounding double quotes is stripped. A repeated key keeps its last value.
//! `name` is required (and may be empty); `salt` and `saltedpassword` are base64
//! (`Base64.getDecoder()`); `iterations` is an `int` (`Integer.parseInt`), 4096 by default,
//! within the mechanism's bounds (4096 to 16384); `password` wins over `saltedpassword` (which
//! is then ignored, even undecodable); `saltedpassword` needs `salt`. Without a salt, one is
//! drawn as Java's `ScramFormatter.secureRandomBytes` draws it: the UTF-8 of a random 130-bit
//! number in base 36 ([`java_nonce`]). The random draw is an argument.
//!
//! Secrets: Kafka echoes an undecodable salt or salted password, and a component that may be
//! the rest of a password split at a comma, in its messages. kraftd prints the same messages
//! with such a value replaced by `[hidden]` (as [`Password`] shows itself), and hides what
//! follows a `[` in an argument it echoes whole.

use std::collections::BTreeMap;
use std::fmt;

use crate::controller::java::base64::{self, Base64Error};
use crate::controller::java::{parse_int, trim};
use crate::controller::scram::keys;
use crate::protocol::messages::UserScramCredentialRecord;
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use crate::server::config::Password;
use crate::server::sasl::scram::{credential_for, java_nonce, ScramMechanism};

/// The lowest metadata.version level with SCRAM records (3.5-IV2).
pub const SCRAM_METADATA_VERSION: i16 = 11;
/// The iteration count when none is given.
pub const DEFAULT_ITERATIONS: i32 = 4096;

/// What a refused message shows instead of a value that may be a secret.
pub const HIDDEN: &str = "[hidden]";

/// One `--add-scram` value as given; `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramArgument(pub String);

impl fmt::Debug for ScramArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScramArgument({HIDDEN})")
    }
}

impl std::str::FromStr for ScramArgument {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ScramArgument(s.to_owned()))
    }
}

/// Text a message echoes: as Kafka shows it, or `[hidden]` where it may be (part of) a secret.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Echo {
    Shown(String),
    Hidden,
}

impl fmt::Display for Echo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Echo::Shown(s) => f.write_str(s),
            Echo::Hidden => f.write_str(HIDDEN),
        }
    }
}

impl Echo {
    /// `text` before its first `[`, the rest hidden: a password, if any, is inside brackets.
    fn up_to_bracket(text: &str) -> Echo {
        match text.split_once('[') {
            None => Echo::Shown(text.to_owned()),
            Some((before, _)) => Echo::Shown(format!("{before}{HIDDEN}")),
        }
    }
}

/// Why an `--add-scram` value is refused: Kafka's `FormatterException` messages, except the
/// two `Empty*` ones (Java dies there with `IllegalArgumentException: Empty key`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddScramError {
    #[error("SCRAM is only supported in metadata.version 3.5-IV2 or later.")]
    MetadataVersionTooLow,
    #[error("Failed to find equals sign in SCRAM argument '{argument}'")]
    NoEqualsSign { argument: Echo },
    #[error("The add-scram mechanism {mechanism} is not supported.")]
    UnsupportedMechanism { mechanism: Echo },
    #[error("Expected configuration string to start with [")]
    NoOpeningBracket,
    #[error("Expected configuration string to end with ]")]
    NoClosingBracket,
    #[error("No equals sign found in SCRAM component: {component}")]
    ComponentWithoutEquals { component: Echo },
    #[error("You must supply 'name' to add-scram")]
    NoName,
    #[error("Failed to decode given salt: {HIDDEN} ({reason})")]
    Salt { reason: Base64Error },
    #[error("Failed to parse iterations count: {text}")]
    Iterations { text: String },
    #[error("You must supply one of 'password' or 'saltedpassword' to add-scram")]
    NoPassword,
    #[error("You must supply 'salt' with 'saltedpassword' to add-scram")]
    SaltedPasswordWithoutSalt,
    #[error("Failed to decode given saltedPassword: {HIDDEN} ({reason})")]
    SaltedPassword { reason: Base64Error },
    #[error("Unknown SCRAM configurations: {}", join(.keys))]
    UnknownKeys { keys: Vec<Echo> },
    #[error("The 'iterations' value must be >= {} for add-scram using {}", .mechanism.min_iterations(), .mechanism.java_constant())]
    TooFewIterations { mechanism: ScramMechanism },
    #[error("The 'iterations' value must be <= {} for add-scram using {}", .mechanism.max_iterations(), .mechanism.java_constant())]
    TooManyIterations { mechanism: ScramMechanism },
    #[error("Empty key: the password of add-scram user '{name}' is empty")]
    EmptyPassword { name: String },
    #[error("Empty key: the saltedpassword of add-scram user '{name}' is empty")]
    EmptySaltedPassword { name: String },
}

fn join(keys: &[Echo]) -> String {
    keys.iter()
        .map(Echo::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The secret an entry derives its keys from.
#[derive(Clone, PartialEq, Eq)]
enum Secret {
    Password(Password),
    SaltedPassword(Vec<u8>),
}

/// One parsed `--add-scram` value (Kafka's `PerMechanismData`); `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramEntry {
    pub mechanism: ScramMechanism,
    pub name: String,
    salt: Option<Vec<u8>>,
    iterations: Option<i32>,
    secret: Secret,
}

impl fmt::Debug for ScramEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramEntry")
            .field("mechanism", &self.mechanism)
            .field("name", &self.name)
            .field("salt_given", &self.salt.is_some())
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// The records of `arguments` in their order (repeats kept), for metadata.version level `mv`:
/// Kafka's gate first, then each argument parsed and turned into its record before the next
/// is read. `draw` gives the randomness of each salt not given.
pub fn scram_records(
    arguments: &[ScramArgument],
    mv: i16,
    draw: &mut dyn FnMut() -> [u8; 17],
) -> Result<Vec<UserScramCredentialRecord>, AddScramError> {
    if arguments.is_empty() {
        return Ok(Vec::new());
    }
    if mv < SCRAM_METADATA_VERSION {
        return Err(AddScramError::MetadataVersionTooLow);
    }
    arguments
        .iter()
        .map(|a| parse(&a.0)?.to_record(draw))
        .collect()
}

/// Java's `String.split(",")`: no comma gives the whole text (even empty); otherwise the
/// pieces, without the trailing empty ones.
fn split_commas(s: &str) -> Vec<&str> {
    if !s.contains(',') {
        return vec![s];
    }
    let mut parts: Vec<&str> = s.split(',').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// Keys whose value is a secret (a salt counts: Kafka stores it beside the keys).
fn is_secret_key(key: &str) -> bool {
    matches!(key, "password" | "saltedpassword" | "salt")
}

fn is_known_key(key: &str) -> bool {
    is_secret_key(key) || matches!(key, "name" | "iterations")
}

/// Parses one argument as `ScramParser.parsePerMechanismArgument` and `PerMechanismData` do.
pub fn parse(argument: &str) -> Result<ScramEntry, AddScramError> {
    let input = trim(argument);
    let Some((mechanism, config)) = input.split_once('=') else {
        return Err(AddScramError::NoEqualsSign {
            argument: Echo::up_to_bracket(input),
        });
    };
    let mechanism = ScramMechanism::from_name(mechanism).ok_or_else(|| {
        AddScramError::UnsupportedMechanism {
            mechanism: Echo::up_to_bracket(mechanism),
        }
    })?;
    let config = config
        .strip_prefix('[')
        .ok_or(AddScramError::NoOpeningBracket)?
        .strip_suffix(']')
        .ok_or(AddScramError::NoClosingBracket)?;
    // key -> (key, value, whether it may be the rest of a secret split at a comma).
    let mut components: BTreeMap<Vec<u16>, (String, String, bool)> = BTreeMap::new();
    let mut after_secret = false;
    for component in split_commas(config) {
        let Some((key, value)) = component.split_once('=') else {
            return Err(AddScramError::ComponentWithoutEquals {
                component: if after_secret {
                    Echo::Hidden
                } else {
                    Echo::Shown(component.to_owned())
                },
            });
        };
        let continuation = after_secret && !is_known_key(key);
        if !continuation {
            after_secret = is_secret_key(key);
        }
        let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(inner) if value.len() >= 2 => inner,
            _ => value,
        };
        // Java's TreeMap orders keys by UTF-16 code units; the last value of a key wins.
        let entry = components
            .entry(key.encode_utf16().collect())
            .or_insert_with(|| (key.to_owned(), String::new(), false));
        entry.1 = value.to_owned();
        entry.2 |= continuation;
    }
    let mut take = |key: &str| {
        components
            .remove(&key.encode_utf16().collect::<Vec<u16>>())
            .map(|(_, v, _)| v)
    };
    let name = take("name").ok_or(AddScramError::NoName)?;
    let salt = take("salt")
        .map(|s| base64::decode(&s).map_err(|reason| AddScramError::Salt { reason }))
        .transpose()?;
    let iterations = take("iterations")
        .map(|s| parse_int(&s).ok_or(AddScramError::Iterations { text: s }))
        .transpose()?;
    let password = take("password");
    let salted = take("saltedpassword");
    let secret = match (password, salted) {
        (Some(p), _) => Secret::Password(Password::new(p)),
        (None, None) => return Err(AddScramError::NoPassword),
        (None, Some(_)) if salt.is_none() => return Err(AddScramError::SaltedPasswordWithoutSalt),
        (None, Some(s)) => Secret::SaltedPassword(
            base64::decode(&s).map_err(|reason| AddScramError::SaltedPassword { reason })?,
        ),
    };
    if !components.is_empty() {
        let keys = components
            .into_values()
            .map(|(key, _, hidden)| {
                if hidden {
                    Echo::Hidden
                } else {
                    Echo::Shown(key)
                }
            })
            .collect();
        return Err(AddScramError::UnknownKeys { keys });
    }
    Ok(ScramEntry {
        mechanism,
        name,
        salt,
        iterations,
        secret,
    })
}

impl ScramEntry {
    /// The record (`PerMechanismData.toRecord`): the salt (given, or drawn), the iteration
    /// bounds, then the keys.
    pub fn to_record(
        &self,
        draw: &mut dyn FnMut() -> [u8; 17],
    ) -> Result<UserScramCredentialRecord, AddScramError> {
        let salt = match &self.salt {
            Some(s) => s.clone(),
            None => java_nonce(draw()).into_bytes(),
        };
        let iterations = self.iterations.unwrap_or(DEFAULT_ITERATIONS);
        let mechanism = self.mechanism;
        if iterations < mechanism.min_iterations() {
            return Err(AddScramError::TooFewIterations { mechanism });
        }
        if iterations > mechanism.max_iterations() {
            return Err(AddScramError::TooManyIterations { mechanism });
        }
        let name = self.name.clone();
        let (stored_key, server_key) = match &self.secret {
            Secret::Password(p) => {
                let c = credential_for(mechanism, p.expose(), &salt, iterations as u32)
                    .ok_or(AddScramError::EmptyPassword { name: name.clone() })?;
                (c.stored_key, c.server_key)
            }
            Secret::SaltedPassword(salted) => {
                let k = keys::derive(mechanism, salted)
                    .map_err(|_| AddScramError::EmptySaltedPassword { name: name.clone() })?;
                (k.stored_key, k.server_key)
            }
        };
        Ok(UserScramCredentialRecord {
            name,
            mechanism: mechanism.type_code(),
            salt,
            stored_key,
            server_key,
            iterations,
            ..Default::default()
        })
    }
}

/// A bootstrap record as the "Bootstrap metadata" line shows it: Kafka's JSON, but a SCRAM
/// credential's salt and keys `[hidden]` (Java prints them).
pub fn shown_json(record: &MetadataRecordAndVersion) -> serde_json::Value {
    let mut json = record.to_kafka_json();
    if let (MetadataRecord::UserScramCredential(_), Some(fields)) =
        (&record.record, json.as_object_mut())
    {
        for key in ["salt", "storedKey", "serverKey"] {
            if let Some(v) = fields.get_mut(key) {
                *v = HIDDEN.into();
            }
        }
    }
    json
}

#[cfg(test)]
mod tests;
