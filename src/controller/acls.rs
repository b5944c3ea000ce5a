//! ACLs by id (Kafka's `AclsImage` of `StandardAcl`s).

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
