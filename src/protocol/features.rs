//! Feature names and Kafka 4.4's metadata versions: shared by the log (bootstrap checkpoints),
//! the controller (replaying `FeatureLevelRecord`) and the server.

pub const METADATA_VERSION: &str = "metadata.version";
pub const KRAFT_VERSION: &str = "kraft.version";
pub const ELIGIBLE_LEADER_REPLICAS_VERSION: &str = "eligible.leader.replicas.version";

/// The kraft.version levels this build supports: 0, static voters; 1, voters in the log
/// (KIP-853). Raft advertises it in ApiVersions, VotersRecord entries and UpdateRaftVoter.
pub const SUPPORTED_KRAFT_VERSIONS: (i16, i16) = (0, 1);

/// A feature's supported range, as ApiVersions and registrations advertise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureRange {
    pub name: &'static str,
    pub min: i16,
    pub max: i16,
}

/// The features this controller supports, as a Kafka 4.4 controller does by default
/// (`QuorumFeatures.defaultSupportedFeatureMap` without unstable versions): metadata.version
/// from 3.3-IV3 (Kafka 4.x's minimum) to 4.4-IV2 (4.4.0's latest production level), and every
/// production feature from its minimum to its latest production level.
pub const SUPPORTED_FEATURES: &[FeatureRange] = &[
    FeatureRange {
        name: METADATA_VERSION,
        min: 7,
        max: 33,
    },
    FeatureRange {
        name: KRAFT_VERSION,
        min: SUPPORTED_KRAFT_VERSIONS.0,
        max: SUPPORTED_KRAFT_VERSIONS.1,
    },
    FeatureRange {
        name: "group.version",
        min: 0,
        max: 1,
    },
    FeatureRange {
        name: "share.version",
        min: 0,
        max: 2,
    },
    FeatureRange {
        name: "streams.version",
        min: 0,
        max: 1,
    },
    FeatureRange {
        name: "transaction.version",
        min: 0,
        max: 2,
    },
    FeatureRange {
        name: ELIGIBLE_LEADER_REPLICAS_VERSION,
        min: 0,
        max: 1,
    },
];

/// The locally supported range of `name`, if this build knows the feature.
pub fn supported_feature(name: &str) -> Option<&'static FeatureRange> {
    SUPPORTED_FEATURES.iter().find(|f| f.name == name)
}

/// Feature levels that need a metadata.version (Kafka 4.4's `FeatureVersion.dependencies`;
/// no production feature depends on another one): (feature, level, minimum metadata.version).
pub const METADATA_VERSION_DEPENDENCIES: &[(&str, i16, i16)] =
    &[(ELIGIBLE_LEADER_REPLICAS_VERSION, 1, 23)];

/// Kafka 4.4's metadata versions (`MetadataVersion`): name and feature level, oldest first.
pub const METADATA_VERSIONS: &[(&str, i16)] = &[
    ("3.3-IV3", 7),
    ("3.4-IV0", 8),
    ("3.5-IV0", 9),
    ("3.5-IV1", 10),
    ("3.5-IV2", 11),
    ("3.6-IV0", 12),
    ("3.6-IV1", 13),
    ("3.6-IV2", 14),
    ("3.7-IV0", 15),
    ("3.7-IV1", 16),
    ("3.7-IV2", 17),
    ("3.7-IV3", 18),
    ("3.7-IV4", 19),
    ("3.8-IV0", 20),
    ("3.9-IV0", 21),
    ("4.0-IV0", 22),
    ("4.0-IV1", 23),
    ("4.0-IV2", 24),
    ("4.0-IV3", 25),
    ("4.1-IV0", 26),
    ("4.1-IV1", 27),
    ("4.2-IV0", 28),
    ("4.2-IV1", 29),
    ("4.3-IV0", 30),
    ("4.4-IV0", 31),
    ("4.4-IV1", 32),
    ("4.4-IV2", 33),
];

/// The metadata versions whose records differ from the previous version's
/// (`MetadataVersion.didMetadataChange`): a downgrade across one of them may lose metadata.
pub const METADATA_CHANGING_LEVELS: &[i16] = &[7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33];

/// The name of a metadata.version feature level, e.g. `4.0-IV3`, if Kafka 4.4 knows it.
pub fn metadata_version_name(level: i16) -> Option<&'static str> {
    METADATA_VERSIONS
        .iter()
        .find(|(_, l)| *l == level)
        .map(|(name, _)| *name)
}
