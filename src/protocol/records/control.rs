//! Control records: the records of a control batch (attribute bit 5).
//!
//! The key is Kafka's `ControlRecordTypeSchema`: int16 version (0) and int16 type. Readers, like
//! Kafka's `ControlRecordType.parse`, accept any non-negative key version and ignore key bytes
//! after the type. The value depends on the type:
//!
//! | type | name | value |
//! | --- | --- | --- |
//! | 0 | ABORT | int16 version (0) + int32 coordinator epoch (`EndTxnMarker` v0) |
//! | 1 | COMMIT | same |
//! | 2 | LEADER_CHANGE | `LeaderChangeMessage` at schema version 0 |
//! | 3 | SNAPSHOT_HEADER | `SnapshotHeaderRecord` v0 |
//! | 4 | SNAPSHOT_FOOTER | `SnapshotFooterRecord` v0 |
//! | 5 | KRAFT_VERSION | `KRaftVersionRecord` v0 |
//! | 6 | KRAFT_VOTERS | `VotersRecord` v0 |
//!
//! Kafka 4.4 writes and parses every KRaft control value at schema version 0 with no version
//! prefix (`ControlRecordUtils`); the struct's own `Version` field is data. Like Kafka, bytes after
//! the value are ignored when reading.

use serde_json::Value;

use crate::protocol::codec::{DecodeError, EncodeError, Message, Reader, Writer};
use crate::protocol::messages::{
    KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
};

/// The control record key version Kafka writes.
pub const CONTROL_KEY_VERSION: i16 = 0;
/// The schema version of the KRaft control values Kafka writes and reads.
pub const CONTROL_VALUE_VERSION: i16 = 0;

/// Kafka's `ControlRecordType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KRaftVersion,
    KRaftVoters,
}

impl ControlRecordType {
    pub const ALL: [ControlRecordType; 7] = [
        ControlRecordType::Abort,
        ControlRecordType::Commit,
        ControlRecordType::LeaderChange,
        ControlRecordType::SnapshotHeader,
        ControlRecordType::SnapshotFooter,
        ControlRecordType::KRaftVersion,
        ControlRecordType::KRaftVoters,
    ];

    pub fn id(self) -> i16 {
        self as i16
    }

    pub fn from_id(id: i16) -> Option<ControlRecordType> {
        usize::try_from(id)
            .ok()
            .and_then(|i| ControlRecordType::ALL.get(i).copied())
    }

    /// Kafka's enum constant name.
    pub fn name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
            ControlRecordType::LeaderChange => "LEADER_CHANGE",
            ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlRecordType::KRaftVersion => "KRAFT_VERSION",
            ControlRecordType::KRaftVoters => "KRAFT_VOTERS",
        }
    }

    /// The 4-byte key Kafka writes for this type.
    pub fn key(self) -> [u8; 4] {
        let mut k = [0u8; 4];
        k[..2].copy_from_slice(&CONTROL_KEY_VERSION.to_be_bytes());
        k[2..].copy_from_slice(&self.id().to_be_bytes());
        k
    }
}

/// A parsed control record key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlKey {
    pub version: i16,
    pub type_id: i16,
}

impl ControlKey {
    /// Parses a key as Kafka does: at least 4 bytes, a non-negative version; later bytes ignored.
    pub fn parse(key: Option<&[u8]>) -> Result<ControlKey, ControlRecordError> {
        let key = key.ok_or(ControlRecordError::NullKey)?;
        if key.len() < 4 {
            return Err(ControlRecordError::KeyTooShort { size: key.len() });
        }
        let version = i16::from_be_bytes([key[0], key[1]]);
        if version < 0 {
            return Err(ControlRecordError::BadKeyVersion { version });
        }
        Ok(ControlKey {
            version,
            type_id: i16::from_be_bytes([key[2], key[3]]),
        })
    }

    pub fn record_type(&self) -> Option<ControlRecordType> {
        ControlRecordType::from_id(self.type_id)
    }
}

/// The value of an ABORT or COMMIT marker (Kafka's `EndTransactionMarker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EndTxnMarker {
    /// The value's version prefix (0; Kafka parses newer ones as 0).
    pub version: i16,
    pub coordinator_epoch: i32,
}

/// A decoded control record.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRecord {
    Abort(EndTxnMarker),
    Commit(EndTxnMarker),
    LeaderChange(LeaderChangeMessage),
    SnapshotHeader(SnapshotHeaderRecord),
    SnapshotFooter(SnapshotFooterRecord),
    KRaftVersion(KRaftVersionRecord),
    KRaftVoters(VotersRecord),
}

/// Why a control record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlRecordError {
    NullKey,
    KeyTooShort {
        size: usize,
    },
    BadKeyVersion {
        version: i16,
    },
    UnknownType {
        type_id: i16,
    },
    NullValue {
        record_type: ControlRecordType,
    },
    BadMarkerVersion {
        version: i16,
    },
    Value {
        record_type: ControlRecordType,
        error: DecodeError,
    },
}

impl std::fmt::Display for ControlRecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlRecordError::NullKey => f.write_str("control record with a null key"),
            ControlRecordError::KeyTooShort { size } => {
                write!(
                    f,
                    "control record key of {size} bytes (at least 4 expected)"
                )
            }
            ControlRecordError::BadKeyVersion { version } => {
                write!(f, "invalid control record key version {version}")
            }
            ControlRecordError::UnknownType { type_id } => {
                write!(f, "unknown control record type {type_id}")
            }
            ControlRecordError::NullValue { record_type } => {
                write!(f, "{} control record with a null value", record_type.name())
            }
            ControlRecordError::BadMarkerVersion { version } => {
                write!(f, "invalid end transaction marker version {version}")
            }
            ControlRecordError::Value { record_type, error } => {
                write!(f, "{} control record value: {error}", record_type.name())
            }
        }
    }
}

impl std::error::Error for ControlRecordError {}

fn parse<M: Message>(
    record_type: ControlRecordType,
    value: &[u8],
) -> Result<M, ControlRecordError> {
    // Kafka reads at version 0 and ignores trailing bytes.
    M::decode(&mut Reader::new(value), CONTROL_VALUE_VERSION)
        .map_err(|error| ControlRecordError::Value { record_type, error })
}

impl ControlRecord {
    /// Decodes a control record from its key and value.
    pub fn decode(
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<ControlRecord, ControlRecordError> {
        let key = ControlKey::parse(key)?;
        let record_type = key.record_type().ok_or(ControlRecordError::UnknownType {
            type_id: key.type_id,
        })?;
        let value = value.ok_or(ControlRecordError::NullValue { record_type })?;
        use ControlRecordType as T;
        Ok(match record_type {
            T::Abort | T::Commit => {
                let mut r = Reader::new(value);
                let err = |error| ControlRecordError::Value { record_type, error };
                let version = r.i16("EndTxnMarker version").map_err(err)?;
                if version < 0 {
                    return Err(ControlRecordError::BadMarkerVersion { version });
                }
                let coordinator_epoch = r.i32("EndTxnMarker.CoordinatorEpoch").map_err(err)?;
                let marker = EndTxnMarker {
                    version,
                    coordinator_epoch,
                };
                if record_type == T::Abort {
                    ControlRecord::Abort(marker)
                } else {
                    ControlRecord::Commit(marker)
                }
            }
            T::LeaderChange => ControlRecord::LeaderChange(parse(record_type, value)?),
            T::SnapshotHeader => ControlRecord::SnapshotHeader(parse(record_type, value)?),
            T::SnapshotFooter => ControlRecord::SnapshotFooter(parse(record_type, value)?),
            T::KRaftVersion => ControlRecord::KRaftVersion(parse(record_type, value)?),
            T::KRaftVoters => ControlRecord::KRaftVoters(parse(record_type, value)?),
        })
    }

    pub fn record_type(&self) -> ControlRecordType {
        match self {
            ControlRecord::Abort(_) => ControlRecordType::Abort,
            ControlRecord::Commit(_) => ControlRecordType::Commit,
            ControlRecord::LeaderChange(_) => ControlRecordType::LeaderChange,
            ControlRecord::SnapshotHeader(_) => ControlRecordType::SnapshotHeader,
            ControlRecord::SnapshotFooter(_) => ControlRecordType::SnapshotFooter,
            ControlRecord::KRaftVersion(_) => ControlRecordType::KRaftVersion,
            ControlRecord::KRaftVoters(_) => ControlRecordType::KRaftVoters,
        }
    }

    /// The key Kafka writes: version 0 and the type.
    pub fn key_bytes(&self) -> [u8; 4] {
        self.record_type().key()
    }

    /// The value as Kafka writes it.
    pub fn value_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let v = CONTROL_VALUE_VERSION;
        match self {
            ControlRecord::Abort(m) | ControlRecord::Commit(m) => {
                let mut w = Writer::new();
                w.i16(m.version);
                w.i32(m.coordinator_epoch);
                Ok(w.into_inner())
            }
            ControlRecord::LeaderChange(m) => m.encode_to_vec(v),
            ControlRecord::SnapshotHeader(m) => m.encode_to_vec(v),
            ControlRecord::SnapshotFooter(m) => m.encode_to_vec(v),
            ControlRecord::KRaftVersion(m) => m.encode_to_vec(v),
            ControlRecord::KRaftVoters(m) => m.encode_to_vec(v),
        }
    }

    /// The JSON Kafka's generated converter writes for the value (at version 0); for markers,
    /// `{"coordinatorEpoch": N}` as `EndTxnMarkerJsonConverter` writes.
    pub fn to_kafka_json(&self) -> Value {
        let v = CONTROL_VALUE_VERSION;
        match self {
            ControlRecord::Abort(m) | ControlRecord::Commit(m) => {
                serde_json::json!({ "coordinatorEpoch": m.coordinator_epoch })
            }
            ControlRecord::LeaderChange(m) => m.to_kafka_json(v),
            ControlRecord::SnapshotHeader(m) => m.to_kafka_json(v),
            ControlRecord::SnapshotFooter(m) => m.to_kafka_json(v),
            ControlRecord::KRaftVersion(m) => m.to_kafka_json(v),
            ControlRecord::KRaftVoters(m) => m.to_kafka_json(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_match_kafka_ids_and_names() {
        let expected = [
            (0, "ABORT"),
            (1, "COMMIT"),
            (2, "LEADER_CHANGE"),
            (3, "SNAPSHOT_HEADER"),
            (4, "SNAPSHOT_FOOTER"),
            (5, "KRAFT_VERSION"),
            (6, "KRAFT_VOTERS"),
        ];
        for (t, (id, name)) in ControlRecordType::ALL.iter().zip(expected) {
            assert_eq!((t.id(), t.name()), (id, name));
            assert_eq!(ControlRecordType::from_id(id), Some(*t));
        }
        assert_eq!(ControlRecordType::from_id(7), None);
        assert_eq!(ControlRecordType::from_id(-1), None);
    }

    #[test]
    fn keys_are_parsed_like_kafka() {
        assert_eq!(
            ControlKey::parse(Some(&[0, 3, 0, 5, 9, 9])).unwrap(),
            ControlKey {
                version: 3,
                type_id: 5
            }
        );
        assert_eq!(
            ControlKey::parse(Some(&[0, 0, 0])),
            Err(ControlRecordError::KeyTooShort { size: 3 })
        );
        assert_eq!(
            ControlKey::parse(Some(&[0xff, 0xff, 0, 2])),
            Err(ControlRecordError::BadKeyVersion { version: -1 })
        );
        assert_eq!(ControlKey::parse(None), Err(ControlRecordError::NullKey));
        assert_eq!(
            ControlRecord::decode(Some(&[0, 0, 0, 9]), Some(&[])),
            Err(ControlRecordError::UnknownType { type_id: 9 })
        );
    }

    #[test]
    fn leader_change_round_trips_and_ignores_trailing_bytes() {
        let value = [
            0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 3, 0, 0, 0, 1, 0, 0,
            0, 0, 2, 0, 0,
        ];
        let rec = ControlRecord::decode(Some(&[0, 0, 0, 2]), Some(&value)).unwrap();
        let ControlRecord::LeaderChange(m) = &rec else {
            panic!("{rec:?}")
        };
        assert_eq!(m.leader_id, 1);
        assert_eq!(m.voters.len(), 3);
        assert_eq!(rec.value_bytes().unwrap(), value);
        let mut longer = value.to_vec();
        longer.push(7);
        assert_eq!(
            ControlRecord::decode(Some(&[0, 0, 0, 2]), Some(&longer)),
            Ok(rec)
        );
    }

    #[test]
    fn markers() {
        let rec = ControlRecord::decode(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 17])).unwrap();
        assert_eq!(
            rec,
            ControlRecord::Commit(EndTxnMarker {
                version: 0,
                coordinator_epoch: 17
            })
        );
        assert_eq!(rec.value_bytes().unwrap(), [0, 0, 0, 0, 0, 17]);
        assert_eq!(
            rec.to_kafka_json(),
            serde_json::json!({"coordinatorEpoch": 17})
        );
        assert!(ControlRecord::decode(Some(&[0, 0, 0, 0]), Some(&[0, 0, 0])).is_err());
        assert!(ControlRecord::decode(Some(&[0, 0, 0, 0]), None).is_err());
    }
}
