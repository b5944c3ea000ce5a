//! The bootstrap checkpoint `kafka-storage format` writes (Kafka 4.4, KIP-1170): the zero
//! snapshot `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint` in the metadata
//! log dir, holding the KRaft control records and the bootstrap metadata records.
//!
//! Layout, as Java 4.4's `Formatter` writes it (checked batch by batch against its output):
//!
//! ```text
//! control batch  offsets 0..    SnapshotHeader, [KRaftVersion(1), [KRaftVoters]]
//! data batch                    FeatureLevelRecord(metadata.version), then every other feature
//!                               with a level > 0 (kraft.version excepted), sorted by name, then
//!                               one UserScramCredentialRecord per `--add-scram`, in argument
//!                               order (repeats kept), all in this one batch however many
//! control batch                 SnapshotFooter
//! ```
//!
//! Every batch has partition leader epoch 0 and the records of a batch share one timestamp. A
//! static quorum (kraft.version 0) gets no KRaftVersion record; a dynamic quorum gets
//! `KRaftVersion(1)`, and the voters record when formatted with `--standalone` or
//! `--initial-controllers` (not with `--no-initial-controllers`).

use std::collections::BTreeMap;

use crate::protocol::messages::voters_record::Voter;
use crate::protocol::messages::{
    FeatureLevelRecord, KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord,
    UserScramCredentialRecord, VotersRecord,
};
use crate::protocol::records::{BatchBuilder, BuildError, ControlRecord, MetadataRecordAndVersion};

pub use crate::protocol::features::{KRAFT_VERSION, METADATA_VERSION, METADATA_VERSIONS};

/// The level `kafka-storage format` uses without `--release-version` (4.4's LATEST_PRODUCTION).
pub const LATEST_PRODUCTION_LEVEL: i16 = 33;

/// A finalizable feature other than metadata.version: its name, highest level, and for each
/// level the lowest metadata.version level from which it is the default (Kafka's
/// `Feature.defaultLevel(mv)`), as observed from `kafka-storage format --release-version X`
/// of Kafka 4.4.0 for every X.
pub struct FeatureInfo {
    pub name: &'static str,
    pub max_level: i16,
    /// (level, lowest metadata.version level whose default it is), ascending.
    pub defaults: &'static [(i16, i16)],
}

/// Kafka 4.4's features, sorted by name (the order the formatter writes them in).
pub const FEATURES: &[FeatureInfo] = &[
    FeatureInfo {
        name: "eligible.leader.replicas.version",
        max_level: 1,
        defaults: &[(1, 26)],
    },
    FeatureInfo {
        name: "group.version",
        max_level: 1,
        defaults: &[(1, 22)],
    },
    FeatureInfo {
        name: KRAFT_VERSION,
        max_level: 1,
        defaults: &[(1, 21)],
    },
    FeatureInfo {
        name: "share.version",
        max_level: 2,
        defaults: &[(1, 28), (2, 31)],
    },
    FeatureInfo {
        name: "streams.version",
        max_level: 1,
        defaults: &[(1, 29)],
    },
    FeatureInfo {
        name: "transaction.version",
        max_level: 2,
        defaults: &[(2, 24)],
    },
];

pub fn feature_info(name: &str) -> Option<&'static FeatureInfo> {
    FEATURES.iter().find(|f| f.name == name)
}

impl FeatureInfo {
    /// The level this feature takes by default at metadata.version level `mv`.
    pub fn default_level(&self, mv: i16) -> i16 {
        self.defaults
            .iter()
            .filter(|(_, from)| mv >= *from)
            .map(|(level, _)| *level)
            .max()
            .unwrap_or(0)
    }
}

/// The name of metadata.version level `level` (e.g. 33 -> "4.4-IV2").
pub fn metadata_version_name(level: i16) -> Option<&'static str> {
    METADATA_VERSIONS
        .iter()
        .find(|(_, l)| *l == level)
        .map(|(n, _)| *n)
}

/// Why a requested metadata.version or feature level cannot be bootstrapped. The messages are
/// Java's `Formatter`'s, each listing what is supported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureLevelError {
    #[error(
        "Unknown metadata.version '{text}'. Supported metadata.version are: {}",
        supported_metadata_versions()
    )]
    UnknownMetadataVersion { text: String },
    #[error(
        "Unsupported feature: {name}. Supported features are: {}",
        supported_features()
    )]
    UnsupportedFeature { name: String },
    #[error("No feature:{name} with feature level {level}. Supported levels are 0 to {max_level}")]
    UnsupportedLevel {
        name: String,
        level: i16,
        max_level: i16,
    },
}

fn supported_metadata_versions() -> String {
    METADATA_VERSIONS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn supported_features() -> String {
    FEATURES
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses a release version as Kafka's `MetadataVersion.fromVersionString` does: a full name
/// ("3.9-IV0") or a release ("3.9", meaning its latest IV).
pub fn parse_metadata_version(text: &str) -> Result<i16, FeatureLevelError> {
    let text = text.trim();
    let exact = METADATA_VERSIONS.iter().find(|(n, _)| *n == text);
    let release = || {
        METADATA_VERSIONS
            .iter()
            .rev()
            .find(|(n, _)| n.split('-').next() == Some(text))
    };
    match exact.or_else(release) {
        Some((_, level)) => Ok(*level),
        None => Err(FeatureLevelError::UnknownMetadataVersion {
            text: text.to_owned(),
        }),
    }
}

/// The feature levels to bootstrap: metadata.version plus every other feature at its default
/// for that version unless overridden. `overrides` must not hold metadata.version.
pub fn resolve_features(
    mv: i16,
    overrides: &BTreeMap<String, i16>,
) -> Result<BTreeMap<&'static str, i16>, FeatureLevelError> {
    let mut levels = BTreeMap::new();
    for (name, level) in overrides {
        let info = feature_info(name)
            .ok_or_else(|| FeatureLevelError::UnsupportedFeature { name: name.clone() })?;
        if *level < 0 || *level > info.max_level {
            return Err(FeatureLevelError::UnsupportedLevel {
                name: name.clone(),
                level: *level,
                max_level: info.max_level,
            });
        }
    }
    for info in FEATURES {
        let level = overrides
            .get(info.name)
            .copied()
            .unwrap_or_else(|| info.default_level(mv));
        levels.insert(info.name, level);
    }
    Ok(levels)
}

/// What goes into the bootstrap checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Bootstrap {
    /// metadata.version level.
    pub metadata_version: i16,
    /// Other features and their levels (kraft.version is not written as a FeatureLevelRecord;
    /// zero levels are skipped).
    pub features: BTreeMap<String, i16>,
    /// kraft.version: 0 writes no KRaftVersion record, 1 writes one.
    pub kraft_version: i16,
    /// The initial voter set (only with kraft.version 1).
    pub voters: Option<Vec<Voter>>,
    /// The `--add-scram` credentials, written after the features.
    pub scram: ScramRecords,
}

/// `UserScramCredentialRecord`s (version 0), whose `Debug` shows no salt and no key.
#[derive(Clone, Default, PartialEq)]
pub struct ScramRecords(pub Vec<UserScramCredentialRecord>);

impl std::fmt::Debug for ScramRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.0
                    .iter()
                    .map(|r| (r.name.as_str(), r.mechanism, r.iterations)),
            )
            .finish()
    }
}

impl Bootstrap {
    /// The metadata records, in the order Java writes them.
    pub fn metadata_records(&self) -> Vec<MetadataRecordAndVersion> {
        let feature = |name: &str, level: i16| {
            MetadataRecordAndVersion::new(
                FeatureLevelRecord {
                    name: name.to_owned(),
                    feature_level: level,
                    ..Default::default()
                },
                0,
            )
        };
        let mut out = vec![feature(METADATA_VERSION, self.metadata_version)];
        for (name, level) in &self.features {
            if name != KRAFT_VERSION && name != METADATA_VERSION && *level > 0 {
                out.push(feature(name, *level));
            }
        }
        out.extend(
            self.scram
                .0
                .iter()
                .map(|r| MetadataRecordAndVersion::new(r.clone(), 0)),
        );
        out
    }

    /// The control records of the first batch, after the snapshot header.
    pub fn control_records(&self) -> Vec<ControlRecord> {
        let mut out = Vec::new();
        if self.kraft_version > 0 {
            out.push(ControlRecord::KRaftVersion(KRaftVersionRecord {
                version: 0,
                k_raft_version: self.kraft_version,
                ..Default::default()
            }));
            if let Some(voters) = &self.voters {
                out.push(ControlRecord::KRaftVoters(VotersRecord {
                    version: 0,
                    voters: voters.clone(),
                    ..Default::default()
                }));
            }
        }
        out
    }

    /// The checkpoint's bytes; every batch and record is stamped `now_ms`.
    pub fn checkpoint_bytes(&self, now_ms: i64) -> Result<Vec<u8>, BuildError> {
        let mut out = Vec::new();
        let mut control = BatchBuilder::new_control(0).partition_leader_epoch(0);
        control.append_control(
            now_ms,
            &ControlRecord::SnapshotHeader(SnapshotHeaderRecord {
                version: 0,
                last_contained_log_timestamp: now_ms,
                ..Default::default()
            }),
        )?;
        for record in self.control_records() {
            control.append_control(now_ms, &record)?;
        }
        control.write_to(&mut out)?;
        let mut data = BatchBuilder::new(control.next_offset()).partition_leader_epoch(0);
        for record in self.metadata_records() {
            data.append_metadata(now_ms, &record)?;
        }
        data.write_to(&mut out)?;
        let mut footer = BatchBuilder::new_control(data.next_offset()).partition_leader_epoch(0);
        footer.append_control(
            now_ms,
            &ControlRecord::SnapshotFooter(SnapshotFooterRecord {
                version: 0,
                ..Default::default()
            }),
        )?;
        footer.write_to(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::split_batches;

    #[test]
    fn release_versions_parse_as_kafka_does() {
        assert_eq!(parse_metadata_version("4.4-IV2"), Ok(33));
        assert_eq!(parse_metadata_version("3.9"), Ok(21));
        assert_eq!(parse_metadata_version("4.0"), Ok(25));
        assert_eq!(parse_metadata_version("3.3"), Ok(7));
        let e = parse_metadata_version("9.9").unwrap_err().to_string();
        assert!(
            e.starts_with("Unknown metadata.version '9.9'. Supported"),
            "{e}"
        );
        assert_eq!(
            metadata_version_name(LATEST_PRODUCTION_LEVEL),
            Some("4.4-IV2")
        );
    }

    #[test]
    fn default_features_of_the_latest_version() {
        let levels = resolve_features(33, &BTreeMap::new()).unwrap();
        assert_eq!(levels["group.version"], 1);
        assert_eq!(levels["share.version"], 2);
        assert_eq!(levels["transaction.version"], 2);
        let mut o = BTreeMap::new();
        o.insert("foo.version".to_owned(), 1);
        let e = resolve_features(33, &o).unwrap_err().to_string();
        assert!(e.starts_with("Unsupported feature: foo.version."), "{e}");
    }

    #[test]
    fn checkpoint_has_header_features_footer() {
        let b = Bootstrap {
            metadata_version: 33,
            features: resolve_features(33, &BTreeMap::new())
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            kraft_version: 0,
            voters: None,
            scram: ScramRecords(vec![UserScramCredentialRecord {
                name: "alice".into(),
                mechanism: 1,
                salt: b"salt".to_vec(),
                stored_key: vec![1; 32],
                server_key: vec![2; 32],
                iterations: 4096,
                ..Default::default()
            }]),
        };
        assert_eq!(format!("{:?}", b.scram), r#"[("alice", 1, 4096)]"#);
        let bytes = b.checkpoint_bytes(1_700_000_000_000).unwrap();
        let split = split_batches(&bytes);
        assert!(split.end.is_clean());
        let b: Vec<_> = split
            .batches
            .iter()
            .map(|b| (b.base_offset(), b.record_count(), b.is_control()))
            .collect();
        assert_eq!(b, vec![(0, 1, true), (1, 7, false), (8, 1, true)]);
        crate::log::snapshot::validate_bytes(&bytes).unwrap();
    }
}
