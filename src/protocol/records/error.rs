//! Errors of the record-batch layer: what was wrong, and where.

use std::fmt;

use super::batch::Compression;
use crate::protocol::codec::DecodeError;

/// Where a problem was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A byte offset into the buffer being read (a segment file's contents, a Fetch response's
    /// records, or the bytes handed to [`super::BatchView::parse`]).
    Buffer(usize),
    /// A byte offset into the decompressed records of the (compressed) batch that starts at
    /// byte `batch` of the buffer.
    Decompressed { batch: usize, offset: usize },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Buffer(p) => write!(f, "byte {p}"),
            Location::Decompressed { batch, offset } => write!(
                f,
                "byte {offset} of the decompressed records of the batch at byte {batch}"
            ),
        }
    }
}

/// What was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes end before `what` is complete.
    Truncated {
        what: &'static str,
        needed: usize,
        available: usize,
    },
    /// The batch length field is below the v2 minimum (49: the 61-byte header minus the 12
    /// bytes of base offset and length) or above what a batch can be.
    BadBatchLength { length: i32 },
    /// A magic byte other than 2 (v0/v1 message sets are not read).
    UnsupportedMagic { magic: i8 },
    /// The stored CRC-32C does not match the bytes from the attributes to the end of the batch.
    CrcMismatch { stored: u32, computed: u32 },
    /// Compression bits 5, 6 or 7.
    UnknownCompression { id: u8 },
    /// A negative record count.
    BadRecordCount { count: i32 },
    /// The compressed records would inflate beyond the configured limit.
    DecompressedTooLarge { codec: Compression, limit: usize },
    /// The compressed records are not a valid stream of their codec.
    Decompression { codec: Compression, message: String },
    /// Record number `index` (0-based) of the batch is malformed.
    BadRecord { index: i32, reason: RecordError },
    /// Bytes remain after the batch's declared number of records (Kafka: "Incorrect declared
    /// batch size, records still remaining in file").
    TrailingRecordBytes { count: i32, remaining: usize },
}

/// What is wrong with one record of a batch (its framing: lengths, counts, varints).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// A field does not decode (truncated, a bad varint).
    #[error("{0}")]
    Decode(DecodeError),
    /// A length below -1 (or below 0 where null is not allowed).
    #[error("invalid {what} length {length}")]
    BadLength { what: &'static str, length: i32 },
    #[error("record length {length} exceeds the {remaining} bytes that remain")]
    LengthBeyondBytes { length: i32, remaining: usize },
    /// A header count that is negative or more than the record's bytes can hold.
    #[error("invalid header count {count} ({remaining} bytes remain in the record)")]
    BadHeaderCount { count: i32, remaining: usize },
    #[error("record length {length} but its fields end {unused} bytes earlier")]
    UnusedBytes { length: i32, unused: usize },
}

impl From<DecodeError> for RecordError {
    fn from(e: DecodeError) -> RecordError {
        RecordError::Decode(e)
    }
}

/// A problem in record-batch bytes, with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordsError {
    pub at: Location,
    pub kind: ErrorKind,
}

impl RecordsError {
    pub(crate) fn at(position: usize, kind: ErrorKind) -> RecordsError {
        RecordsError {
            at: Location::Buffer(position),
            kind,
        }
    }

    /// The byte offset in the buffer nearest to the problem (for a problem inside decompressed
    /// records: the start of their batch).
    pub fn position(&self) -> usize {
        match self.at {
            Location::Buffer(p) => p,
            Location::Decompressed { batch, .. } => batch,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Truncated {
                what,
                needed,
                available,
            } => write!(
                f,
                "truncated {what}: needs {needed} bytes, {available} available"
            ),
            ErrorKind::BadBatchLength { length } => write!(
                f,
                "invalid batch length {length} (a v2 batch length is at least 49)"
            ),
            ErrorKind::UnsupportedMagic { magic } => write!(
                f,
                "unsupported record batch magic {magic} (only v2 batches are read)"
            ),
            ErrorKind::CrcMismatch { stored, computed } => write!(
                f,
                "batch CRC mismatch: stored {stored:#010x}, computed {computed:#010x}"
            ),
            ErrorKind::UnknownCompression { id } => {
                write!(f, "unknown compression type id {id}")
            }
            ErrorKind::BadRecordCount { count } => write!(f, "invalid record count {count}"),
            ErrorKind::DecompressedTooLarge { codec, limit } => write!(
                f,
                "{} records inflate beyond the limit of {limit} bytes",
                codec.name()
            ),
            ErrorKind::Decompression { codec, message } => {
                write!(f, "corrupt {} data: {message}", codec.name())
            }
            ErrorKind::BadRecord { index, reason } => write!(f, "record {index}: {reason}"),
            ErrorKind::TrailingRecordBytes { count, remaining } => write!(
                f,
                "{remaining} bytes remain after the batch's {count} declared records"
            ),
        }
    }
}

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.at, self.kind)
    }
}

impl std::error::Error for RecordsError {}

/// Why a batch could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Offsets within a batch must increase (Kafka: "Offsets must increase monotonically").
    OffsetNotIncreasing { offset: i64, previous: i64 },
    /// An offset below the base offset, or more than `i32::MAX` above it.
    OffsetOutOfRange { offset: i64, base_offset: i64 },
    /// A timestamp below -1 (Kafka's NO_TIMESTAMP).
    NegativeTimestamp { timestamp: i64 },
    /// A control record in a data batch or a data record in a control batch.
    ControlMismatch { control_batch: bool },
    /// Producer fields that Kafka's builder refuses (e.g. transactional without a producer id).
    BadProducerState(String),
    /// A key, value, header or the whole batch is too large for the v2 format.
    TooLarge { what: &'static str, size: usize },
    /// A control or metadata record value could not be encoded.
    Encode(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::OffsetNotIncreasing { offset, previous } => write!(
                f,
                "offset {offset} does not follow the previous offset {previous} (offsets must increase)"
            ),
            BuildError::OffsetOutOfRange {
                offset,
                base_offset,
            } => write!(
                f,
                "offset {offset} is out of range for a batch at base offset {base_offset}"
            ),
            BuildError::NegativeTimestamp { timestamp } => {
                write!(f, "invalid negative timestamp {timestamp}")
            }
            BuildError::ControlMismatch { control_batch: true } => {
                f.write_str("a data record cannot be appended to a control batch")
            }
            BuildError::ControlMismatch {
                control_batch: false,
            } => f.write_str("a control record can only be appended to a control batch"),
            BuildError::BadProducerState(m) => f.write_str(m),
            BuildError::TooLarge { what, size } => {
                write!(f, "{what} is too large for a record batch ({size} bytes)")
            }
            BuildError::Encode(m) => write!(f, "cannot encode record value: {m}"),
        }
    }
}

impl std::error::Error for BuildError {}
