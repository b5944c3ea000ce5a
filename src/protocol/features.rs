//! Feature names and Kafka 4.4's metadata versions: shared by the log (bootstrap checkpoints),
//! the controller (replaying `FeatureLevelRecord`) and the server.

pub const METADATA_VERSION: &str = "metadata.version";
pub const KRAFT_VERSION: &str = "kraft.version";

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

/// The name of a metadata.version feature level, e.g. `4.0-IV3`, if Kafka 4.4 knows it.
pub fn metadata_version_name(level: i16) -> Option<&'static str> {
    METADATA_VERSIONS
        .iter()
        .find(|(_, l)| *l == level)
        .map(|(name, _)| *name)
}
