//! The controller's authorizer: Kafka 4.4's `StandardAuthorizer` over the image's ACLs
//! (`StandardAuthorizerData.authorize`). A super user is allowed everything; otherwise the ACLs
//! that apply to the resource (LITERAL with its name, LITERAL `*`, PREFIXED with a prefix of its
//! name, of the same resource type) decide: a matching DENY wins, then a matching ALLOW; with
//! no ACL on the resource at all, `allow.everyone.if.no.acl.found` decides.

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::{operation, pattern, permission, Acl, AclsImage, WILDCARD};
use crate::controller::principal::RequestPrincipal;
use crate::protocol::errors::ErrorCode;

/// The class name of the one authorizer kraftd implements.
pub const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

/// Any principal of type User (`StandardAuthorizer.WILDCARD_PRINCIPAL`).
const WILDCARD_PRINCIPAL: &str = "User:*";

/// Why `StandardAuthorizer`'s settings cannot be used. Principals are names, not secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthorizerConfigError {
    #[error("invalid super.users entry '{entry}': expected a principal such as User:admin (type, colon, name)")]
    BadSuperUser { entry: String },
}

/// `StandardAuthorizer`'s settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizerConfig {
    /// `super.users`: principals (`User:name`) allowed everything.
    pub super_users: BTreeSet<String>,
    /// `allow.everyone.if.no.acl.found`.
    pub allow_everyone_if_no_acl_found: bool,
}

impl AuthorizerConfig {
    /// Reads the two settings as `StandardAuthorizer.configure` does: `super.users` split on
    /// `;`, each trimmed and non-empty entry a `type:name` principal; the flag is true only
    /// for `true` in any case (`Boolean.parseBoolean`).
    pub fn parse(
        super_users: Option<&str>,
        allow_everyone: Option<&str>,
    ) -> Result<Self, AuthorizerConfigError> {
        let mut users = BTreeSet::new();
        for entry in super_users.unwrap_or("").split(';').map(str::trim) {
            if entry.is_empty() {
                continue;
            }
            if !entry.contains(':') {
                return Err(AuthorizerConfigError::BadSuperUser {
                    entry: entry.to_string(),
                });
            }
            users.insert(entry.to_string());
        }
        Ok(AuthorizerConfig {
            super_users: users,
            allow_everyone_if_no_acl_found: allow_everyone
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
        })
    }

    /// Whether `who` is one of `super.users` (matched on the exact `type:name`).
    pub fn is_super_user(&self, who: &RequestPrincipal) -> bool {
        self.super_users
            .contains(&format!("{}:{}", who.principal_type, who.name))
    }

    /// Whether `who` may do `op` on the resource `(resource_type, name)`.
    pub fn authorize(
        &self,
        acls: &AclsImage,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> bool {
        if self.is_super_user(who) {
            return true;
        }
        let principal = format!("{}:{}", who.principal_type, who.name);
        let host = java_host_address(who.host);
        let mut applicable = false;
        let mut allowed = false;
        for acl in acls.by_id.values() {
            if acl.resource_type != resource_type || !applies(acl, name) {
                continue;
            }
            applicable = true;
            match verdict(acl, &principal, &host, op) {
                Some(false) => return false,
                Some(true) => allowed = true,
                None => {}
            }
        }
        allowed || (!applicable && self.allow_everyone_if_no_acl_found)
    }
}

/// Whether `who` may do `op` on `(resource_type, name)` with this authorizer, if any (Java's
/// `AuthHelper.authorize`: everything is allowed without an authorizer). `acls` is `None`
/// until the authorizer's first load (`StandardAuthorizer.completeInitialLoad`, when the node
/// first catches up with the committed metadata): until then only super users are allowed and
/// anyone else is `NotReady` (`StandardAuthorizerData.authorize` checks the super users first).
pub fn allows(
    authorizer: Option<&AuthorizerConfig>,
    acls: Option<&AclsImage>,
    who: &RequestPrincipal,
    resource_type: i8,
    name: &str,
    op: i8,
) -> Result<bool, NotReady> {
    let Some(authorizer) = authorizer else {
        return Ok(true);
    };
    match acls {
        Some(acls) => Ok(authorizer.authorize(acls, who, resource_type, name, op)),
        None if authorizer.is_super_user(who) => Ok(true),
        None => Err(NotReady),
    }
}

/// The authorizer as a request meets it: its configuration (`None`: no authorizer) and the
/// ACLs it has loaded (`None` before its first load). The quorum controller and the listener
/// (raft's APIs, DescribeCluster, Envelopes) both ask through it.
#[derive(Debug, Clone, Copy)]
pub struct Authorizer<'a> {
    pub config: Option<&'a AuthorizerConfig>,
    pub acls: Option<&'a AclsImage>,
}

impl Authorizer<'_> {
    /// [`allows`].
    pub fn allows(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> Result<bool, NotReady> {
        allows(self.config, self.acls, who, resource_type, name, op)
    }

    /// `AuthHelper.authorizeClusterOperation`: `Ok` if `who` may do `op` on the cluster, as
    /// `api` needs, else the refusal to answer with (logged).
    pub fn cluster_operation(
        &self,
        api: &'static str,
        who: &RequestPrincipal,
        op: i8,
    ) -> Result<(), Denied> {
        let verdict = self.allows(who, super::resource::CLUSTER, super::CLUSTER_NAME, op);
        cluster_operation(verdict, api, who, op)
    }
}

/// Java's `AuthorizerNotReadyException`: the authorizer was asked about someone other than a
/// super user before its first load of the ACLs. `Errors` has no code of its own for it, so
/// the answer is `UNKNOWN_SERVER_ERROR`, and the exception carries no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the authorizer has not loaded the committed ACLs yet")]
pub struct NotReady;

/// `AuthHelper.authorizeClusterOperation` for `api` needing `op` on the cluster, given the
/// authorizer's answer: `Ok` to go on, else the refusal to answer with (logged).
pub fn cluster_operation(
    verdict: Result<bool, NotReady>,
    api: &'static str,
    who: &RequestPrincipal,
    op: i8,
) -> Result<(), Denied> {
    let denied = match verdict {
        Ok(true) => return Ok(()),
        Ok(false) => Denied::cluster_operation(api, who, op),
        Err(NotReady) => Denied::NotReady,
    };
    let code = denied.error_code().name();
    tracing::warn!(target: "kraftd::controller", "{api} refused with {code}: {denied}");
    Err(denied)
}

/// A request (or part of one) the authorizer refused, with the code and message Java's
/// controller answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// `AuthHelper.authorizeClusterOperation`'s `ClusterAuthorizationException`. Java names
    /// the request by its connection dump; kraftd by the api and the principal.
    #[error("Request {api} from {who} needs {op} permission.")]
    ClusterOperation {
        api: &'static str,
        who: String,
        op: &'static str,
    },
    /// `ControllerApis.handleEnvelopeRequest`: the forwarding connection lacks CLUSTER_ACTION.
    #[error("Principal {who} does not have required CLUSTER_ACTION for envelope")]
    Envelope { who: String },
    /// `new ApiError(CLUSTER_AUTHORIZATION_FAILED)`: the code's own message.
    #[error("Cluster authorization failed.")]
    Cluster,
    /// `new ApiError(TOPIC_AUTHORIZATION_FAILED)`.
    #[error("Topic authorization failed.")]
    Topic,
    /// `new ApiError(GROUP_AUTHORIZATION_FAILED)`.
    #[error("Group authorization failed.")]
    Group,
    /// CreateTopics' result for a topic the principal may not create.
    #[error("Authorization failed.")]
    TopicCreation,
    /// The authorizer has not loaded the ACLs yet ([`NotReady`]).
    #[error("{NotReady}")]
    NotReady,
}

impl From<NotReady> for Denied {
    fn from(_: NotReady) -> Denied {
        Denied::NotReady
    }
}

impl Denied {
    /// `ClusterOperation` for `api` needing `op` on the cluster.
    pub fn cluster_operation(api: &'static str, who: &RequestPrincipal, op: i8) -> Denied {
        Denied::ClusterOperation {
            api,
            who: who.to_string(),
            op: super::operation_name(op),
        }
    }

    pub fn error_code(&self) -> ErrorCode {
        match self {
            Denied::Topic | Denied::TopicCreation => ErrorCode::TOPIC_AUTHORIZATION_FAILED,
            Denied::Group => ErrorCode::GROUP_AUTHORIZATION_FAILED,
            Denied::NotReady => ErrorCode::UNKNOWN_SERVER_ERROR,
            _ => ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
        }
    }

    /// The exception's own message, which some error responses carry (`e.getMessage()`, or
    /// `ApiError.fromThrowable`, which drops it for UNKNOWN_SERVER_ERROR): none for
    /// `AuthorizerNotReadyException`.
    pub fn exception_message(&self) -> Option<String> {
        match self {
            Denied::NotReady => None,
            other => Some(other.to_string()),
        }
    }

    /// `Errors.message()`: the code's default message, which some error responses carry
    /// instead of the exception's own.
    pub fn code_message(&self) -> String {
        match self.error_code() {
            ErrorCode::TOPIC_AUTHORIZATION_FAILED => Denied::Topic.to_string(),
            ErrorCode::GROUP_AUTHORIZATION_FAILED => Denied::Group.to_string(),
            ErrorCode::UNKNOWN_SERVER_ERROR => {
                "The server experienced an unexpected error when processing the request.".into()
            }
            _ => Denied::Cluster.to_string(),
        }
    }
}

/// Whether an ACL's resource pattern covers the resource `name`.
fn applies(acl: &Acl, name: &str) -> bool {
    match acl.pattern_type {
        pattern::LITERAL => acl.resource_name == name || acl.resource_name == WILDCARD,
        pattern::PREFIXED => name.starts_with(&acl.resource_name),
        _ => false,
    }
}

/// `StandardAuthorizerData.findResult`: `None` if the ACL does not speak to this principal,
/// host and operation; else whether it allows.
fn verdict(acl: &Acl, principal: &str, host: &str, op: i8) -> Option<bool> {
    if acl.principal != principal && acl.principal != WILDCARD_PRINCIPAL {
        return None;
    }
    if acl.host != WILDCARD && acl.host != host && !cidr_contains(&acl.host, host) {
        return None;
    }
    let allow = acl.permission_type == permission::ALLOW;
    if acl.operation != operation::ALL {
        let covered = if allow {
            match op {
                // An ALLOW of these operations implies DESCRIBE (or DESCRIBE_CONFIGS).
                operation::DESCRIBE => matches!(
                    acl.operation,
                    operation::DESCRIBE
                        | operation::READ
                        | operation::WRITE
                        | operation::DELETE
                        | operation::ALTER
                ),
                operation::DESCRIBE_CONFIGS => matches!(
                    acl.operation,
                    operation::DESCRIBE_CONFIGS | operation::ALTER_CONFIGS
                ),
                _ => acl.operation == op,
            }
        } else {
            acl.operation == op
        };
        if !covered {
            return None;
        }
    }
    Some(allow)
}

/// Java's `InetAddress.getHostAddress`: IPv6 as eight hex groups without zero compression.
pub fn java_host_address(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => v6
            .segments()
            .iter()
            .map(|s| format!("{s:x}"))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// A parsed `address/prefix` (Kafka's `CidrUtils`, over commons-net's `SubnetUtils`).
pub fn parse_cidr(cidr: &str) -> Option<(IpAddr, u8)> {
    let (addr, len) = cidr.split_once('/')?;
    let len: u8 = len.parse().ok()?;
    let addr: IpAddr = if cidr.contains(':') {
        IpAddr::V6(addr.parse().ok()?)
    } else {
        // SubnetUtils wants four dotted decimal parts.
        if addr.split('.').count() != 4 {
            return None;
        }
        IpAddr::V4(addr.parse().ok()?)
    };
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (len <= max && !(addr.is_ipv4() && len == 0)).then_some((addr, len))
}

/// `CidrUtils.isInRange(host, cidr)`: false for anything that does not parse.
fn cidr_contains(cidr: &str, host: &str) -> bool {
    if !cidr.contains('/') {
        return false;
    }
    let Some((net, len)) = parse_cidr(cidr) else {
        return false;
    };
    let Ok(host) = host.parse::<IpAddr>() else {
        return false;
    };
    match (net, host) {
        (IpAddr::V4(n), IpAddr::V4(h)) => {
            let mask = u32::MAX.checked_shl(32 - len as u32).unwrap_or(0);
            u32::from(n) & mask == u32::from(h) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(h)) => {
            let mask = u128::MAX.checked_shl(128 - len as u32).unwrap_or(0);
            u128::from(n) & mask == u128::from(h) & mask
        }
        _ => false,
    }
}
