//! The requests the node loop answers besides the raft RPCs: what a connection hands it
//! (`NodeCall`, holding a `ControllerRequest`), the frame of the `ControllerReply` that comes
//! back, and the decoding of a request body into one (`controller_call`); the last two are
//! generated from the table of controller APIs (`controller::quorum::apis`).

use super::{CloseReason, Enveloped, Outcome};
use crate::controller::principal::RequestPrincipal;
use crate::controller::quorum::apis::{api_payload, api_request_type, for_each_controller_api};
pub use crate::controller::quorum::request::{AclRequest, ControllerReply, ControllerRequest};
use crate::protocol::codec::Message;
use crate::protocol::frame;

/// A decoded request the node loop answers (besides the raft RPCs).
#[derive(Debug, PartialEq)]
pub struct NodeCall {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub request: ControllerRequest,
    /// The Envelope this request came in, if a broker forwarded it (UnregisterBroker).
    pub enveloped: Option<Enveloped>,
    /// The principal the Envelope named; `None` for a direct request, which is the
    /// connection's (the listener knows its address).
    pub principal: Option<RequestPrincipal>,
}

/// The frame answering request `key` v`v` (correlation id `corr`) with `reply`: the response
/// itself, or inside the Envelope it came in.
pub fn answer(
    reply: &ControllerReply,
    key: i16,
    v: i16,
    corr: i32,
    enveloped: Option<Enveloped>,
) -> Outcome {
    let framed = frame(reply, key, v, corr);
    let Some(outer) = enveloped else {
        return framed;
    };
    let Outcome::Respond(bytes) = framed else {
        return framed;
    };
    super::in_envelope(outer, reply.not_controller(), &bytes)
}

/// A request field's value as the listener decodes the request (`forwarded`: not yet).
macro_rules! decoded_field {
    (version $version:ident) => {
        $version
    };
    (forwarded $version:ident) => {
        false
    };
}

/// A reply's response, out of its box.
macro_rules! unboxed {
    ($r:ident) => {
        $r
    };
    ($r:ident boxed) => {
        $r.as_ref()
    };
}

/// The request variant holding decoded request `$r` (`$fields`: the variant's, from the table).
macro_rules! decoded {
    ($variant:ident ($payload:ident $(, $field:ident)*) [$($wrap:ident)?] $r:ident $version:ident) => {
        ControllerRequest::$variant(
            api_payload!([$($payload $wrap)?] $r) $(, decoded_field!($field $version))*
        )
    };
}

macro_rules! node_calls {
    (
        $(
            $(#[$doc:meta])*
            $variant:ident $fields:tt
                => $handler:ident ( $($arg:ident),* ) {
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
        @unhandled { $($unhandled:tt)* }
    ) => {
        /// The complete response frame of `reply`.
        pub fn frame(reply: &ControllerReply, key: i16, v: i16, corr: i32) -> Outcome {
            let encoded = match reply {
                $( $( ControllerReply::$reply(r) => {
                    frame::encode_response(key, v, corr, unboxed!(r $($boxed)?), v)
                } )+ )*
            };
            match encoded {
                Ok(bytes) => Outcome::Respond(bytes),
                Err(error) => Outcome::Close(CloseReason::Encode {
                    api_key: key,
                    api_version: v,
                    error,
                }),
            }
        }

        /// A request the node loop answers, as the active controller or as a non-active one:
        /// every API of the table (`None` for any other api). Bytes after the body are ignored
        /// where Kafka ignores them.
        pub(super) fn controller_call(
            key: i16,
            version: i16,
            body: &[u8],
        ) -> Option<Result<ControllerRequest, crate::protocol::codec::DecodeError>> {
            Some(match key {
                $( $( $key => <api_request_type!([$($req)?] $fields) as Message>::$decode(body, version)
                    .map(|r| decoded!($variant $fields [$($wrap)?] r version)), )+ )*
                _ => return None,
            })
        }

        /// Whether the node loop answers api `key` (a controller API of the table).
        pub(super) fn node_api(key: i16) -> bool {
            matches!(key, $( $( $key )|+ )|*)
        }
    };
}

for_each_controller_api!(node_calls);
