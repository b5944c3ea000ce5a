//! The raft core's `Batch` <-> Kafka v2 record batch bytes (via `protocol::records`): data
//! batches carry null-key records with opaque values, control batches the KRaft control records
//! (key version 0, value at version 0). Every record of a batch takes the batch timestamp.

use super::ConvertError;
use crate::protocol::records::{
    split_batches, BatchBuilder, ControlRecord as WireControl, SplitEnd,
};
use crate::raft::log::{Batch, ControlRecord, Encoded, Records};

fn to_wire_control(c: &ControlRecord) -> WireControl {
    match c {
        ControlRecord::LeaderChange(m) => WireControl::LeaderChange(m.clone()),
        ControlRecord::SnapshotHeader(m) => WireControl::SnapshotHeader(m.clone()),
        ControlRecord::SnapshotFooter(m) => WireControl::SnapshotFooter(m.clone()),
        ControlRecord::KRaftVersion(m) => WireControl::KRaftVersion(m.clone()),
        ControlRecord::Voters(m) => WireControl::KRaftVoters(m.clone()),
    }
}

/// Appends the v2 encoding of `batches` to `out`: the bytes a batch was read from when known,
/// else a fresh encoding.
pub fn encode_batches(batches: &[Batch], out: &mut Vec<u8>) -> Result<(), ConvertError> {
    let err = |e: crate::protocol::records::BuildError| ConvertError::Records(e.to_string());
    for b in batches {
        if let Some(bytes) = b.encoded.bytes() {
            out.extend_from_slice(bytes);
            continue;
        }
        let mut builder = match &b.records {
            Records::Control(_) => BatchBuilder::new_control(b.base_offset),
            Records::Data(_) => BatchBuilder::new(b.base_offset),
        }
        .partition_leader_epoch(b.epoch);
        match &b.records {
            Records::Control(records) => {
                for r in records {
                    builder
                        .append_control(b.append_time, &to_wire_control(r))
                        .map_err(err)?;
                }
            }
            Records::Data(values) => {
                for v in values {
                    builder
                        .append(b.append_time, None, Some(v), &[])
                        .map_err(err)?;
                }
            }
        }
        builder.write_to(out).map_err(err)?;
    }
    Ok(())
}

/// Decodes the complete batches of `bytes`; a torn last batch (a Fetch response cut at its size
/// limit) is dropped, as Kafka does. Bad CRCs, corrupt batches, transaction markers and data
/// records without a value are errors.
pub fn decode_batches(bytes: &[u8]) -> Result<Vec<Batch>, ConvertError> {
    let split = split_batches(bytes);
    if let SplitEnd::Corrupt { position, error } = &split.end {
        return Err(ConvertError::Records(format!(
            "corrupt batch at byte {position}: {error}"
        )));
    }
    let mut out = Vec::with_capacity(split.batches.len());
    for view in split.batches {
        view.validate()
            .map_err(|e| ConvertError::Records(e.to_string()))?;
        let records = view
            .records()
            .map_err(|e| ConvertError::Records(e.to_string()))?;
        let control = view.is_control();
        let (mut ctrl, mut data) = (Vec::new(), Vec::new());
        for r in records.iter() {
            let r = r.map_err(|e| ConvertError::Records(e.to_string()))?;
            if control {
                let c = WireControl::decode(r.key, r.value)
                    .map_err(|e| ConvertError::Records(e.to_string()))?;
                ctrl.push(match c {
                    WireControl::LeaderChange(m) => ControlRecord::LeaderChange(m),
                    WireControl::SnapshotHeader(m) => ControlRecord::SnapshotHeader(m),
                    WireControl::SnapshotFooter(m) => ControlRecord::SnapshotFooter(m),
                    WireControl::KRaftVersion(m) => ControlRecord::KRaftVersion(m),
                    WireControl::KRaftVoters(m) => ControlRecord::Voters(m),
                    WireControl::Abort(_) | WireControl::Commit(_) => {
                        return Err(ConvertError::Records(
                            "transaction marker in the metadata log".into(),
                        ))
                    }
                });
            } else {
                let value = r
                    .value
                    .ok_or_else(|| ConvertError::Records("data record without a value".into()))?;
                data.push(value.to_vec());
            }
        }
        let records = if control {
            Records::Control(ctrl)
        } else {
            Records::Data(data)
        };
        let batch = Batch {
            base_offset: view.base_offset(),
            epoch: view.partition_leader_epoch(),
            append_time: view.base_timestamp(),
            records,
            encoded: Encoded(Some(view.bytes().into())),
        };
        if batch.record_count() == 0 {
            return Err(ConvertError::Records(format!(
                "empty batch at offset {}",
                view.base_offset()
            )));
        }
        out.push(batch);
    }
    Ok(out)
}
