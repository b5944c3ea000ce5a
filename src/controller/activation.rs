//! What a new active controller writes before anything else when the metadata log is empty:
//! Kafka's activation records (`ActivationRecordsGenerator` for an empty log). Java 4.4 writes,
//! in one batch of the leader's epoch:
//!
//! 1. `BeginTransactionRecord("Bootstrap records")`;
//! 2. every record of the bootstrap checkpoint (`0-0.checkpoint`), byte for byte: the
//!    `FeatureLevelRecord`s that `kafka-storage format` chose, `metadata.version` first;
//! 3. with `eligible.leader.replicas.version` >= 1, the cluster-wide `min.insync.replicas`
//!    (`ConfigRecord`, resource type BROKER, empty name) from the controller's configuration;
//! 4. `EndTransactionRecord`.
//!
//! The node reads the log (is it empty? the bootstrap checkpoint's records); this decides.

use super::snapshot::ELR_FEATURE;
use crate::protocol::messages::{
    BeginTransactionRecord, ConfigRecord, EndTransactionRecord, FeatureLevelRecord,
};
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion, MetadataRecordError};

/// Kafka's `ConfigResource.Type.BROKER`.
const BROKER_RESOURCE: i8 = 4;

#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    #[error("the metadata log is empty and has no bootstrap checkpoint (00000000000000000000-0000000000.checkpoint): format the directory with `kraftd format` or `kafka-storage.sh format`")]
    NoBootstrapCheckpoint,
    #[error("record {index} of the bootstrap checkpoint does not decode ({source}); format the directory again")]
    Undecodable {
        index: usize,
        #[source]
        source: MetadataRecordError,
    },
}

/// The activation batch for an empty log, from the bootstrap checkpoint's record values
/// (`None`: the directory has no bootstrap checkpoint).
pub fn activation_records(
    bootstrap: Option<Vec<Vec<u8>>>,
    min_insync_replicas: u32,
) -> Result<Vec<Vec<u8>>, ActivationError> {
    let bootstrap = bootstrap.ok_or(ActivationError::NoBootstrapCheckpoint)?;
    let encode = |r: MetadataRecordAndVersion| r.encode().expect("activation records encode");
    let mut out = vec![encode(MetadataRecordAndVersion::new(
        BeginTransactionRecord {
            name: Some("Bootstrap records".into()),
            ..Default::default()
        },
        0,
    ))];
    let mut elr = 0;
    for (index, value) in bootstrap.into_iter().enumerate() {
        let record = MetadataRecordAndVersion::decode(&value)
            .map_err(|source| ActivationError::Undecodable { index, source })?;
        if let MetadataRecord::FeatureLevel(FeatureLevelRecord {
            name,
            feature_level,
            ..
        }) = &record.record
        {
            if name == ELR_FEATURE {
                elr = *feature_level;
            }
        }
        out.push(value);
    }
    if elr >= 1 {
        out.push(encode(MetadataRecordAndVersion::new(
            ConfigRecord {
                resource_type: BROKER_RESOURCE,
                resource_name: String::new(),
                name: "min.insync.replicas".into(),
                value: Some(min_insync_replicas.to_string()),
                ..Default::default()
            },
            0,
        )));
    }
    out.push(encode(MetadataRecordAndVersion::new(
        EndTransactionRecord::default(),
        0,
    )));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feature(name: &str, level: i16) -> Vec<u8> {
        MetadataRecordAndVersion::new(
            FeatureLevelRecord {
                name: name.into(),
                feature_level: level,
                ..Default::default()
            },
            0,
        )
        .encode()
        .unwrap()
    }

    fn names(records: &[Vec<u8>]) -> Vec<String> {
        records
            .iter()
            .map(|r| {
                let r = MetadataRecordAndVersion::decode(r).unwrap();
                match &r.record {
                    MetadataRecord::FeatureLevel(f) => {
                        format!("FeatureLevel {}={}", f.name, f.feature_level)
                    }
                    MetadataRecord::Config(c) => {
                        format!("Config {}={}", c.name, c.value.clone().unwrap_or_default())
                    }
                    other => other.schema_name().to_string(),
                }
            })
            .collect()
    }

    #[test]
    fn an_empty_log_gets_the_bootstrap_features_in_a_transaction_as_java_writes_them() {
        let bootstrap = vec![
            feature("metadata.version", 33),
            feature(ELR_FEATURE, 1),
            feature("group.version", 1),
        ];
        let records = activation_records(Some(bootstrap.clone()), 2).unwrap();
        assert_eq!(
            names(&records),
            [
                "BeginTransactionRecord",
                "FeatureLevel metadata.version=33",
                "FeatureLevel eligible.leader.replicas.version=1",
                "FeatureLevel group.version=1",
                "Config min.insync.replicas=2",
                "EndTransactionRecord"
            ]
        );
        assert_eq!(
            records[1..4],
            bootstrap[..],
            "the bootstrap bytes go in unchanged"
        );
    }

    #[test]
    fn without_elr_there_is_no_min_insync_replicas_record() {
        let records = activation_records(Some(vec![feature("metadata.version", 20)]), 1).unwrap();
        assert_eq!(
            names(&records),
            [
                "BeginTransactionRecord",
                "FeatureLevel metadata.version=20",
                "EndTransactionRecord"
            ]
        );
    }

    #[test]
    fn a_log_without_a_bootstrap_checkpoint_cannot_be_activated() {
        let err = activation_records(None, 1).unwrap_err();
        assert!(matches!(err, ActivationError::NoBootstrapCheckpoint));
        assert!(err.to_string().contains("bootstrap checkpoint"), "{err}");
        let err = activation_records(Some(vec![vec![1, 200, 7]]), 1).unwrap_err();
        assert!(
            matches!(err, ActivationError::Undecodable { index: 0, .. }),
            "{err}"
        );
    }
}
