//! What can go wrong decoding and encoding Kafka's wire format.

use std::fmt;

/// Why bytes could not be decoded. Names what was being read so a log line says what broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended before a field was complete.
    Truncated {
        what: &'static str,
        needed: usize,
        remaining: usize,
    },
    /// A length or count is negative (and not the null marker where null is allowed) or too large.
    BadLength { what: &'static str, length: i64 },
    /// A null where the schema forbids one at this version.
    UnexpectedNull { what: &'static str },
    /// A string that is not UTF-8.
    BadUtf8 { what: &'static str },
    /// A varint longer than its type allows.
    BadVarint { what: &'static str },
    /// The version is outside what the message defines.
    UnsupportedVersion { what: &'static str, version: i16 },
    /// Anything else, with a message.
    Invalid(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated {
                what,
                needed,
                remaining,
            } => write!(
                f,
                "truncated input while reading {what}: needed {needed} bytes, {remaining} remain"
            ),
            DecodeError::BadLength { what, length } => {
                write!(f, "invalid length {length} for {what}")
            }
            DecodeError::UnexpectedNull { what } => write!(f, "null value for non-nullable {what}"),
            DecodeError::BadUtf8 { what } => write!(f, "{what} is not valid UTF-8"),
            DecodeError::BadVarint { what } => write!(f, "malformed varint in {what}"),
            DecodeError::UnsupportedVersion { what, version } => {
                write!(f, "{what} does not support version {version}")
            }
            DecodeError::Invalid(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why a value could not be encoded at a version (Kafka's UnsupportedVersionException cases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    UnsupportedVersion {
        what: &'static str,
        version: i16,
    },
    /// A field that this version cannot carry holds a non-default value.
    FieldNotInVersion {
        what: &'static str,
        version: i16,
    },
    /// A null in a field that is not nullable at this version.
    NullNotAllowed {
        what: &'static str,
        version: i16,
    },
    /// A string, bytes or array longer than the encoding can express.
    TooLong {
        what: &'static str,
        length: usize,
    },
    /// A domain value that has no encoding (e.g. a raft message at a version that cannot say it).
    Invalid(String),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::UnsupportedVersion { what, version } => {
                write!(f, "{what} does not support version {version}")
            }
            EncodeError::FieldNotInVersion { what, version } => {
                write!(
                    f,
                    "{what} has a non-default value but version {version} cannot carry it"
                )
            }
            EncodeError::NullNotAllowed { what, version } => {
                write!(f, "{what} is null but not nullable at version {version}")
            }
            EncodeError::TooLong { what, length } => {
                write!(f, "{what} is too long to encode ({length})")
            }
            EncodeError::Invalid(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// Why bytes did not survive a decode and re-encode at one version (the generated registry's
/// round trip, for golden vectors and fuzzing): which half failed, and its error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoundTripError {
    #[error("decode: {0}")]
    Decode(#[source] DecodeError),
    #[error("encode: {0}")]
    Encode(#[source] EncodeError),
}
