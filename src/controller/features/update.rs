//! UpdateFeatures at the active controller (Kafka 4.4's `FeatureControlManager.updateFeatures`,
//! with `ConfigurationControlManager`'s records for enabling eligible leader replicas).
//!
//! The updates are checked one by one in Java's order (its `HashMap` order of the feature
//! names); the first refusal fails the whole request and nothing is written. metadata.version
//! and the other finalized features become `FeatureLevelRecord`s. kraft.version is raft's: the
//! leader checks and writes its own control batch through [`KraftVersionAccess`], and the
//! controller writes a `NoOpRecord` after it, so the reply waits until the upgrade commits.

use std::fmt;

use super::super::configs::BROKER_RESOURCE;
use super::super::metadata_version::MetadataVersion;
use super::super::ControllerState;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::features::{
    supported_feature, ELIGIBLE_LEADER_REPLICAS_VERSION, KRAFT_VERSION, METADATA_CHANGING_LEVELS,
    METADATA_VERSION, METADATA_VERSION_DEPENDENCIES,
};
use crate::protocol::messages::{ConfigRecord, FeatureLevelRecord, NoOpRecord};
use crate::protocol::records::MetadataRecordAndVersion;

const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";

/// `FeatureUpdate.UpgradeType`, by its wire code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeType {
    Upgrade,
    SafeDowngrade,
    UnsafeDowngrade,
    Unknown,
}

impl UpgradeType {
    pub fn from_code(code: i8) -> UpgradeType {
        match code {
            1 => UpgradeType::Upgrade,
            2 => UpgradeType::SafeDowngrade,
            3 => UpgradeType::UnsafeDowngrade,
            _ => UpgradeType::Unknown,
        }
    }
}

/// One requested update: a feature, its new level (0 removes it) and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureUpdate {
    pub feature: String,
    pub level: i16,
    pub upgrade_type: UpgradeType,
}

/// The raft layer's part in kraft.version (Java's `KRaftVersionAccessor`).
pub trait KraftVersionAccess {
    /// The kraft.version of the log, uncommitted records included.
    fn kraft_version(&self) -> i16;
    /// Checks the upgrade to `level` and, unless `validate_only`, appends it as the leader.
    fn upgrade_kraft_version(&mut self, level: i16, validate_only: bool)
        -> Result<(), RaftRefusal>;
}

/// The leader's refusal of a kraft.version upgrade, as raft words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaftRefusal {
    pub code: ErrorCode,
    pub message: String,
}

/// What the controller knows of itself for these checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureUpdateContext {
    pub node_id: i32,
    /// `controller.quorum.voters` (Java's `QuorumFeatures.quorumNodeIds`; empty for a dynamic
    /// quorum): each must have registered before a feature changes.
    pub quorum_node_ids: Vec<i32>,
    /// This controller's `min.insync.replicas`: the cluster default written when eligible leader
    /// replicas are enabled and the cluster has none.
    pub static_min_insync_replicas: u32,
}

/// Why an update is refused. `Display` is Java's message; every one is INVALID_UPDATE_VERSION
/// except those raft gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeatureRefusal {
    /// `Invalid update version L for feature F. <reason>`.
    InvalidUpdateVersion {
        feature: String,
        level: i16,
        reason: InvalidReason,
    },
    /// A metadata.version downgrade across a level whose records changed.
    UnsupportedMetadataDowngrade {
        from: i16,
        to: i16,
        unsafe_: bool,
    },
    Raft(RaftRefusal),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidReason {
    UnknownUpgradeType,
    Negative,
    /// A node that cannot run the level: `Local controller 1`, `Broker 4`, `Controller 2`.
    NotSupported {
        node: String,
        range: Option<(i16, i16)>,
    },
    ControllerNotRegistered(i32),
    DowngradeWithoutType,
    DowngradeToNewer,
    KraftVersionDowngrade,
    UnknownFeature(String),
    Dependency {
        depends_on: &'static str,
        level: i16,
    },
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidReason::UnknownUpgradeType => {
                f.write_str("The controller does not support the given upgrade type.")
            }
            InvalidReason::Negative => f.write_str("A feature version cannot be less than 0."),
            InvalidReason::NotSupported { node, range } => match range {
                Some((min, max)) if *max > 0 => {
                    write!(f, "{node} only supports versions {}", version_range(*min, *max))
                }
                _ => write!(f, "{node} does not support this feature."),
            },
            InvalidReason::ControllerNotRegistered(id) => write!(
                f,
                "controller {id} has not registered, and may not support this feature"
            ),
            InvalidReason::DowngradeWithoutType => f.write_str(
                "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
            ),
            InvalidReason::DowngradeToNewer => f.write_str("Can't downgrade to a newer version."),
            InvalidReason::KraftVersionDowngrade => {
                f.write_str("Can't downgrade the version of this feature.")
            }
            InvalidReason::UnknownFeature(name) => write!(f, "Feature {name} not found."),
            InvalidReason::Dependency { depends_on, level } => {
                // Filled in by `FeatureRefusal`'s display, which knows the feature and level.
                write!(f, "it depends on {depends_on} level {level}")
            }
        }
    }
}

/// Java's `VersionRange.toString`.
fn version_range(min: i16, max: i16) -> String {
    if min == max {
        min.to_string()
    } else {
        format!("{min}-{max}")
    }
}

impl fmt::Display for FeatureRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureRefusal::InvalidUpdateVersion {
                feature,
                level,
                reason: InvalidReason::Dependency { depends_on, level: needed },
            } => write!(
                f,
                "Invalid update version {level} for feature {feature}. {feature} could not be set to {level} because it depends on {depends_on} level {needed}"
            ),
            FeatureRefusal::InvalidUpdateVersion {
                feature,
                level,
                reason,
            } => write!(f, "Invalid update version {level} for feature {feature}. {reason}"),
            // Java names the levels here, not the versions.
            FeatureRefusal::UnsupportedMetadataDowngrade { from, to, unsafe_ } => write!(
                f,
                "Unsupported metadata.version downgrade from {from} to {to}. {}",
                if *unsafe_ {
                    "Unsafe metadata downgrade is not supported in this version."
                } else {
                    "Refusing to perform the requested downgrade because it might delete metadata information."
                }
            ),
            FeatureRefusal::Raft(r) => f.write_str(&r.message),
        }
    }
}

impl std::error::Error for FeatureRefusal {}

impl FeatureRefusal {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            FeatureRefusal::Raft(r) => r.code,
            _ => ErrorCode::INVALID_UPDATE_VERSION,
        }
    }
}

/// Decides an UpdateFeatures request against the latest state. The reply is `Ok` when every
/// update is valid; the records (none when validating only) then go in one atomic batch.
pub fn update_features(
    state: &ControllerState,
    ctx: &FeatureUpdateContext,
    updates: &[FeatureUpdate],
    validate_only: bool,
    kraft: &mut (impl KraftVersionAccess + ?Sized),
) -> ControllerResult<Result<(), FeatureRefusal>> {
    let features = &state.image.features;
    let Some(mv) = features.metadata_version() else {
        // The activation records always finalize metadata.version first.
        return ControllerResult::reply_only(Err(FeatureRefusal::InvalidUpdateVersion {
            feature: METADATA_VERSION.to_string(),
            level: 0,
            reason: InvalidReason::UnknownFeature(METADATA_VERSION.to_string()),
        }));
    };
    // Java's map of the proposed levels: every finalized level, then the request's.
    let mut proposed = features.levels.clone();
    let ordered = java_hash_map_order(updates);
    for u in &ordered {
        proposed.insert(u.feature.clone(), u.level);
    }
    let mut records = Vec::new();
    for u in &ordered {
        if let Err(e) = update_one(
            state,
            ctx,
            u,
            mv,
            &proposed,
            validate_only,
            kraft,
            &mut records,
        ) {
            return ControllerResult::reply_only(Err(e));
        }
    }
    if validate_only {
        return ControllerResult::reply_only(Ok(()));
    }
    if ordered
        .iter()
        .any(|u| u.feature == ELIGIBLE_LEADER_REPLICAS_VERSION && u.level > 0)
    {
        elr_safety_records(state, ctx, &mut records);
    }
    ControllerResult::new(records, Ok(()))
}

#[allow(clippy::too_many_arguments)]
fn update_one(
    state: &ControllerState,
    ctx: &FeatureUpdateContext,
    u: &FeatureUpdate,
    mv: i16,
    proposed: &imbl::OrdMap<String, i16>,
    validate_only: bool,
    kraft: &mut (impl KraftVersionAccess + ?Sized),
    records: &mut Vec<MetadataRecordAndVersion>,
) -> Result<(), FeatureRefusal> {
    let invalid = |reason| FeatureRefusal::InvalidUpdateVersion {
        feature: u.feature.clone(),
        level: u.level,
        reason,
    };
    if u.upgrade_type == UpgradeType::Unknown {
        return Err(invalid(InvalidReason::UnknownUpgradeType));
    }
    let current = match u.feature.as_str() {
        METADATA_VERSION => mv,
        KRAFT_VERSION => kraft.kraft_version(),
        name => state.image.features.levels.get(name).copied().unwrap_or(0),
    };
    if u.level < 0 {
        return Err(invalid(InvalidReason::Negative));
    }
    if let Some(reason) = reason_not_supported(state, ctx, &u.feature, u.level, mv) {
        return Err(invalid(reason));
    }
    if u.level < current && u.upgrade_type == UpgradeType::Upgrade {
        return Err(invalid(InvalidReason::DowngradeWithoutType));
    }
    if u.level > current && u.upgrade_type != UpgradeType::Upgrade {
        return Err(invalid(InvalidReason::DowngradeToNewer));
    }
    match u.feature.as_str() {
        METADATA_VERSION => {
            let unsafe_ = u.upgrade_type == UpgradeType::UnsafeDowngrade;
            if u.level < mv && metadata_changed_between(u.level, mv) {
                return Err(FeatureRefusal::UnsupportedMetadataDowngrade {
                    from: mv,
                    to: u.level,
                    unsafe_,
                });
            }
            records.push(feature_level(METADATA_VERSION, u.level));
        }
        KRAFT_VERSION => {
            if u.upgrade_type != UpgradeType::Upgrade {
                if u.level != current {
                    return Err(invalid(InvalidReason::KraftVersionDowngrade));
                }
                return Ok(());
            }
            kraft
                .upgrade_kraft_version(u.level, validate_only)
                .map_err(FeatureRefusal::Raft)?;
            records.push(MetadataRecordAndVersion::new(NoOpRecord::default(), 0));
        }
        name => {
            if supported_feature(name).is_none() {
                return Err(invalid(InvalidReason::UnknownFeature(name.to_string())));
            }
            for &(feature, level, needs_mv) in METADATA_VERSION_DEPENDENCIES {
                let proposed_mv = proposed.get(METADATA_VERSION).copied().unwrap_or(mv);
                if feature == name && u.level >= level && proposed_mv < needs_mv {
                    return Err(invalid(InvalidReason::Dependency {
                        depends_on: METADATA_VERSION,
                        level: needs_mv,
                    }));
                }
            }
            records.push(feature_level(name, u.level));
        }
    }
    Ok(())
}

fn feature_level(name: &str, level: i16) -> MetadataRecordAndVersion {
    MetadataRecordAndVersion::new(
        FeatureLevelRecord {
            name: name.to_string(),
            feature_level: level,
            ..Default::default()
        },
        0,
    )
}

/// Java's `MetadataVersion.checkIfMetadataChanged`: a level in `(low, high]` changed records.
fn metadata_changed_between(low: i16, high: i16) -> bool {
    METADATA_CHANGING_LEVELS
        .iter()
        .any(|&l| l > low && l <= high)
}

/// Java's `reasonNotSupported`: this controller, every registered broker and (from 3.7-IV0)
/// every registered controller must support the level, and every static voter must have
/// registered.
fn reason_not_supported(
    state: &ControllerState,
    ctx: &FeatureUpdateContext,
    feature: &str,
    level: i16,
    mv: i16,
) -> Option<InvalidReason> {
    let check = |node: String, range: Option<(i16, i16)>| {
        let (min, max) = range.unwrap_or((0, 0));
        (!(min..=max).contains(&level)).then_some(InvalidReason::NotSupported { node, range })
    };
    let local = supported_feature(feature).map(|f| (f.min, f.max));
    if let Some(r) = check(format!("Local controller {}", ctx.node_id), local) {
        return Some(r);
    }
    let cluster = &state.image.cluster;
    for (id, b) in cluster.brokers.iter() {
        let range = b.supported_features.get(feature).map(|r| (r.min, r.max));
        if let Some(r) = check(format!("Broker {id}"), range) {
            return Some(r);
        }
    }
    let registration_supported =
        MetadataVersion::from_level(mv).is_ok_and(|v| v.is_controller_registration_supported());
    if registration_supported {
        for (id, c) in cluster.controllers.iter() {
            if *id == ctx.node_id {
                continue;
            }
            let range = c.supported_features.get(feature).map(|r| (r.min, r.max));
            if let Some(r) = check(format!("Controller {id}"), range) {
                return Some(r);
            }
        }
        for id in &ctx.quorum_node_ids {
            if *id != ctx.node_id && !cluster.controllers.contains_key(id) {
                return Some(InvalidReason::ControllerNotRegistered(*id));
            }
        }
    }
    None
}

/// Enabling eligible leader replicas: the cluster gets a `min.insync.replicas` default (this
/// controller's) if it has none, and brokers' own `min.insync.replicas` are removed (Java's
/// `maybeGenerateElrSafetyRecords`).
fn elr_safety_records(
    state: &ControllerState,
    ctx: &FeatureUpdateContext,
    records: &mut Vec<MetadataRecordAndVersion>,
) {
    let configs = &state.image.configs.resources;
    let config = |name: &str, value: Option<String>| {
        MetadataRecordAndVersion::new(
            ConfigRecord {
                resource_type: BROKER_RESOURCE,
                resource_name: name.to_string(),
                name: MIN_INSYNC_REPLICAS.to_string(),
                value,
                ..Default::default()
            },
            0,
        )
    };
    let cluster_has = configs
        .get(&(BROKER_RESOURCE, String::new()))
        .is_some_and(|c| c.contains_key(MIN_INSYNC_REPLICAS));
    if !cluster_has {
        records.push(config("", Some(ctx.static_min_insync_replicas.to_string())));
    }
    let mut brokers: Vec<(i64, &String)> = configs
        .iter()
        .filter(|((kind, name), c)| {
            *kind == BROKER_RESOURCE && !name.is_empty() && c.contains_key(MIN_INSYNC_REPLICAS)
        })
        .map(|((_, name), _)| (name.parse::<i64>().unwrap_or(i64::MAX), name))
        .collect();
    brokers.sort();
    for (_, name) in brokers {
        records.push(config(name, None));
    }
}

/// The updates in the order Java's `HashMap<String, Short>` iterates them (by bucket of the
/// name's `String.hashCode` at the table's final capacity, then in insertion order); a feature
/// named twice keeps its first position and its last level.
fn java_hash_map_order(updates: &[FeatureUpdate]) -> Vec<FeatureUpdate> {
    let mut unique: Vec<FeatureUpdate> = Vec::new();
    for u in updates {
        match unique.iter_mut().find(|x| x.feature == u.feature) {
            Some(x) => *x = u.clone(),
            None => unique.push(u.clone()),
        }
    }
    let mut capacity = 16usize;
    while unique.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let bucket = |name: &str| {
        let h = name
            .encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
        let spread = h ^ ((h as u32) >> 16) as i32;
        (spread as u32 as usize) & (capacity - 1)
    };
    let mut indexed: Vec<(usize, usize, FeatureUpdate)> = unique
        .into_iter()
        .enumerate()
        .map(|(i, u)| (bucket(&u.feature), i, u))
        .collect();
    indexed.sort_by_key(|(b, i, _)| (*b, *i));
    indexed.into_iter().map(|(_, _, u)| u).collect()
}

#[cfg(test)]
pub(super) fn hash_order_names(names: &[&str]) -> Vec<String> {
    let updates: Vec<FeatureUpdate> = names
        .iter()
        .map(|n| FeatureUpdate {
            feature: n.to_string(),
            level: 1,
            upgrade_type: UpgradeType::Upgrade,
        })
        .collect();
    java_hash_map_order(&updates)
        .into_iter()
        .map(|u| u.feature)
        .collect()
}
