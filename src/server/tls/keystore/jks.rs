//! Sun's JKS format, as Java 17's `sun.security.provider.JavaKeyStore` and `KeyProtector` read
//! it:
//!
//! ```text
//! u32 magic 0xFEEDFEED, u32 version (1 or 2), u32 entry count, then per entry:
//!   u32 tag: 1 private key, 2 trusted certificate
//!   UTF alias (u16 length, modified UTF-8; JKS lower-cases aliases), u64 creation time (ms)
//!   tag 1: u32 length + EncryptedPrivateKeyInfo (Sun's key protector); u32 chain length;
//!          per certificate: [version 2: UTF certificate type] u32 length + DER
//!   tag 2: [version 2: UTF certificate type] u32 length + DER
//! 20 bytes: SHA-1(password as UTF-16BE || "Mighty Aphrodite" || every byte above)
//! ```
//!
//! Without a password Java neither reads nor checks the digest (and ignores anything after
//! it either way). The key protector (OID 1.3.6.1.4.1.42.2.17.1.1) is `salt(20) ||
//! key XOR keystream || SHA-1(password || key)`, the keystream being SHA-1 chained from the
//! salt: `d1 = SHA-1(password || salt)`, `d2 = SHA-1(password || d1)`, ...; a wrong digest is
//! Java's "Cannot recover key".

use rustls_pki_types::CertificateDer;
use sha1::{Digest, Sha1};

use super::der;
use super::{certificate, Entry, KeystoreError, Loaded, LockedKey, Role};
use crate::server::config::Password;

const MAGIC: u32 = 0xfeed_feed;
const PRIVATE_KEY: u32 = 1;
const TRUSTED_CERT: u32 = 2;
const DIGEST_LEN: usize = 20;
/// 1.3.6.1.4.1.42.2.17.1.1, Sun's proprietary key protection.
const KEY_PROTECTOR_OID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x2a, 0x02, 0x11, 0x01, 0x01];

/// A password as Java's JKS code hashes it: each UTF-16 unit, big-endian.
fn password_bytes(password: &Password) -> Vec<u8> {
    password
        .expose()
        .encode_utf16()
        .flat_map(u16::to_be_bytes)
        .collect()
}

/// Big-endian fields over a slice, every read checked.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        let end = self.pos.checked_add(n).ok_or("length")?;
        let out = self.data.get(self.pos..end).ok_or("truncated")?;
        self.pos = end;
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16, &'static str> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        let b = self.bytes(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `DataInputStream.readUTF`: a u16 length and modified UTF-8.
    fn utf(&mut self) -> Result<String, &'static str> {
        let len = usize::from(self.u16()?);
        modified_utf8(self.bytes(len)?).ok_or("alias or certificate type")
    }

    /// A u32 length (Java's `int`, so at most 2^31 - 1) and that many bytes.
    fn blob(&mut self) -> Result<&'a [u8], &'static str> {
        let len = self.u32()?;
        if len > i32::MAX as u32 {
            return Err("length");
        }
        self.bytes(len as usize)
    }
}

/// Java's modified UTF-8 (as `DataInputStream.readUTF` decodes it): 1-, 2- and 3-byte forms
/// of UTF-16 units, surrogates encoded one by one.
fn modified_utf8(b: &[u8]) -> Option<String> {
    let mut units = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let (unit, n) = match c >> 4 {
            0..=7 => (u16::from(c), 1),
            12 | 13 => {
                let c2 = *b.get(i + 1)?;
                if c2 & 0xc0 != 0x80 {
                    return None;
                }
                ((u16::from(c & 0x1f) << 6) | u16::from(c2 & 0x3f), 2)
            }
            14 => {
                let (c2, c3) = (*b.get(i + 1)?, *b.get(i + 2)?);
                if c2 & 0xc0 != 0x80 || c3 & 0xc0 != 0x80 {
                    return None;
                }
                let unit = (u16::from(c & 0x0f) << 12)
                    | (u16::from(c2 & 0x3f) << 6)
                    | u16::from(c3 & 0x3f);
                (unit, 3)
            }
            _ => return None,
        };
        units.push(unit);
        i += n;
    }
    Some(String::from_utf16_lossy(&units))
}

fn certificate_type(input: &mut Input<'_>, version: u32) -> Result<(), &'static str> {
    if version == 2 {
        let kind = input.utf()?;
        if !kind.eq_ignore_ascii_case("X.509") && !kind.eq_ignore_ascii_case("X509") {
            return Err("certificate type");
        }
    }
    Ok(())
}

/// A JKS store's entries; with a password, its digest checked first as Java does after reading.
pub(super) fn load(
    bytes: &[u8],
    password: Option<&Password>,
    role: Role,
) -> Result<Loaded, KeystoreError> {
    let malformed = |what| KeystoreError::Malformed { role, what };
    let mut input = Input {
        data: bytes,
        pos: 0,
    };
    let magic = input.u32().map_err(malformed)?;
    let version = input.u32().map_err(malformed)?;
    if magic != MAGIC || !(version == 1 || version == 2) {
        return Err(malformed("not a JKS store"));
    }
    // Java reads the count as an `int`: a negative one is no entries.
    let count = input.u32().map_err(malformed)?.min(i32::MAX as u32);
    let mut loaded = Loaded::default();
    let mut cert_index = 0usize;
    let mut cert = |der: &[u8]| {
        cert_index += 1;
        certificate(der, role, cert_index)
    };
    for _ in 0..count {
        let tag = input.u32().map_err(malformed)?;
        let alias = input.utf().map_err(malformed)?.to_lowercase();
        input.bytes(8).map_err(malformed)?; // creation date
        let entry = match tag {
            PRIVATE_KEY => {
                let protected = input.blob().map_err(malformed)?.to_vec();
                let chain_len = input.u32().map_err(malformed)?;
                let mut chain: Vec<CertificateDer<'static>> = Vec::new();
                // As an `int` too: a negative length is no chain.
                let chain_len = if chain_len > i32::MAX as u32 {
                    0
                } else {
                    chain_len
                };
                for _ in 0..chain_len {
                    certificate_type(&mut input, version).map_err(malformed)?;
                    chain.push(cert(input.blob().map_err(malformed)?)?);
                }
                Entry::Key {
                    key: LockedKey::Jks(protected),
                    chain,
                }
            }
            TRUSTED_CERT => {
                certificate_type(&mut input, version).map_err(malformed)?;
                Entry::Trusted(cert(input.blob().map_err(malformed)?)?)
            }
            _ => return Err(malformed("unknown entry tag")),
        };
        loaded.put(alias, entry);
    }
    if let Some(password) = password {
        let covered = &bytes[..input.pos];
        let actual = input.bytes(DIGEST_LEN).map_err(malformed)?;
        let mut md = Sha1::new();
        md.update(password_bytes(password));
        md.update(b"Mighty Aphrodite");
        md.update(covered);
        if md.finalize().as_slice() != actual {
            return Err(KeystoreError::IntegrityCheckFailed { role });
        }
    }
    Ok(loaded)
}

/// The PKCS#8 key inside a JKS key entry, opened with `password` (Java's `KeyProtector.recover`).
pub(super) fn recover_key(protected: &[u8], password: &Password) -> Result<Vec<u8>, KeystoreError> {
    let malformed = |what| KeystoreError::Malformed {
        role: Role::KeyStore,
        what,
    };
    let info = der::single(protected, true, "private key entry").map_err(|e| malformed(e.0))?;
    let mut fields = info.reader();
    let mut algorithm = fields
        .expect(der::SEQUENCE, "private key algorithm")
        .map_err(|e| malformed(e.0))?
        .reader();
    let oid = algorithm
        .expect(der::OID, "private key algorithm")
        .map_err(|e| malformed(e.0))?;
    let data = fields
        .expect(der::OCTET_STRING, "private key data")
        .map_err(|e| malformed(e.0))?
        .value;
    if oid.value != KEY_PROTECTOR_OID {
        return Err(KeystoreError::UnsupportedProtection {
            role: Role::KeyStore,
            what: format!("key protection {}", der::oid_string(oid.value)),
        });
    }
    if data.len() < 2 * DIGEST_LEN {
        return Err(malformed("private key data"));
    }
    let (salt, rest) = data.split_at(DIGEST_LEN);
    let (encrypted, check) = rest.split_at(rest.len() - DIGEST_LEN);
    let pw = password_bytes(password);
    let mut plain = Vec::with_capacity(encrypted.len());
    let mut digest: [u8; DIGEST_LEN] = salt.try_into().expect("20 bytes");
    for chunk in encrypted.chunks(DIGEST_LEN) {
        let mut md = Sha1::new();
        md.update(&pw);
        md.update(digest);
        digest = md.finalize().into();
        plain.extend(chunk.iter().zip(digest.iter()).map(|(c, k)| c ^ k));
    }
    let mut md = Sha1::new();
    md.update(&pw);
    md.update(&plain);
    if md.finalize().as_slice() != check {
        return Err(KeystoreError::KeyNotRecoverable);
    }
    // Java then parses the key (PKCS8Key.parseKey); a key that does not parse does not recover.
    if pkcs8::PrivateKeyInfoRef::try_from(plain.as_slice()).is_err() {
        return Err(KeystoreError::KeyNotRecoverable);
    }
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_utf8_like_java() {
        assert_eq!(modified_utf8(b"server").as_deref(), Some("server"));
        assert_eq!(modified_utf8(&[0xc0, 0x80]).as_deref(), Some("\0"));
        assert_eq!(modified_utf8(&[0xc3, 0xa9]).as_deref(), Some("é"));
        assert_eq!(modified_utf8(&[0xc3]), None);
        assert_eq!(modified_utf8(&[0xf0, 0x9f, 0x98, 0x80]), None);
    }

    #[test]
    fn truncated_headers_are_malformed() {
        for len in 0..12 {
            let mut bytes = vec![0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 1];
            bytes.truncate(len);
            assert!(matches!(
                load(&bytes, None, Role::TrustStore),
                Err(KeystoreError::Malformed { .. })
            ));
        }
    }
}
