//! `meta.properties`: the identity Kafka's `kafka-storage format` writes into each log dir.
//!
//! Version 1 (KRaft) holds `node.id`, `cluster.id` and optionally `directory.id`; version 0
//! (from ZooKeeper days) holds `broker.id` and optionally `cluster.id`.
//!
//! Writing produces what Java's `Properties.store(writer, "")` writes for the same values: a `#`
//! line, a `#<java.util.Date>` line (kraftd always writes UTC), then the keys in the order Java's
//! hash table yields them for these key names (checked against Kafka 4.4.0: `node.id` or
//! `broker.id`, `directory.id`, `version`, `cluster.id`), `\n` line ends, Java's escaping. The
//! file is replaced atomically (`meta.properties.tmp`, fsync, rename, fsync the directory).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::LogError;
use super::fsutil;
use crate::properties::{Properties, SyntaxError};
use crate::protocol::codec::{Uuid, UuidParseError};

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
        reason: MetaPropertiesInvalid,
    },
}

/// What is wrong with a `meta.properties`'s content (or with one about to be written, by Java's
/// `MetaProperties.Builder` rules). [`MetaPropertiesError::Invalid`] names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaPropertiesInvalid {
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    #[error("unsupported version '{text}' (expected 0 or 1)")]
    UnsupportedVersionText { text: String },
    #[error("unsupported version {version}")]
    UnsupportedVersion { version: u8 },
    #[error("missing key '{key}'")]
    MissingKey { key: &'static str },
    #[error("missing key '{key}' (required at version 1)")]
    MissingV1Key { key: &'static str },
    #[error("version 1 needs node.id and cluster.id")]
    V1NeedsIds,
    #[error("{key} '{value}' is not a non-negative integer")]
    NotANonNegativeInt { key: &'static str, value: String },
    #[error("node id {id} is negative")]
    NegativeNodeId { id: i32 },
    #[error("directory.id: {0}")]
    BadDirectoryId(#[source] UuidParseError),
    #[error("directory.id {id} is a reserved id")]
    ReservedDirectoryId { id: Uuid },
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
    /// Version 1, as `kafka-storage format` writes for KRaft nodes.
    pub fn v1(cluster_id: &str, node_id: i32, directory_id: Option<Uuid>) -> MetaProperties {
        MetaProperties {
            version: 1,
            cluster_id: Some(cluster_id.to_owned()),
            node_id: Some(node_id),
            directory_id,
        }
    }

    /// The file's text as Java writes it, with `now` in the date comment line.
    pub fn to_file_text(&self, now: SystemTime) -> Result<String, MetaPropertiesInvalid> {
        self.check_writable()?;
        let mut entries: Vec<(&str, String)> = Vec::new();
        let id_key = if self.version == 0 {
            "broker.id"
        } else {
            "node.id"
        };
        if let Some(id) = self.node_id {
            entries.push((id_key, id.to_string()));
        }
        if let Some(dir) = self.directory_id {
            entries.push(("directory.id", dir.to_string()));
        }
        entries.push(("version", self.version.to_string()));
        if let Some(cluster) = &self.cluster_id {
            entries.push(("cluster.id", cluster.clone()));
        }
        let mut out = String::from("#\n#");
        out.push_str(&java_date_utc(now));
        out.push('\n');
        for (key, value) in entries {
            out.push_str(&java_escape(key, true));
            out.push('=');
            out.push_str(&java_escape(&value, false));
            out.push('\n');
        }
        Ok(out)
    }

    /// Writes `<dir>/meta.properties` atomically.
    pub fn write_to_dir(&self, dir: &Path) -> Result<(), LogError> {
        let path = dir.join(FILE_NAME);
        let text = self.to_file_text(SystemTime::now()).map_err(|reason| {
            LogError::InvalidState(format!("cannot write {}: {reason}", path.display()))
        })?;
        fsutil::atomic_write(&path, text.as_bytes())
    }

    /// Java's `MetaProperties.Builder.build` rules.
    fn check_writable(&self) -> Result<(), MetaPropertiesInvalid> {
        match self.version {
            0 => {}
            1 => {
                if self.node_id.is_none() || self.cluster_id.is_none() {
                    return Err(MetaPropertiesInvalid::V1NeedsIds);
                }
            }
            version => return Err(MetaPropertiesInvalid::UnsupportedVersion { version }),
        }
        if let Some(id) = self.node_id {
            if id < 0 {
                return Err(MetaPropertiesInvalid::NegativeNodeId { id });
            }
        }
        if let Some(id) = self.directory_id {
            if is_reserved_directory_id(&id) {
                return Err(MetaPropertiesInvalid::ReservedDirectoryId { id });
            }
        }
        Ok(())
    }

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
    pub fn parse(text: &str) -> Result<MetaProperties, MetaPropertiesInvalid> {
        use MetaPropertiesInvalid as E;
        let props = Properties::parse(text)?;
        let version = match props.get("version") {
            Some("0") => 0,
            Some("1") => 1,
            Some(other) => {
                return Err(E::UnsupportedVersionText {
                    text: other.to_owned(),
                })
            }
            None => return Err(E::MissingKey { key: "version" }),
        };
        let int = |key: &'static str| -> Result<Option<i32>, MetaPropertiesInvalid> {
            props
                .get(key)
                .map(|v| {
                    v.trim()
                        .parse::<i32>()
                        .ok()
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| E::NotANonNegativeInt {
                            key,
                            value: v.to_owned(),
                        })
                })
                .transpose()
        };
        let cluster_id = props.get("cluster.id").map(|s| s.trim().to_owned());
        let directory_id = props
            .get("directory.id")
            .map(|s| Uuid::parse(s.trim()).map_err(E::BadDirectoryId))
            .transpose()?;
        if let Some(id) = directory_id.filter(is_reserved_directory_id) {
            return Err(E::ReservedDirectoryId { id });
        }
        let node_id = if version == 1 {
            let id = int("node.id")?.ok_or(E::MissingV1Key { key: "node.id" })?;
            if cluster_id.is_none() {
                return Err(E::MissingV1Key { key: "cluster.id" });
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

/// Kafka's `DirectoryId.reserved`: most significant bits 0 and least significant below 100
/// (UNASSIGNED, LOST, MIGRATING, ...).
pub fn is_reserved_directory_id(id: &Uuid) -> bool {
    id.0[..8] == [0; 8] && u64::from_be_bytes(id.0[8..].try_into().expect("8 bytes")) < 100
}

/// `java.util.Date.toString()` in UTC: `Sun Nov 29 07:50:11 UTC 2026`.
pub fn java_date_utc(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        year
    )
}

/// `java.util.Properties.saveConvert` as `store(Writer, ...)` calls it (no \\u escapes).
fn java_escape(s: &str, is_key: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            ' ' if i == 0 || is_key => out.push_str("\\ "),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_java_writes_for_each_key_set() {
        // Captured from Kafka 4.4.0's MetaProperties.toProperties().store(writer, "").
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_795_942_122); // Sun Nov 29 08:48:42 UTC 2026
        let dir = Uuid::parse("J8aAPcfLQt2bqs1JT_rMgQ").unwrap();
        let cases = [
            (MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 1, Some(dir)),
             "node.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"),
            (MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 1, None),
             "node.id=1\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"),
            (MetaProperties { version: 0, cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qg".into()), node_id: Some(1), directory_id: None },
             "broker.id=1\nversion=0\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"),
            (MetaProperties { version: 0, cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qg".into()), node_id: Some(1), directory_id: Some(dir) },
             "broker.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=0\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"),
            (MetaProperties { version: 0, cluster_id: None, node_id: Some(7), directory_id: None },
             "broker.id=7\nversion=0\n"),
            (MetaProperties { version: 0, cluster_id: Some("abc".into()), node_id: None, directory_id: None },
             "version=0\ncluster.id=abc\n"),
        ];
        for (meta, body) in cases {
            let text = meta.to_file_text(t).unwrap();
            assert_eq!(
                text,
                format!("#\n#Sun Nov 29 08:48:42 UTC 2026\n{body}"),
                "{meta:?}"
            );
            assert_eq!(MetaProperties::parse(&text).unwrap(), meta);
        }
    }

    #[test]
    fn java_dates() {
        let at = |s| java_date_utc(UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(at(951_782_400), "Tue Feb 29 00:00:00 UTC 2000");
        assert_eq!(at(1_731_578_400), "Thu Nov 14 10:00:00 UTC 2024");
    }

    #[test]
    fn escapes_like_java_properties() {
        assert_eq!(
            java_escape("a b=c:d#e!f\\g", true),
            "a\\ b\\=c\\:d\\#e\\!f\\\\g"
        );
        assert_eq!(java_escape(" a b", false), "\\ a b");
        assert_eq!(java_escape("x\ny", false), "x\\ny");
    }

    #[test]
    fn refuses_to_write_invalid_files() {
        let reserved = Uuid::from_u64s(0, 99);
        assert!(MetaProperties::v1("c", 1, Some(reserved))
            .to_file_text(SystemTime::now())
            .is_err());
        assert!(MetaProperties::parse(
            "version=1\nnode.id=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n"
        )
        .unwrap_err()
        .to_string()
        .contains("reserved"));
        let no_node = MetaProperties {
            version: 1,
            cluster_id: Some("c".into()),
            node_id: None,
            directory_id: None,
        };
        assert!(no_node.to_file_text(SystemTime::now()).is_err());
    }

    #[test]
    fn write_to_dir_is_atomic_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("kraftd-meta-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let meta = MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 3, Some(Uuid::from_u64s(7, 7)));
        meta.write_to_dir(&dir).unwrap();
        assert_eq!(MetaProperties::read_from_dir(&dir).unwrap(), meta);
        assert!(!dir.join("meta.properties.tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
            .to_string()
            .contains("node.id"));
        assert!(MetaProperties::parse("version=1\nnode.id=1\n")
            .unwrap_err()
            .to_string()
            .contains("cluster.id"));
        assert!(MetaProperties::parse("version=7\n")
            .unwrap_err()
            .to_string()
            .contains("version"));
        assert!(MetaProperties::parse("node.id=1\n")
            .unwrap_err()
            .to_string()
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
