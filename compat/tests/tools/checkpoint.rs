//! Comparing two bootstrap checkpoints batch by batch and record by record.

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::records::{split_batches, BatchView, ControlRecord};

/// A control record's value with its timestamp and directory ids zeroed: what must match.
fn normalized_control(key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
    let mut rec = ControlRecord::decode(key, value).expect("a control record");
    match &mut rec {
        ControlRecord::SnapshotHeader(h) => h.last_contained_log_timestamp = 0,
        ControlRecord::KRaftVoters(v) => {
            for voter in &mut v.voters {
                voter.voter_directory_id = Uuid::ZERO;
            }
        }
        _ => {}
    }
    rec.value_bytes().unwrap()
}

/// Compares two checkpoints batch by batch and record by record; returns a description of
/// each batch.
pub(crate) fn compare_checkpoints(ours: &[u8], java: &[u8], exact_ids: bool) -> Vec<String> {
    let (a, b) = (split_batches(ours), split_batches(java));
    assert!(a.end.is_clean() && b.end.is_clean());
    assert_eq!(a.batches.len(), b.batches.len(), "batch count");
    let mut described = Vec::new();
    for (x, y) in a.batches.iter().zip(&b.batches) {
        x.validate().unwrap();
        y.validate().unwrap();
        let header = |v: &BatchView<'_>| {
            (
                v.base_offset(),
                v.last_offset_delta(),
                v.partition_leader_epoch(),
                v.attributes().0,
                v.producer_id(),
                v.producer_epoch(),
                v.base_sequence(),
                v.record_count(),
                v.size(),
                v.max_timestamp() == v.base_timestamp(),
            )
        };
        assert_eq!(header(x), header(y), "batch at {}", x.position());
        let (rx, ry) = (x.records().unwrap(), y.records().unwrap());
        for (r, s) in rx.iter().zip(ry.iter()) {
            let (r, s) = (r.unwrap(), s.unwrap());
            assert_eq!(
                (
                    r.offset_delta,
                    r.timestamp_delta,
                    r.attributes,
                    r.key,
                    &r.headers
                ),
                (
                    s.offset_delta,
                    s.timestamp_delta,
                    s.attributes,
                    s.key,
                    &s.headers
                )
            );
            if x.is_control() {
                assert_eq!(
                    normalized_control(r.key, r.value),
                    normalized_control(s.key, s.value),
                    "control record at offset {}",
                    r.offset
                );
                let rec = ControlRecord::decode(r.key, r.value).unwrap();
                if exact_ids && !matches!(rec, ControlRecord::SnapshotHeader(_)) {
                    assert_eq!(r.value, s.value, "offset {}", r.offset);
                }
                described.push(format!("{:?}", rec.record_type()));
            } else {
                assert_eq!(r.value, s.value, "metadata record at offset {}", r.offset);
                described.push("metadata".into());
            }
        }
    }
    described
}
