//! Password-based cryptography of PKCS#12 stores (and encrypted PKCS#8 keys), limited to what
//! Java 17 reads:
//! - the store MAC: HMAC-SHA-1/224/256/384/512 (and SHA-512/224, /256) keyed by RFC 7292's
//!   appendix B key derivation from the password as a BMPString (UTF-16BE and two zero bytes);
//!   Java retries an empty password as a zero-length one (`RetryWithZero`), as openssl may
//!   write either (Java retries decryption so too; kraftd only the MAC);
//! - PBES2 (RFC 8018) with PBKDF2 and AES-128/256-CBC, the password as UTF-8, as Java's
//!   `PBEWithHmacSHA*AndAES_*` ciphers (what keytool 17 and openssl 3 write by default);
//! - the legacy PKCS#12 PBE schemes (`pbeWithSHAAnd3-KeyTripleDES-CBC`,
//!   `pbeWithSHAAnd40BitRC2-CBC`: older keytools, `openssl pkcs12 -legacy`), through the
//!   p12-keystore crate, handed a minimal PKCS#12 wrapping of the encrypted part.
//!
//! Java refuses iteration counts above 5,000,000 (`PKCS12KeyStore.MAX_ITERATION_COUNT`), so does
//! this.

use pkcs8::pkcs5::{self, pbes2};
use sha1::Digest as _;

use super::der::{self, Malformed};

const MAX_ITERATIONS: i64 = 5_000_000;

/// Why a password-based operation failed.
#[derive(Debug)]
pub(super) enum PbeError {
    /// The structure did not parse.
    Malformed(Malformed),
    /// An algorithm Java 17 does not read (or this module does not), in words.
    Unsupported(String),
    /// The MAC did not match, or decryption failed: a wrong password (or damage).
    Failed,
}

impl From<Malformed> for PbeError {
    fn from(m: Malformed) -> PbeError {
        PbeError::Malformed(m)
    }
}

#[derive(Clone, Copy)]
enum Hash {
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    Sha512_224,
    Sha512_256,
}

impl Hash {
    fn from_oid(oid: &str) -> Option<Hash> {
        Some(match oid {
            "1.3.14.3.2.26" => Hash::Sha1,
            "2.16.840.1.101.3.4.2.4" => Hash::Sha224,
            "2.16.840.1.101.3.4.2.1" => Hash::Sha256,
            "2.16.840.1.101.3.4.2.2" => Hash::Sha384,
            "2.16.840.1.101.3.4.2.3" => Hash::Sha512,
            "2.16.840.1.101.3.4.2.5" => Hash::Sha512_224,
            "2.16.840.1.101.3.4.2.6" => Hash::Sha512_256,
            _ => return None,
        })
    }

    fn block_len(self) -> usize {
        match self {
            Hash::Sha1 | Hash::Sha224 | Hash::Sha256 => 64,
            _ => 128,
        }
    }

    fn digest(self, parts: &[&[u8]]) -> Vec<u8> {
        fn run<D: sha2::Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut d = D::new();
            for p in parts {
                d.update(p);
            }
            d.finalize().to_vec()
        }
        match self {
            Hash::Sha1 => {
                let mut d = sha1::Sha1::new();
                for p in parts {
                    d.update(p);
                }
                d.finalize().to_vec()
            }
            Hash::Sha224 => run::<sha2::Sha224>(parts),
            Hash::Sha256 => run::<sha2::Sha256>(parts),
            Hash::Sha384 => run::<sha2::Sha384>(parts),
            Hash::Sha512 => run::<sha2::Sha512>(parts),
            Hash::Sha512_224 => run::<sha2::Sha512_224>(parts),
            Hash::Sha512_256 => run::<sha2::Sha512_256>(parts),
        }
    }

    fn hmac(self, key: &[u8], message: &[u8]) -> Vec<u8> {
        let block = self.block_len();
        let mut k = if key.len() > block {
            self.digest(&[key])
        } else {
            key.to_vec()
        };
        k.resize(block, 0);
        let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
        let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
        let inner = self.digest(&[&ipad, message]);
        self.digest(&[&opad, &inner])
    }

    /// RFC 7292 appendix B.2 with ID 3 (MAC key), as long as one hash output.
    fn pkcs12_mac_key(self, password_bmp: &[u8], salt: &[u8], iterations: i64) -> Vec<u8> {
        let v = self.block_len();
        let fill = |s: &[u8]| -> Vec<u8> {
            if s.is_empty() {
                return Vec::new();
            }
            let len = v * s.len().div_ceil(v);
            s.iter().copied().cycle().take(len).collect()
        };
        let d = vec![3u8; v];
        let i = [fill(salt), fill(password_bmp)].concat();
        let mut a = self.digest(&[&d, &i]);
        for _ in 1..iterations {
            a = self.digest(&[&a]);
        }
        a
    }
}

/// A password as PKCS#12's KDF takes it: UTF-16BE and a terminating zero unit.
fn bmp(password: &str) -> Vec<u8> {
    let mut out: Vec<u8> = password.encode_utf16().flat_map(u16::to_be_bytes).collect();
    out.extend_from_slice(&[0, 0]);
    out
}

/// Checks a PFX's `MacData` over the authenticated safe's contents.
pub(super) fn verify_mac(mac_data: &[u8], password: &str, content: &[u8]) -> Result<(), PbeError> {
    let mut fields = der::single(mac_data, true, "MAC")?.reader();
    let mut digest_info = fields.expect(der::SEQUENCE, "MAC")?.reader();
    let mut algorithm = digest_info.expect(der::SEQUENCE, "MAC algorithm")?.reader();
    let oid = der::oid_string(algorithm.expect(der::OID, "MAC algorithm")?.value);
    let expected = digest_info.expect(der::OCTET_STRING, "MAC")?.value;
    let salt = fields.expect(der::OCTET_STRING, "MAC salt")?.value;
    let iterations = if fields.is_empty() {
        1
    } else {
        fields.small_integer("MAC iterations")?
    };
    let hash =
        Hash::from_oid(&oid).ok_or_else(|| PbeError::Unsupported(format!("MAC digest {oid}")))?;
    if !(1..=MAX_ITERATIONS).contains(&iterations) {
        return Err(PbeError::Unsupported(format!(
            "{iterations} MAC iterations"
        )));
    }
    let matches = |pw: &[u8]| {
        let key = hash.pkcs12_mac_key(pw, salt, iterations);
        hash.hmac(&key, content) == expected
    };
    if matches(&bmp(password)) || (password.is_empty() && matches(&[])) {
        Ok(())
    } else {
        Err(PbeError::Failed)
    }
}

/// The legacy PKCS#12 PBE schemes p12-keystore decrypts.
const LEGACY_3DES: &str = "1.2.840.113549.1.12.1.3";
const LEGACY_RC2_40: &str = "1.2.840.113549.1.12.1.6";

/// What an encryption `AlgorithmIdentifier` (DER) names.
pub(super) enum Scheme {
    Pbes2,
    /// A legacy PKCS#12 scheme, decrypted by re-wrapping for p12-keystore.
    Legacy,
}

pub(super) fn scheme(algorithm: &[u8]) -> Result<Scheme, PbeError> {
    let mut alg = der::single(algorithm, true, "encryption algorithm")?.reader();
    let oid = der::oid_string(alg.expect(der::OID, "encryption algorithm")?.value);
    match oid.as_str() {
        "1.2.840.113549.1.5.13" => Ok(Scheme::Pbes2),
        LEGACY_3DES | LEGACY_RC2_40 => Ok(Scheme::Legacy),
        _ => Err(PbeError::Unsupported(format!("encryption {oid}"))),
    }
}

/// PBES2 decryption of `data` with the `algorithm` (DER `AlgorithmIdentifier`).
pub(super) fn pbes2_decrypt(
    algorithm: &[u8],
    password: &str,
    data: &[u8],
) -> Result<Vec<u8>, PbeError> {
    let scheme = pkcs5::EncryptionScheme::try_from(algorithm)
        .map_err(|_| PbeError::Malformed(Malformed("PBES2 parameters")))?;
    let pkcs5::EncryptionScheme::Pbes2(params) = &scheme else {
        return Err(PbeError::Unsupported("PBES1 encryption".into()));
    };
    match &params.kdf {
        pbes2::Kdf::Pbkdf2(p) if i64::from(p.iteration_count) <= MAX_ITERATIONS => {}
        pbes2::Kdf::Pbkdf2(p) => {
            return Err(PbeError::Unsupported(format!(
                "{} PBKDF2 iterations",
                p.iteration_count
            )))
        }
        _ => return Err(PbeError::Unsupported("scrypt key derivation".into())),
    }
    match params.encryption {
        pbes2::EncryptionScheme::Aes128Cbc { .. } | pbes2::EncryptionScheme::Aes256Cbc { .. } => {}
        _ => {
            return Err(PbeError::Unsupported(
                "a PBES2 cipher other than AES-128/256-CBC".into(),
            ))
        }
    }
    scheme.decrypt(password, data).map_err(|_| PbeError::Failed)
}

fn pfx_around_safe(content_info: &[u8]) -> Vec<u8> {
    const DATA_OID: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01];
    let auth_safe = der::encode(der::SEQUENCE, content_info);
    let outer = der::encode(
        der::SEQUENCE,
        &[
            der::encode(der::OID, DATA_OID),
            der::encode(der::CONTEXT_0, &der::encode(der::OCTET_STRING, &auth_safe)),
        ]
        .concat(),
    );
    der::encode(
        der::SEQUENCE,
        &[der::encode(der::INTEGER, &[3]), outer].concat(),
    )
}

/// A legacy-encrypted `EncryptedData` content info, decrypted and decoded by p12-keystore.
pub(super) fn legacy_safe(
    content_info: &[u8],
    password: &str,
) -> Result<p12_keystore::Pkcs12Archive, PbeError> {
    p12_keystore::Pkcs12Archive::from_pkcs12(&pfx_around_safe(content_info), password)
        .map_err(|_| PbeError::Failed)
}

/// A legacy-encrypted `EncryptedPrivateKeyInfo`, decrypted by p12-keystore (as a shrouded key
/// bag in a minimal PKCS#12 file): its PKCS#8 bytes.
pub(super) fn legacy_key(encrypted_key_info: &[u8], password: &str) -> Result<Vec<u8>, PbeError> {
    const SHROUDED_KEY_BAG: &[u8] = &[
        0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x0c, 0x0a, 0x01, 0x02,
    ];
    const DATA_OID: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01];
    let bag = der::encode(
        der::SEQUENCE,
        &[
            der::encode(der::OID, SHROUDED_KEY_BAG),
            der::encode(der::CONTEXT_0, encrypted_key_info),
        ]
        .concat(),
    );
    let safe_contents = der::encode(der::SEQUENCE, &bag);
    let content_info = der::encode(
        der::SEQUENCE,
        &[
            der::encode(der::OID, DATA_OID),
            der::encode(
                der::CONTEXT_0,
                &der::encode(der::OCTET_STRING, &safe_contents),
            ),
        ]
        .concat(),
    );
    let archive =
        p12_keystore::Pkcs12Archive::from_pkcs12(&pfx_around_safe(&content_info), password)
            .map_err(|_| PbeError::Failed)?;
    archive
        .keys
        .first()
        .map(|k| k.key.as_der().to_vec())
        .ok_or(PbeError::Failed)
}

/// An `EncryptedPrivateKeyInfo` (DER) decrypted with `password`: PBES2 or a legacy scheme.
pub(super) fn decrypt_key_info(encrypted: &[u8], password: &str) -> Result<Vec<u8>, PbeError> {
    let mut info = der::single(encrypted, true, "encrypted private key")?.reader();
    let algorithm = info.expect(der::SEQUENCE, "encrypted private key")?;
    let data = info.expect(der::OCTET_STRING, "encrypted private key")?;
    if !info.is_empty() {
        return Err(PbeError::Malformed(Malformed("encrypted private key")));
    }
    let plain = match scheme(algorithm.raw)? {
        Scheme::Pbes2 => pbes2_decrypt(algorithm.raw, password, data.value)?,
        Scheme::Legacy => legacy_key(encrypted, password)?,
    };
    // As Java, a key that decrypts but does not parse is a wrong password.
    if pkcs8::PrivateKeyInfoRef::try_from(plain.as_slice()).is_err() {
        return Err(PbeError::Failed);
    }
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_rfc4231_case_2() {
        let mac = Hash::Sha256.hmac(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(mac[..8], [0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e]);
    }

    #[test]
    fn bmp_password() {
        assert_eq!(bmp("ab"), vec![0, b'a', 0, b'b', 0, 0]);
        assert_eq!(bmp(""), vec![0, 0]);
    }
}
