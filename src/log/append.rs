//! The rules batches must follow to be appended to the metadata log.

use super::error::{LogError, Result};
use super::segment::BatchMeta;
use crate::protocol::records::{split_batches, SplitEnd};

/// Who is appending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appender {
    /// The leader of this epoch: every batch carries exactly this epoch.
    Leader(i32),
    /// A follower of the leader of this epoch: batches carry at most this epoch.
    Follower(i32),
}

/// Checks `bytes` are whole, valid v2 batches (CRC, codec, record count) of at most
/// `max_batch_size` bytes each, with offsets continuing at `next_offset` and non-negative,
/// non-decreasing epochs not below `latest_epoch`, as `appender` may write them.
pub fn validate(
    bytes: &[u8],
    next_offset: i64,
    latest_epoch: Option<i32>,
    appender: Appender,
    max_batch_size: usize,
) -> Result<Vec<BatchMeta>> {
    let split = split_batches(bytes);
    match &split.end {
        SplitEnd::Clean => {}
        SplitEnd::Torn {
            position,
            needed,
            available,
        } => {
            return Err(LogError::InvalidAppend(format!(
                "the batch at byte {position} is incomplete ({available} of {needed} bytes)"
            )))
        }
        SplitEnd::Corrupt { position, error } => {
            return Err(LogError::InvalidAppend(format!(
                "the bytes at {position} are not a record batch: {}",
                error.kind
            )))
        }
    }
    if split.batches.is_empty() {
        return Err(LogError::InvalidAppend("no batches to append".into()));
    }
    let mut expected = next_offset;
    let mut floor = latest_epoch.unwrap_or(0);
    let mut metas = Vec::with_capacity(split.batches.len());
    for b in &split.batches {
        let at = b.position();
        b.validate().map_err(|e| {
            LogError::InvalidAppend(format!("the batch at byte {at} is invalid: {}", e.kind))
        })?;
        let meta = BatchMeta::of(b);
        if meta.size > max_batch_size {
            return Err(LogError::InvalidAppend(format!(
                "the batch at byte {at} has {} bytes, above the maximum batch size {max_batch_size}",
                meta.size
            )));
        }
        if meta.base_offset != expected {
            return Err(LogError::InvalidAppend(format!(
                "the batch at byte {at} starts at offset {} but the log continues at {expected}",
                meta.base_offset
            )));
        }
        if b.last_offset_delta() < 0 {
            return Err(LogError::InvalidAppend(format!(
                "the batch at byte {at} has a negative last offset delta {}",
                b.last_offset_delta()
            )));
        }
        let epoch = meta.epoch;
        let epoch_ok = match appender {
            Appender::Leader(e) => epoch == e,
            Appender::Follower(e) => epoch <= e,
        };
        if !epoch_ok || epoch < 0 {
            return Err(LogError::InvalidAppend(format!(
                "the batch at offset {} has partition leader epoch {epoch}, which {appender:?} may not append",
                meta.base_offset
            )));
        }
        if epoch < floor {
            return Err(LogError::InvalidAppend(format!(
                "the batch at offset {} has partition leader epoch {epoch}, below the log's latest epoch {floor}",
                meta.base_offset
            )));
        }
        floor = epoch;
        expected = meta.last_offset + 1;
        metas.push(meta);
    }
    Ok(metas)
}
