//! The v2 record batch header (Kafka's `DefaultRecordBatch`) and a zero-copy view over a batch.
//!
//! ```text
//! offset size field                    offset size field
//!  0     8    baseOffset               27     8    baseTimestamp
//!  8     4    batchLength (= size-12)  35     8    maxTimestamp
//! 12     4    partitionLeaderEpoch     43     8    producerId
//! 16     1    magic (2)                51     2    producerEpoch
//! 17     4    crc (CRC-32C of 21..end) 53     4    baseSequence
//! 21     2    attributes               57     4    recordsCount
//! 23     4    lastOffsetDelta          61     ..   records (compressed as a whole if at all)
//! ```
//!
//! The partition leader epoch is not covered by the CRC (brokers rewrite it in place).

use std::fmt;

use super::compression::ReadLimits;
use super::error::{ErrorKind, RecordsError};
use super::record::Records;

pub const MAGIC_V2: i8 = 2;
/// Bytes before the records of a v2 batch.
pub const BATCH_HEADER_SIZE: usize = 61;
/// Base offset and batch length: the bytes not counted by the batch length.
pub const LOG_OVERHEAD: usize = 12;
/// The smallest valid batch length (a batch with no records).
pub const MIN_BATCH_LENGTH: i32 = (BATCH_HEADER_SIZE - LOG_OVERHEAD) as i32;
/// Bytes needed to read the length and the magic byte.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;

pub(crate) const BASE_OFFSET_OFFSET: usize = 0;
pub(crate) const LENGTH_OFFSET: usize = 8;
pub(crate) const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
pub(crate) const MAGIC_OFFSET: usize = 16;
pub(crate) const CRC_OFFSET: usize = 17;
pub(crate) const ATTRIBUTES_OFFSET: usize = 21;
pub(crate) const LAST_OFFSET_DELTA_OFFSET: usize = 23;
pub(crate) const BASE_TIMESTAMP_OFFSET: usize = 27;
pub(crate) const MAX_TIMESTAMP_OFFSET: usize = 35;
pub(crate) const PRODUCER_ID_OFFSET: usize = 43;
pub(crate) const PRODUCER_EPOCH_OFFSET: usize = 51;
pub(crate) const BASE_SEQUENCE_OFFSET: usize = 53;
pub(crate) const RECORDS_COUNT_OFFSET: usize = 57;

/// Kafka's `RecordBatch.NO_TIMESTAMP`, `NO_PRODUCER_ID`, `NO_PRODUCER_EPOCH`, `NO_SEQUENCE`,
/// `NO_PARTITION_LEADER_EPOCH`.
pub const NO_TIMESTAMP: i64 = -1;
pub const NO_PRODUCER_ID: i64 = -1;
pub const NO_PRODUCER_EPOCH: i16 = -1;
pub const NO_SEQUENCE: i32 = -1;
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;

/// The compression codec of a batch (attribute bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Compression {
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    pub fn from_id(id: u8) -> Option<Compression> {
        Compression::ALL.get(id as usize).copied()
    }

    pub fn id(self) -> u8 {
        self as u8
    }

    /// Kafka's name (`CompressionType.name`), as in `compression.type` and dump-log output.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Attribute bit 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    CreateTime,
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's name (`TimestampType.name`).
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// The batch attributes (int16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Attributes(pub i16);

impl Attributes {
    pub const COMPRESSION_MASK: i16 = 0x07;
    pub const TIMESTAMP_TYPE: i16 = 0x08;
    pub const TRANSACTIONAL: i16 = 0x10;
    pub const CONTROL: i16 = 0x20;
    pub const DELETE_HORIZON: i16 = 0x40;

    /// The codec, or the unknown id (5, 6 or 7).
    pub fn compression(self) -> Result<Compression, u8> {
        let id = (self.0 & Self::COMPRESSION_MASK) as u8;
        Compression::from_id(id).ok_or(id)
    }
    pub fn timestamp_type(self) -> TimestampType {
        if self.0 & Self::TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }
    pub fn is_transactional(self) -> bool {
        self.0 & Self::TRANSACTIONAL != 0
    }
    pub fn is_control(self) -> bool {
        self.0 & Self::CONTROL != 0
    }
    pub fn has_delete_horizon(self) -> bool {
        self.0 & Self::DELETE_HORIZON != 0
    }

    /// The attributes Kafka's builder writes for these settings.
    pub fn new(
        compression: Compression,
        timestamp_type: TimestampType,
        transactional: bool,
        control: bool,
        delete_horizon: bool,
    ) -> Attributes {
        let mut a = compression.id() as i16;
        if timestamp_type == TimestampType::LogAppendTime {
            a |= Self::TIMESTAMP_TYPE;
        }
        if transactional {
            a |= Self::TRANSACTIONAL;
        }
        if control {
            a |= Self::CONTROL;
        }
        if delete_horizon {
            a |= Self::DELETE_HORIZON;
        }
        Attributes(a)
    }
}

/// CRC-32C (Castagnoli) as Kafka's `Crc32C`.
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// A v2 record batch borrowed from a buffer: exactly the batch's bytes, with its header checked
/// for size and magic. Nothing is copied or allocated; the CRC is checked on demand
/// ([`BatchView::verify_crc`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BatchView<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl fmt::Debug for BatchView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchView")
            .field("position", &self.position)
            .field("base_offset", &self.base_offset())
            .field("last_offset", &self.last_offset())
            .field("partition_leader_epoch", &self.partition_leader_epoch())
            .field("attributes", &self.attributes())
            .field("record_count", &self.record_count())
            .field("size", &self.size())
            .finish()
    }
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// The batch length field of the batch at the start of `buf`, if 12 bytes are present.
pub(crate) fn peek_length(buf: &[u8]) -> Option<i32> {
    (buf.len() >= LOG_OVERHEAD).then(|| be_i32(buf, LENGTH_OFFSET))
}

impl<'a> BatchView<'a> {
    /// Parses the batch at the start of `buf` (bytes after it are ignored). Errors name byte
    /// offsets within `buf`.
    pub fn parse(buf: &'a [u8]) -> Result<BatchView<'a>, RecordsError> {
        Self::parse_at(buf, 0)
    }

    /// As [`BatchView::parse`] for the batch at the start of `buf`, which is at byte `position`
    /// of a larger buffer: errors and [`BatchView::position`] use that offset.
    pub fn parse_at(buf: &'a [u8], position: usize) -> Result<BatchView<'a>, RecordsError> {
        let truncated = |what, needed| {
            RecordsError::at(
                position,
                ErrorKind::Truncated {
                    what,
                    needed,
                    available: buf.len(),
                },
            )
        };
        let length = peek_length(buf).ok_or_else(|| truncated("batch length", LOG_OVERHEAD))?;
        if length < MIN_BATCH_LENGTH {
            return Err(RecordsError::at(
                position + LENGTH_OFFSET,
                ErrorKind::BadBatchLength { length },
            ));
        }
        if buf.len() < HEADER_SIZE_UP_TO_MAGIC {
            return Err(truncated("batch magic", HEADER_SIZE_UP_TO_MAGIC));
        }
        let magic = buf[MAGIC_OFFSET] as i8;
        if magic != MAGIC_V2 {
            return Err(RecordsError::at(
                position + MAGIC_OFFSET,
                ErrorKind::UnsupportedMagic { magic },
            ));
        }
        let size = LOG_OVERHEAD + length as usize;
        if buf.len() < size {
            return Err(truncated("record batch", size));
        }
        Ok(BatchView {
            bytes: &buf[..size],
            position,
        })
    }

    /// All bytes of the batch, header included.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Where the batch starts in the buffer it was read from.
    pub fn position(&self) -> usize {
        self.position
    }
    /// Size in bytes (batch length + 12).
    pub fn size(&self) -> usize {
        self.bytes.len()
    }
    pub fn base_offset(&self) -> i64 {
        be_i64(self.bytes, BASE_OFFSET_OFFSET)
    }
    pub fn batch_length(&self) -> i32 {
        be_i32(self.bytes, LENGTH_OFFSET)
    }
    pub fn partition_leader_epoch(&self) -> i32 {
        be_i32(self.bytes, PARTITION_LEADER_EPOCH_OFFSET)
    }
    pub fn magic(&self) -> i8 {
        self.bytes[MAGIC_OFFSET] as i8
    }
    pub fn stored_crc(&self) -> u32 {
        be_i32(self.bytes, CRC_OFFSET) as u32
    }
    pub fn attributes(&self) -> Attributes {
        Attributes(be_i16(self.bytes, ATTRIBUTES_OFFSET))
    }
    /// The codec; an unknown id is an error naming the attributes' position.
    pub fn compression(&self) -> Result<Compression, RecordsError> {
        self.attributes().compression().map_err(|id| {
            RecordsError::at(
                self.position + ATTRIBUTES_OFFSET,
                ErrorKind::UnknownCompression { id },
            )
        })
    }
    pub fn timestamp_type(&self) -> TimestampType {
        self.attributes().timestamp_type()
    }
    pub fn is_transactional(&self) -> bool {
        self.attributes().is_transactional()
    }
    pub fn is_control(&self) -> bool {
        self.attributes().is_control()
    }
    pub fn last_offset_delta(&self) -> i32 {
        be_i32(self.bytes, LAST_OFFSET_DELTA_OFFSET)
    }
    /// Base offset + last offset delta (Kafka's `lastOffset()`; wraps like Java on overflow).
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(self.last_offset_delta() as i64)
    }
    /// The offset after this batch (Kafka's `nextOffset()`).
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }
    pub fn base_timestamp(&self) -> i64 {
        be_i64(self.bytes, BASE_TIMESTAMP_OFFSET)
    }
    pub fn max_timestamp(&self) -> i64 {
        be_i64(self.bytes, MAX_TIMESTAMP_OFFSET)
    }
    /// With the delete-horizon bit set, the base timestamp is the delete horizon.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes()
            .has_delete_horizon()
            .then(|| self.base_timestamp())
    }
    pub fn producer_id(&self) -> i64 {
        be_i64(self.bytes, PRODUCER_ID_OFFSET)
    }
    pub fn producer_epoch(&self) -> i16 {
        be_i16(self.bytes, PRODUCER_EPOCH_OFFSET)
    }
    pub fn base_sequence(&self) -> i32 {
        be_i32(self.bytes, BASE_SEQUENCE_OFFSET)
    }
    /// The declared record count, as stored (may be negative in a corrupt batch).
    pub fn record_count(&self) -> i32 {
        be_i32(self.bytes, RECORDS_COUNT_OFFSET)
    }
    /// The record bytes after the header, compressed or not.
    pub fn records_bytes(&self) -> &'a [u8] {
        &self.bytes[BATCH_HEADER_SIZE..]
    }

    /// The CRC-32C of the bytes the stored CRC covers.
    pub fn compute_crc(&self) -> u32 {
        crc32c(&self.bytes[ATTRIBUTES_OFFSET..])
    }
    pub fn verify_crc(&self) -> Result<(), RecordsError> {
        let (stored, computed) = (self.stored_crc(), self.compute_crc());
        if stored == computed {
            Ok(())
        } else {
            Err(RecordsError::at(
                self.position + CRC_OFFSET,
                ErrorKind::CrcMismatch { stored, computed },
            ))
        }
    }
    /// Kafka's `ensureValid` and more: CRC, a known codec and a non-negative record count.
    pub fn validate(&self) -> Result<(), RecordsError> {
        self.verify_crc()?;
        self.compression()?;
        self.check_count()?;
        Ok(())
    }

    pub(crate) fn check_count(&self) -> Result<i32, RecordsError> {
        let count = self.record_count();
        if count < 0 {
            return Err(RecordsError::at(
                self.position + RECORDS_COUNT_OFFSET,
                ErrorKind::BadRecordCount { count },
            ));
        }
        Ok(count)
    }

    /// The batch's records, decompressed if needed with the default limits
    /// ([`ReadLimits::default`]). Does not check the CRC.
    pub fn records(&self) -> Result<Records<'a>, RecordsError> {
        Records::new(*self, &ReadLimits::default())
    }

    /// As [`BatchView::records`] with explicit limits.
    pub fn records_with(&self, limits: &ReadLimits) -> Result<Records<'a>, RecordsError> {
        Records::new(*self, limits)
    }
}
