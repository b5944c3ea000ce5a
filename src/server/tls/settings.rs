//! One listener's `ssl.*` settings, read as Kafka reads them: each key first under the listener's
//! prefix (`listener.name.<listener, lower-cased>.ssl.keystore.location`), then bare. Their
//! combinations are checked as Kafka's `DefaultSslEngineFactory` checks them; files are only
//! named here and read when the listener starts ([`super::TlsContext`]).

use std::path::PathBuf;

use super::keystore::{KeystoreError, StoreType};
use crate::server::config::{ConfigError, Password};

/// Kafka's `ssl.client.auth`: whether a server asks for the client's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// Not asked for: every client is `User:ANONYMOUS`.
    None,
    /// Asked for; a client without one is `User:ANONYMOUS`.
    Requested,
    /// A client without a trusted certificate fails the handshake.
    Required,
}

/// The TLS versions kraftd speaks; Java's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl TlsVersion {
    fn from_java(name: &str) -> Option<TlsVersion> {
        match name {
            "TLSv1.2" => Some(TlsVersion::Tls12),
            "TLSv1.3" => Some(TlsVersion::Tls13),
            _ => None,
        }
    }
}

/// Where a listener's own certificate and key come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStoreSource {
    /// `ssl.keystore.location` (with `.type`, `.password` and `ssl.key.password`). A PEM file
    /// has no store password.
    File {
        path: PathBuf,
        store_type: StoreType,
        password: Option<Password>,
        key_password: Option<Password>,
    },
    /// `ssl.keystore.key` and `ssl.keystore.certificate.chain` (PEM only).
    Inline {
        key: Password,
        chain: Password,
        key_password: Option<Password>,
    },
}

/// Where the certificates a listener trusts come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStoreSource {
    /// `ssl.truststore.location` (with `.type` and `.password`; without a password a JKS or
    /// PKCS12 store is read without its integrity check, as Java does).
    File {
        path: PathBuf,
        store_type: StoreType,
        password: Option<Password>,
    },
    /// `ssl.truststore.certificates` (PEM only).
    Inline { certificates: Password },
    /// Neither: the system's CA bundle, as Java then uses its own `cacerts`.
    System,
}

/// The `ssl.*` settings of one listener, with Kafka's defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// The listener these settings are for (upper-case, as in `listeners`).
    pub listener: String,
    /// `None`: no certificate of its own (Kafka allows that for a client).
    pub key_store: Option<KeyStoreSource>,
    pub trust_store: TrustStoreSource,
    pub client_auth: ClientAuth,
    /// `ssl.enabled.protocols`, narrowed to TLS 1.2 when `ssl.protocol` is TLSv1.2. Never empty.
    pub versions: Vec<TlsVersion>,
    /// `ssl.cipher.suites` as Java names them; empty: rustls's defaults, which are Java's
    /// defaults for TLS 1.2 and 1.3 minus the CBC suites.
    pub cipher_suites: Vec<String>,
    /// `ssl.endpoint.identification.algorithm` is `https` (the default): a client checks that
    /// the server's certificate names the host it dialled.
    pub verify_hostname: bool,
    /// `ssl.principal.mapping.rules`, as written (default `DEFAULT`).
    pub principal_mapping_rules: String,
}

/// Every `ssl.*` key kraftd reads (the bare names; each may also carry a listener prefix).
pub const TLS_KEYS: &[&str] = &[
    "ssl.cipher.suites",
    "ssl.client.auth",
    "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.type",
    "ssl.principal.mapping.rules",
    "ssl.protocol",
    "ssl.truststore.certificates",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
];

/// Kafka keys that choose another implementation than the one kraftd has: set to anything but
/// Kafka's default, they are a start-up error naming the key.
const FIXED_KEYS: &[(&str, &str)] = &[
    ("ssl.engine.factory.class", ""),
    ("ssl.provider", ""),
    ("ssl.keymanager.algorithm", "SunX509"),
    ("ssl.trustmanager.algorithm", "PKIX"),
    ("ssl.secure.random.implementation", ""),
    (
        "principal.builder.class",
        "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
    ),
];

/// The prefix of `listener`'s own keys, as Kafka's `ListenerName.configPrefix`.
pub fn listener_prefix(listener: &str) -> String {
    format!("listener.name.{}.", listener.to_ascii_lowercase())
}

/// The value of `key` for `listener`: the prefixed key wins over the bare one.
pub(crate) fn listener_value<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
    listener: &str,
    key: &str,
) -> Option<(String, &'a str)> {
    let prefixed = format!("{}{key}", listener_prefix(listener));
    match get(&prefixed) {
        Some(v) => Some((prefixed, v)),
        None => get(key).map(|v| (key.to_string(), v)),
    }
}

impl TlsSettings {
    /// The settings of `listener`, from the configuration's raw values (`get`).
    pub fn read<'a>(
        listener: &str,
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<TlsSettings, ConfigError> {
        let value = |key: &str| listener_value(&get, listener, key);
        // Kafka treats an empty password or PEM value as absent only where its ConfigDef does;
        // these keys default to null, so an empty value is a value.
        let secret = |key: &str| value(key).map(|(_, v)| Password::new(v));
        for (key, default) in FIXED_KEYS {
            if let Some((name, v)) = value(key) {
                let v = v.trim();
                if v != *default && !(v.is_empty() && default.is_empty()) {
                    return Err(ConfigError::Unsupported(format!(
                        "{name}={v} is not supported: kraftd has only Kafka's default ({}); \
                         remove the key",
                        if default.is_empty() { "unset" } else { default }
                    )));
                }
            }
        }
        let store_type = |key: &str| -> Result<StoreType, ConfigError> {
            match value(key) {
                None => Ok(StoreType::Jks),
                Some((name, v)) => v.trim().parse::<StoreType>().map_err(|e| match e {
                    KeystoreError::UnsupportedStoreType(_) => {
                        ConfigError::Unsupported(format!("{name}: {e}"))
                    }
                    _ => ConfigError::invalid(&name, v, "JKS, PKCS12 or PEM (upper case)"),
                }),
            }
        };
        let key_store = key_store(
            listener,
            store_type("ssl.keystore.type")?,
            value("ssl.keystore.location").map(|(_, v)| PathBuf::from(v.trim())),
            secret("ssl.keystore.password"),
            secret("ssl.key.password"),
            secret("ssl.keystore.key"),
            secret("ssl.keystore.certificate.chain"),
        )?;
        let trust_store = trust_store(
            listener,
            store_type("ssl.truststore.type")?,
            value("ssl.truststore.location").map(|(_, v)| PathBuf::from(v.trim())),
            secret("ssl.truststore.password"),
            secret("ssl.truststore.certificates"),
        )?;
        let client_auth = match value("ssl.client.auth") {
            None => ClientAuth::None,
            Some((name, v)) => match v.trim().to_ascii_lowercase().as_str() {
                "none" => ClientAuth::None,
                "requested" => ClientAuth::Requested,
                "required" => ClientAuth::Required,
                _ => {
                    return Err(ConfigError::invalid(
                        &name,
                        v,
                        "required, requested or none",
                    ))
                }
            },
        };
        let versions = versions(&value)?;
        let cipher_suites = match value("ssl.cipher.suites") {
            None => Vec::new(),
            Some((name, v)) => {
                let suites = crate::server::config::values::parse_list(&name, v)?;
                let known = super::context::java_cipher_suites();
                if let Some(bad) = suites.iter().find(|s| !known.contains(s)) {
                    return Err(ConfigError::Unsupported(format!(
                        "{name} names {bad}, which kraftd cannot negotiate: it speaks {}",
                        known.join(", ")
                    )));
                }
                suites
            }
        };
        let verify_hostname = match value("ssl.endpoint.identification.algorithm") {
            None => true,
            Some((name, v)) => match v.trim() {
                "" => false,
                a if a.eq_ignore_ascii_case("https") => true,
                _ => {
                    return Err(ConfigError::invalid(
                        &name,
                        v,
                        "https (check the peer's host name) or empty (do not)",
                    ))
                }
            },
        };
        let principal_mapping_rules = value("ssl.principal.mapping.rules")
            .map_or("DEFAULT".to_string(), |(_, v)| v.to_string());
        Ok(TlsSettings {
            listener: listener.to_string(),
            key_store,
            trust_store,
            client_auth,
            versions,
            cipher_suites,
            verify_hostname,
            principal_mapping_rules,
        })
    }
}

fn versions<'a>(
    value: &impl Fn(&str) -> Option<(String, &'a str)>,
) -> Result<Vec<TlsVersion>, ConfigError> {
    let protocol = match value("ssl.protocol") {
        None => TlsVersion::Tls13,
        Some((name, v)) => match v.trim() {
            // Java's SSLContext names: "TLS" is the newest the JVM has.
            "TLSv1.3" | "TLS" => TlsVersion::Tls13,
            "TLSv1.2" => TlsVersion::Tls12,
            _ => return Err(ConfigError::invalid(&name, v, "TLSv1.3 or TLSv1.2")),
        },
    };
    let mut versions = match value("ssl.enabled.protocols") {
        None => vec![TlsVersion::Tls12, TlsVersion::Tls13],
        Some((name, v)) => {
            let mut versions = Vec::new();
            for p in crate::server::config::values::parse_list(&name, v)? {
                match TlsVersion::from_java(&p) {
                    Some(version) => versions.push(version),
                    None => {
                        return Err(ConfigError::Unsupported(format!(
                            "{name} names {p}, which kraftd does not speak: it speaks TLSv1.2 \
                             and TLSv1.3"
                        )))
                    }
                }
            }
            versions
        }
    };
    // An SSLContext of TLSv1.2 never negotiates 1.3, whatever is enabled.
    versions.retain(|v| *v <= protocol);
    versions.sort();
    versions.dedup();
    if versions.is_empty() {
        return Err(ConfigError::Inconsistent(
            "ssl.enabled.protocols leaves no TLS version that ssl.protocol allows: enable TLSv1.2"
                .to_string(),
        ));
    }
    Ok(versions)
}

/// Kafka's `createKeystore` checks, in its order.
fn key_store(
    listener: &str,
    store_type: StoreType,
    location: Option<PathBuf>,
    password: Option<Password>,
    key_password: Option<Password>,
    key: Option<Password>,
    chain: Option<Password>,
) -> Result<Option<KeyStoreSource>, ConfigError> {
    let wrong = |what: &str| {
        Err(ConfigError::Inconsistent(format!(
            "listener {listener}: {what}"
        )))
    };
    match (key, chain) {
        (Some(key), chain) => {
            if store_type != StoreType::Pem {
                return wrong(&format!(
                    "ssl.keystore.key can be given only with ssl.keystore.type=PEM, not {store_type}"
                ));
            }
            let Some(chain) = chain else {
                return wrong("ssl.keystore.key is set, but ssl.keystore.certificate.chain is not: give both");
            };
            if location.is_some() {
                return wrong("both ssl.keystore.location and ssl.keystore.key are set: give one");
            }
            if password.is_some() {
                return wrong("ssl.keystore.password cannot be given with PEM; the key's own password is ssl.key.password");
            }
            Ok(Some(KeyStoreSource::Inline {
                key,
                chain,
                key_password,
            }))
        }
        (None, Some(_)) => {
            wrong("ssl.keystore.certificate.chain is set, but ssl.keystore.key is not: give both")
        }
        (None, None) => match (location, password) {
            (Some(_), Some(_)) if store_type == StoreType::Pem => {
                wrong("ssl.keystore.password cannot be given with PEM; the key's own password is ssl.key.password")
            }
            (Some(path), None) if store_type == StoreType::Pem => Ok(Some(KeyStoreSource::File {
                path,
                store_type,
                password: None,
                key_password,
            })),
            (None, Some(_)) => {
                wrong("ssl.keystore.password is set, but no key store is (ssl.keystore.location)")
            }
            (Some(path), None) => wrong(&format!(
                "ssl.keystore.location is {}, but ssl.keystore.password is not set",
                path.display()
            )),
            (Some(path), Some(password)) => Ok(Some(KeyStoreSource::File {
                path,
                store_type,
                password: Some(password),
                key_password,
            })),
            (None, None) => Ok(None),
        },
    }
}

/// Kafka's `createTruststore` checks, in its order.
fn trust_store(
    listener: &str,
    store_type: StoreType,
    location: Option<PathBuf>,
    password: Option<Password>,
    certificates: Option<Password>,
) -> Result<TrustStoreSource, ConfigError> {
    let wrong = |what: &str| {
        Err(ConfigError::Inconsistent(format!(
            "listener {listener}: {what}"
        )))
    };
    if let Some(certificates) = certificates {
        if store_type != StoreType::Pem {
            return wrong(&format!(
                "ssl.truststore.certificates can be given only with ssl.truststore.type=PEM, not {store_type}"
            ));
        }
        if location.is_some() {
            return wrong(
                "both ssl.truststore.location and ssl.truststore.certificates are set: give one",
            );
        }
        if password.is_some() {
            return wrong("ssl.truststore.password cannot be given with PEM");
        }
        return Ok(TrustStoreSource::Inline { certificates });
    }
    match (location, password) {
        (Some(_), Some(_)) if store_type == StoreType::Pem => {
            wrong("ssl.truststore.password cannot be given with PEM")
        }
        (None, Some(_)) => {
            wrong("ssl.truststore.password is set, but no trust store is (ssl.truststore.location)")
        }
        (Some(path), password) => Ok(TrustStoreSource::File {
            path,
            store_type,
            password,
        }),
        (None, None) => Ok(TrustStoreSource::System),
    }
}
