//! `partition.metadata`: the topic id of the partition directory (Kafka's
//! `PartitionMetadataFile`). For `__cluster_metadata-0` it is always Kafka's reserved metadata
//! topic id, `AAAAAAAAAAAAAAAAAAAAAQ` (Uuid 1). Exactly `version: 0\ntopic_id: <id>`, no
//! trailing newline (checked against Kafka 4.4.0).

use std::path::Path;

use super::error::{LogError, Result};
use super::fsutil;
use crate::protocol::codec::{Uuid, UuidParseError};

pub const FILE_NAME: &str = "partition.metadata";

/// The metadata topic's id (Kafka's `Uuid.METADATA_TOPIC_ID`).
pub const METADATA_TOPIC_ID: Uuid = Uuid::ONE;

pub fn to_text(topic_id: &Uuid) -> String {
    format!("version: 0\ntopic_id: {topic_id}")
}

/// Why a `partition.metadata` does not hold what Java writes. `ensure` names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionMetadataError {
    #[error("the file is empty")]
    Empty,
    #[error("unrecognised version line '{line}'")]
    UnrecognisedVersion { line: String },
    #[error("missing the topic_id line")]
    MissingTopicId,
    #[error("malformed topic_id line '{line}'")]
    MalformedTopicId { line: String },
    #[error(transparent)]
    BadTopicId(#[from] UuidParseError),
}

/// Parses the file as Java does: a `version: 0` line and a `topic_id: <uuid>` line.
pub fn parse(text: &str) -> Result<Uuid, PartitionMetadataError> {
    let mut lines = text.lines();
    let version = lines.next().ok_or(PartitionMetadataError::Empty)?;
    match version.split_once(':') {
        Some(("version", v)) if v.trim() == "0" => {}
        _ => {
            return Err(PartitionMetadataError::UnrecognisedVersion {
                line: version.to_owned(),
            })
        }
    }
    let topic = lines.next().ok_or(PartitionMetadataError::MissingTopicId)?;
    match topic.split_once(':') {
        Some(("topic_id", id)) => Ok(Uuid::parse(id.trim())?),
        _ => Err(PartitionMetadataError::MalformedTopicId {
            line: topic.to_owned(),
        }),
    }
}

/// Checks `<partition_dir>/partition.metadata` holds `topic_id`, writing it if absent.
pub fn ensure(partition_dir: &Path, topic_id: &Uuid) -> Result<()> {
    let path = partition_dir.join(FILE_NAME);
    match fsutil::read_if_exists(&path)? {
        None => fsutil::atomic_write(&path, to_text(topic_id).as_bytes()),
        Some(bytes) => {
            let found = parse(&String::from_utf8_lossy(&bytes))
                .map_err(|reason| LogError::corrupt(&path, None, reason.to_string()))?;
            if found != *topic_id {
                return Err(LogError::corrupt(
                    &path,
                    None,
                    format!("topic id {found} does not match the metadata topic's {topic_id}"),
                ));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javas_bytes_and_checks() {
        assert_eq!(
            to_text(&METADATA_TOPIC_ID),
            "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
        );
        assert_eq!(
            parse("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").unwrap(),
            METADATA_TOPIC_ID
        );
        assert!(parse("version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").is_err());
        let dir = std::env::temp_dir().join(format!("kraftd-pm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        ensure(&dir, &METADATA_TOPIC_ID).unwrap();
        ensure(&dir, &METADATA_TOPIC_ID).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(FILE_NAME)).unwrap(),
            "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
        );
        let err = ensure(&dir, &Uuid::from_u64s(1, 2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("partition.metadata"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
