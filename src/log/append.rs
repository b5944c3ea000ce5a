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
        if matches!(appender, Appender::Leader(_)) {
            refuse_timestamp_deltas(b, at)?;
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

/// Kafka's KRaft record reader (`RecordsIterator`) stops the whole controller on a record whose
/// timestamp delta is not 0: every record of a batch must carry the batch's timestamp. A leader
/// never writes such a batch; what followers receive is the leader's to vouch for.
fn refuse_timestamp_deltas(b: &crate::protocol::records::BatchView<'_>, at: usize) -> Result<()> {
    let records = b.records().map_err(|e| {
        LogError::InvalidAppend(format!("the batch at byte {at} cannot be read: {}", e.kind))
    })?;
    for record in records.iter() {
        let record = record.map_err(|e| {
            LogError::InvalidAppend(format!(
                "a record of the batch at byte {at} is invalid: {}",
                e.kind
            ))
        })?;
        if record.timestamp_delta != 0 {
            return Err(LogError::InvalidAppend(format!(
                "record {} of the batch at byte {at} has timestamp delta {}; KRaft batches must \
                 give every record the batch's timestamp (Java controllers refuse anything else)",
                record.index, record.timestamp_delta
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::BatchBuilder;

    fn batch_with_timestamps(timestamps: &[i64]) -> Vec<u8> {
        let mut b = BatchBuilder::new(0).partition_leader_epoch(1);
        for ts in timestamps {
            b.append(*ts, None, Some(b"v".as_slice()), &[]).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn a_leader_never_appends_records_with_their_own_timestamps() {
        let bytes = batch_with_timestamps(&[1_000, 1_001]);
        let err = validate(&bytes, 0, None, Appender::Leader(1), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("timestamp delta 1"), "{err}");
        // What a leader sends is taken as it is.
        assert!(validate(&bytes, 0, None, Appender::Follower(1), 1 << 20).is_ok());
        let same = batch_with_timestamps(&[1_000, 1_000]);
        assert!(validate(&same, 0, None, Appender::Leader(1), 1 << 20).is_ok());
    }
}
