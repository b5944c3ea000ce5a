//! Loading a snapshot a batch at a time: its records replayed over the empty image, as Java's
//! loader does (`MetadataDelta` over `MetadataImage.EMPTY`), so that a large snapshot is never
//! held whole. [`crate::controller::Controller::finish_snapshot_load`] then starts over from it.

use crate::controller::error::{Refusal, ReplayError};
use crate::controller::MetadataImage;
use crate::protocol::records::{MetadataRecordAndVersion, Offset};

/// A snapshot being loaded. Every refusal names the snapshot's last offset: a snapshot's
/// records have no offsets of their own.
#[derive(Debug, Clone, Default)]
pub struct SnapshotLoad {
    pub(crate) last_offset: Offset,
    pub(crate) image: MetadataImage,
    /// Records loaded so far.
    pub(crate) records: u64,
}

impl SnapshotLoad {
    /// A load of the snapshot whose last contained offset is `last_offset` (end offset − 1).
    pub fn new(last_offset: Offset) -> SnapshotLoad {
        SnapshotLoad {
            last_offset,
            image: MetadataImage::default(),
            records: 0,
        }
    }

    /// Decodes and applies one record value. Transaction markers never appear in snapshots
    /// and are ignored, as the image ignores them.
    pub fn replay_value(&mut self, value: &[u8]) -> Result<(), ReplayError> {
        let decoded = MetadataRecordAndVersion::decode(value)
            .map_err(|e| Refusal::Undecodable(e).at(self.last_offset))?;
        self.records += 1;
        self.image
            .replay(&decoded.record)
            .map_err(|r| r.at(self.last_offset))
    }

    /// The image loaded so far.
    pub fn image(&self) -> &MetadataImage {
        &self.image
    }
}
