//! Opening a formatted metadata log directory the way a Kafka controller does at start-up: take
//! the `.lock`, check `meta.properties` belongs to this node (generating a `directory.id` if the
//! file has none, as Java does), then open `__cluster_metadata-0`.

use std::path::{Path, PathBuf};

use super::core::LogConfig;
use super::error::{LogError, Result};
use super::file_log::{FileLog, PARTITION_DIR_NAME};
use super::lock::DirLock;
use super::meta_properties::{is_reserved_directory_id, MetaProperties};
use crate::protocol::codec::Uuid;

/// An open metadata log directory. The lock is held until this is dropped.
#[derive(Debug)]
pub struct MetadataDir {
    pub path: PathBuf,
    pub meta: MetaProperties,
    /// The raft directory id (the file's `directory.id`).
    pub directory_id: Uuid,
    pub log: FileLog,
    _lock: DirLock,
}

impl MetadataDir {
    pub fn open(dir: &Path, node_id: i32, config: LogConfig) -> Result<MetadataDir> {
        let lock = DirLock::try_lock(dir)?;
        let mut meta = MetaProperties::read_from_dir(dir)
            .map_err(|e| LogError::InvalidState(e.to_string()))?;
        let path = dir.join(super::meta_properties::FILE_NAME);
        if meta.version != 1 {
            return Err(LogError::InvalidState(format!(
                "{} is version {}: a KRaft node needs version 1 (format the directory with \
                 `kafka-storage format` or `kraftd format`)",
                path.display(),
                meta.version
            )));
        }
        if meta.node_id != Some(node_id) {
            return Err(LogError::InvalidState(format!(
                "{} belongs to node {:?}, but this node's node.id is {node_id}",
                path.display(),
                meta.node_id
            )));
        }
        let directory_id = match meta.directory_id {
            Some(id) => id,
            None => {
                let id = random_directory_id();
                tracing::info!("{} has no directory.id; writing {id}", path.display());
                meta.directory_id = Some(id);
                meta.write_to_dir(dir)?;
                id
            }
        };
        let partition = dir.join(PARTITION_DIR_NAME);
        let log = FileLog::open(&partition, config)?;
        Ok(MetadataDir {
            path: dir.to_path_buf(),
            meta,
            directory_id,
            log,
            _lock: lock,
        })
    }
}

impl MetadataDir {
    /// The log and the directory lock, for the node that runs on them (its quorum-state is
    /// beside the log, in `FileLog::dir`). The lock must live as long as the log is in use.
    pub fn into_parts(self) -> (FileLog, DirLock) {
        (self.log, self._lock)
    }
}

/// A random Uuid that Kafka accepts as a directory id.
pub fn random_directory_id() -> Uuid {
    loop {
        let id = Uuid(rand::random());
        if !is_reserved_directory_id(&id) && !id.to_string().starts_with('-') {
            return id;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_a_formatted_dir_and_refuses_others() {
        let dir = crate::log::tests::scratch("metadata-dir");
        let err = MetadataDir::open(&dir, 1, LogConfig::default()).unwrap_err();
        assert!(err.to_string().contains("not formatted"), "{err}");
        MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 1, None)
            .write_to_dir(&dir)
            .unwrap();
        let err = MetadataDir::open(&dir, 2, LogConfig::default()).unwrap_err();
        assert!(err.to_string().contains("belongs to node Some(1)"), "{err}");
        let opened = MetadataDir::open(&dir, 1, LogConfig::default()).unwrap();
        assert_eq!(
            crate::log::storage::Storage::end_offset(opened.log.storage()),
            0
        );
        let written = MetaProperties::read_from_dir(&dir).unwrap();
        assert_eq!(
            written.directory_id,
            Some(opened.directory_id),
            "a generated id is persisted"
        );
        let err = MetadataDir::open(&dir, 1, LogConfig::default()).unwrap_err();
        assert!(err.to_string().contains("failed to acquire lock"), "{err}");
        drop(opened);
        MetadataDir::open(&dir, 1, LogConfig::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
