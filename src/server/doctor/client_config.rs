//! `--command-config`: the client settings Kafka's tools take (`security.protocol`, `ssl.*`,
//! `sasl.mechanism`, `sasl.jaas.config`), read into the dialler's TLS and SASL.

use std::path::{Path, PathBuf};

use crate::properties::Properties;
use crate::server::config::{ConfigError, SecurityProtocol};
use crate::server::peer::PeerSettings;
use crate::server::sasl::settings::ClientSasl;
use crate::server::tls::{LiveTls, TlsError, TlsSettings};

/// The listener name the client settings are read under: none of them carries a prefix, and
/// the readers fall back to the bare keys.
const CLIENT: &str = "CLIENT";

/// Why the doctor cannot dial as `--command-config` says.
#[derive(Debug, thiserror::Error)]
pub enum ClientConfigError {
    #[error("cannot read the command config {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("the command config {path}: security.protocol={value} is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")]
    Protocol { path: PathBuf, value: String },
    #[error("the command config {path}: {source}")]
    Invalid {
        path: PathBuf,
        #[source]
        source: ConfigError,
    },
    #[error("the command config {path}: its key or trust store: {source}")]
    Stores {
        path: PathBuf,
        #[source]
        source: Box<TlsError>,
    },
}

/// Dialler settings from the file at `path` (PLAINTEXT when `None`).
pub fn read(path: Option<&Path>) -> Result<PeerSettings, ClientConfigError> {
    let mut settings = PeerSettings::default();
    let Some(path) = path else {
        return Ok(settings);
    };
    let unreadable = |reason: String| ClientConfigError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(e.to_string()))?;
    let props = Properties::parse(&text).map_err(|e| unreadable(e.to_string()))?;
    let value = props.get("security.protocol").unwrap_or("PLAINTEXT").trim();
    let protocol =
        SecurityProtocol::from_name(value).ok_or_else(|| ClientConfigError::Protocol {
            path: path.to_path_buf(),
            value: value.to_string(),
        })?;
    let invalid = |source| ClientConfigError::Invalid {
        path: path.to_path_buf(),
        source,
    };
    if matches!(protocol, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl) {
        let tls = TlsSettings::read(CLIENT, |k| props.get(k)).map_err(invalid)?;
        settings.tls = Some(
            LiveTls::load(&tls).map_err(|source| ClientConfigError::Stores {
                path: path.to_path_buf(),
                source: Box::new(source),
            })?,
        );
    }
    if matches!(
        protocol,
        SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
    ) {
        // A client names its mechanism in sasl.mechanism and its login in sasl.jaas.config;
        // the reader knows them by a controller's names for its own outbound connections.
        let jaas_suffix = ".sasl.jaas.config";
        let sasl = ClientSasl::read(CLIENT, |k| {
            if k == "sasl.mechanism.controller.protocol" {
                props.get("sasl.mechanism")
            } else if k.ends_with(jaas_suffix) {
                props.get("sasl.jaas.config")
            } else {
                props.get(k)
            }
        })
        .map_err(invalid)?;
        settings.sasl = Some(std::sync::Arc::new(sasl));
    }
    Ok(settings)
}
