//! The active controller's ACL decisions: CreateAcls (`AclApis.handleCreateAcls`' name checks,
//! then `AclControlManager.createAcls`), DeleteAcls (`AclControlManager.deleteAcls`) and
//! DescribeAcls (`StandardAuthorizer.acls` over the committed image).

use std::collections::BTreeSet;

use super::authorizer::parse_cidr;
use super::{
    operation_name, pattern, pattern_type_name, permission, permission_type_name, resource,
    resource_type_name, Acl, AclFilter, AclsImage, CLUSTER_NAME, WILDCARD,
};
use crate::controller::java::JavaRandom;
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::ControllerResult;
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{AccessControlEntryRecord, RemoveAccessControlEntryRecord};
use crate::protocol::records::MetadataRecordAndVersion;

/// Why an ACL creation or a deletion filter is refused, with Java's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AclError {
    #[error("The only valid name for the CLUSTER resource is {CLUSTER_NAME}")]
    ClusterName,
    #[error("Invalid empty resource name")]
    EmptyName,
    #[error("Invalid resourceType {0}")]
    ResourceType(&'static str),
    #[error("Invalid patternType {0}")]
    PatternType(&'static str),
    #[error("Invalid operation {0}")]
    Operation(&'static str),
    #[error("Invalid permissionType {0}")]
    PermissionType(&'static str),
    #[error("Could not parse principal from `{0}` (no colon is present separating the principal type from the principal name)")]
    Principal(String),
    #[error("Host pattern cannot be null or empty")]
    EmptyHost,
    #[error("CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.")]
    CidrUnsupported,
    /// Java's message ends with commons-net's reason.
    #[error("Invalid CIDR notation '{host}': {why}")]
    Cidr { host: String, why: String },
    #[error("Unknown patternFilter.")]
    UnknownPatternFilter,
    #[error("Unknown entryFilter.")]
    UnknownEntryFilter,
}

impl AclError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            AclError::CidrUnsupported => ErrorCode::UNSUPPORTED_VERSION,
            _ => ErrorCode::INVALID_REQUEST,
        }
    }
}

/// `AclApis`' checks, then `AclControlManager.validateNewAcl`, in Java's order.
fn validate(acl: &Acl, mv: MetadataVersion) -> Result<(), AclError> {
    if acl.resource_type == resource::CLUSTER && acl.resource_name != CLUSTER_NAME {
        return Err(AclError::ClusterName);
    }
    if acl.resource_name.is_empty() {
        return Err(AclError::EmptyName);
    }
    if matches!(acl.resource_type, resource::UNKNOWN | resource::ANY) {
        return Err(AclError::ResourceType(resource_type_name(
            acl.resource_type,
        )));
    }
    if !matches!(acl.pattern_type, pattern::LITERAL | pattern::PREFIXED) {
        return Err(AclError::PatternType(pattern_type_name(acl.pattern_type)));
    }
    if matches!(
        acl.operation,
        super::operation::UNKNOWN | super::operation::ANY
    ) {
        return Err(AclError::Operation(operation_name(acl.operation)));
    }
    if !matches!(acl.permission_type, permission::DENY | permission::ALLOW) {
        return Err(AclError::PermissionType(permission_type_name(
            acl.permission_type,
        )));
    }
    if !acl.principal.contains(':') {
        return Err(AclError::Principal(acl.principal.clone()));
    }
    validate_host(&acl.host, mv)
}

/// `AclControlManager.validateHostPattern`: `*`, an address, or (from 4.4-IV1) a CIDR range.
fn validate_host(host: &str, mv: MetadataVersion) -> Result<(), AclError> {
    if host.is_empty() {
        return Err(AclError::EmptyHost);
    }
    if host == WILDCARD || !host.contains('/') {
        return Ok(());
    }
    if !mv.is_cidr_acl_supported() {
        return Err(AclError::CidrUnsupported);
    }
    if parse_cidr(host).is_some() {
        return Ok(());
    }
    // commons-net checks the prefix length's range after the address parses.
    let max = if host.contains(':') { 128 } else { 32 };
    let why = match host.split_once('/').map(|(_, l)| l.parse::<i64>()) {
        Some(Ok(len)) if !(0..=max).contains(&len) => {
            format!("Value [{len}] not in range [0,{max}]")
        }
        _ => format!("Could not parse [{host}]"),
    };
    Err(AclError::Cidr {
        host: host.to_string(),
        why,
    })
}

/// CreateAcls: one result per creation, in request order. Each valid ACL that is neither in
/// the image nor earlier in the request gets an `AccessControlEntryRecord` with a fresh id;
/// a duplicate succeeds without one. The codes are as Java's `fromCode` reads them.
pub fn create_acls(
    image: &AclsImage,
    creations: &[Acl],
    mv: MetadataVersion,
    ids: &mut JavaRandom,
) -> ControllerResult<Vec<Result<(), AclError>>> {
    let mut records = Vec::new();
    let mut seen: Vec<&Acl> = Vec::new();
    let mut taken: BTreeSet<Uuid> = BTreeSet::new();
    let mut results = Vec::with_capacity(creations.len());
    for acl in creations {
        if let Err(e) = validate(acl, mv) {
            results.push(Err(e));
            continue;
        }
        if !image.contains(acl) && !seen.contains(&acl) {
            seen.push(acl);
            let id = loop {
                let id = ids.uuid();
                if !image.by_id.contains_key(&id) && taken.insert(id) {
                    break id;
                }
            };
            let record = AccessControlEntryRecord {
                id,
                resource_type: acl.resource_type,
                resource_name: acl.resource_name.clone(),
                pattern_type: acl.pattern_type,
                principal: acl.principal.clone(),
                host: acl.host.clone(),
                operation: acl.operation,
                permission_type: acl.permission_type,
                ..Default::default()
            };
            records.push(MetadataRecordAndVersion::new(record, 0));
        }
        results.push(Ok(()));
    }
    ControllerResult::new(records, results)
}

/// DeleteAcls: per filter, the ACLs it matches (a later filter lists an ACL an earlier one
/// matched too), each removed once. The batch is atomic.
pub fn delete_acls(
    image: &AclsImage,
    filters: &[AclFilter],
) -> ControllerResult<Vec<Result<Vec<Acl>, AclError>>> {
    let mut removed: BTreeSet<Uuid> = BTreeSet::new();
    let mut results = Vec::with_capacity(filters.len());
    for filter in filters {
        if filter.pattern_unknown() {
            results.push(Err(AclError::UnknownPatternFilter));
            continue;
        }
        if filter.entry_unknown() {
            results.push(Err(AclError::UnknownEntryFilter));
            continue;
        }
        let mut matched = Vec::new();
        for (id, acl) in image.by_id.iter() {
            if filter.matches(acl) {
                matched.push((**acl).clone());
                removed.insert(*id);
            }
        }
        results.push(Ok(matched));
    }
    let records = removed
        .into_iter()
        .map(|id| {
            MetadataRecordAndVersion::new(
                RemoveAccessControlEntryRecord {
                    id,
                    ..Default::default()
                },
                0,
            )
        })
        .collect();
    ControllerResult::new(records, results)
}

/// DescribeAcls: the ACLs `filter` matches, grouped by resource pattern (Java groups them in a
/// `HashMap` keyed by enum identity hashes, so its order differs from run to run; kraftd lists
/// them by resource type, name and pattern type).
pub fn describe_acls(image: &AclsImage, filter: &AclFilter) -> Vec<((i8, String, i8), Vec<Acl>)> {
    let mut groups: std::collections::BTreeMap<(i8, String, i8), Vec<Acl>> = Default::default();
    for acl in image.by_id.values().filter(|a| filter.matches(a)) {
        groups
            .entry((
                acl.resource_type,
                acl.resource_name.clone(),
                acl.pattern_type,
            ))
            .or_default()
            .push((**acl).clone());
    }
    groups.into_iter().collect()
}
