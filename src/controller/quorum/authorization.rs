//! The authorizer checks, as Kafka 4.4's `ControllerApis` makes them before it hands a request
//! to its quorum controller. The engine is `controller::acls::authorizer`,
//! reading the committed ACLs; this file says which operation each API needs on the cluster
//! (`AuthHelper.authorizeClusterOperation`) and answers a refusal with the API's error
//! response (`getErrorResponse(ClusterAuthorizationException)`), whose shape and message differ
//! from API to API. Without an authorizer every check passes.

use super::apis::{api_payload, for_each_controller_api};
use super::request::ControllerRequest;
use super::{AclRequest, ControllerReply, QuorumController};
use crate::controller::acls::authorizer::{Authorizer, Denied, NotReady};
use crate::controller::principal::RequestPrincipal;
use crate::protocol::messages;

/// A row's cluster operation and API name, if it needs one.
macro_rules! operation_of {
    ($name:literal) => {
        None
    };
    ($name:literal $op:ident, $($refusal:tt)+) => {
        Some(($name, crate::controller::acls::operation::$op))
    };
}

/// The error response of a refused request (`getErrorResponse`): some carry the exception's
/// message, some the code's own, some no message at all; a few are shaped by the request.
macro_rules! refusal {
    ([] $reply:ident $response:ident $request:ident $r:ident $v:ident $denied:ident) => {
        unreachable!("{:?} needs no cluster operation", $request)
    };
    ([$op:ident, code] $reply:ident $response:ident $request:ident $r:ident $v:ident $denied:ident) => {
        ControllerReply::$reply(messages::$response {
            error_code: $denied.error_code().0,
            ..Default::default()
        })
    };
    ([$op:ident, message] $reply:ident $response:ident $request:ident $r:ident $v:ident $denied:ident) => {
        ControllerReply::$reply(messages::$response {
            error_code: $denied.error_code().0,
            error_message: $denied.exception_message(),
            ..Default::default()
        })
    };
    ([$op:ident, code_message] $reply:ident $response:ident $request:ident $r:ident $v:ident $denied:ident) => {
        ControllerReply::$reply(messages::$response {
            error_code: $denied.error_code().0,
            error_message: Some($denied.code_message()),
            ..Default::default()
        })
    };
    ([$op:ident, custom($f:ident)] $reply:ident $response:ident $request:ident $r:ident $v:ident $denied:ident) => {
        ControllerReply::$reply(QuorumController::$f($r, $v, $denied))
    };
}

macro_rules! cluster_authorization {
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
                        reports: $reports:tt,
                        uncommitted: $uncommitted:ident,
                        not_active: $not_active:ident,
                    }
                )+
            }
        )*
        @unhandled { $($unhandled:tt)* }
    ) => {
        /// The operation `ControllerApis` requires on the cluster before it serves `request`,
        /// and the API's name; `None` for the APIs it authorizes otherwise (topics, configs,
        /// ACLs, tokens).
        #[allow(unused_variables)] // the payload, matched for the ACLs' grouping only
        pub(super) fn cluster_operation(request: &ControllerRequest) -> Option<(&'static str, i8)> {
            match request {
                $( $( ControllerRequest::$variant(api_payload!([$($payload $wrap)?] r), ..) => {
                    operation_of!($name $($cluster)*)
                } )+ )*
            }
        }

        /// `getErrorResponse` of each API `cluster_operation` names.
        #[allow(unused_variables)] // the parts of a request its refusal does not show
        fn error_response(request: &ControllerRequest, denied: &Denied) -> ControllerReply {
            match request {
                $( $( ControllerRequest::$variant(api_payload!([$($payload $wrap)?] r), ..) => {
                    let v = request.version();
                    refusal!([$($cluster)*] $reply $response request r v denied)
                } )+ )*
            }
        }
    };
}

for_each_controller_api!(cluster_authorization);

impl QuorumController {
    /// The authorizer over the committed ACLs, as Java's authorizer sees published images;
    /// not loaded until the node first catches up (the authorizer's first load).
    fn authorizer(&self) -> Authorizer<'_> {
        let (_, stable) = self.machine.stable_image();
        Authorizer {
            config: self.settings.authorizer.as_ref(),
            acls: self.caught_up.then_some(&stable.acls),
        }
    }

    /// Whether `who` may do `op` on `(resource_type, name)` (always, without an authorizer);
    /// `NotReady` for all but super users until the first load.
    pub(super) fn authorize(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> Result<bool, NotReady> {
        self.authorizer().allows(who, resource_type, name, op)
    }

    /// [`Self::authorize`] for the checks made on parts of a request (each topic, each config
    /// resource, a token's owner): before the first load they refuse the part, where Java
    /// answers the whole request UNKNOWN_SERVER_ERROR (docs/notes/security.md, "Not done").
    pub(super) fn authorized(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> bool {
        self.authorize(who, resource_type, name, op)
            .unwrap_or(false)
    }

    /// `AuthHelper.authorizeClusterOperation`: `Ok` if `who` may do `op` on the cluster, as
    /// `api` needs, else the refusal to answer with (logged).
    pub(super) fn authorize_cluster_operation(
        &self,
        api: &'static str,
        who: &RequestPrincipal,
        op: i8,
    ) -> Result<(), Denied> {
        self.authorizer().cluster_operation(api, who, op)
    }

    /// The refusal of a request whose sender lacks the cluster operation its API needs, as
    /// the API's error response; `None` when it may go on.
    pub(super) fn cluster_refusal(
        &self,
        request: &ControllerRequest,
        who: &RequestPrincipal,
    ) -> Option<ControllerReply> {
        let (api, op) = cluster_operation(request)?;
        let denied = self.authorize_cluster_operation(api, who, op).err()?;
        Some(error_response(request, &denied))
    }
}
