//! Records inside a v2 batch (Kafka's `DefaultRecord`):
//!
//! ```text
//! length varint · attributes int8 · timestampDelta varlong · offsetDelta varint
//! · keyLength varint (-1 = null) · key · valueLength varint (-1 = null) · value
//! · headerCount varint · [headerKeyLength varint · headerKey · headerValueLength varint (-1 = null) · headerValue]*
//! ```
//! (zig-zag varints; the length counts the bytes after itself).

use std::borrow::Cow;

use crate::protocol::codec::{Reader, Writer};

use super::batch::{BatchView, Compression, TimestampType, BATCH_HEADER_SIZE};
use super::compression::{decompress, ReadLimits};
use super::error::{ErrorKind, Location, RecordError, RecordsError};

/// A record header: the key is a string in Kafka (kept as bytes here so that re-encoding is exact;
/// see [`RecordHeader::key_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader<'p> {
    pub key: &'p [u8],
    pub value: Option<&'p [u8]>,
}

impl<'p> RecordHeader<'p> {
    pub fn key_str(&self) -> Option<&'p str> {
        std::str::from_utf8(self.key).ok()
    }
}

/// One record, borrowed from its batch's (decompressed) record bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'p> {
    /// Index in the batch (0-based).
    pub index: i32,
    /// Absolute offset: base offset + offset delta.
    pub offset: i64,
    /// The record's timestamp as Kafka reports it: the batch's max timestamp for LogAppendTime
    /// batches, else base timestamp + timestamp delta.
    pub timestamp: i64,
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'p [u8]>,
    pub value: Option<&'p [u8]>,
    pub headers: Vec<RecordHeader<'p>>,
    /// Where the record starts in the batch's record bytes (after decompression).
    pub position: usize,
    /// Bytes of the record including its length prefix (Kafka's `sizeInBytes()`).
    pub size_in_bytes: usize,
}

/// The records of one batch: the record bytes (borrowed, or decompressed into an owned buffer)
/// and the header fields needed to interpret them.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    batch: BatchView<'a>,
    payload: Cow<'a, [u8]>,
    count: i32,
}

impl<'a> Records<'a> {
    pub(crate) fn new(
        batch: BatchView<'a>,
        limits: &ReadLimits,
    ) -> Result<Records<'a>, RecordsError> {
        let compression = batch.compression()?;
        let count = batch.check_count()?;
        let raw = batch.records_bytes();
        let payload = match compression {
            Compression::None => Cow::Borrowed(raw),
            codec => {
                let out = decompress(codec, raw, limits.max_decompressed_bytes)
                    .map_err(|kind| RecordsError::at(batch.position() + BATCH_HEADER_SIZE, kind))?;
                Cow::Owned(out)
            }
        };
        Ok(Records {
            batch,
            payload,
            count,
        })
    }

    pub fn batch(&self) -> &BatchView<'a> {
        &self.batch
    }

    /// The uncompressed record bytes.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// Whether the payload was decompressed (owned) rather than borrowed.
    pub fn is_decompressed(&self) -> bool {
        matches!(self.payload, Cow::Owned(_))
    }

    /// The declared number of records.
    pub fn count(&self) -> i32 {
        self.count
    }

    /// Iterates the records. After `count` records, leftover bytes are an error; after any
    /// error the iterator ends.
    pub fn iter(&self) -> RecordIter<'_> {
        let log_append_time = (self.batch.timestamp_type() == TimestampType::LogAppendTime)
            .then(|| self.batch.max_timestamp());
        RecordIter {
            reader: Reader::new(&self.payload),
            index: 0,
            count: self.count,
            base_offset: self.batch.base_offset(),
            base_timestamp: self.batch.base_timestamp(),
            log_append_time,
            batch_position: self.batch.position(),
            decompressed: self.is_decompressed(),
            done: false,
        }
    }
}

/// Iterator over the records of a batch; see [`Records::iter`].
#[derive(Debug, Clone)]
pub struct RecordIter<'p> {
    reader: Reader<'p>,
    index: i32,
    count: i32,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
    batch_position: usize,
    decompressed: bool,
    done: bool,
}

impl<'p> RecordIter<'p> {
    fn location(&self, offset: usize) -> Location {
        if self.decompressed {
            Location::Decompressed {
                batch: self.batch_position,
                offset,
            }
        } else {
            Location::Buffer(self.batch_position + BATCH_HEADER_SIZE + offset)
        }
    }
}

impl<'p> Iterator for RecordIter<'p> {
    type Item = Result<Record<'p>, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let start = self.reader.position();
        if self.index >= self.count {
            self.done = true;
            let remaining = self.reader.remaining();
            if remaining == 0 {
                return None;
            }
            return Some(Err(RecordsError {
                at: self.location(start),
                kind: ErrorKind::TrailingRecordBytes {
                    count: self.count,
                    remaining,
                },
            }));
        }
        let index = self.index;
        self.index += 1;
        let result = read_record(&mut self.reader, index).map(|mut r| {
            r.offset = self.base_offset.wrapping_add(r.offset_delta as i64);
            r.timestamp = self
                .log_append_time
                .unwrap_or_else(|| self.base_timestamp.wrapping_add(r.timestamp_delta));
            r
        });
        match result {
            Ok(r) => Some(Ok(r)),
            Err(reason) => {
                self.done = true;
                Some(Err(RecordsError {
                    at: self.location(start),
                    kind: ErrorKind::BadRecord { index, reason },
                }))
            }
        }
    }
}

/// A varint length: -1 is null, other negatives are errors; never beyond the bytes present.
fn read_len_prefixed<'p>(
    r: &mut Reader<'p>,
    what: &'static str,
) -> Result<Option<&'p [u8]>, RecordError> {
    let len = r.varint(what)?;
    match len {
        -1 => Ok(None),
        length if length < -1 => Err(RecordError::BadLength { what, length }),
        n => Ok(Some(r.take(n as usize, what)?)),
    }
}

/// Reads one record from the start of `r` (offset and timestamp left relative).
fn read_record<'p>(r: &mut Reader<'p>, index: i32) -> Result<Record<'p>, RecordError> {
    let start = r.position();
    let length = r.varint("record length")?;
    if length < 0 {
        return Err(RecordError::BadLength {
            what: "record",
            length,
        });
    }
    let prefix = r.position() - start;
    let body = r
        .take(length as usize, "record")
        .map_err(|_| RecordError::LengthBeyondBytes {
            length,
            remaining: r.remaining(),
        })?;
    let mut b = Reader::new(body);
    let attributes = b.i8("record attributes")?;
    let timestamp_delta = b.varlong("record timestamp delta")?;
    let offset_delta = b.varint("record offset delta")?;
    let key = read_len_prefixed(&mut b, "record key")?;
    let value = read_len_prefixed(&mut b, "record value")?;
    let header_count = b.varint("record header count")?;
    // Each header takes at least 2 bytes, so a count beyond that cannot be honest.
    if header_count < 0 || header_count as usize > b.remaining() / 2 {
        return Err(RecordError::BadHeaderCount {
            count: header_count,
            remaining: b.remaining(),
        });
    }
    let mut headers = Vec::with_capacity(header_count as usize);
    for _ in 0..header_count {
        let key_len = b.varint("header key length")?;
        if key_len < 0 {
            return Err(RecordError::BadLength {
                what: "header key",
                length: key_len,
            });
        }
        let key = b.take(key_len as usize, "header key")?;
        let value = read_len_prefixed(&mut b, "header value")?;
        headers.push(RecordHeader { key, value });
    }
    if b.remaining() != 0 {
        return Err(RecordError::UnusedBytes {
            length,
            unused: b.remaining(),
        });
    }
    Ok(Record {
        index,
        offset: 0,
        timestamp: 0,
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers,
        position: start,
        size_in_bytes: prefix + length as usize,
    })
}

/// Size of the zig-zag varint encoding of `v`.
pub(crate) fn varint_size(v: i32) -> usize {
    varlong_size(v as i64)
}
pub(crate) fn varlong_size(v: i64) -> usize {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while z >= 0x80 {
        z >>= 7;
        n += 1;
    }
    n
}

fn nullable_size(b: Option<&[u8]>) -> usize {
    match b {
        None => 1,
        Some(b) => varint_size(b.len() as i32) + b.len(),
    }
}

/// Bytes after the length prefix of a record (Kafka's `sizeOfBodyInBytes`). The caller checks
/// that each part fits an i32.
pub(crate) fn record_body_size(
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[RecordHeader<'_>],
) -> usize {
    let mut size = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta);
    size += nullable_size(key) + nullable_size(value);
    size += varint_size(headers.len() as i32);
    for h in headers {
        size += varint_size(h.key.len() as i32) + h.key.len() + nullable_size(h.value);
    }
    size
}

fn write_nullable(w: &mut Writer, b: Option<&[u8]>) {
    match b {
        None => w.varint(-1),
        Some(b) => {
            w.varint(b.len() as i32);
            w.raw(b);
        }
    }
}

/// Writes a record as Kafka's `DefaultRecord.writeTo` does (attributes 0); returns its size.
pub(crate) fn write_record(
    w: &mut Writer,
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[RecordHeader<'_>],
) -> usize {
    let body = record_body_size(offset_delta, timestamp_delta, key, value, headers);
    let start = w.buf.len();
    w.varint(body as i32);
    w.i8(0);
    w.varlong(timestamp_delta);
    w.varint(offset_delta);
    write_nullable(w, key);
    write_nullable(w, value);
    w.varint(headers.len() as i32);
    for h in headers {
        w.varint(h.key.len() as i32);
        w.raw(h.key);
        write_nullable(w, h.value);
    }
    w.buf.len() - start
}
