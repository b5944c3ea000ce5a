//! A snapshot is the image, not the log: the records that rebuild a [`MetadataImage`], as Kafka
//! 4.4's `MetadataImage.write(ImageWriter, ImageWriterOptions)` writes them.
//!
//! - Order: the parts in `MetadataImage.write`'s order, each part's entries as its `write` emits
//!   them (see [`SnapshotRecords`]).
//! - Versions: what the finalized metadata.version allows (`registerBrokerRecordVersion`,
//!   `partitionRecordVersion`, ...), with ELR only when eligible.leader.replicas.version is on,
//!   as Java's `SnapshotEmitter` sets its options from the image.
//! - Loss: image content the version cannot hold is left out and reported as a [`Loss`].
//!
//! Loading is [`SnapshotLoad`]: replay over the empty image.

mod load;
mod loss;
mod records;
mod stream;

#[cfg(test)]
mod tests;

pub use load::SnapshotLoad;
pub use loss::{Loss, Lost};
pub use stream::SnapshotRecords;

use super::metadata_version::{MetadataVersion, UnknownMetadataVersion};
use super::MetadataImage;

/// The feature whose level 1 turns ELR on (`EligibleLeaderReplicasVersion`).
pub const ELR_FEATURE: &str = "eligible.leader.replicas.version";

/// Kafka's `ImageWriterOptions`: the version to write at and whether ELR is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotOptions {
    pub metadata_version: MetadataVersion,
    /// `FeaturesImage.isElrEnabled`: eligible.leader.replicas.version ≥ 1.
    pub elr_enabled: bool,
}

/// Why an image cannot be written as a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("the image has no finalized metadata.version, so nothing says which record versions a snapshot of it may use; snapshot only after the bootstrap FeatureLevelRecord has been replayed")]
    NoMetadataVersion,
    #[error("cannot snapshot the image: {0}")]
    UnknownMetadataVersion(#[from] UnknownMetadataVersion),
}

impl SnapshotOptions {
    /// The options Java's `SnapshotEmitter` writes an image with: its own metadata.version
    /// (`metadataVersionOrThrow`) and its own ELR feature.
    pub fn for_image(image: &MetadataImage) -> Result<SnapshotOptions, SnapshotError> {
        let level = image
            .features
            .metadata_version()
            .ok_or(SnapshotError::NoMetadataVersion)?;
        Ok(SnapshotOptions {
            metadata_version: MetadataVersion::from_level(level)?,
            elr_enabled: image
                .features
                .levels
                .get(ELR_FEATURE)
                .is_some_and(|l| *l >= 1),
        })
    }
}

impl MetadataImage {
    /// The image's snapshot records, at its own metadata.version.
    pub fn snapshot_records(&self) -> Result<SnapshotRecords, SnapshotError> {
        Ok(self.snapshot_records_with(SnapshotOptions::for_image(self)?))
    }

    /// The image's snapshot records at `options`, e.g. a lower metadata.version (whatever that
    /// version cannot hold is reported by [`SnapshotRecords::losses`]).
    pub fn snapshot_records_with(&self, options: SnapshotOptions) -> SnapshotRecords {
        SnapshotRecords::new(self.clone(), options)
    }
}
