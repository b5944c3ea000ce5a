//! What a metadata.version lets a controller write: Kafka 4.4's `MetadataVersion` gates, by
//! feature level (read from the 4.4 `kafka-server-common` jar).

use crate::protocol::features::metadata_version_name;

/// Feature levels the gates below compare with.
pub mod level {
    pub const IBP_3_4_IV0: i16 = 8;
    pub const IBP_3_5_IV2: i16 = 11;
    pub const IBP_3_6_IV0: i16 = 12;
    pub const IBP_3_6_IV1: i16 = 13;
    pub const IBP_3_6_IV2: i16 = 14;
    pub const IBP_3_7_IV0: i16 = 15;
    pub const IBP_3_7_IV2: i16 = 17;
    pub const IBP_4_0_IV1: i16 = 23;
    pub const IBP_4_3_IV0: i16 = 30;
    pub const IBP_4_4_IV1: i16 = 32;
    pub const IBP_4_4_IV2: i16 = 33;
}

/// A metadata.version Kafka 4.4 knows, by feature level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetadataVersion(i16);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("metadata.version feature level {0} is not one Kafka 4.4 knows; use a level of its MetadataVersion (3.3-IV3 and later)")]
pub struct UnknownMetadataVersion(pub i16);

impl MetadataVersion {
    pub fn from_level(level: i16) -> Result<MetadataVersion, UnknownMetadataVersion> {
        match metadata_version_name(level) {
            Some(_) => Ok(MetadataVersion(level)),
            None => Err(UnknownMetadataVersion(level)),
        }
    }

    pub fn level(self) -> i16 {
        self.0
    }

    /// The release name, e.g. `4.0-IV3`.
    pub fn name(self) -> &'static str {
        metadata_version_name(self.0).expect("checked when made")
    }

    fn at_least(self, level: i16) -> bool {
        self.0 >= level
    }

    /// KIP-868's metadata transactions (`BeginTransactionRecord` and its kin).
    pub fn is_metadata_transaction_supported(self) -> bool {
        self.at_least(level::IBP_3_6_IV1)
    }

    pub fn is_migration_supported(self) -> bool {
        self.at_least(level::IBP_3_4_IV0)
    }

    /// ACL hosts may be CIDR ranges (`isCidrAclSupported`).
    pub fn is_cidr_acl_supported(self) -> bool {
        self.at_least(level::IBP_4_4_IV1)
    }

    pub fn is_scram_supported(self) -> bool {
        self.at_least(level::IBP_3_5_IV2)
    }

    /// Brokers before 3.6-IV0 needed a new leader epoch whenever an ISR shrank (KAFKA-15021).
    pub fn is_leader_epoch_bump_required_on_isr_shrink(self) -> bool {
        !self.at_least(level::IBP_3_6_IV0)
    }

    pub fn is_delegation_token_supported(self) -> bool {
        self.at_least(level::IBP_3_6_IV2)
    }

    pub fn is_controller_registration_supported(self) -> bool {
        self.at_least(level::IBP_3_7_IV0)
    }

    pub fn is_directory_assignment_supported(self) -> bool {
        self.at_least(level::IBP_3_7_IV2)
    }

    pub fn is_elr_supported(self) -> bool {
        self.at_least(level::IBP_4_0_IV1)
    }

    pub fn is_cordoned_log_dirs_supported(self) -> bool {
        self.at_least(level::IBP_4_3_IV0)
    }

    pub fn is_controller_unregistration_supported(self) -> bool {
        self.at_least(level::IBP_4_4_IV2)
    }

    /// `registerBrokerRecordVersion`: v4 from 4.3-IV0, v3 from 3.7-IV2, v2 from 3.4-IV0, else v1.
    pub fn register_broker_record_version(self) -> i16 {
        if self.is_cordoned_log_dirs_supported() {
            4
        } else if self.is_directory_assignment_supported() {
            3
        } else if self.is_migration_supported() {
            2
        } else {
            1
        }
    }

    /// `partitionRecordVersion` (and `partitionChangeRecordVersion`): v2 from 4.0-IV1, v1 from
    /// 3.7-IV2, else v0.
    pub fn partition_record_version(self) -> i16 {
        if self.is_elr_supported() {
            2
        } else if self.is_directory_assignment_supported() {
            1
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::features::METADATA_VERSIONS;

    fn mv(level: i16) -> MetadataVersion {
        MetadataVersion::from_level(level).unwrap()
    }

    #[test]
    fn record_versions_step_up_at_the_releases_kafka_names() {
        let versions: Vec<(&str, i16, i16)> = METADATA_VERSIONS
            .iter()
            .map(|(name, l)| {
                let v = mv(*l);
                (
                    *name,
                    v.register_broker_record_version(),
                    v.partition_record_version(),
                )
            })
            .collect();
        let at = |name: &str| *versions.iter().find(|(n, ..)| *n == name).unwrap();
        assert_eq!(at("3.3-IV3"), ("3.3-IV3", 1, 0));
        assert_eq!(at("3.4-IV0"), ("3.4-IV0", 2, 0));
        assert_eq!(at("3.7-IV1"), ("3.7-IV1", 2, 0));
        assert_eq!(at("3.7-IV2"), ("3.7-IV2", 3, 1));
        assert_eq!(at("4.0-IV0"), ("4.0-IV0", 3, 1));
        assert_eq!(at("4.0-IV1"), ("4.0-IV1", 3, 2));
        assert_eq!(at("4.2-IV1"), ("4.2-IV1", 3, 2));
        assert_eq!(at("4.3-IV0"), ("4.3-IV0", 4, 2));
        assert_eq!(at("4.4-IV2"), ("4.4-IV2", 4, 2));
    }

    #[test]
    fn only_the_levels_kafka_4_4_knows_are_metadata_versions() {
        assert_eq!(
            MetadataVersion::from_level(6),
            Err(UnknownMetadataVersion(6))
        );
        assert_eq!(
            MetadataVersion::from_level(34),
            Err(UnknownMetadataVersion(34))
        );
        assert_eq!(mv(25).name(), "4.0-IV3");
        assert!(!mv(14).is_controller_registration_supported());
        assert!(mv(15).is_controller_registration_supported());
        assert!(!mv(10).is_scram_supported() && mv(11).is_scram_supported());
        assert!(!mv(13).is_delegation_token_supported() && mv(14).is_delegation_token_supported());
    }
}
