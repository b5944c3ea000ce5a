//! `meta.properties`: the identity Kafka's `kafka-storage format` writes into each log dir.
//!
//! Version 1 (KRaft) holds `node.id`, `cluster.id` and optionally `directory.id`; version 0
//! (from ZooKeeper days) holds `broker.id` and optionally `cluster.id`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::properties::Properties;
use crate::protocol::codec::Uuid;

pub const FILE_NAME: &str = "meta.properties";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProperties {
    pub version: u8,
    pub cluster_id: Option<String>,
    pub node_id: Option<i32>,
    pub directory_id: Option<Uuid>,
}

/// Why a `meta.properties` could not be used. Names the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaPropertiesError {
    /// The directory was never formatted.
    Missing {
        path: PathBuf,
    },
    Unreadable {
        path: PathBuf,
        error: String,
    },
    Invalid {
        path: PathBuf,
        reason: String,
    },
}

impl fmt::Display for MetaPropertiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaPropertiesError::Missing { path } => write!(
                f,
                "no {FILE_NAME} in {}: the directory is not formatted (run `kraftd format` or \
                 `kafka-storage.sh format` first)",
                path.display()
            ),
            MetaPropertiesError::Unreadable { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            MetaPropertiesError::Invalid { path, reason } => write!(
                f,
                "{} is not a valid {FILE_NAME}: {reason}; it may belong to another tool or be \
                 damaged",
                path.display()
            ),
        }
    }
}

impl std::error::Error for MetaPropertiesError {}

impl MetaProperties {
    /// Reads `<dir>/meta.properties`.
    pub fn read_from_dir(dir: &Path) -> Result<MetaProperties, MetaPropertiesError> {
        let path = dir.join(FILE_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(MetaPropertiesError::Missing {
                    path: dir.to_path_buf(),
                })
            }
            Err(e) => {
                return Err(MetaPropertiesError::Unreadable {
                    path,
                    error: e.to_string(),
                })
            }
        };
        Self::parse(&crate::properties::decode_bytes(&bytes))
            .map_err(|reason| MetaPropertiesError::Invalid { path, reason })
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<MetaProperties, String> {
        let props = Properties::parse(text).map_err(|e| e.to_string())?;
        let version = match props.get("version") {
            Some("0") => 0,
            Some("1") => 1,
            Some(other) => return Err(format!("unsupported version '{other}' (expected 0 or 1)")),
            None => return Err("missing key 'version'".into()),
        };
        let int = |key: &str| -> Result<Option<i32>, String> {
            props
                .get(key)
                .map(|v| {
                    v.trim()
                        .parse::<i32>()
                        .ok()
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| format!("{key} '{v}' is not a non-negative integer"))
                })
                .transpose()
        };
        let cluster_id = props.get("cluster.id").map(|s| s.trim().to_owned());
        let directory_id = props
            .get("directory.id")
            .map(|s| Uuid::parse(s.trim()).map_err(|e| format!("directory.id: {e}")))
            .transpose()?;
        let node_id = if version == 1 {
            let id = int("node.id")?.ok_or("missing key 'node.id' (required at version 1)")?;
            if cluster_id.is_none() {
                return Err("missing key 'cluster.id' (required at version 1)".into());
            }
            Some(id)
        } else {
            int("broker.id")?.or(int("node.id")?)
        };
        Ok(MetaProperties {
            version,
            cluster_id,
            node_id,
            directory_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_kafka_storage_format_writes() {
        let text =
            "#\n#Sun Nov 29 07:50:11 UTC 2026\nnode.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\n\
                    version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n";
        let m = MetaProperties::parse(text).unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.node_id, Some(1));
        assert_eq!(m.cluster_id.as_deref(), Some("MkU3OEVBNTcwNTJENDM2Qk"));
        assert_eq!(
            m.directory_id.unwrap().to_string(),
            "J8aAPcfLQt2bqs1JT_rMgQ"
        );
    }

    #[test]
    fn version_one_requires_node_and_cluster_ids() {
        assert!(MetaProperties::parse("version=1\ncluster.id=x\n")
            .unwrap_err()
            .contains("node.id"));
        assert!(MetaProperties::parse("version=1\nnode.id=1\n")
            .unwrap_err()
            .contains("cluster.id"));
        assert!(MetaProperties::parse("version=7\n")
            .unwrap_err()
            .contains("version"));
        assert!(MetaProperties::parse("node.id=1\n")
            .unwrap_err()
            .contains("version"));
    }

    #[test]
    fn version_zero_takes_broker_id() {
        let m = MetaProperties::parse("version=0\nbroker.id=3\ncluster.id=abc\n").unwrap();
        assert_eq!(m.node_id, Some(3));
    }

    #[test]
    fn a_missing_file_says_to_format() {
        let dir = std::env::temp_dir().join(format!("kraftd-meta-{}", std::process::id()));
        let err = MetaProperties::read_from_dir(&dir).unwrap_err();
        assert!(err.to_string().contains("not formatted"));
    }
}
