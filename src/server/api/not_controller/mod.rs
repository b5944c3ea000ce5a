//! The controller APIs that brokers and admin clients send (registration, heartbeats, topic and
//! config changes, ACLs, ...), answered the way a Java controller that is not the active one
//! answers them: `NOT_CONTROLLER` in every error field of the response, so the sender looks
//! for the active controller elsewhere. A kraftd node that is not the active controller (a
//! follower, an observer, or a leader whose epoch has not committed yet) answers with these,
//! so that brokers that reach it are not stranded.
//!
//! Java's controller checks a few things before it asks its (inactive) quorum controller, and
//! answers those without `NOT_CONTROLLER`; kraftd does the same where the answer does not need
//! metadata it lacks (empty requests, duplicates, unknown resource types, delegation tokens on
//! a PLAINTEXT listener, ACLs without an authorizer). The answers are
//! `controller::quorum::not_active`'s; which APIs, their types and answers come from the table
//! of controller APIs (`controller::quorum::apis`).

mod envelope;
#[cfg(any(test, feature = "testkit"))]
pub mod samples;

use crate::protocol::codec::{DecodeError, EncodeError, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages;

use crate::controller::quorum::apis::{api_request_type, for_each_controller_api};
use crate::controller::quorum::not_active as replies;
pub use crate::controller::quorum::not_active::*;
pub use envelope::{answer_envelope, envelope_error, wrap_frame, EnvelopeAnswer};

/// An encoded answer and whether it reports `NOT_CONTROLLER` anywhere (Java's
/// `errorCounts().containsKey(NOT_CONTROLLER)`, which decides an Envelope's own error).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub body: Vec<u8>,
    pub not_controller: bool,
}

/// Why a request could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("{0}")]
    Decode(#[from] DecodeError),
    #[error("{0}")]
    Encode(#[from] EncodeError),
}

fn encode<M: Message + KafkaJson>(reply: &M, version: i16) -> Result<Answer, AnswerError> {
    Ok(Answer {
        body: reply.encode_to_vec(version)?,
        not_controller: reports(&reply.kafka_json(version), ErrorCode::NOT_CONTROLLER),
    })
}

/// Whether any `errorCode` field in Kafka's JSON form of a message holds `code`.
fn reports(json: &serde_json::Value, code: ErrorCode) -> bool {
    match json {
        serde_json::Value::Object(fields) => fields.iter().any(|(name, value)| {
            (name == "errorCode" && value.as_i64() == Some(code.0 as i64)) || reports(value, code)
        }),
        serde_json::Value::Array(items) => items.iter().any(|v| reports(v, code)),
        _ => false,
    }
}

/// Kafka's JSON form of a reply, through the generated converters.
trait KafkaJson {
    fn kafka_json(&self, version: i16) -> serde_json::Value;
}

/// An API of the table: its answer as a non-active controller, if the listener gives one.
macro_rules! not_active_answer {
    (none $($rest:tt)*) => {
        None
    };
    ($answer:ident $request:ty, $response:ty, $body:ident, $version:ident, $ctx:ident) => {
        Some((|| {
            let request = <$request as Message>::decode_exact($body, $version)?;
            let reply: $response = replies::$answer(&request, $version, $ctx);
            encode(&reply, $version)
        })())
    };
}

/// Kafka's JSON form of a response body, for the APIs answered here.
macro_rules! not_active_json {
    (none $($rest:tt)*) => {
        None
    };
    ($answer:ident $response:ty, $body:ident, $version:ident) => {
        Some(
            <$response as Message>::decode_exact($body, $version)
                .map(|m| m.to_kafka_json($version)),
        )
    };
}

/// The default request of an API answered here.
macro_rules! default_request {
    (none $($rest:tt)*) => {
        None
    };
    ($answer:ident $request:ty, $version:ident) => {
        Some(<$request>::default().encode_to_vec($version))
    };
}

/// Whether a row has a non-active answer here.
macro_rules! answered_here {
    (none) => {
        false
    };
    ($answer:ident) => {
        true
    };
}

/// The controller APIs of the table (`controller::quorum::apis`): the versions served are the
/// request schema's (Kafka 4.4's), and those with a non-active answer are answered here.
macro_rules! controller_apis {
    (
        $(
            $(#[$doc:meta])*
            $variant:ident $fields:tt => $handler:ident $args:tt {
                $(
                    $key:literal $name:literal $($req:ident as $wrap:ident)?
                        => $reply:ident ( $response:ident $(, $boxed:ident)? ) {
                        decode: $decode:ident,
                        cluster: $cluster:tt,
                        reports: $reports:tt,
                        uncommitted: $uncommitted:ident,
                        not_active: $not_active:ident,
                    }
                )+
            }
        )*
        @unhandled {
            $(
                $ukey:literal $uname:literal $ureq:ident => $uresponse:ident {
                    not_active: $unot_active:ident,
                }
            )*
        }
    ) => {
        $( $( impl KafkaJson for messages::$response {
            fn kafka_json(&self, version: i16) -> serde_json::Value {
                self.to_kafka_json(version)
            }
        } )+ )*
        $( impl KafkaJson for messages::$uresponse {
            fn kafka_json(&self, version: i16) -> serde_json::Value {
                self.to_kafka_json(version)
            }
        } )*

        /// Every controller API, with the versions served and whether it is answered here.
        const TABLE: &[(super::ServedApi, bool)] = &[
            $( $( (super::ServedApi {
                key: $key,
                name: $name,
                min_version: <api_request_type!([$($req)?] $fields) as Message>::LOWEST_VERSION,
                max_version: <api_request_type!([$($req)?] $fields) as Message>::HIGHEST_VERSION,
            }, answered_here!($not_active)), )+ )*
            $( (super::ServedApi {
                key: $ukey,
                name: $uname,
                min_version: <messages::$ureq as Message>::LOWEST_VERSION,
                max_version: <messages::$ureq as Message>::HIGHEST_VERSION,
            }, answered_here!($unot_active)), )*
        ];

        /// Answers one request body of api `key` at `version` as a non-active controller.
        /// `None` if `key` is not answered here.
        pub fn answer(
            key: i16,
            version: i16,
            body: &[u8],
            ctx: &NonActive,
        ) -> Option<Result<Answer, AnswerError>> {
            match key {
                $( $( $key => not_active_answer!(
                    $not_active api_request_type!([$($req)?] $fields), messages::$response,
                    body, version, ctx
                ), )+ )*
                $( $ukey => not_active_answer!(
                    $unot_active messages::$ureq, messages::$uresponse, body, version, ctx
                ), )*
                _ => None,
            }
        }

        /// The request of api `key` with every field at its default, encoded at `version`
        /// (what `samples` sends for an API it has no representative request for). `None` if
        /// `key` is not answered here.
        pub fn default_request(key: i16, version: i16) -> Option<Result<Vec<u8>, EncodeError>> {
            match key {
                $( $( $key => default_request!(
                    $not_active api_request_type!([$($req)?] $fields), version
                ), )+ )*
                $( $ukey => default_request!($unot_active messages::$ureq, version), )*
                _ => None,
            }
        }

        /// Kafka's JSON form of a response body of api `key` at `version` (for comparing
        /// answers with Java's). `None` if `key` is not answered here.
        pub fn response_json(
            key: i16,
            version: i16,
            body: &[u8],
        ) -> Option<Result<serde_json::Value, DecodeError>> {
            match key {
                $( $( $key => not_active_json!($not_active messages::$response, body, version), )+ )*
                $( $ukey => not_active_json!($unot_active messages::$uresponse, body, version), )*
                _ => None,
            }
        }
    };
}

for_each_controller_api!(controller_apis);

/// How many APIs of `table` are answered here (`here`), or not.
const fn count(table: &[(super::ServedApi, bool)], here: bool) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < table.len() {
        if table[i].1 == here {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The APIs of `table` answered here (`here`), or not, in api-key order.
const fn select<const N: usize>(
    table: &[(super::ServedApi, bool)],
    here: bool,
) -> [super::ServedApi; N] {
    let mut out = [super::ServedApi {
        key: 0,
        name: "",
        min_version: 0,
        max_version: 0,
    }; N];
    let (mut i, mut n) = (0, 0);
    while i < table.len() {
        if table[i].1 == here {
            // Insertion in key order.
            let mut j = n;
            while j > 0 && out[j - 1].key > table[i].0.key {
                out[j] = out[j - 1];
                j -= 1;
            }
            out[j] = table[i].0;
            n += 1;
        }
        i += 1;
    }
    out
}

const ANSWERED_HERE: [super::ServedApi; count(TABLE, true)] = select(TABLE, true);
const ANSWERED_BY_NODE: [super::ServedApi; count(TABLE, false)] = select(TABLE, false);

/// Every controller API with a non-active answer here, with the versions served, in api-key
/// order.
pub const CONTROLLER_APIS: &[super::ServedApi] = &ANSWERED_HERE;

/// The other controller APIs, which the node loop answers whatever its state
/// (ControllerRegistration, DescribeConfigs), in api-key order.
pub const NODE_ONLY_APIS: &[super::ServedApi] = &ANSWERED_BY_NODE;

/// Whether api `key` is answered here.
pub fn answers(key: i16) -> bool {
    CONTROLLER_APIS.iter().any(|a| a.key == key)
}

#[cfg(test)]
mod tests;
