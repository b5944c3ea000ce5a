//! What a new active controller writes before anything else (Kafka 4.4's
//! `ActivationRecordsGenerator`), decided from the log it replayed:
//!
//! * **No metadata.version yet** (an empty log, or one holding only a bootstrap transaction a
//!   failed leader left open): the bootstrap records, in one batch of the leader's epoch:
//!   1. `AbortTransactionRecord("Controller failover")`, if a transaction is open;
//!   2. `BeginTransactionRecord("Bootstrap records")`, at a metadata.version with transactions
//!      (3.6-IV1 and later);
//!   3. every record of the bootstrap checkpoint (`0-0.checkpoint`), byte for byte: the
//!      `FeatureLevelRecord`s that `kafka-storage format` chose, `metadata.version` first;
//!   4. with `eligible.leader.replicas.version` >= 1, the cluster-wide `min.insync.replicas`
//!      (`ConfigRecord`, resource type BROKER, empty name) from the controller's configuration;
//!   5. `EndTransactionRecord`, if it began one.
//! * **A metadata.version**: nothing, unless a transaction is open (a Java leader that wrote a
//!   large non-atomic result across batches and failed between them): then
//!   `AbortTransactionRecord("Controller failover")`, which reverts it.
//!
//! The node reads the log (the bootstrap checkpoint's records); this decides.

use super::metadata_version::MetadataVersion;
use super::snapshot::ELR_FEATURE;
use super::OpenTransaction;
use crate::protocol::features::METADATA_VERSION;
use crate::protocol::messages::{
    AbortTransactionRecord, BeginTransactionRecord, ConfigRecord, EndTransactionRecord,
    FeatureLevelRecord,
};
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion, MetadataRecordError};

/// Kafka's `ConfigResource.Type.BROKER`.
const BROKER_RESOURCE: i8 = 4;
/// The reason Kafka's activation gives the transactions it aborts.
const FAILOVER: &str = "Controller failover";

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
    #[error(
        "the bootstrap checkpoint has no valid metadata.version record; format the directory again"
    )]
    NoBootstrapMetadataVersion,
    #[error("a metadata transaction is open since offset {begun_at}, but metadata.version {level} has no transactions to abort it with; the log was written by something other than Kafka: restore it from a backup")]
    TransactionWithoutSupport { begun_at: i64, level: i16 },
}

/// What the log a new leader replayed holds, as activation needs it.
#[derive(Debug, Clone, Copy)]
pub struct ReplayedLog {
    /// The finalized metadata.version (`None`: Kafka's "empty log").
    pub metadata_version: Option<i16>,
    pub open_transaction: Option<OpenTransaction>,
}

/// The activation records' values (empty: nothing to write). `bootstrap` gives the bootstrap
/// checkpoint's record values (`None`: the directory has none); it is read only for an empty
/// log.
pub fn activation_records(
    log: ReplayedLog,
    bootstrap: impl FnOnce() -> Option<Vec<Vec<u8>>>,
    min_insync_replicas: u32,
) -> Result<Vec<Vec<u8>>, ActivationError> {
    let abort = || {
        encode(MetadataRecordAndVersion::new(
            AbortTransactionRecord {
                reason: Some(FAILOVER.into()),
                ..Default::default()
            },
            0,
        ))
    };
    let supports_transactions = |level: i16, open: Option<OpenTransaction>| {
        let supported = MetadataVersion::from_level(level)
            .is_ok_and(MetadataVersion::is_metadata_transaction_supported);
        match open {
            Some(t) if !supported => Err(ActivationError::TransactionWithoutSupport {
                begun_at: t.begun_at,
                level,
            }),
            _ => Ok(supported),
        }
    };
    if let Some(level) = log.metadata_version {
        return match log.open_transaction {
            None => Ok(Vec::new()),
            Some(open) => {
                supports_transactions(level, Some(open))?;
                Ok(vec![abort()])
            }
        };
    }
    let bootstrap = bootstrap().ok_or(ActivationError::NoBootstrapCheckpoint)?;
    let mut features = Vec::new();
    let mut decoded = Vec::new();
    for (index, value) in bootstrap.into_iter().enumerate() {
        let record = MetadataRecordAndVersion::decode(&value)
            .map_err(|source| ActivationError::Undecodable { index, source })?;
        if let MetadataRecord::FeatureLevel(FeatureLevelRecord {
            name,
            feature_level,
            ..
        }) = &record.record
        {
            features.push((name.clone(), *feature_level));
        }
        decoded.push(value);
    }
    let level_of = |feature: &str| {
        features
            .iter()
            .find(|(name, _)| name == feature)
            .map(|(_, level)| *level)
    };
    let level = level_of(METADATA_VERSION).ok_or(ActivationError::NoBootstrapMetadataVersion)?;
    let transaction = supports_transactions(level, log.open_transaction)?;
    let mut out = Vec::new();
    if log.open_transaction.is_some() {
        out.push(abort());
    }
    if transaction {
        out.push(encode(MetadataRecordAndVersion::new(
            BeginTransactionRecord {
                name: Some("Bootstrap records".into()),
                ..Default::default()
            },
            0,
        )));
    }
    out.extend(decoded);
    if level_of(ELR_FEATURE).unwrap_or(0) >= 1 {
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
    if transaction {
        out.push(encode(MetadataRecordAndVersion::new(
            EndTransactionRecord::default(),
            0,
        )));
    }
    Ok(out)
}

fn encode(r: MetadataRecordAndVersion) -> Vec<u8> {
    r.encode().expect("activation records encode")
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: ReplayedLog = ReplayedLog {
        metadata_version: None,
        open_transaction: None,
    };

    fn open_at(begun_at: i64) -> Option<OpenTransaction> {
        Some(OpenTransaction {
            begun_at,
            revert_to: begun_at - 1,
        })
    }

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
        let records = activation_records(EMPTY, || Some(bootstrap.clone()), 2).unwrap();
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
        let records =
            activation_records(EMPTY, || Some(vec![feature("metadata.version", 20)]), 1).unwrap();
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
        let err = activation_records(EMPTY, || None, 1).unwrap_err();
        assert!(matches!(err, ActivationError::NoBootstrapCheckpoint));
        assert!(err.to_string().contains("bootstrap checkpoint"), "{err}");
        let err = activation_records(EMPTY, || Some(vec![vec![1, 200, 7]]), 1).unwrap_err();
        assert!(
            matches!(err, ActivationError::Undecodable { index: 0, .. }),
            "{err}"
        );
    }

    #[test]
    fn a_bootstrap_transaction_left_open_is_aborted_and_the_bootstrap_written_again() {
        let log = ReplayedLog {
            metadata_version: None,
            open_transaction: open_at(1),
        };
        let bootstrap = vec![feature("metadata.version", 33)];
        let records = activation_records(log, || Some(bootstrap), 1).unwrap();
        assert_eq!(
            names(&records),
            [
                "AbortTransactionRecord",
                "BeginTransactionRecord",
                "FeatureLevel metadata.version=33",
                "EndTransactionRecord"
            ]
        );
    }

    #[test]
    fn a_log_with_metadata_gets_only_the_abort_of_an_open_transaction() {
        let mut log = ReplayedLog {
            metadata_version: Some(33),
            open_transaction: None,
        };
        let never = || -> Option<Vec<Vec<u8>>> { panic!("the bootstrap is not read") };
        assert!(activation_records(log, never, 1).unwrap().is_empty());
        log.open_transaction = open_at(40);
        let records = activation_records(log, never, 1).unwrap();
        assert_eq!(names(&records), ["AbortTransactionRecord"]);
        let MetadataRecord::AbortTransaction(abort) = MetadataRecordAndVersion::decode(&records[0])
            .unwrap()
            .record
        else {
            panic!("an abort");
        };
        assert_eq!(abort.reason.as_deref(), Some("Controller failover"));
    }

    #[test]
    fn before_3_6_iv1_the_bootstrap_goes_without_a_transaction() {
        let bootstrap = vec![feature("metadata.version", 12)];
        let records = activation_records(EMPTY, || Some(bootstrap), 1).unwrap();
        assert_eq!(names(&records), ["FeatureLevel metadata.version=12"]);
        let log = ReplayedLog {
            metadata_version: Some(12),
            open_transaction: open_at(3),
        };
        let err = activation_records(log, || None, 1).unwrap_err();
        assert!(
            matches!(
                err,
                ActivationError::TransactionWithoutSupport {
                    begun_at: 3,
                    level: 12
                }
            ),
            "{err}"
        );
    }
}
