//! ACLs by id (Kafka's `AclsImage` of `StandardAcl`s), the enum codes ACLs carry, and
//! Kafka's filter matching (`AclBindingFilter.matches`).

pub mod authorizer;
pub mod decide;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Value};

use super::error::Refusal;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::AccessControlEntryRecord;

/// One ACL, with the enum codes the record carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acl {
    pub resource_type: i8,
    pub resource_name: String,
    pub pattern_type: i8,
    pub principal: String,
    pub host: String,
    pub operation: i8,
    pub permission_type: i8,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct AclsImage {
    pub by_id: OrdMap<Uuid, Arc<Acl>>,
}

impl AclsImage {
    pub fn replay(&mut self, r: &AccessControlEntryRecord) {
        let acl = Acl {
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            pattern_type: r.pattern_type,
            principal: r.principal.clone(),
            host: r.host.clone(),
            operation: r.operation,
            permission_type: r.permission_type,
        };
        self.by_id.insert(r.id, Arc::new(acl));
    }

    pub fn replay_remove(&mut self, id: Uuid) -> Result<(), Refusal> {
        self.by_id
            .remove(&id)
            .map(|_| ())
            .ok_or(Refusal::UnknownAcl { id })
    }

    /// Whether an ACL equal to `acl` exists (Java's `existingAcls`).
    pub fn contains(&self, acl: &Acl) -> bool {
        self.by_id.values().any(|a| **a == *acl)
    }

    pub fn to_json(&self) -> Value {
        self.by_id
            .iter()
            .map(|(id, a)| {
                let v = json!({
                    "resourceType": a.resource_type,
                    "resourceName": a.resource_name,
                    "patternType": a.pattern_type,
                    "principal": a.principal,
                    "host": a.host,
                    "operation": a.operation,
                    "permissionType": a.permission_type,
                });
                (id.to_string(), v)
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}

/// `ResourceType` codes.
pub mod resource {
    pub const UNKNOWN: i8 = 0;
    pub const ANY: i8 = 1;
    pub const TOPIC: i8 = 2;
    pub const GROUP: i8 = 3;
    pub const CLUSTER: i8 = 4;
    pub const TRANSACTIONAL_ID: i8 = 5;
    pub const DELEGATION_TOKEN: i8 = 6;
    pub const USER: i8 = 7;
}

/// `PatternType` codes.
pub mod pattern {
    pub const UNKNOWN: i8 = 0;
    pub const ANY: i8 = 1;
    pub const MATCH: i8 = 2;
    pub const LITERAL: i8 = 3;
    pub const PREFIXED: i8 = 4;
}

/// `AclOperation` codes.
pub mod operation {
    pub const UNKNOWN: i8 = 0;
    pub const ANY: i8 = 1;
    pub const ALL: i8 = 2;
    pub const READ: i8 = 3;
    pub const WRITE: i8 = 4;
    pub const CREATE: i8 = 5;
    pub const DELETE: i8 = 6;
    pub const ALTER: i8 = 7;
    pub const DESCRIBE: i8 = 8;
    pub const CLUSTER_ACTION: i8 = 9;
    pub const DESCRIBE_CONFIGS: i8 = 10;
    pub const ALTER_CONFIGS: i8 = 11;
    pub const IDEMPOTENT_WRITE: i8 = 12;
    pub const CREATE_TOKENS: i8 = 13;
    pub const DESCRIBE_TOKENS: i8 = 14;
    pub const TWO_PHASE_COMMIT: i8 = 15;
}

/// The operations a CLUSTER resource supports (`AclEntry.supportedOperations(CLUSTER)`), which
/// DescribeCluster's authorized operations are drawn from.
pub const CLUSTER_OPERATIONS: [i8; 7] = [
    operation::CREATE,
    operation::ALTER,
    operation::DESCRIBE,
    operation::CLUSTER_ACTION,
    operation::DESCRIBE_CONFIGS,
    operation::ALTER_CONFIGS,
    operation::IDEMPOTENT_WRITE,
];

/// `AclPermissionType` codes.
pub mod permission {
    pub const UNKNOWN: i8 = 0;
    pub const ANY: i8 = 1;
    pub const DENY: i8 = 2;
    pub const ALLOW: i8 = 3;
}

/// The one name of the cluster resource (`Resource.CLUSTER_NAME`).
pub const CLUSTER_NAME: &str = "kafka-cluster";
/// A literal resource name, principal name or host that matches any (`ResourcePattern.WILDCARD_RESOURCE`).
pub const WILDCARD: &str = "*";

/// Java's `fromCode`: a code outside the enum is `UNKNOWN` (code 0).
fn known(code: i8, max: i8) -> i8 {
    if (0..=max).contains(&code) {
        code
    } else {
        0
    }
}

/// The codes Java reads a request's ACL fields as (`fromCode` of each enum).
pub fn resource_type(code: i8) -> i8 {
    known(code, resource::USER)
}
pub fn pattern_type(code: i8) -> i8 {
    known(code, pattern::PREFIXED)
}
pub fn operation(code: i8) -> i8 {
    known(code, operation::TWO_PHASE_COMMIT)
}
pub fn permission_type(code: i8) -> i8 {
    known(code, permission::ALLOW)
}

/// Java's enum names, as its messages print them.
pub fn resource_type_name(code: i8) -> &'static str {
    const NAMES: [&str; 8] = [
        "UNKNOWN",
        "ANY",
        "TOPIC",
        "GROUP",
        "CLUSTER",
        "TRANSACTIONAL_ID",
        "DELEGATION_TOKEN",
        "USER",
    ];
    NAMES[resource_type(code) as usize]
}
pub fn pattern_type_name(code: i8) -> &'static str {
    const NAMES: [&str; 5] = ["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"];
    NAMES[pattern_type(code) as usize]
}
pub fn operation_name(code: i8) -> &'static str {
    const NAMES: [&str; 16] = [
        "UNKNOWN",
        "ANY",
        "ALL",
        "READ",
        "WRITE",
        "CREATE",
        "DELETE",
        "ALTER",
        "DESCRIBE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
        "CREATE_TOKENS",
        "DESCRIBE_TOKENS",
        "TWO_PHASE_COMMIT",
    ];
    NAMES[operation(code) as usize]
}
pub fn permission_type_name(code: i8) -> &'static str {
    const NAMES: [&str; 4] = ["UNKNOWN", "ANY", "DENY", "ALLOW"];
    NAMES[permission_type(code) as usize]
}

/// A DeleteAcls or DescribeAcls filter (Kafka's `AclBindingFilter`), codes as `fromCode` reads
/// them; a `None` string matches any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclFilter {
    pub resource_type: i8,
    pub resource_name: Option<String>,
    pub pattern_type: i8,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: i8,
    pub permission_type: i8,
}

impl AclFilter {
    /// `ResourcePatternFilter.isUnknown`.
    pub fn pattern_unknown(&self) -> bool {
        self.resource_type == resource::UNKNOWN || self.pattern_type == pattern::UNKNOWN
    }

    /// `AccessControlEntryFilter.isUnknown`.
    pub fn entry_unknown(&self) -> bool {
        self.operation == operation::UNKNOWN || self.permission_type == permission::UNKNOWN
    }

    /// `AclBindingFilter.matches`: the resource pattern filter, then the entry filter.
    pub fn matches(&self, acl: &Acl) -> bool {
        self.matches_pattern(acl) && self.matches_entry(acl)
    }

    /// `ResourcePatternFilter.matches`: a MATCH filter also matches the wildcard and prefixed
    /// patterns that would apply to its name.
    fn matches_pattern(&self, acl: &Acl) -> bool {
        if self.resource_type != resource::ANY && self.resource_type != acl.resource_type {
            return false;
        }
        if !matches!(self.pattern_type, pattern::ANY | pattern::MATCH)
            && self.pattern_type != acl.pattern_type
        {
            return false;
        }
        let Some(name) = &self.resource_name else {
            return true;
        };
        if self.pattern_type == pattern::ANY || self.pattern_type == acl.pattern_type {
            return *name == acl.resource_name;
        }
        match acl.pattern_type {
            pattern::LITERAL => *name == acl.resource_name || acl.resource_name == WILDCARD,
            pattern::PREFIXED => name.starts_with(&acl.resource_name),
            // The image holds only literal and prefixed ACLs (Java would throw here).
            _ => false,
        }
    }

    /// `AccessControlEntryFilter.matches`.
    fn matches_entry(&self, acl: &Acl) -> bool {
        self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && (self.operation == operation::ANY || self.operation == acl.operation)
            && (self.permission_type == permission::ANY
                || self.permission_type == acl.permission_type)
    }
}
