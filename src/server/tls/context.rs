//! A listener's TLS, built from its [`TlsSettings`]: the rustls server configuration its
//! listener accepts with, the client configuration kraftd dials other controllers with, and the
//! principal mapper for its clients' certificates.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig};

use super::keystore::{self, KeyMaterial, KeystoreError};
use super::principal::{MappingRulesError, PrincipalMapper};
use super::settings::{ClientAuth, KeyStoreSource, TlsSettings, TlsVersion, TrustStoreSource};

/// Where Debian (and most Linux distributions) keep the system's trusted CAs: what a listener
/// without a trust store trusts, as Java then trusts its `cacerts` (on Debian, made from the
/// same bundle).
const SYSTEM_CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Why a listener's TLS could not be set up. Names the listener and file; never a secret.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("listener {listener}: cannot read {what} {}: {source}; check the path and its permissions", path.display())]
    Read {
        listener: String,
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("listener {listener}: {what} {where_}: {source}")]
    Store {
        listener: String,
        what: &'static str,
        where_: String,
        source: KeystoreError,
    },
    #[error("listener {listener}: {what}: {source}")]
    Rustls {
        listener: String,
        what: &'static str,
        source: rustls::Error,
    },
    #[error("listener {listener}: the trust store has no certificate kraftd can use as a trust anchor ({reason}); add the CA that signs the peers' certificates")]
    Roots { listener: String, reason: String },
    #[error("listener {listener}: an SSL listener needs a key store: set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain with ssl.keystore.type=PEM)")]
    NoKeyStore { listener: String },
    #[error("listener {listener}: {source}")]
    MappingRules {
        listener: String,
        source: MappingRulesError,
    },
}

/// The Java names of the cipher suites kraftd can negotiate: rustls's, with the `ring` provider.
/// Java and IANA name TLS 1.3 suites `TLS_...`; rustls `TLS13_...`.
pub fn java_cipher_suites() -> Vec<String> {
    ring::default_provider()
        .cipher_suites
        .iter()
        .map(|s| java_name(s.suite()))
        .collect()
}

fn java_name(suite: rustls::CipherSuite) -> String {
    let name = format!("{suite:?}");
    match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name,
    }
}

/// What one listener's TLS needs at run time, built from its settings and the stores' contents.
pub struct ListenerTls {
    pub settings: TlsSettings,
    /// What the listener accepts with.
    pub server: Arc<ServerConfig>,
    /// What kraftd dials the listener's peers with.
    pub client: Arc<ClientConfig>,
    pub mapper: PrincipalMapper,
}

impl ListenerTls {
    /// Reads the stores the settings name and builds both configurations.
    pub fn build(settings: &TlsSettings) -> Result<ListenerTls, TlsError> {
        let listener = settings.listener.clone();
        let provider = Arc::new(provider(settings));
        let versions: Vec<&'static rustls::SupportedProtocolVersion> = settings
            .versions
            .iter()
            .map(|v| match v {
                TlsVersion::Tls12 => &rustls::version::TLS12,
                TlsVersion::Tls13 => &rustls::version::TLS13,
            })
            .collect();
        let rustls_err = |what: &'static str| {
            let listener = listener.clone();
            move |source| TlsError::Rustls {
                listener,
                what,
                source,
            }
        };
        // Kafka checks a server's TLS at start-up by a handshake with itself, which fails
        // without a key store.
        let key = match &settings.key_store {
            Some(store) => key_material(&listener, store)?,
            None => return Err(TlsError::NoKeyStore { listener }),
        };
        let roots = Arc::new(roots(&listener, &settings.trust_store)?);

        let server = {
            {
                let builder = ServerConfig::builder_with_provider(provider.clone())
                    .with_protocol_versions(&versions)
                    .map_err(rustls_err("the enabled protocols and cipher suites"))?;
                let builder = match settings.client_auth {
                    ClientAuth::None => builder.with_no_client_auth(),
                    auth => {
                        let verifier = WebPkiClientVerifier::builder_with_provider(
                            roots.clone(),
                            provider.clone(),
                        );
                        let verifier = if auth == ClientAuth::Requested {
                            verifier.allow_unauthenticated()
                        } else {
                            verifier
                        };
                        let verifier = verifier.build().map_err(|e| TlsError::Roots {
                            listener: listener.clone(),
                            reason: e.to_string(),
                        })?;
                        builder.with_client_cert_verifier(verifier)
                    }
                };
                let config = builder
                    .with_single_cert(key.chain.clone(), key.key.clone_key())
                    .map_err(rustls_err("the key store's certificate and key"))?;
                Arc::new(config)
            }
        };

        let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| TlsError::Roots {
                listener: listener.clone(),
                reason: e.to_string(),
            })?;
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(rustls_err("the enabled protocols and cipher suites"))?;
        let builder = if settings.verify_hostname {
            builder.with_webpki_verifier(verifier)
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyHostName(verifier)))
        };
        let client = builder
            .with_client_auth_cert(key.chain, key.key)
            .map_err(rustls_err("the key store's certificate and key"))?;
        let mapper =
            PrincipalMapper::parse(&settings.principal_mapping_rules).map_err(|source| {
                TlsError::MappingRules {
                    listener: listener.clone(),
                    source,
                }
            })?;
        Ok(ListenerTls {
            settings: settings.clone(),
            server,
            client: Arc::new(client),
            mapper,
        })
    }

    /// The files the settings name, for noticing that one changed.
    pub fn files(settings: &TlsSettings) -> Vec<PathBuf> {
        let mut files = Vec::new();
        if let Some(KeyStoreSource::File { path, .. }) = &settings.key_store {
            files.push(path.clone());
        }
        if let TrustStoreSource::File { path, .. } = &settings.trust_store {
            files.push(path.clone());
        }
        files
    }
}

/// The `ring` provider, narrowed to `ssl.cipher.suites` when given.
fn provider(settings: &TlsSettings) -> CryptoProvider {
    let mut provider = ring::default_provider();
    if !settings.cipher_suites.is_empty() {
        provider
            .cipher_suites
            .retain(|s| settings.cipher_suites.contains(&java_name(s.suite())));
    }
    provider
}

fn read(listener: &str, what: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        listener: listener.to_string(),
        what,
        path: path.to_path_buf(),
        source,
    })
}

fn key_material(listener: &str, source: &KeyStoreSource) -> Result<KeyMaterial, TlsError> {
    let store_err = |where_: String| {
        move |source| TlsError::Store {
            listener: listener.to_string(),
            what: "key store",
            where_,
            source,
        }
    };
    match source {
        KeyStoreSource::File {
            path,
            store_type,
            password,
            key_password,
        } => {
            let bytes = read(listener, "key store", path)?;
            keystore::read_key_store(
                &bytes,
                *store_type,
                password.as_ref(),
                key_password.as_ref(),
            )
            .map_err(store_err(format!("{} ({store_type})", path.display())))
        }
        KeyStoreSource::Inline {
            key,
            chain,
            key_password,
        } => keystore::pem_key_material(key.expose(), chain.expose(), key_password.as_ref())
            .map_err(store_err(
                "ssl.keystore.key / ssl.keystore.certificate.chain".to_string(),
            )),
    }
}

fn roots(listener: &str, source: &TrustStoreSource) -> Result<RootCertStore, TlsError> {
    let store_err = |where_: String| {
        move |source| TlsError::Store {
            listener: listener.to_string(),
            what: "trust store",
            where_,
            source,
        }
    };
    let certificates = match source {
        TrustStoreSource::File {
            path,
            store_type,
            password,
        } => {
            let bytes = read(listener, "trust store", path)?;
            keystore::read_trust_store(&bytes, *store_type, password.as_ref())
                .map_err(store_err(format!("{} ({store_type})", path.display())))?
        }
        TrustStoreSource::Inline { certificates } => {
            keystore::pem_certificates(certificates.expose())
                .map_err(store_err("ssl.truststore.certificates".to_string()))?
        }
        TrustStoreSource::System => {
            let bytes = read(
                listener,
                "the system's CA bundle",
                Path::new(SYSTEM_CA_BUNDLE),
            )?;
            keystore::pem_certificates(&String::from_utf8_lossy(&bytes))
                .map_err(store_err(SYSTEM_CA_BUNDLE.to_string()))?
        }
    };
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(certificates);
    if added == 0 {
        return Err(TlsError::Roots {
            listener: listener.to_string(),
            reason: "none of its certificates parses as a trust anchor".to_string(),
        });
    }
    Ok(roots)
}

/// `ssl.endpoint.identification.algorithm` empty: the server's chain is verified against the
/// trust store, but not the host name it names.
#[derive(Debug)]
struct AnyHostName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
