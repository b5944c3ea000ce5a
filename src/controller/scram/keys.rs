//! The SCRAM mechanisms Kafka knows and the keys a controller derives from a client's
//! SaltedPassword (RFC 5802 §3, as Kafka's `ScramFormatter` computes them):
//! StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword,
//! "Server Key"), with H SHA-256 or SHA-512.

use hmac::{Mac, SimpleHmac};
use sha2::{Digest, Sha256, Sha512};

/// Kafka's `ScramMechanism` (the admin enum), by its type code on the wire and in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScramMechanism {
    Sha256,
    Sha512,
}

impl ScramMechanism {
    /// `ScramMechanism.fromType`: 1 and 2; any other code is `UNKNOWN`.
    pub fn from_type(code: i8) -> Option<ScramMechanism> {
        match code {
            1 => Some(ScramMechanism::Sha256),
            2 => Some(ScramMechanism::Sha512),
            _ => None,
        }
    }

    pub fn type_code(self) -> i8 {
        match self {
            ScramMechanism::Sha256 => 1,
            ScramMechanism::Sha512 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ScramMechanism::Sha256 => "SCRAM-SHA-256",
            ScramMechanism::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// `ScramMechanism.forMechanismName`: "SCRAM-SHA-256" or "SCRAM-SHA-512", exactly.
    pub fn from_name(name: &str) -> Option<ScramMechanism> {
        [ScramMechanism::Sha256, ScramMechanism::Sha512]
            .into_iter()
            .find(|m| m.name() == name)
    }

    /// The internal enum constant's name (`SCRAM_SHA_256`), which Java's SASL messages print.
    pub fn java_constant(self) -> &'static str {
        match self {
            ScramMechanism::Sha256 => "SCRAM_SHA_256",
            ScramMechanism::Sha512 => "SCRAM_SHA_512",
        }
    }

    /// The internal `ScramMechanism.minIterations` (4096 for both).
    pub fn min_iterations(self) -> i32 {
        4096
    }

    /// The internal `ScramMechanism.maxIterations` (16384 for both).
    pub fn max_iterations(self) -> i32 {
        16384
    }

    /// `ScramFormatter.hmac`: HMAC of `message` keyed with `key` (any length; Java refuses an
    /// empty key, which callers check).
    pub fn hmac(self, key: &[u8], message: &[u8]) -> Vec<u8> {
        match self {
            ScramMechanism::Sha256 => hmac::<Sha256>(key, message),
            ScramMechanism::Sha512 => hmac::<Sha512>(key, message),
        }
    }

    /// `ScramFormatter.hash`.
    pub fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            ScramMechanism::Sha256 => Sha256::digest(data).to_vec(),
            ScramMechanism::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// `ScramFormatter.hi`: RFC 5802's Hi, PBKDF2 with this mechanism's HMAC and one block
    /// (the SaltedPassword). Java refuses an empty `password` (the HMAC key).
    pub fn hi(self, password: &[u8], salt: &[u8], iterations: u32) -> Result<Vec<u8>, EmptyKey> {
        if password.is_empty() {
            return Err(EmptyKey);
        }
        let mut u = self.hmac(password, &[salt, &1u32.to_be_bytes()].concat());
        let mut result = u.clone();
        for _ in 1..iterations {
            u = self.hmac(password, &u);
            result.iter_mut().zip(&u).for_each(|(r, x)| *r ^= x);
        }
        Ok(result)
    }
}

/// Java's `SecretKeySpec` refuses an empty key, so an empty SaltedPassword cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Empty key")]
pub struct EmptyKey;

/// What a `UserScramCredentialRecord` stores besides the salt and iterations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedKeys {
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
}

fn hmac<D>(key: &[u8], message: &[u8]) -> Vec<u8>
where
    D: Digest + hmac::digest::core_api::BlockSizeUser,
{
    // SimpleHmac takes a key of any length, as RFC 2104 does.
    let mut mac = <SimpleHmac<D> as Mac>::new_from_slice(key).expect("any key length");
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

fn derive_with<D>(salted_password: &[u8]) -> DerivedKeys
where
    D: Digest + hmac::digest::core_api::BlockSizeUser,
{
    let client_key = hmac::<D>(salted_password, b"Client Key");
    DerivedKeys {
        stored_key: D::digest(&client_key).to_vec(),
        server_key: hmac::<D>(salted_password, b"Server Key"),
    }
}

/// `formatter.storedKey(formatter.clientKey(saltedPassword))` and
/// `formatter.serverKey(saltedPassword)`.
pub fn derive(mechanism: ScramMechanism, salted_password: &[u8]) -> Result<DerivedKeys, EmptyKey> {
    if salted_password.is_empty() {
        return Err(EmptyKey);
    }
    Ok(match mechanism {
        ScramMechanism::Sha256 => derive_with::<Sha256>(salted_password),
        ScramMechanism::Sha512 => derive_with::<Sha512>(salted_password),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;

    /// RFC 5802's Hi (PBKDF2 with HMAC), which clients use to salt a password.
    fn hi(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut u = hmac::<Sha256>(password, &[salt, &1u32.to_be_bytes()].concat());
        let mut result = u.clone();
        for _ in 1..iterations {
            u = hmac::<Sha256>(password, &u);
            result.iter_mut().zip(&u).for_each(|(r, x)| *r ^= x);
        }
        result
    }

    /// RFC 7677's SCRAM-SHA-256 exchange (user "user", password "pencil"): the client's proof
    /// and the server's signature, computed from the keys `derive` gives, are the RFC's.
    #[test]
    fn the_keys_reproduce_rfc_7677s_exchange() {
        let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let salted = hi(b"pencil", &salt, 4096);
        let keys = derive(ScramMechanism::Sha256, &salted).unwrap();
        let auth_message = "n=user,r=rOprNGfwEbeRWgbNEkqO,\
             r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,\
             c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let client_key = hmac::<Sha256>(&salted, b"Client Key");
        assert_eq!(Sha256::digest(&client_key).to_vec(), keys.stored_key);
        let signature = hmac::<Sha256>(&keys.stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(
            STANDARD.encode(proof),
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        let server_signature = hmac::<Sha256>(&keys.server_key, auth_message.as_bytes());
        assert_eq!(
            STANDARD.encode(server_signature),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }

    #[test]
    fn sha_512_keys_are_64_bytes_and_an_empty_key_is_refused() {
        let keys = derive(ScramMechanism::Sha512, b"salted").unwrap();
        assert_eq!((keys.stored_key.len(), keys.server_key.len()), (64, 64));
        assert_eq!(derive(ScramMechanism::Sha512, b""), Err(EmptyKey));
        assert_eq!(derive(ScramMechanism::Sha256, b""), Err(EmptyKey));
    }

    #[test]
    fn mechanisms_by_name_and_hi_as_the_rfc_computes_it() {
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            assert_eq!(ScramMechanism::from_name(m.name()), Some(m));
        }
        for unknown in ["scram-sha-256", "SCRAM-SHA-1", "PLAIN", ""] {
            assert_eq!(ScramMechanism::from_name(unknown), None);
        }
        assert_eq!(ScramMechanism::Sha512.java_constant(), "SCRAM_SHA_512");
        let salt = b"salt";
        assert_eq!(
            ScramMechanism::Sha256.hi(b"pencil", salt, 4096).unwrap(),
            hi(b"pencil", salt, 4096)
        );
        assert_eq!(ScramMechanism::Sha256.hi(b"", salt, 1), Err(EmptyKey));
        assert_eq!(ScramMechanism::Sha512.hi(b"p", salt, 2).unwrap().len(), 64);
    }

    #[test]
    fn mechanisms_by_type_code() {
        assert_eq!(ScramMechanism::from_type(1), Some(ScramMechanism::Sha256));
        assert_eq!(ScramMechanism::from_type(2), Some(ScramMechanism::Sha512));
        for unknown in [0, 3, -1, i8::MAX] {
            assert_eq!(ScramMechanism::from_type(unknown), None);
        }
    }
}
