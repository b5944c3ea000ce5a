//! Kafka's 128-bit Uuid and its text form.

use std::fmt;

/// A 128-bit Kafka Uuid. Displayed in Kafka's 22-character URL-safe base64 form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    pub const ZERO: Uuid = Uuid([0; 16]);
    /// Kafka's reserved `Uuid.ONE_UUID` (metadata topic id).
    pub const ONE: Uuid = Uuid([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);

    pub fn from_u64s(most: u64, least: u64) -> Uuid {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&most.to_be_bytes());
        b[8..].copy_from_slice(&least.to_be_bytes());
        Uuid(b)
    }

    /// Parses Kafka's base64 form (22 characters, URL-safe alphabet, no padding).
    pub fn parse(s: &str) -> Result<Uuid, UuidParseError> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.as_bytes())
            .map_err(|source| UuidParseError::NotBase64 {
                text: s.to_owned(),
                source,
            })?;
        let arr: [u8; 16] = bytes
            .try_into()
            .map_err(|_| UuidParseError::WrongLength { text: s.to_owned() })?;
        Ok(Uuid(arr))
    }
}

/// Why a text is not a Kafka Uuid. Uuids name clusters, directories and topics, never secrets,
/// so the text is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UuidParseError {
    #[error("'{text}' is not a Kafka uuid (22 url-safe base64 characters): {source}")]
    NotBase64 {
        text: String,
        source: base64::DecodeError,
    },
    #[error("'{text}' is not a Kafka uuid: it does not decode to 16 bytes")]
    WrongLength { text: String },
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use base64::Engine;
        f.write_str(&base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}
