//! The controller's request model: every request the quorum controller decides
//! ([`ControllerRequest`]) and its reply ([`ControllerReply`]), generated from the table of
//! controller APIs (`apis.rs`), with `handle`'s dispatch to each API's handler. The listener
//! decodes a frame into one of these once, at the edge (`server::api`), and encodes the reply
//! back; everything in between speaks these types.

use super::apis::for_each_controller_api;
use crate::protocol::messages;
// The request payloads, which the table names without their module.
use crate::protocol::messages::*;

/// The ACL requests, answered by `quorum::acls`.
#[derive(Debug, PartialEq)]
pub enum AclRequest {
    Create(messages::CreateAclsRequest),
    Delete(messages::DeleteAclsRequest),
    Describe(messages::DescribeAclsRequest),
}

/// The type of a request variant's field.
macro_rules! field_type {
    (version) => {
        i16
    };
    (forwarded) => {
        bool
    };
}

/// A field's binding in a pattern that rebuilds the request as forwarded, and its new value.
macro_rules! forwarded_pattern {
    (forwarded) => {
        _
    };
    ($field:ident) => {
        $field
    };
}
macro_rules! forwarded_value {
    (forwarded) => {
        true
    };
    ($field:ident) => {
        $field
    };
}

/// A request's version, from its fields (0 for a request that keeps none).
macro_rules! request_version {
    () => {
        0
    };
    ($version:ident $(, $field:ident)*) => {
        *$version
    };
}

/// A reply variant's type: the response, or its box.
macro_rules! reply_type {
    ($response:ident) => {
        messages::$response
    };
    ($response:ident, boxed) => {
        Box<messages::$response>
    };
}

/// A response made a reply variant's value.
macro_rules! reply_value {
    ($value:expr) => {
        $value
    };
    ($value:expr, boxed) => {
        Box::new($value)
    };
}

/// Whether response `$r` reports `$nc` in one of the places a row's `reports` names.
macro_rules! reports {
    ($r:ident $nc:ident error_code) => {
        $r.error_code == $nc
    };
    ($r:ident $nc:ident never) => {
        false
    };
    ($r:ident $nc:ident any($field:ident)) => {
        $r.$field.iter().any(|t| t.error_code == $nc)
    };
    ($r:ident $nc:ident any($field:ident . $inner:ident)) => {
        $r.$field
            .iter()
            .any(|t| t.$inner.iter().any(|p| p.error_code == $nc))
    };
}

/// The binding of a reply in `with_error`, and the reply made of it.
macro_rules! uncommitted_pattern {
    (code $r:ident) => {
        _
    };
    (same $r:ident) => {
        $r
    };
}
macro_rules! uncommitted_reply {
    (code $r:ident $e:ident $reply:ident $response:ident $($boxed:ident)?) => {
        ControllerReply::$reply(reply_value!(
            messages::$response {
                error_code: $e,
                ..Default::default()
            }
            $(, $boxed)?
        ))
    };
    (same $r:ident $e:ident $reply:ident $response:ident $($boxed:ident)?) => {
        ControllerReply::$reply($r.clone())
    };
}

/// A handler's argument: what `handle` was given, or a field of the request.
macro_rules! handler_arg {
    (now; $now:ident $quorum:ident $principal:ident $request:ident) => {
        $now
    };
    (quorum; $now:ident $quorum:ident $principal:ident $request:ident) => {
        $quorum
    };
    (principal; $now:ident $quorum:ident $principal:ident $request:ident) => {
        $principal
    };
    (request; $now:ident $quorum:ident $principal:ident $request:ident) => {
        $request
    };
    ($field:ident; $now:ident $quorum:ident $principal:ident $request:ident) => {
        $field
    };
}

macro_rules! controller_requests {
    (
        $(
            $(#[$doc:meta])*
            $variant:ident ( $payload:ident $(, $field:ident)* )
                => $handler:ident ( $($arg:ident),* ) {
                $(
                    $key:literal $name:literal $($req:ident as $wrap:ident)?
                        => $reply:ident ( $response:ident $(, $boxed:ident)? ) {
                        decode: $decode:ident,
                        cluster: [ $($cluster:tt)* ],
                        reports: [ $($reports_kind:ident $(($($reports_path:tt)*))?),+ ],
                        uncommitted: $uncommitted:ident,
                        not_active: $not_active:ident,
                    }
                )+
            }
        )*
        @unhandled { $($unhandled:tt)* }
    ) => {
        #[derive(Debug, PartialEq)]
        pub enum ControllerRequest {
            $( $(#[$doc])* $variant($payload $(, field_type!($field))*), )*
        }

        #[derive(Debug, PartialEq)]
        pub enum ControllerReply {
            $( $( $reply(reply_type!($response $(, $boxed)?)), )+ )*
        }

        // Each row's api key is its request's.
        const _: () = {
            use crate::protocol::codec::ApiMessage;
            $( $( assert!(
                $key == <super::apis::api_request_type!([$($req)?] ($payload)) as ApiMessage>::API_KEY
            ); )+ )*
        };

        impl ControllerRequest {
            /// The version of the request (0 for a ControllerRegistration, which keeps none).
            #[allow(unused_variables)] // the forwarded flags
            pub fn version(&self) -> i16 {
                match self {
                    $( ControllerRequest::$variant(_ $(, $field)*) => request_version!($($field),*), )*
                }
            }

            /// The request as it came inside an Envelope (config checks depend on it).
            pub fn forwarded(self) -> ControllerRequest {
                match self {
                    $( ControllerRequest::$variant(request $(, forwarded_pattern!($field))*) => {
                        ControllerRequest::$variant(request $(, forwarded_value!($field))*)
                    } )*
                }
            }
        }

        impl ControllerReply {
            /// Whether the answer reports `NOT_CONTROLLER` (an Envelope then fails as a whole):
            /// Java's `errorCounts().containsKey(NOT_CONTROLLER)`, in the places each API's
            /// response carries errors.
            #[allow(unused_variables)] // the replies that never report it
            pub fn not_controller(&self) -> bool {
                const NOT_CONTROLLER: i16 = crate::protocol::errors::ErrorCode::NOT_CONTROLLER.0;
                match self {
                    $( $( ControllerReply::$reply(r) => {
                        $( reports!(r NOT_CONTROLLER $reports_kind $(($($reports_path)*))?) )||+
                    } )+ )*
                }
            }

            /// Kafka's name of the API this replies to.
            pub fn api_name(&self) -> &'static str {
                match self {
                    $( $( ControllerReply::$reply(_) => $name, )+ )*
                }
            }

            /// The response as Kafka's JSON (its generated `JsonConverter`) at `version`.
            pub fn to_kafka_json(&self, version: i16) -> serde_json::Value {
                match self {
                    $( $( ControllerReply::$reply(r) => r.to_kafka_json(version), )+ )*
                }
            }

            /// This kind of response with only `code` set (a reply whose records were not
            /// committed), or the reply itself where the handler built that answer already.
            pub fn with_error(&self, code: crate::protocol::errors::ErrorCode) -> ControllerReply {
                let e = code.0;
                match self {
                    $( $( ControllerReply::$reply(uncommitted_pattern!($uncommitted r)) => {
                        uncommitted_reply!($uncommitted r e $reply $response $($boxed)?)
                    } )+ )*
                }
            }
        }

        impl super::QuorumController {
            /// Hands `request` to its API's handler.
            #[allow(unused_variables)] // the fields a handler does not take
            pub(super) fn dispatch(
                &mut self,
                now: u64,
                principal: &crate::controller::principal::RequestPrincipal,
                request: ControllerRequest,
                quorum: &mut dyn super::QuorumAccess,
            ) -> super::Decision {
                match request {
                    $( ControllerRequest::$variant(request $(, $field)*) => self.$handler(
                        $( handler_arg!($arg; now quorum principal request) ),*
                    ), )*
                }
            }
        }
    };
}

for_each_controller_api!(controller_requests);
