//! Writing uncompressed v2 batches byte-for-byte as Kafka's `MemoryRecordsBuilder` (and the raft
//! layer's `BatchBuilder`, which writes the same bytes for the same inputs) does:
//!
//! - the base timestamp is the first record's timestamp (or the delete horizon, if set), and
//!   each record stores its timestamp as a delta from it;
//! - the max timestamp is the largest record timestamp (starting from -1), or the log append
//!   time for LogAppendTime batches;
//! - the last offset delta is the last appended offset minus the base offset;
//! - records are written with attributes 0;
//! - the CRC-32C covers the attributes to the end.
//!
//! Only `Compression::None` is written.

use crate::protocol::codec::Writer;

use super::batch::{
    crc32c, Attributes, Compression, TimestampType, ATTRIBUTES_OFFSET, BATCH_HEADER_SIZE,
    CRC_OFFSET, LOG_OVERHEAD, MAGIC_V2, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP,
};
use super::control::ControlRecord;
use super::error::BuildError;
use super::metadata::MetadataRecordAndVersion;
use super::record::{write_record, RecordHeader};

/// Builds one uncompressed v2 batch.
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    base_offset: i64,
    partition_leader_epoch: i32,
    timestamp_type: TimestampType,
    log_append_time: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    delete_horizon_ms: Option<i64>,
    records: Vec<u8>,
    count: i32,
    base_timestamp: Option<i64>,
    max_timestamp: i64,
    last_offset: Option<i64>,
}

impl BatchBuilder {
    /// A data batch starting at `base_offset`: CreateTime, no producer, partition leader epoch
    /// -1 (Kafka's defaults; set the epoch for the metadata log).
    pub fn new(base_offset: i64) -> BatchBuilder {
        BatchBuilder {
            base_offset,
            partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: NO_TIMESTAMP,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            base_sequence: NO_SEQUENCE,
            transactional: false,
            control: false,
            delete_horizon_ms: None,
            records: Vec::new(),
            count: 0,
            base_timestamp: None,
            max_timestamp: NO_TIMESTAMP,
            last_offset: None,
        }
    }

    /// A control batch starting at `base_offset`.
    pub fn new_control(base_offset: i64) -> BatchBuilder {
        BatchBuilder::new(base_offset).control(true)
    }

    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.partition_leader_epoch = epoch;
        self
    }
    pub fn control(mut self, control: bool) -> Self {
        self.control = control;
        self
    }
    /// LogAppendTime: the max timestamp (and every record's reported timestamp) is `time`.
    pub fn log_append_time(mut self, time: i64) -> Self {
        self.timestamp_type = TimestampType::LogAppendTime;
        self.log_append_time = time;
        self
    }
    pub fn producer(mut self, id: i64, epoch: i16, base_sequence: i32) -> Self {
        self.producer_id = id;
        self.producer_epoch = epoch;
        self.base_sequence = base_sequence;
        self
    }
    pub fn transactional(mut self, transactional: bool) -> Self {
        self.transactional = transactional;
        self
    }
    /// Sets the delete horizon (attribute bit 6); it becomes the base timestamp. Set before
    /// appending.
    pub fn delete_horizon_ms(mut self, ms: i64) -> Self {
        self.delete_horizon_ms = Some(ms);
        self.base_timestamp = Some(ms);
        self
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    pub fn record_count(&self) -> i32 {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub fn is_control(&self) -> bool {
        self.control
    }
    /// The offset the next [`BatchBuilder::append`] uses.
    pub fn next_offset(&self) -> i64 {
        self.last_offset
            .map_or(self.base_offset, |o| o.wrapping_add(1))
    }
    /// The batch's size if built now.
    pub fn size_in_bytes(&self) -> usize {
        BATCH_HEADER_SIZE + self.records.len()
    }

    /// Appends a record at the next offset; returns that offset.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[RecordHeader<'_>],
    ) -> Result<i64, BuildError> {
        if self.control {
            return Err(BuildError::ControlMismatch {
                control_batch: true,
            });
        }
        self.append_unchecked(self.next_offset(), timestamp, key, value, headers)
    }

    /// Appends a record at `offset`, which must be above the previous one (gaps are allowed).
    pub fn append_with_offset(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[RecordHeader<'_>],
    ) -> Result<i64, BuildError> {
        if self.control {
            return Err(BuildError::ControlMismatch {
                control_batch: true,
            });
        }
        self.append_unchecked(offset, timestamp, key, value, headers)
    }

    /// Appends a control record (key: version 0 and type; value: the record at version 0).
    pub fn append_control(
        &mut self,
        timestamp: i64,
        record: &ControlRecord,
    ) -> Result<i64, BuildError> {
        if !self.control {
            return Err(BuildError::ControlMismatch {
                control_batch: false,
            });
        }
        let value = record
            .value_bytes()
            .map_err(|e| BuildError::Encode(e.to_string()))?;
        let key = record.key_bytes();
        self.append_unchecked(self.next_offset(), timestamp, Some(&key), Some(&value), &[])
    }

    /// Appends a metadata record as the raft layer does: null key, framed value, no headers.
    pub fn append_metadata(
        &mut self,
        timestamp: i64,
        record: &MetadataRecordAndVersion,
    ) -> Result<i64, BuildError> {
        let value = record
            .encode()
            .map_err(|e| BuildError::Encode(e.to_string()))?;
        self.append(timestamp, None, Some(&value), &[])
    }

    /// Appends a record whose key and value the caller has encoded, in a control batch or not.
    pub fn append_raw(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[RecordHeader<'_>],
    ) -> Result<i64, BuildError> {
        self.append_unchecked(offset, timestamp, key, value, headers)
    }

    fn append_unchecked(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[RecordHeader<'_>],
    ) -> Result<i64, BuildError> {
        if let Some(previous) = self.last_offset {
            if offset <= previous {
                return Err(BuildError::OffsetNotIncreasing { offset, previous });
            }
        }
        let delta = offset.wrapping_sub(self.base_offset);
        if offset < self.base_offset || delta > i32::MAX as i64 {
            return Err(BuildError::OffsetOutOfRange {
                offset,
                base_offset: self.base_offset,
            });
        }
        if timestamp < NO_TIMESTAMP {
            return Err(BuildError::NegativeTimestamp { timestamp });
        }
        if self.count == i32::MAX {
            return Err(BuildError::TooLarge {
                what: "record count",
                size: self.count as usize,
            });
        }
        let limit = i32::MAX as usize / 2;
        for (what, len) in [
            ("record key", key.map_or(0, <[u8]>::len)),
            ("record value", value.map_or(0, <[u8]>::len)),
        ] {
            if len > limit {
                return Err(BuildError::TooLarge { what, size: len });
            }
        }
        let header_bytes: usize = headers
            .iter()
            .map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len) + 10)
            .sum();
        if header_bytes > limit || self.records.len() > limit {
            return Err(BuildError::TooLarge {
                what: "record batch",
                size: header_bytes + self.records.len(),
            });
        }
        let base_timestamp = *self.base_timestamp.get_or_insert(timestamp);
        let mut w = Writer {
            buf: std::mem::take(&mut self.records),
        };
        write_record(
            &mut w,
            delta as i32,
            timestamp.wrapping_sub(base_timestamp),
            key,
            value,
            headers,
        );
        self.records = w.buf;
        self.count += 1;
        self.last_offset = Some(offset);
        self.max_timestamp = self.max_timestamp.max(timestamp);
        Ok(offset)
    }

    fn check_producer_state(&self) -> Result<(), BuildError> {
        if self.transactional && self.producer_id == NO_PRODUCER_ID {
            return Err(BuildError::BadProducerState(
                "cannot write transactional records without a valid producer id".into(),
            ));
        }
        if self.producer_id != NO_PRODUCER_ID {
            if self.producer_epoch < 0 {
                return Err(BuildError::BadProducerState(format!(
                    "invalid negative producer epoch {}",
                    self.producer_epoch
                )));
            }
            if self.base_sequence < 0 && !self.control {
                return Err(BuildError::BadProducerState(format!(
                    "invalid negative sequence number {}",
                    self.base_sequence
                )));
            }
        }
        Ok(())
    }

    /// Appends the batch to `out`. An empty builder writes nothing (as Kafka's builds empty
    /// records).
    pub fn write_to(&self, out: &mut Vec<u8>) -> Result<(), BuildError> {
        self.check_producer_state()?;
        if self.count == 0 {
            return Ok(());
        }
        let size = self.size_in_bytes();
        if size > i32::MAX as usize {
            return Err(BuildError::TooLarge {
                what: "record batch",
                size,
            });
        }
        let start = out.len();
        let mut w = Writer {
            buf: std::mem::take(out),
        };
        w.i64(self.base_offset);
        w.i32((size - LOG_OVERHEAD) as i32);
        w.i32(self.partition_leader_epoch);
        w.i8(MAGIC_V2);
        w.u32(0); // CRC, filled in below
        let attributes = Attributes::new(
            Compression::None,
            self.timestamp_type,
            self.transactional,
            self.control,
            self.delete_horizon_ms.is_some(),
        );
        w.i16(attributes.0);
        let last_offset = self.last_offset.unwrap_or(self.base_offset);
        w.i32((last_offset - self.base_offset) as i32);
        w.i64(self.base_timestamp.unwrap_or(NO_TIMESTAMP));
        w.i64(match self.timestamp_type {
            TimestampType::LogAppendTime => self.log_append_time,
            TimestampType::CreateTime => self.max_timestamp,
        });
        w.i64(self.producer_id);
        w.i16(self.producer_epoch);
        w.i32(self.base_sequence);
        w.i32(self.count);
        w.raw(&self.records);
        *out = w.into_inner();
        let crc = crc32c(&out[start + ATTRIBUTES_OFFSET..]);
        out[start + CRC_OFFSET..start + CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        Ok(())
    }

    /// The batch's bytes.
    pub fn build(&self) -> Result<Vec<u8>, BuildError> {
        let mut out = Vec::with_capacity(self.size_in_bytes());
        self.write_to(&mut out)?;
        Ok(out)
    }
}
