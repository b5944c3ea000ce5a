//! Kafka record batches (magic v2) and the records inside them: the bytes of
//! `__cluster_metadata-0` segments and snapshots and of Fetch/FetchSnapshot records.
//!
//! - [`batch`]: the 61-byte header and [`BatchView`], a zero-copy view over one batch;
//! - [`split`]: splitting a buffer into consecutive batches, reporting a torn or corrupt tail;
//! - [`record`]: the records of a batch ([`Records`], [`Record`]), decompressed if needed;
//! - [`compression`]: bounded gzip/snappy/lz4/zstd decompression ([`ReadLimits`]);
//! - [`builder`]: [`BatchBuilder`], writing uncompressed batches exactly as Kafka does;
//! - [`control`]: control records (leader change, snapshot header/footer, kraft.version, voters,
//!   transaction markers);
//! - [`metadata`]: the framing of metadata records and [`MetadataRecord`], one variant per type.
//!
//! Reading never panics and never allocates from a count beyond the bytes present; every error
//! says what was wrong and at which byte.
//!
//! ```
//! use kraftd::protocol::records::{split_batches, BatchBuilder, MetadataRecordAndVersion};
//! use kraftd::protocol::messages::FeatureLevelRecord;
//!
//! let mut b = BatchBuilder::new(0).partition_leader_epoch(1);
//! let rec = MetadataRecordAndVersion::new(
//!     FeatureLevelRecord { name: "metadata.version".into(), feature_level: 27, ..Default::default() },
//!     0,
//! );
//! b.append_metadata(1_700_000_000_000, &rec).unwrap();
//! let bytes = b.build().unwrap();
//!
//! let split = split_batches(&bytes);
//! assert!(split.end.is_clean());
//! let batch = split.batches[0];
//! batch.validate().unwrap();
//! let records = batch.records().unwrap();
//! for r in records.iter() {
//!     let r = r.unwrap();
//!     let decoded = MetadataRecordAndVersion::decode(r.value.unwrap()).unwrap();
//!     assert_eq!(decoded, rec);
//! }
//! ```

/// A log offset: the position of a record in `__cluster_metadata-0`.
pub type Offset = i64;

pub mod batch;
pub mod builder;
pub mod compression;
pub mod control;
pub mod error;
mod lz4;
pub mod metadata;
pub mod record;
pub mod split;

#[cfg(test)]
mod tests;

pub use batch::{
    crc32c, Attributes, BatchView, Compression, TimestampType, BATCH_HEADER_SIZE, LOG_OVERHEAD,
    MAGIC_V2, MIN_BATCH_LENGTH,
};
pub use builder::BatchBuilder;
pub use compression::{decompress, ReadLimits, DEFAULT_MAX_DECOMPRESSED_BYTES};
pub use control::{ControlKey, ControlRecord, ControlRecordError, ControlRecordType, EndTxnMarker};
pub use error::{BuildError, ErrorKind, Location, RecordError, RecordsError};
pub use metadata::{
    metadata_record_type, MetadataRecord, MetadataRecordAndVersion, MetadataRecordError,
    MetadataRecordTypeInfo, METADATA_FRAME_VERSION, METADATA_RECORD_TYPES,
};
pub use record::{Record, RecordHeader, RecordIter, Records};
pub use split::{batches, split_batches, BatchIter, Split, SplitEnd};

/// The largest record batch of the metadata log: Kafka's `KafkaRaftClient.MAX_BATCH_SIZE_BYTES`
/// (also its `MAX_FETCH_SIZE_BYTES`) and the default of
/// `internal.metadata.max.batch.size.in.bytes` (8 MiB).
pub const MAX_BATCH_SIZE_BYTES: usize = 8 << 20;
