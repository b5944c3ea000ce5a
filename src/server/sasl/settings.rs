//! The `sasl.*` settings of a SASL listener and of the connections kraftd opens, read as
//! Kafka 4.4 reads them:
//!
//! - `sasl.enabled.mechanisms` (default GSSAPI), listener-prefixed first;
//! - a listener's JAAS for mechanism `M` is `listener.name.<listener>.<m>.sasl.jaas.config`
//!   only: Kafka's server ignores a bare `sasl.jaas.config` (with a warning) and otherwise
//!   reads the JVM's JAAS file, which kraftd does not have. It holds exactly one login module;
//! - `connections.max.reauth.ms`, per mechanism (`listener.name.<l>.<m>.connections.max.reauth.ms`),
//!   per listener, then bare;
//! - `sasl.server.max.receive.size`, listener-prefixed first;
//! - outbound, `sasl.mechanism.controller.protocol` (default GSSAPI) with the first controller
//!   listener's JAAS for that mechanism, as Kafka's raft client dials with it.

use std::sync::Arc;

use super::jaas::{JaasConfig, JaasEntry};
use super::plain::PlainUsers;
use super::{Mechanism, UNSUPPORTED_MECHANISMS};
use crate::server::config::values::{parse_int, parse_list, parse_long};
use crate::server::config::{ConfigError, Password, SecurityProtocol};
use crate::server::tls::{listener_prefix, listener_value};

/// Kafka's `sasl.server.max.receive.size` default.
pub const DEFAULT_MAX_RECEIVE_SIZE: i32 = 524_288;
/// Kafka's `sasl.enabled.mechanisms` and `sasl.mechanism.controller.protocol` default.
const DEFAULT_MECHANISM: &str = "GSSAPI";

/// Every `sasl.*` and related key read here (bare names; most may carry a listener prefix).
pub const SASL_KEYS: &[&str] = &[
    "connections.max.reauth.ms",
    "sasl.enabled.mechanisms",
    "sasl.jaas.config",
    "sasl.mechanism.controller.protocol",
    "sasl.server.max.receive.size",
];

/// One enabled mechanism of a listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnabledMechanism {
    pub mechanism: Mechanism,
    /// `connections.max.reauth.ms` for it (0: sessions never expire).
    pub reauth_ms: i64,
    /// PLAIN's users (`user_<name>` options); `None` for other mechanisms.
    pub plain_users: Option<Arc<PlainUsers>>,
}

/// The SASL settings of one SASL_PLAINTEXT or SASL_SSL listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerSasl {
    pub listener: String,
    pub protocol: SecurityProtocol,
    /// In the order Java's server lists them (`new ArrayList<>(new HashSet<>(...))`).
    pub mechanisms: Vec<EnabledMechanism>,
    /// `sasl.server.max.receive.size`: the largest frame before authentication completes.
    pub max_receive_size: usize,
}

/// How kraftd authenticates the connections it opens to other controllers.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSasl {
    pub mechanism: Mechanism,
    pub username: String,
    pub password: Password,
}

impl std::fmt::Debug for ClientSasl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} as {} [password hidden]",
            self.mechanism, self.username
        )
    }
}

/// The mechanisms named by `key` (already read): each must be one kraftd runs.
fn mechanism(key: &str, name: &str, defaulted: bool) -> Result<Mechanism, ConfigError> {
    let hint = "enable PLAIN (or SCRAM-SHA-256 / SCRAM-SHA-512) instead";
    if UNSUPPORTED_MECHANISMS.contains(&name) {
        let default = if defaulted {
            format!(" ({key} is unset and defaults to {DEFAULT_MECHANISM})")
        } else {
            String::new()
        };
        return Err(ConfigError::Unsupported(format!(
            "{key} names SASL mechanism {name}{default}, which kraftd does not support \
             (no Kerberos or OAuth); set {key}=PLAIN, or {hint}"
        )));
    }
    match Mechanism::from_name(name) {
        Some(m) => Ok(m),
        None => Err(ConfigError::invalid(
            key,
            name,
            "SASL mechanism names as Kafka spells them (upper case): PLAIN, SCRAM-SHA-256, \
             SCRAM-SHA-512",
        )),
    }
}

/// The one login module of `listener`'s JAAS for `mechanism`.
fn jaas_entry<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
    listener: &str,
    mechanism: Mechanism,
) -> Result<JaasEntry, ConfigError> {
    let key = format!(
        "{}{}.sasl.jaas.config",
        listener_prefix(listener),
        mechanism.name().to_ascii_lowercase()
    );
    let module = mechanism.login_module();
    let Some(text) = get(&key) else {
        if let Some((ignored, _)) = listener_value(get, listener, "sasl.jaas.config") {
            tracing::warn!(
                "{ignored} is ignored for listener {listener}: Kafka's server reads a \
                 listener's JAAS only from {key}"
            );
        }
        return Err(ConfigError::missing(
            &key,
            format!(
                "listener {listener} enables SASL mechanism {mechanism}: set {key}=\"{module} \
                 required ...;\" (kraftd reads no JAAS file, and Kafka ignores a bare \
                 sasl.jaas.config for a listener)"
            ),
        ));
    };
    let jaas = JaasConfig::parse(text).map_err(|source| ConfigError::Jaas {
        key: key.clone(),
        source,
    })?;
    let [entry] = <[JaasEntry; 1]>::try_from(jaas.entries).map_err(|entries| {
        ConfigError::Inconsistent(format!(
            "{key} contains {} login modules; Kafka takes exactly one: keep only {module}",
            entries.len()
        ))
    })?;
    if entry.login_module != module {
        return Err(ConfigError::Unsupported(format!(
            "{key} names login module {}, but SASL mechanism {mechanism} is configured \
             by {module} in kraftd: use that module",
            entry.login_module
        )));
    }
    Ok(entry)
}

impl ListenerSasl {
    /// The settings of `listener` (a SASL one), from the configuration's raw values (`get`).
    pub fn read<'a>(
        listener: &str,
        protocol: SecurityProtocol,
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<ListenerSasl, ConfigError> {
        let (key, raw, defaulted) = match listener_value(&get, listener, "sasl.enabled.mechanisms")
        {
            Some((key, raw)) => (key, raw, false),
            None => (
                "sasl.enabled.mechanisms".to_string(),
                DEFAULT_MECHANISM,
                true,
            ),
        };
        let names = super::java_hash_set_order(&parse_list(&key, raw)?);
        if names.is_empty() {
            return Err(ConfigError::invalid(
                &key,
                raw,
                format!("at least one SASL mechanism for SASL listener {listener}, e.g. PLAIN"),
            ));
        }
        let mut mechanisms = Vec::new();
        for name in &names {
            let mechanism = mechanism(&key, name, defaulted)?;
            let entry = jaas_entry(&get, listener, mechanism)?;
            let plain_users = (mechanism == Mechanism::Plain).then(|| {
                let users = PlainUsers::from_jaas(&entry);
                if users.is_empty() {
                    tracing::warn!(
                        "listener {listener}: the PLAIN JAAS configuration has no \
                         user_<name>=\"<password>\" option, so every PLAIN client is refused"
                    );
                }
                Arc::new(users)
            });
            mechanisms.push(EnabledMechanism {
                mechanism,
                reauth_ms: reauth_ms(&get, listener, mechanism)?,
                plain_users,
            });
        }
        let max_receive_size = match listener_value(&get, listener, "sasl.server.max.receive.size")
        {
            Some((key, v)) => parse_int(&key, v, i32::MIN)?,
            None => DEFAULT_MAX_RECEIVE_SIZE,
        };
        Ok(ListenerSasl {
            listener: listener.to_string(),
            protocol,
            mechanisms,
            max_receive_size: usize::try_from(max_receive_size).unwrap_or(0),
        })
    }
}

/// `connections.max.reauth.ms` for `mechanism` on `listener`.
fn reauth_ms<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
    listener: &str,
    mechanism: Mechanism,
) -> Result<i64, ConfigError> {
    let base = "connections.max.reauth.ms";
    let per_mechanism = format!(
        "{}{}.{base}",
        listener_prefix(listener),
        mechanism.name().to_ascii_lowercase()
    );
    let found = get(&per_mechanism)
        .map(|v| (per_mechanism.clone(), v))
        .or_else(|| listener_value(get, listener, base));
    match found {
        Some((key, v)) => parse_long(&key, v, i64::MIN),
        None => Ok(0),
    }
}

impl ClientSasl {
    /// How connections to other controllers authenticate, dialling `listener` (the first
    /// controller listener, a SASL one).
    pub fn read<'a>(
        listener: &str,
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<ClientSasl, ConfigError> {
        const KEY: &str = "sasl.mechanism.controller.protocol";
        let (name, defaulted) = match get(KEY) {
            Some(v) => (v.trim(), false),
            None => (DEFAULT_MECHANISM, true),
        };
        let mechanism = mechanism(KEY, name, defaulted)?;
        if mechanism.scram().is_some() {
            // Seen with three Java 4.4 controllers formatted with --add-scram: every raft
            // connection fails authentication, and no leader is ever elected.
            tracing::warn!(
                "{KEY}={mechanism}: the controllers' SCRAM credentials live in the metadata log, \
                 which is read only once the quorum has a leader, so a quorum whose controllers \
                 authenticate to each other with SCRAM cannot elect its first leader (Java's \
                 cannot either); use PLAIN between controllers and SCRAM for brokers"
            );
        }
        let entry = jaas_entry(&get, listener, mechanism)?;
        let option = |name: &str| {
            entry.option(name).cloned().ok_or_else(|| {
                ConfigError::missing(
                    &format!(
                        "{}{}.sasl.jaas.config option {name}",
                        listener_prefix(listener),
                        mechanism.name().to_ascii_lowercase()
                    ),
                    format!(
                        "kraftd authenticates to other controllers with {mechanism} as the \
                         JAAS options username=\"...\" password=\"...\" say; add them"
                    ),
                )
            })
        };
        let username = option("username")?.expose().to_string();
        let password = option("password")?;
        Ok(ClientSasl {
            mechanism,
            username,
            password,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const PLAIN_JAAS: &str = "org.apache.kafka.common.security.plain.PlainLoginModule required \
         username=\"admin\" password=\"admin-pw\" user_admin=\"admin-pw\" user_alice=\"a\";";

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn read(p: &HashMap<String, String>) -> Result<ListenerSasl, ConfigError> {
        ListenerSasl::read("CONTROLLER", SecurityProtocol::SaslPlaintext, |k| {
            p.get(k).map(String::as_str)
        })
    }

    #[test]
    fn a_plain_listener() {
        let p = props(&[
            ("sasl.enabled.mechanisms", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                PLAIN_JAAS,
            ),
            ("listener.name.controller.connections.max.reauth.ms", "5000"),
        ]);
        let s = read(&p).unwrap();
        assert_eq!(s.mechanisms.len(), 1);
        assert_eq!(s.mechanisms[0].reauth_ms, 5000);
        assert_eq!(s.max_receive_size, 524_288);
        let users = s.mechanisms[0].plain_users.as_ref().unwrap();
        assert_eq!(users.authenticate(b"\0alice\0a"), Ok("alice".into()));
        let c = ClientSasl::read("CONTROLLER", |k| p.get(k).map(String::as_str)).unwrap_err();
        assert!(c.to_string().contains("GSSAPI"), "{c}");
        let mut p = p;
        p.insert("sasl.mechanism.controller.protocol".into(), "PLAIN".into());
        let c = ClientSasl::read("CONTROLLER", |k| p.get(k).map(String::as_str)).unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.expose()),
            ("admin", "admin-pw")
        );
        assert!(!format!("{c:?}").contains("admin-pw"));
    }

    #[test]
    fn refusals_name_the_key_and_what_to_do() {
        let err = |pairs: &[(&str, &str)]| read(&props(pairs)).unwrap_err().to_string();
        let e = err(&[]);
        assert!(e.contains("GSSAPI") && e.contains("defaults"), "{e}");
        let e = err(&[("sasl.enabled.mechanisms", "OAUTHBEARER")]);
        assert!(e.contains("OAUTHBEARER"), "{e}");
        let e = err(&[("sasl.enabled.mechanisms", "plain")]);
        assert!(e.contains("upper case"), "{e}");
        let e = err(&[
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.jaas.config", PLAIN_JAAS),
        ]);
        assert!(
            e.contains("listener.name.controller.plain.sasl.jaas.config"),
            "{e}"
        );
        let two = format!("{PLAIN_JAAS} {PLAIN_JAAS}");
        let e = err(&[
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("listener.name.controller.plain.sasl.jaas.config", &two),
        ]);
        assert!(e.contains("2 login modules"), "{e}");
        let e = err(&[
            ("sasl.enabled.mechanisms", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                "M required k=1;",
            ),
        ]);
        assert!(e.contains("no value for option 'k'"), "{e}");
        assert!(!e.contains("admin-pw"));
    }
}
