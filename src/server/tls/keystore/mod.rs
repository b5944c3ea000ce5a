//! Key stores and trust stores as Kafka's `DefaultSslEngineFactory` reads them.
//! (Stand-in while the decoders are written: PEM only.)

use std::fmt;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::server::config::Password;

/// `ssl.keystore.type` / `ssl.truststore.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreType {
    Jks,
    Pkcs12,
    Pem,
}

impl StoreType {
    pub fn from_kafka_name(name: &str) -> Option<StoreType> {
        match name.to_ascii_uppercase().as_str() {
            "JKS" => Some(StoreType::Jks),
            "PKCS12" => Some(StoreType::Pkcs12),
            "PEM" => Some(StoreType::Pem),
            _ => None,
        }
    }
}

impl fmt::Display for StoreType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreType::Jks => "JKS",
            StoreType::Pkcs12 => "PKCS12",
            StoreType::Pem => "PEM",
        })
    }
}

/// A certificate chain (leaf first) and its private key.
#[derive(Debug)]
pub struct KeyMaterial {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeystoreError {
    #[error("{0} stores are not read yet")]
    NotYet(StoreType),
    #[error("no private key found")]
    NoKey,
    #[error("no certificate found")]
    NoCertificate,
    #[error("not PEM: {0}")]
    Pem(String),
}

pub fn read_key_store(
    bytes: &[u8],
    store: StoreType,
    _store_password: Option<&Password>,
    key_password: Option<&Password>,
) -> Result<KeyMaterial, KeystoreError> {
    match store {
        StoreType::Pem => {
            let text = String::from_utf8_lossy(bytes);
            pem_key_material(&text, &text, key_password)
        }
        other => Err(KeystoreError::NotYet(other)),
    }
}

pub fn read_trust_store(
    bytes: &[u8],
    store: StoreType,
    _password: Option<&Password>,
) -> Result<Vec<CertificateDer<'static>>, KeystoreError> {
    match store {
        StoreType::Pem => pem_certificates(&String::from_utf8_lossy(bytes)),
        other => Err(KeystoreError::NotYet(other)),
    }
}

pub fn pem_key_material(
    key_pem: &str,
    chain_pem: &str,
    _key_password: Option<&Password>,
) -> Result<KeyMaterial, KeystoreError> {
    let key =
        PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|_| KeystoreError::NoKey)?;
    Ok(KeyMaterial {
        chain: pem_certificates(chain_pem)?,
        key,
    })
}

pub fn pem_certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, KeystoreError> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| KeystoreError::Pem(e.to_string()))?;
    if certs.is_empty() {
        return Err(KeystoreError::NoCertificate);
    }
    Ok(certs)
}
