//! Why a request of the load generator failed.

use std::time::Duration;

use kraftd::protocol::codec::DecodeError;
use kraftd::protocol::errors::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No controller answered (connection failures, timeouts, or NOT_CONTROLLER from each).
    #[error("{api}: no answer from the active controller within {waited:?}; last: {last}")]
    NoAnswer {
        api: &'static str,
        waited: Duration,
        last: String,
    },
    #[error("{api}: the answer does not decode at v{version}: {source}")]
    Decode {
        api: &'static str,
        version: i16,
        #[source]
        source: DecodeError,
    },
    /// The controller answered with an error the generator does not expect.
    #[error("{what}: {} ({}) {message}", code.name(), code.0)]
    Refused {
        what: String,
        code: ErrorCode,
        message: String,
    },
    /// The controller answered, but not what the generator asked for.
    #[error("{0}")]
    Unexpected(String),
}
