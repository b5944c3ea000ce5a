//! PKCS#12 (RFC 7292) as Java 17's `sun.security.pkcs12.PKCS12KeyStore.engineLoad` reads it:
//!
//! - With a password, the MAC (if any) is checked; encrypted parts (`EncryptedData`) are
//!   decrypted with it. Without one, Java checks no MAC and skips encrypted parts: their
//!   certificates are lost (keytool 17 and openssl 3 both encrypt the certificates).
//! - Shrouded key bags become key entries, opened later with the key password (`getKey`). A key
//!   bag without a `localKeyId` gets "01" if it is the first key bag, else is dropped. Plain key
//!   bags (unencrypted) are not read by Java, nor here.
//! - A certificate bag carrying Oracle's trusted-key-usage attribute
//!   (2.16.840.1.113894.746875.1.1, written by `keytool -importcert`) is a trusted certificate
//!   entry. Any other certificate bag (as `openssl pkcs12 -export` writes them, even with
//!   `-nokeys`) is no entry at all: it only serves to build key entries' chains. An openssl
//!   "trust store" is thus empty to Java.
//! - A key entry's chain: the certificate bag with its `localKeyId` (and alias, if both
//!   match), then issuers by subject (preferring the one whose subject key identifier is the
//!   authority key identifier), up to a self-issued certificate or a repeat. A certificate bag
//!   without `localKeyId` that is the first bag of its part, while exactly one key bag has been
//!   seen, gets "01".
//! - Aliases are `friendlyName`s, else "1", "2", ... in order, compared lower-cased; a later
//!   entry replaces an earlier one of the same alias.
//!
//! Not reproduced (left as errors or ignored, never seen from keytool or openssl): secret key
//! bags (ignored), BER indefinite lengths, key bags inside legacy-encrypted parts.

use rustls_pki_types::CertificateDer;
use x509_parser::extensions::ParsedExtension;

use super::der::{self, Malformed, Reader, Tlv};
use super::pbe::{self, PbeError};
use super::{certificate, Entry, KeystoreError, Loaded, LockedKey, Role};
use crate::server::config::Password;

const DATA: &str = "1.2.840.113549.1.7.1";
const ENCRYPTED_DATA: &str = "1.2.840.113549.1.7.6";
const SHROUDED_KEY_BAG: &str = "1.2.840.113549.1.12.10.1.2";
const CERT_BAG: &str = "1.2.840.113549.1.12.10.1.3";
const FRIENDLY_NAME: &str = "1.2.840.113549.1.9.20";
const LOCAL_KEY_ID: &str = "1.2.840.113549.1.9.21";
const TRUSTED_KEY_USAGE: &str = "2.16.840.1.113894.746875.1.1";

struct Cert {
    der: CertificateDer<'static>,
    key_id: Option<Vec<u8>>,
    alias: Option<String>,
}

struct Key {
    serial: usize,
    alias: String,
    key_id: Vec<u8>,
}

/// The load's state, as `PKCS12KeyStore`'s fields during `engineLoad`.
#[derive(Default)]
struct State {
    /// Entries by lower-cased alias; a key entry as its serial number into `keys`.
    entries: Vec<(String, Slot)>,
    keys: Vec<(Key, Vec<u8>)>,
    /// Certificates that are not trusted entries (chain material).
    cert_entries: Vec<Cert>,
    /// Every certificate, for issuer look-ups.
    all_certs: Vec<CertificateDer<'static>>,
    private_key_count: usize,
    counter: usize,
}

enum Slot {
    Key(usize),
    Trusted(CertificateDer<'static>),
}

impl State {
    fn put(&mut self, alias: &str, slot: Slot) {
        let alias = alias.to_lowercase();
        if let Some(existing) = self.entries.iter_mut().find(|(a, _)| *a == alias) {
            existing.1 = slot;
        } else {
            self.entries.push((alias, slot));
        }
    }

    fn unfriendly_name(&mut self) -> String {
        self.counter += 1;
        self.counter.to_string()
    }

    /// A certificate bag's certificate: a trusted entry of its own when the bag carries the
    /// trusted-key-usage attribute, else a candidate for a key's chain. `first`: the store's
    /// first certificate, which Java pairs with a lone key that names no local key id.
    fn add_certificate(&mut self, cert: CertificateDer<'static>, attrs: Attributes, first: bool) {
        let mut key_id = attrs.key_id;
        if key_id.is_none() && self.private_key_count == 1 && first {
            key_id = Some(b"01".to_vec());
        }
        if attrs.trusted {
            let alias = attrs.alias.unwrap_or_else(|| self.unfriendly_name());
            self.put(&alias, Slot::Trusted(cert.clone()));
        } else {
            self.cert_entries.push(Cert {
                der: cert.clone(),
                key_id,
                alias: attrs.alias,
            });
        }
        self.all_certs.push(cert);
    }
}

struct Attributes {
    alias: Option<String>,
    key_id: Option<Vec<u8>>,
    trusted: bool,
}

fn attributes(set: Option<Tlv<'_>>) -> Result<Attributes, Malformed> {
    let mut out = Attributes {
        alias: None,
        key_id: None,
        trusted: false,
    };
    let Some(set) = set else { return Ok(out) };
    let mut attrs = set.reader();
    while !attrs.is_empty() {
        let mut attr = attrs.expect(der::SEQUENCE, "bag attribute")?.reader();
        let oid = der::oid_string(attr.expect(der::OID, "bag attribute")?.value);
        let mut values = attr.expect(der::SET, "bag attribute values")?.reader();
        match oid.as_str() {
            FRIENDLY_NAME => {
                let v = values.expect(der::BMP_STRING, "friendly name")?.value;
                if v.len() % 2 != 0 {
                    return Err(Malformed("friendly name"));
                }
                let units: Vec<u16> = v
                    .chunks(2)
                    .map(|c| u16::from_be_bytes([c[0], c[1]]))
                    .collect();
                out.alias = Some(String::from_utf16_lossy(&units));
            }
            LOCAL_KEY_ID => {
                out.key_id = Some(
                    values
                        .expect(der::OCTET_STRING, "local key id")?
                        .value
                        .to_vec(),
                );
            }
            TRUSTED_KEY_USAGE => {
                values.expect(der::OID, "trusted key usage")?;
                out.trusted = true;
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A `SafeContents`' bags, in order, into `state` (Java's `loadSafeContents`).
fn load_bags(state: &mut State, safe_contents: &[u8], role: Role) -> Result<(), KeystoreError> {
    let malformed = |m: Malformed| KeystoreError::Malformed { role, what: m.0 };
    let mut bags = der::single(safe_contents, true, "safe contents")
        .map_err(malformed)?
        .reader();
    let mut index = 0usize;
    while !bags.is_empty() {
        let mut bag = bags
            .expect(der::SEQUENCE, "safe bag")
            .map_err(malformed)?
            .reader();
        let bag_id = der::oid_string(bag.expect(der::OID, "safe bag").map_err(malformed)?.value);
        let value = bag
            .expect(der::CONTEXT_0, "safe bag value")
            .map_err(malformed)?;
        let value = der::single(value.value, false, "safe bag value").map_err(malformed)?;
        let attrs = attributes(
            bag.optional(der::SET, "bag attributes")
                .map_err(malformed)?,
        )
        .map_err(malformed)?;
        let first = index == 0;
        index += 1;
        match bag_id.as_str() {
            SHROUDED_KEY_BAG => {
                state.private_key_count += 1;
                let key_id = match attrs.key_id {
                    Some(id) => id,
                    None if state.private_key_count == 1 => b"01".to_vec(),
                    None => continue,
                };
                let alias = match attrs.alias {
                    Some(a) => a,
                    None => state.unfriendly_name(),
                };
                let serial = state.keys.len();
                state.put(&alias, Slot::Key(serial));
                state.keys.push((
                    Key {
                        serial,
                        alias,
                        key_id,
                    },
                    value.raw.to_vec(),
                ));
            }
            CERT_BAG => {
                let mut cert_bag = value.reader();
                cert_bag
                    .expect(der::OID, "certificate bag")
                    .map_err(malformed)?;
                let inner = cert_bag
                    .expect(der::CONTEXT_0, "certificate bag")
                    .map_err(malformed)?;
                let octets = der::single(inner.value, false, "certificate bag")
                    .and_then(|t| {
                        if t.tag == der::OCTET_STRING {
                            Ok(t)
                        } else {
                            Err(Malformed("certificate bag"))
                        }
                    })
                    .map_err(malformed)?;
                let cert = certificate(octets.value, role, state.all_certs.len() + 1)?;
                state.add_certificate(cert, attrs, first);
            }
            _ => {} // key bags, secret bags, others: not private keys or certificates to Java
        }
    }
    Ok(())
}

/// The bags p12-keystore decoded from a legacy-encrypted part, as if read in place.
fn load_legacy_bags(
    state: &mut State,
    archive: p12_keystore::Pkcs12Archive,
    role: Role,
) -> Result<(), KeystoreError> {
    for (i, bag) in archive.certs.into_iter().enumerate() {
        let cert = certificate(bag.cert.as_der(), role, state.all_certs.len() + 1)?;
        let attrs = Attributes {
            alias: bag.friendly_name,
            key_id: bag.local_key_id,
            trusted: bag.trusted,
        };
        state.add_certificate(cert, attrs, i == 0);
    }
    Ok(())
}

pub(super) fn load(
    bytes: &[u8],
    password: Option<&Password>,
    role: Role,
) -> Result<Loaded, KeystoreError> {
    let malformed = |m: Malformed| KeystoreError::Malformed { role, what: m.0 };
    let pbe_error = |e: PbeError| match e {
        PbeError::Malformed(m) => KeystoreError::Malformed { role, what: m.0 },
        PbeError::Unsupported(what) => KeystoreError::UnsupportedProtection { role, what },
        PbeError::Failed => KeystoreError::IntegrityCheckFailed { role },
    };
    // Java reads one DER value and ignores what follows.
    let mut pfx = der::single(bytes, false, "not a PKCS12 store")
        .and_then(|t| {
            if t.tag == der::SEQUENCE {
                Ok(t)
            } else {
                Err(Malformed("not a PKCS12 store"))
            }
        })
        .map_err(malformed)?
        .reader();
    if pfx.small_integer("version").map_err(malformed)? != 3 {
        return Err(malformed(Malformed("not a version 3 PKCS12 store")));
    }
    let content = content_info(&mut pfx).map_err(malformed)?;
    if content.0 != DATA {
        return Err(malformed(Malformed("public-key protected PKCS12")));
    }
    let auth_safe = data_octets(content.1).map_err(malformed)?;
    if let Some(password) = password {
        if !pfx.is_empty() {
            let mac = pfx.read("MAC").map_err(malformed)?;
            pbe::verify_mac(mac.raw, password.expose(), auth_safe).map_err(pbe_error)?;
        }
    }
    let mut state = State::default();
    let mut safes = der::single(auth_safe, true, "authenticated safe")
        .map_err(malformed)?
        .reader();
    while !safes.is_empty() {
        let raw = safes
            .expect(der::SEQUENCE, "content info")
            .map_err(malformed)?
            .raw;
        let (kind, content) = content_info(&mut Reader::new(raw)).map_err(malformed)?;
        match kind.as_str() {
            DATA => load_bags(&mut state, data_octets(content).map_err(malformed)?, role)?,
            ENCRYPTED_DATA => {
                let Some(password) = password else { continue };
                let (algorithm, data) = encrypted_data(content).map_err(malformed)?;
                match pbe::scheme(algorithm).map_err(pbe_error)? {
                    pbe::Scheme::Pbes2 => {
                        let plain = pbe::pbes2_decrypt(algorithm, password.expose(), data)
                            .map_err(pbe_error)?;
                        // Java: anything failing in the decrypted part is a wrong password.
                        load_bags(&mut state, &plain, role).map_err(|e| match e {
                            KeystoreError::Malformed { .. } => {
                                KeystoreError::IntegrityCheckFailed { role }
                            }
                            other => other,
                        })?;
                    }
                    pbe::Scheme::Legacy => {
                        let archive =
                            pbe::legacy_safe(raw, password.expose()).map_err(pbe_error)?;
                        load_legacy_bags(&mut state, archive, role)?;
                    }
                }
            }
            _ => return Err(malformed(Malformed("public-key protected PKCS12"))),
        }
    }
    Ok(finish(state))
}

/// A `ContentInfo`: its type and its `[0]` content (if any).
fn content_info<'a>(r: &mut Reader<'a>) -> Result<(String, Option<Tlv<'a>>), Malformed> {
    let mut ci = r.expect(der::SEQUENCE, "content info")?.reader();
    let kind = der::oid_string(ci.expect(der::OID, "content info")?.value);
    let content = ci.optional(der::CONTEXT_0, "content info")?;
    Ok((kind, content))
}

fn data_octets(content: Option<Tlv<'_>>) -> Result<&[u8], Malformed> {
    let content = content.ok_or(Malformed("data content"))?;
    let octets = der::single(content.value, true, "data content")?;
    if octets.tag != der::OCTET_STRING {
        return Err(Malformed("data content"));
    }
    Ok(octets.value)
}

/// An `EncryptedData`'s algorithm (DER) and encrypted bytes.
fn encrypted_data(content: Option<Tlv<'_>>) -> Result<(&[u8], &[u8]), Malformed> {
    let content = content.ok_or(Malformed("encrypted data"))?;
    let mut ed = der::single(content.value, true, "encrypted data")?.reader();
    ed.small_integer("encrypted data version")?;
    let mut eci = ed.expect(der::SEQUENCE, "encrypted content info")?.reader();
    eci.expect(der::OID, "encrypted content info")?;
    let algorithm = eci.expect(der::SEQUENCE, "encrypted content algorithm")?;
    let data = eci.expect(der::CONTEXT_0_PRIMITIVE, "encrypted content")?;
    Ok((algorithm.raw, data.value))
}

/// Java's `findMatchedCertificate`: by local key id (and alias when both match), else alias.
fn matched_certificate<'s>(state: &'s State, key: &Key) -> Option<&'s CertificateDer<'static>> {
    let mut key_id_match = None;
    let mut alias_match = None;
    for c in &state.cert_entries {
        let alias_matches = c
            .alias
            .as_deref()
            .is_some_and(|a| a.to_lowercase() == key.alias.to_lowercase());
        if c.key_id.as_deref() == Some(key.key_id.as_slice()) {
            if alias_matches {
                return Some(&c.der);
            }
            key_id_match = Some(&c.der);
        } else if alias_matches {
            alias_match = Some(&c.der);
        }
    }
    key_id_match.or(alias_match)
}

struct Names {
    subject: Vec<u8>,
    issuer: Vec<u8>,
    subject_key_id: Option<Vec<u8>>,
    authority_key_id: Option<Vec<u8>>,
}

fn names(der: &[u8]) -> Option<Names> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let mut names = Names {
        subject: cert.subject().as_raw().to_vec(),
        issuer: cert.issuer().as_raw().to_vec(),
        subject_key_id: None,
        authority_key_id: None,
    };
    for ext in cert.extensions() {
        match ext.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(id) => names.subject_key_id = Some(id.0.to_vec()),
            ParsedExtension::AuthorityKeyIdentifier(aki) => {
                names.authority_key_id = aki.key_identifier.as_ref().map(|id| id.0.to_vec())
            }
            _ => {}
        }
    }
    Some(names)
}

/// Java's `findIssuer`: the first certificate whose subject is `cert`'s issuer and whose
/// subject key id is `cert`'s authority key id; without an authority key id, the first whose
/// subject matches; else one that matches by subject and has no subject key id.
fn find_issuer<'s>(state: &'s State, cert: &Names) -> Option<&'s CertificateDer<'static>> {
    let mut fallback = None;
    for c in &state.all_certs {
        let Some(n) = names(c) else { continue };
        if n.subject != cert.issuer {
            continue;
        }
        match (&cert.authority_key_id, &n.subject_key_id) {
            (None, _) => return Some(c),
            (Some(aki), Some(ski)) if aki == ski => return Some(c),
            (Some(_), Some(_)) => {}
            (Some(_), None) => fallback = Some(c),
        }
    }
    fallback
}

fn chain(state: &State, key: &Key) -> Vec<CertificateDer<'static>> {
    let mut chain: Vec<CertificateDer<'static>> = Vec::new();
    let mut next = matched_certificate(state, key);
    while let Some(cert) = next {
        if chain.contains(cert) {
            break;
        }
        chain.push(cert.clone());
        let Some(n) = names(cert) else { break };
        // Java's isSelfSigned also checks the signature; a certificate issued by a namesake is
        // then looked up as its own issuer and the loop check ends the chain the same way.
        if n.subject == n.issuer {
            break;
        }
        next = find_issuer(state, &n);
    }
    chain
}

fn finish(state: State) -> Loaded {
    let mut loaded = Loaded::default();
    let mut chains: Vec<Option<Vec<CertificateDer<'static>>>> =
        state.keys.iter().map(|_| None).collect();
    for (key, _) in &state.keys {
        chains[key.serial] = Some(chain(&state, key));
    }
    let mut keys: Vec<Option<Vec<u8>>> = state.keys.into_iter().map(|(_, k)| Some(k)).collect();
    for (alias, slot) in state.entries {
        let entry = match slot {
            Slot::Trusted(cert) => Entry::Trusted(cert),
            Slot::Key(serial) => Entry::Key {
                key: LockedKey::Pkcs12(keys[serial].take().unwrap_or_default()),
                chain: chains[serial].take().unwrap_or_default(),
            },
        };
        loaded.put(alias, entry);
    }
    loaded
}

/// A shrouded key bag's key, opened with `password` (Java's `getKey`).
pub(super) fn decrypt_key(encrypted: &[u8], password: &Password) -> Result<Vec<u8>, KeystoreError> {
    pbe::decrypt_key_info(encrypted, password.expose()).map_err(|e| match e {
        PbeError::Malformed(m) => KeystoreError::Malformed {
            role: Role::KeyStore,
            what: m.0,
        },
        PbeError::Unsupported(what) => KeystoreError::UnsupportedProtection {
            role: Role::KeyStore,
            what,
        },
        PbeError::Failed => KeystoreError::KeyNotRecoverable,
    })
}
