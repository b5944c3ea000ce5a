//! A snapshot's `SnapshotContents` <-> the bytes of Kafka's checkpoint file (`.checkpoint`):
//! a SnapshotHeader batch (with KRaftVersion and Voters from kraft.version 1), data batches, a
//! SnapshotFooter batch, all at the snapshot's epoch.

use crate::protocol::messages::{KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord};
use crate::protocol::records::{BatchBuilder, BuildError, ControlRecord as Wire};
use crate::raft::convert::records::decode_batches;
use crate::raft::log::{Batch, ControlRecord, Records, SnapshotContents};
use crate::raft::types::OffsetAndEpoch;

/// Kafka's checkpoint bytes for `c` (as `RecordsSnapshotWriter` writes them): a control batch
/// with SnapshotHeader (then KRaftVersion and Voters from kraft.version 1), data batches of at
/// most about `max_batch_size` bytes, a SnapshotFooter batch. Offsets start at 0; every batch
/// carries the snapshot's epoch and `now_ms`, as Java stamps them with its clock.
pub fn encode_snapshot(
    c: &SnapshotContents,
    now_ms: i64,
    max_batch_size: usize,
) -> Result<Vec<u8>, BuildError> {
    let epoch = c.id.epoch;
    let control = |base: i64, records: &[Wire]| {
        let mut b = BatchBuilder::new_control(base).partition_leader_epoch(epoch);
        records
            .iter()
            .try_for_each(|r| b.append_control(now_ms, r).map(|_| ()))
            .map(|()| b)
    };
    let mut head = vec![Wire::SnapshotHeader(SnapshotHeaderRecord {
        version: 0,
        last_contained_log_timestamp: c.last_contained_log_timestamp,
        ..Default::default()
    })];
    if c.kraft_version >= 1 {
        head.push(Wire::KRaftVersion(KRaftVersionRecord {
            version: 0,
            k_raft_version: c.kraft_version,
            ..Default::default()
        }));
        head.extend(c.voters.clone().map(Wire::KRaftVoters));
    }
    let mut out = Vec::new();
    let header = control(0, &head)?;
    header.write_to(&mut out)?;
    let mut data = BatchBuilder::new(header.next_offset()).partition_leader_epoch(epoch);
    for value in &c.data {
        // ~21 bytes of record framing (varints) on top of the value.
        if !data.is_empty() && data.size_in_bytes() + value.len() + 21 > max_batch_size {
            data.write_to(&mut out)?;
            data = BatchBuilder::new(data.next_offset()).partition_leader_epoch(epoch);
        }
        data.append(now_ms, None, Some(value), &[])?;
    }
    data.write_to(&mut out)?;
    let footer = SnapshotFooterRecord {
        version: 0,
        ..Default::default()
    };
    control(data.next_offset(), &[Wire::SnapshotFooter(footer)])?.write_to(&mut out)?;
    Ok(out)
}

/// Parses checkpoint bytes (kraftd's or Java's, the bootstrap `0-0` included) into the raft
/// core's view of snapshot `id`.
pub fn decode_snapshot(id: OffsetAndEpoch, bytes: &[u8]) -> Result<SnapshotContents, String> {
    let batches = decode_batches(bytes).map_err(|e| e.to_string())?;
    let first_control = |b: &Batch| match &b.records {
        Records::Control(r) => r.first().cloned(),
        Records::Data(_) => None,
    };
    let Some(header) = batches.first() else {
        return Err("the snapshot holds no batch".into());
    };
    let Some(ControlRecord::SnapshotHeader(h)) = first_control(header) else {
        return Err("the first batch does not start with a SnapshotHeaderRecord".into());
    };
    let footer = batches.last().and_then(first_control);
    if batches.len() < 2 || !matches!(footer, Some(ControlRecord::SnapshotFooter(_))) {
        return Err("the last batch does not start with a SnapshotFooterRecord".into());
    }
    let mut c = SnapshotContents {
        id,
        last_contained_log_timestamp: h.last_contained_log_timestamp,
        kraft_version: 0,
        voters: None,
        data: Vec::new(),
    };
    for b in &batches[..batches.len() - 1] {
        match &b.records {
            Records::Data(values) => c.data.extend(values.iter().cloned()),
            Records::Control(records) => {
                for r in records {
                    match r {
                        ControlRecord::KRaftVersion(k) => c.kraft_version = k.k_raft_version,
                        ControlRecord::Voters(v) => c.voters = Some(v.clone()),
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(c)
}
