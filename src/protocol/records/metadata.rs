//! Metadata records: the values of the data records in `__cluster_metadata` (Kafka's
//! `MetadataRecordSerde`, an `AbstractApiMessageSerde`):
//!
//! ```text
//! frame version (unsigned varint, 1) · record type (unsigned varint) · record version (unsigned varint) · body
//! ```
//!
//! Kafka 4.4 writes frame version 1 and accepts only 1: frame version 0 (the KRaft preview in 2.8)
//! is refused ("upgrades from the preview release of KRaft in 2.8 ... are not supported"), as is
//! any other. The frame itself is not "flexible": the flexibility of the body is the record
//! schema's (every metadata record is flexible from version 0). Type and version must fit an
//! int16, and no bytes may follow the body.

use serde_json::Value;

use crate::protocol::codec::{DecodeError, EncodeError, Message, Reader, Writer};
use crate::protocol::messages::*;

/// The frame version Kafka writes and accepts.
pub const METADATA_FRAME_VERSION: u32 = 1;

/// Static facts about one metadata record type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataRecordTypeInfo {
    pub id: i16,
    /// Kafka's `MetadataRecordType` constant, e.g. `FEATURE_LEVEL_RECORD`.
    pub kafka_name: &'static str,
    /// The schema name, e.g. `FeatureLevelRecord`.
    pub schema_name: &'static str,
    pub lowest_version: i16,
    pub highest_version: i16,
}

macro_rules! metadata_records {
    ($($id:literal => $variant:ident($ty:ident) $kafka:literal,)*) => {
        /// Every metadata record type this build knows (Kafka 4.4's `MetadataRecordType`).
        #[derive(Debug, Clone, PartialEq)]
        pub enum MetadataRecord {
            $($variant($ty),)*
        }

        $(impl From<$ty> for MetadataRecord {
            fn from(r: $ty) -> Self {
                MetadataRecord::$variant(r)
            }
        })*

        /// The known record types, by id.
        pub const METADATA_RECORD_TYPES: &[MetadataRecordTypeInfo] = &[
            $(MetadataRecordTypeInfo {
                id: $id,
                kafka_name: $kafka,
                schema_name: <$ty as Message>::NAME,
                lowest_version: <$ty as Message>::LOWEST_VERSION,
                highest_version: <$ty as Message>::HIGHEST_VERSION,
            },)*
        ];

        impl MetadataRecord {
            /// The record type id (the schema's `apiKey`).
            pub fn record_type(&self) -> i16 {
                match self {
                    $(MetadataRecord::$variant(_) => $id,)*
                }
            }

            /// Decodes a body of type `record_type` at `version` (checked by the caller).
            fn decode_body_of(record_type: i16, version: i16, r: &mut Reader<'_>) -> Option<Result<Self, DecodeError>> {
                match record_type {
                    $($id => Some(<$ty as Message>::decode(r, version).map(MetadataRecord::$variant)),)*
                    _ => None,
                }
            }

            /// Encodes the body (no frame) at `version`.
            pub fn encode_body(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
                match self {
                    $(MetadataRecord::$variant(m) => m.encode(w, version),)*
                }
            }

            /// The JSON Kafka's `MetadataJsonConverters.writeJson` writes for the body.
            pub fn to_kafka_json(&self, version: i16) -> Value {
                match self {
                    $(MetadataRecord::$variant(m) => m.to_kafka_json(version),)*
                }
            }
        }
    };
}

metadata_records! {
    0 => RegisterBroker(RegisterBrokerRecord) "REGISTER_BROKER_RECORD",
    1 => UnregisterBroker(UnregisterBrokerRecord) "UNREGISTER_BROKER_RECORD",
    2 => Topic(TopicRecord) "TOPIC_RECORD",
    3 => Partition(PartitionRecord) "PARTITION_RECORD",
    4 => Config(ConfigRecord) "CONFIG_RECORD",
    5 => PartitionChange(PartitionChangeRecord) "PARTITION_CHANGE_RECORD",
    7 => FenceBroker(FenceBrokerRecord) "FENCE_BROKER_RECORD",
    8 => UnfenceBroker(UnfenceBrokerRecord) "UNFENCE_BROKER_RECORD",
    9 => RemoveTopic(RemoveTopicRecord) "REMOVE_TOPIC_RECORD",
    10 => DelegationToken(DelegationTokenRecord) "DELEGATION_TOKEN_RECORD",
    11 => UserScramCredential(UserScramCredentialRecord) "USER_SCRAM_CREDENTIAL_RECORD",
    12 => FeatureLevel(FeatureLevelRecord) "FEATURE_LEVEL_RECORD",
    14 => ClientQuota(ClientQuotaRecord) "CLIENT_QUOTA_RECORD",
    15 => ProducerIds(ProducerIdsRecord) "PRODUCER_IDS_RECORD",
    17 => BrokerRegistrationChange(BrokerRegistrationChangeRecord) "BROKER_REGISTRATION_CHANGE_RECORD",
    18 => AccessControlEntry(AccessControlEntryRecord) "ACCESS_CONTROL_ENTRY_RECORD",
    19 => RemoveAccessControlEntry(RemoveAccessControlEntryRecord) "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
    20 => NoOp(NoOpRecord) "NO_OP_RECORD",
    21 => ZkMigrationState(ZkMigrationStateRecord) "ZK_MIGRATION_STATE_RECORD",
    22 => RemoveUserScramCredential(RemoveUserScramCredentialRecord) "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
    23 => BeginTransaction(BeginTransactionRecord) "BEGIN_TRANSACTION_RECORD",
    24 => EndTransaction(EndTransactionRecord) "END_TRANSACTION_RECORD",
    25 => AbortTransaction(AbortTransactionRecord) "ABORT_TRANSACTION_RECORD",
    26 => RemoveDelegationToken(RemoveDelegationTokenRecord) "REMOVE_DELEGATION_TOKEN_RECORD",
    27 => RegisterController(RegisterControllerRecord) "REGISTER_CONTROLLER_RECORD",
    28 => ClearElr(ClearElrRecord) "CLEAR_ELR_RECORD",
    29 => UnregisterController(UnregisterControllerRecord) "UNREGISTER_CONTROLLER_RECORD",
}

/// Facts about a record type id, if known.
pub fn metadata_record_type(id: i16) -> Option<&'static MetadataRecordTypeInfo> {
    METADATA_RECORD_TYPES.iter().find(|t| t.id == id)
}

impl MetadataRecord {
    pub fn info(&self) -> &'static MetadataRecordTypeInfo {
        metadata_record_type(self.record_type()).expect("every variant is in the table")
    }
    /// Kafka's `MetadataRecordType` name, e.g. `FEATURE_LEVEL_RECORD`.
    pub fn kafka_name(&self) -> &'static str {
        self.info().kafka_name
    }
    /// The schema name, e.g. `FeatureLevelRecord`.
    pub fn schema_name(&self) -> &'static str {
        self.info().schema_name
    }
}

/// Why a metadata record value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataRecordError {
    /// The frame (frame version, type, version) is truncated or a varint is malformed.
    Frame {
        what: &'static str,
        error: DecodeError,
    },
    /// A frame version other than 1.
    UnsupportedFrameVersion {
        frame_version: u32,
    },
    /// The type or version does not fit an int16.
    TooLarge {
        what: &'static str,
        value: u32,
    },
    UnknownType {
        record_type: i16,
        version: i16,
    },
    UnsupportedVersion {
        record_type: i16,
        name: &'static str,
        version: i16,
        lowest: i16,
        highest: i16,
    },
    Body {
        name: &'static str,
        version: i16,
        error: DecodeError,
    },
    TrailingBytes {
        name: &'static str,
        version: i16,
        count: usize,
    },
}

impl std::fmt::Display for MetadataRecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use MetadataRecordError as E;
        match self {
            E::Frame { what, error } => write!(f, "metadata record {what}: {error}"),
            E::UnsupportedFrameVersion { frame_version: 0 } => f.write_str(
                "metadata record frame version 0 (the KRaft preview of Kafka 2.8) is not supported; only 1 is",
            ),
            E::UnsupportedFrameVersion { frame_version } => write!(
                f,
                "unknown metadata record frame version {frame_version} (only 1 is supported)"
            ),
            E::TooLarge { what, value } => write!(f, "metadata record {what} {value} is too large"),
            E::UnknownType {
                record_type,
                version,
            } => write!(f, "unknown metadata record type {record_type} (version {version})"),
            E::UnsupportedVersion {
                record_type,
                name,
                version,
                lowest,
                highest,
            } => write!(
                f,
                "{name} (type {record_type}) version {version} is not supported (versions {lowest}-{highest})"
            ),
            E::Body {
                name,
                version,
                error,
            } => write!(f, "{name} v{version}: {error}"),
            E::TrailingBytes {
                name,
                version,
                count,
            } => write!(f, "{name} v{version}: {count} bytes of garbage after the record"),
        }
    }
}

impl std::error::Error for MetadataRecordError {}

/// A metadata record with the version it is encoded at (Kafka's `ApiMessageAndVersion`).
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRecordAndVersion {
    pub record: MetadataRecord,
    pub version: i16,
}

fn frame_field(r: &mut Reader<'_>, what: &'static str) -> Result<u32, MetadataRecordError> {
    r.unsigned_varint(what)
        .map_err(|error| MetadataRecordError::Frame { what, error })
}

fn short(value: u32, what: &'static str) -> Result<i16, MetadataRecordError> {
    i16::try_from(value).map_err(|_| MetadataRecordError::TooLarge { what, value })
}

impl MetadataRecordAndVersion {
    pub fn new(record: impl Into<MetadataRecord>, version: i16) -> Self {
        MetadataRecordAndVersion {
            record: record.into(),
            version,
        }
    }

    /// Decodes a whole record value (frame and body), as Kafka's `MetadataRecordSerde.read`.
    pub fn decode(value: &[u8]) -> Result<Self, MetadataRecordError> {
        let mut r = Reader::new(value);
        let frame_version = frame_field(&mut r, "frame version")?;
        if frame_version != METADATA_FRAME_VERSION {
            return Err(MetadataRecordError::UnsupportedFrameVersion { frame_version });
        }
        let record_type = short(frame_field(&mut r, "type")?, "type")?;
        let version = short(frame_field(&mut r, "version")?, "version")?;
        let Some(info) = metadata_record_type(record_type) else {
            return Err(MetadataRecordError::UnknownType {
                record_type,
                version,
            });
        };
        if !(info.lowest_version..=info.highest_version).contains(&version) {
            return Err(MetadataRecordError::UnsupportedVersion {
                record_type,
                name: info.schema_name,
                version,
                lowest: info.lowest_version,
                highest: info.highest_version,
            });
        }
        let record = MetadataRecord::decode_body_of(record_type, version, &mut r)
            .expect("known type")
            .map_err(|error| MetadataRecordError::Body {
                name: info.schema_name,
                version,
                error,
            })?;
        if r.remaining() != 0 {
            return Err(MetadataRecordError::TrailingBytes {
                name: info.schema_name,
                version,
                count: r.remaining(),
            });
        }
        Ok(MetadataRecordAndVersion { record, version })
    }

    /// Appends the frame and body, as Kafka writes them.
    pub fn encode_into(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.unsigned_varint(METADATA_FRAME_VERSION);
        w.unsigned_varint(self.record.record_type() as u16 as u32);
        w.unsigned_varint(self.version as u16 as u32);
        self.record.encode_body(w, self.version)
    }

    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::new();
        self.encode_into(&mut w)?;
        Ok(w.into_inner())
    }

    /// The body's JSON as Kafka's `MetadataJsonConverters.writeJson` writes it.
    pub fn to_kafka_json(&self) -> Value {
        self.record.to_kafka_json(self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::{SchemaKind, REGISTRY};

    #[test]
    fn every_generated_metadata_schema_is_dispatched() {
        let generated: Vec<_> = REGISTRY
            .iter()
            .filter(|e| e.kind == SchemaKind::Metadata)
            .map(|e| {
                (
                    e.api_key.unwrap(),
                    e.name,
                    e.lowest_version,
                    e.highest_version,
                )
            })
            .collect();
        let mut ours: Vec<_> = METADATA_RECORD_TYPES
            .iter()
            .map(|t| (t.id, t.schema_name, t.lowest_version, t.highest_version))
            .collect();
        let mut generated = generated;
        generated.sort();
        ours.sort();
        assert_eq!(ours, generated);
    }

    #[test]
    fn feature_level_round_trip_and_json() {
        let rec = MetadataRecordAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 27,
                ..Default::default()
            },
            0,
        );
        let bytes = rec.encode().unwrap();
        assert_eq!(&bytes[..3], &[1, 12, 0]);
        assert_eq!(MetadataRecordAndVersion::decode(&bytes).unwrap(), rec);
        assert_eq!(
            rec.to_kafka_json(),
            serde_json::json!({"name": "metadata.version", "featureLevel": 27})
        );
        assert_eq!(rec.record.kafka_name(), "FEATURE_LEVEL_RECORD");
    }

    #[test]
    fn frame_errors_are_named() {
        use MetadataRecordError as E;
        let d = MetadataRecordAndVersion::decode;
        assert!(matches!(
            d(&[0, 12, 0]),
            Err(E::UnsupportedFrameVersion { frame_version: 0 })
        ));
        assert!(matches!(
            d(&[2, 12, 0]),
            Err(E::UnsupportedFrameVersion { frame_version: 2 })
        ));
        assert!(matches!(
            d(&[1, 6, 0]),
            Err(E::UnknownType { record_type: 6, .. })
        ));
        assert!(matches!(
            d(&[1, 99, 3]),
            Err(E::UnknownType {
                record_type: 99,
                version: 3
            })
        ));
        assert!(matches!(
            d(&[1, 12, 1]),
            Err(E::UnsupportedVersion { version: 1, .. })
        ));
        assert!(matches!(
            d(&[1, 0xff, 0xff, 0x03, 0]),
            Err(E::TooLarge { what: "type", .. })
        ));
        assert!(matches!(d(&[1]), Err(E::Frame { what: "type", .. })));
        assert!(matches!(
            d(&[]),
            Err(E::Frame {
                what: "frame version",
                ..
            })
        ));
        assert!(matches!(d(&[1, 12, 0, 1]), Err(E::Body { .. })));
        let mut ok = MetadataRecordAndVersion::new(NoOpRecord::default(), 0)
            .encode()
            .unwrap();
        ok.push(0);
        assert!(matches!(d(&ok), Err(E::TrailingBytes { count: 1, .. })));
        let msg = d(&[0, 12, 0]).unwrap_err().to_string();
        assert!(msg.contains("frame version 0"), "{msg}");
    }
}
