//! A whole snapshot <-> the bytes of Kafka's checkpoint file (`.checkpoint`), for tools, tests
//! and fuzzing, through the one writer and reader the log uses (`SnapshotWriter`,
//! `SnapshotReader`): a SnapshotHeader batch (with KRaftVersion and Voters from kraft.version
//! 1), data batches, a SnapshotFooter batch, all at the snapshot's epoch.

use crate::log::RawSnapshotWriter;
use crate::raft::log::{ControlRecord, LogError, Records, SnapshotHeader};
use crate::raft::snapshot_reader::SnapshotReader;
use crate::raft::snapshot_writer::SnapshotWriter;
use crate::raft::types::OffsetAndEpoch;

/// Kafka's checkpoint bytes for `header` and `data`, in batches of at most about
/// `max_batch_size` bytes (each record appended alone, so a batch is cut wherever the next
/// record would not fit).
pub fn encode_snapshot(
    header: &SnapshotHeader,
    data: &[Vec<u8>],
    max_batch_size: usize,
) -> Result<Vec<u8>, LogError> {
    let raw = RawSnapshotWriter::memory(header.id);
    let mut writer = SnapshotWriter::start(raw, header.clone(), max_batch_size)?;
    for record in data {
        writer.append([record])?;
    }
    let (bytes, _) = writer.finish()?.freeze_memory().map_err(|e| {
        LogError::Refused(crate::log::LogError::InvalidAppend(format!(
            "snapshot {} does not validate: {e}",
            header.id
        )))
    })?;
    Ok(bytes)
}

/// Parses checkpoint bytes (kraftd's or Java's, the bootstrap `0-0` included) as snapshot `id`:
/// its header and data records. The last batch must be the footer.
pub fn decode_snapshot(
    id: OffsetAndEpoch,
    bytes: Vec<u8>,
) -> Result<(SnapshotHeader, Vec<Vec<u8>>), LogError> {
    let reader = SnapshotReader::from_bytes(id, bytes)?;
    let header = reader.header().clone();
    let (mut data, mut last_is_footer, mut batches) = (Vec::new(), false, 0);
    for batch in reader {
        let batch = batch?;
        batches += 1;
        last_is_footer = matches!(
            &batch.records,
            Records::Control(r) if matches!(r.first(), Some(ControlRecord::SnapshotFooter(_)))
        );
        if let Records::Data(values) = batch.records {
            data.extend(values);
        }
    }
    if batches < 2 || !last_is_footer {
        return Err(LogError::UndecodableSnapshot {
            id,
            reason: "the last batch does not start with a SnapshotFooterRecord".into(),
        });
    }
    Ok((header, data))
}
