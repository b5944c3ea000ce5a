//! Key stores and trust stores as Kafka's `DefaultSslEngineFactory` reads them (Kafka 4.4 on
//! Java 17), decoded into rustls's types. Only decoding: the caller maps Kafka's `ssl.*` keys to
//! these calls and names the file or key in its own error.
//!
//! What Kafka does, and so what this module does:
//! - `ssl.keystore.type` / `ssl.truststore.type` go to `KeyStore.getInstance`, whose type names
//!   are case-insensitive, except `PEM`, which Kafka compares case-sensitively (`"PEM".equals`):
//!   `pem` is no type Java knows, and fails ([`StoreType`]).
//! - Java 17's `JKS` and `PKCS12` key stores are "dual format" (`keystore.type.compat=true`, the
//!   default): each loads the other's files. So the type only matters for PEM; a JKS or PKCS12
//!   file is recognized by its content (JKS starts with `0xFEEDFEED`).
//! - A key store other than PEM needs `ssl.keystore.password` (Kafka refuses the config
//!   without one); its keys open with `ssl.key.password`, or without it the store password
//!   (`FileBasedStore.keyPassword`). A PEM store takes no store password, only a key password.
//! - A trust store may have no password: Java then skips the integrity check (JKS's digest,
//!   PKCS12's MAC) and, for PKCS12, the encrypted parts it cannot open (`PKCS12KeyStore.engineLoad`
//!   "skipping PKCS#7 encryptedData - no password was supplied"): keytool 17 and openssl 3 both
//!   encrypt certificates, so such a PKCS12 trust store trusts nothing.
//! - PKCS12 certificates are trusted only with Oracle's trusted-key-usage attribute (keytool
//!   `-importcert` writes it): an `openssl pkcs12 -export -nokeys` trust store trusts nothing.
//! - PEM keys: PKCS#8 only, RSA, DSA or EC (Kafka's key factories: no Ed25519); encrypted iff
//!   `ssl.key.password` is set; and Kafka on Java 17 cannot decrypt PBES2 (openssl 3's default:
//!   "PBES2 SecretKeyFactory not available"), only PBES1-style schemes (`pem`).
//! - The key manager is Java's default `SunX509` (`ssl.keymanager.algorithm`): it opens every
//!   key entry with the one key password (any failure fails the whole context) and keeps those
//!   with a certificate chain; the server then picks among them by the handshake's key type, in
//!   hash-map order. kraftd serves one certificate: exactly one usable private-key entry is
//!   required, several are an error naming their aliases.
//! - The trust manager (`PKIX`, via `TrustStoreUtil.getTrustedCerts`) trusts every trusted
//!   certificate entry and the first certificate of every private-key entry's chain, as a set.
//!   A JKS or PKCS12 trust store without any is not an error for Java (handshakes fail later):
//!   [`read_trust_store`] then returns an empty list for the caller to refuse.
//!
//! `compat/tests/security/keystores.rs` checks these rules against Kafka 4.4 itself (stores
//! made by keytool and openssl, loaded through `DefaultSslEngineFactory`).

mod der;
mod jks;
mod pbe;
mod pem;
mod pkcs12;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::server::config::Password;

pub use pem::{pem_certificates, pem_key_material};

/// `ssl.keystore.type` / `ssl.truststore.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreType {
    /// Kafka's default.
    Jks,
    Pkcs12,
    Pem,
}

impl FromStr for StoreType {
    type Err = KeystoreError;

    /// Kafka's names: `JKS` and `PKCS12` in any case (Java's provider look-up ignores case),
    /// `PEM` exactly (Kafka's own check is case-sensitive).
    fn from_str(s: &str) -> Result<StoreType, KeystoreError> {
        if s == "PEM" {
            Ok(StoreType::Pem)
        } else if s.eq_ignore_ascii_case("JKS") {
            Ok(StoreType::Jks)
        } else if s.eq_ignore_ascii_case("PKCS12") {
            Ok(StoreType::Pkcs12)
        } else if ["JCEKS", "CaseExactJKS", "DKS", "PKCS11"]
            .iter()
            .any(|t| s.eq_ignore_ascii_case(t))
        {
            Err(KeystoreError::UnsupportedStoreType(s.to_string()))
        } else {
            Err(KeystoreError::UnknownStoreType(s.to_string()))
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
pub struct KeyMaterial {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl fmt::Debug for KeyMaterial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyMaterial")
            .field("chain", &format_args!("{} certificates", self.chain.len()))
            .field("key", &format_args!("[hidden]"))
            .finish()
    }
}

/// Which store an error is about, for the config key its message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    KeyStore,
    TrustStore,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::KeyStore => "key store",
            Role::TrustStore => "trust store",
        })
    }
}

impl Role {
    fn password_key(self) -> &'static str {
        match self {
            Role::KeyStore => "ssl.keystore.password",
            Role::TrustStore => "ssl.truststore.password",
        }
    }
}

/// Why a store could not be read. No message holds a secret (a password or key bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeystoreError {
    #[error(
        "unknown store type {0:?}: Kafka's are JKS (the default), PKCS12 and PEM (upper case)"
    )]
    UnknownStoreType(String),
    #[error("store type {0:?} is not supported: convert the store to PKCS12 (keytool -importkeystore -deststoretype PKCS12)")]
    UnsupportedStoreType(String),
    #[error(
        "a JKS or PKCS12 key store needs ssl.keystore.password (Kafka refuses one without it)"
    )]
    PasswordRequired,
    #[error("a PEM {0} takes no store password: remove {pw}; an encrypted key's password goes in ssl.key.password", pw = .0.password_key())]
    PemStorePassword(Role),
    #[error("the {role} is not a JKS or PKCS12 store, or is damaged ({what})")]
    Malformed { role: Role, what: &'static str },
    #[error("the {role} is a JCEKS store, which kraftd does not read: convert it to PKCS12 (keytool -importkeystore -deststoretype PKCS12)")]
    Jceks { role: Role },
    #[error("the {role}'s integrity check failed: {pw} is wrong, or the file is damaged", pw = .role.password_key())]
    IntegrityCheckFailed { role: Role },
    #[error("the {role} uses {what}, which kraftd does not support: re-create it with keytool (Java 17 defaults) or openssl 3")]
    UnsupportedProtection { role: Role, what: String },
    #[error("a private key in the key store does not open: ssl.key.password (or, when unset, ssl.keystore.password) is wrong")]
    KeyNotRecoverable,
    #[error("the key store holds no private key with a certificate chain")]
    NoKeyEntry,
    #[error("the key store holds {} private keys (aliases {}); kraftd serves one: keep one key entry in the store", .0.len(), .0.join(", "))]
    SeveralKeyEntries(Vec<String>),
    #[error("the private key is not usable ({0}): kraftd supports RSA, ECDSA (P-256, P-384) and Ed25519 keys in PKCS#8")]
    UnsupportedKey(String),
    #[error("certificate {index} of the {role} does not parse as X.509")]
    BadCertificate { role: Role, index: usize },
    #[error("the PEM holds no CERTIFICATE block")]
    PemNoCertificate,
    #[error("the PEM holds no PRIVATE KEY block")]
    PemNoKey,
    #[error("the PEM holds {0} PRIVATE KEY blocks; Kafka expects one")]
    PemSeveralKeys(usize),
    #[error("a PEM block's base64 is malformed")]
    PemBase64,
    #[error("the PEM private key is encrypted: set ssl.key.password")]
    PemKeyEncrypted,
    #[error("the PEM private key is PBES2-encrypted (openssl's default), which Kafka on Java 17 cannot decrypt: re-encrypt it with openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES, or use a PKCS12 key store")]
    PemKeyPbes2,
    #[error("ssl.key.password is set but the PEM private key is not an encrypted PKCS#8 key: remove ssl.key.password, or encrypt the key (openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES)")]
    PemKeyNotEncrypted,
    #[error("the PEM private key is not a PKCS#8 RSA, DSA or EC key, the kinds Kafka reads (convert with openssl pkcs8 -topk8)")]
    PemKeyFormat,
    #[error("the PEM certificate chain is out of order: each certificate must be followed by its issuer's, the leaf first")]
    ChainOutOfOrder,
}

/// A store's entries after loading, as Java's `KeyStore` holds them: by alias (each format's
/// alias rules applied; a later entry replaces an earlier one of the same alias).
#[derive(Default)]
pub(super) struct Loaded {
    entries: Vec<(String, Entry)>,
}

pub(super) enum Entry {
    /// A private key, still protected as the store keeps it, and its chain (maybe empty).
    Key {
        key: LockedKey,
        chain: Vec<CertificateDer<'static>>,
    },
    Trusted(CertificateDer<'static>),
}

/// A private key as a store holds it, opened with the key password on use (as Java's
/// `KeyStore.getKey`).
pub(super) enum LockedKey {
    /// JKS: an `EncryptedPrivateKeyInfo` with Sun's key protector.
    Jks(Vec<u8>),
    /// PKCS#12: a shrouded key bag's `EncryptedPrivateKeyInfo`.
    Pkcs12(Vec<u8>),
}

impl Loaded {
    pub(super) fn put(&mut self, alias: String, entry: Entry) {
        if let Some(slot) = self.entries.iter_mut().find(|(a, _)| *a == alias) {
            slot.1 = entry;
        } else {
            self.entries.push((alias, entry));
        }
    }
}

fn load(bytes: &[u8], password: Option<&Password>, role: Role) -> Result<Loaded, KeystoreError> {
    match bytes.get(..4) {
        Some([0xfe, 0xed, 0xfe, 0xed]) => jks::load(bytes, password, role),
        Some([0xce, 0xce, 0xce, 0xce]) => Err(KeystoreError::Jceks { role }),
        _ => pkcs12::load(bytes, password, role),
    }
}

/// A key store (`ssl.keystore.location`'s bytes): the one private key and its chain that
/// Java's `SunX509` key manager would serve.
pub fn read_key_store(
    bytes: &[u8],
    store: StoreType,
    store_password: Option<&Password>,
    key_password: Option<&Password>,
) -> Result<KeyMaterial, KeystoreError> {
    if store == StoreType::Pem {
        if store_password.is_some() {
            return Err(KeystoreError::PemStorePassword(Role::KeyStore));
        }
        // Kafka reads the file as UTF-8 text (malformed bytes replaced) and looks for the key
        // and the chain in the same text.
        let text = String::from_utf8_lossy(bytes);
        return pem_key_material(&text, &text, key_password);
    }
    let store_password = store_password.ok_or(KeystoreError::PasswordRequired)?;
    let loaded = load(bytes, Some(store_password), Role::KeyStore)?;
    let key_password = key_password.unwrap_or(store_password);
    let mut usable = Vec::new();
    // SunX509KeyManagerImpl: every key entry is opened, even one without a chain.
    for (alias, entry) in loaded.entries {
        if let Entry::Key { key, chain } = entry {
            let pkcs8 = match &key {
                LockedKey::Jks(protected) => jks::recover_key(protected, key_password)?,
                LockedKey::Pkcs12(encrypted) => pkcs12::decrypt_key(encrypted, key_password)?,
            };
            if !chain.is_empty() {
                usable.push((alias, chain, pkcs8));
            }
        }
    }
    match usable.len() {
        0 => Err(KeystoreError::NoKeyEntry),
        1 => {
            let (_, chain, pkcs8) = usable.pop().expect("one entry");
            key_material(chain, pkcs8)
        }
        _ => Err(KeystoreError::SeveralKeyEntries(
            usable.into_iter().map(|(alias, _, _)| alias).collect(),
        )),
    }
}

/// The chain and a PKCS#8 key, once the key is known to be one rustls can sign with.
pub(super) fn key_material(
    chain: Vec<CertificateDer<'static>>,
    pkcs8: Vec<u8>,
) -> Result<KeyMaterial, KeystoreError> {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8));
    rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| KeystoreError::UnsupportedKey(unsupported_key_reason(&e)))?;
    Ok(KeyMaterial { chain, key })
}

/// rustls's reason, without anything of the key itself.
fn unsupported_key_reason(e: &rustls::Error) -> String {
    match e {
        rustls::Error::General(s) => s.clone(),
        _ => "unrecognized key".to_string(),
    }
}

/// A trust store (`ssl.truststore.location`'s bytes): the certificates Java's trust manager
/// would trust, each once, in store order. Empty when the store has none (see the module doc).
pub fn read_trust_store(
    bytes: &[u8],
    store: StoreType,
    password: Option<&Password>,
) -> Result<Vec<CertificateDer<'static>>, KeystoreError> {
    if store == StoreType::Pem {
        if password.is_some() {
            return Err(KeystoreError::PemStorePassword(Role::TrustStore));
        }
        return pem_certificates(&String::from_utf8_lossy(bytes));
    }
    let loaded = load(bytes, password, Role::TrustStore)?;
    let mut trusted: Vec<CertificateDer<'static>> = Vec::new();
    for (_, entry) in loaded.entries {
        let cert = match entry {
            Entry::Trusted(cert) => cert,
            Entry::Key { chain, .. } => match chain.into_iter().next() {
                Some(leaf) => leaf,
                None => continue,
            },
        };
        if !trusted.contains(&cert) {
            trusted.push(cert);
        }
    }
    Ok(trusted)
}

/// `der` as one X.509 certificate, as Java's `CertificateFactory` reads it: the first DER
/// element, which must parse; anything after it is ignored.
pub(super) fn certificate(
    der: &[u8],
    role: Role,
    index: usize,
) -> Result<CertificateDer<'static>, KeystoreError> {
    let bad = || KeystoreError::BadCertificate { role, index };
    let tlv = der::single(der, false, "certificate").map_err(|_| bad())?;
    x509_parser::parse_x509_certificate(tlv.raw).map_err(|_| bad())?;
    Ok(CertificateDer::from(tlv.raw.to_vec()))
}
