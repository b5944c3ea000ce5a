//! Bodies of the fuzz targets, shared by `fuzz/` (cargo fuzz, libFuzzer) and by the property
//! tests that run in `make test` on stable Rust. Each must hold for every input: no panic, no
//! unbounded allocation, and decode/encode agreement.

use crate::controller::principal::RequestPrincipal;
use crate::protocol::messages::REGISTRY;
use crate::server::api::{self, Outcome};
use crate::server::context::{QuorumView, ServerContext};

/// A context like a single-node controller's, for feeding frames to the dispatcher.
pub fn test_context() -> ServerContext {
    ServerContext::new(
        1,
        Some("MkU3OEVBNTcwNTJENDM2Qk".into()),
        100 * 1024 * 1024,
        QuorumView::default(),
    )
}

/// Any bytes as one request frame (size prefix removed): the dispatcher answers or closes.
/// A response it writes must itself be a well-formed frame.
pub fn request_frame(ctx: &ServerContext, data: &[u8]) {
    // Answers of every kind, the non-active controller's and Envelopes' included.
    let connection = RequestPrincipal::anonymous(std::net::Ipv4Addr::LOCALHOST.into());
    if let Outcome::Respond(bytes) = api::handle(ctx, "CONTROLLER", &connection, data) {
        assert!(
            bytes.len() >= 8,
            "a response frame holds at least size and correlation id"
        );
        let size = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        assert_eq!(size, bytes.len() - 4, "size prefix matches the frame");
        assert_eq!(
            &bytes[4..8],
            &data[4..8],
            "the response carries the request's correlation id"
        );
    }
}

/// Two selector bytes pick a generated message and version; the rest is decoded. Whatever
/// decodes must re-encode, and the re-encoding must decode to the same bytes again.
pub fn message(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let entry = &REGISTRY[data[0] as usize % REGISTRY.len()];
    let span = (entry.highest_version - entry.lowest_version + 1) as usize;
    let version = entry.lowest_version + (data[1] as usize % span) as i16;
    let body = &data[2..];
    if let Ok(encoded) = (entry.round_trip)(body, version) {
        // Decoding is lossless up to encoding choices (e.g. tag order), so the second round
        // trip must be a fixed point.
        let again = (entry.round_trip)(&encoded, version).unwrap_or_else(|e| {
            panic!(
                "{} v{version}: re-encoded bytes do not decode: {e}",
                entry.name
            )
        });
        assert_eq!(
            encoded, again,
            "{} v{version}: encode is not a fixed point",
            entry.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_a_message(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            message(&data);
        }

        #[test]
        fn any_bytes_as_a_request_frame(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            request_frame(&test_context(), &data);
        }

        #[test]
        fn served_api_headers_with_random_bodies(
            key in prop::sample::select(
                crate::server::api::served_apis().iter().map(|a| a.key).collect::<Vec<_>>()
            ),
            version in 0i16..8,
            body in proptest::collection::vec(any::<u8>(), 0..128),
        ) {
            let mut frame = Vec::new();
            frame.extend_from_slice(&key.to_be_bytes());
            frame.extend_from_slice(&version.to_be_bytes());
            frame.extend_from_slice(&7i32.to_be_bytes());
            frame.extend_from_slice(&(-1i16).to_be_bytes());
            frame.extend_from_slice(&body);
            request_frame(&test_context(), &frame);
        }
    }
}

/// Any bytes as record batches, control records or metadata records. The first byte picks how
/// the rest is read (so that random inputs reach the deep decoders):
/// 0: a buffer of batches (a segment, a Fetch response's records);
/// 1: record bytes inside a well-formed batch header (correct length and CRC; the next byte
///    picks the codec, the count and the control bit);
/// 2: a metadata record value; 3: a control record (next byte: key length, then key, value).
///
/// Nothing may panic, and whatever decodes must re-encode to a fixed point: a batch whose
/// records all decode is rebuilt with `BatchBuilder` and must decode to the same records.
pub fn record_batches(data: &[u8]) {
    use crate::protocol::records::{Attributes, Compression};
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => records_fuzz::check_batches(body),
        1 => {
            let Some((&sel, payload)) = body.split_first() else {
                return;
            };
            let codec = Compression::from_id(sel % 5).expect("0..5 are codecs");
            let control = sel & 0x80 != 0;
            let count = ((sel >> 3) & 0x0f) as i32;
            let attributes = Attributes::new(
                codec,
                crate::protocol::records::TimestampType::CreateTime,
                false,
                control,
                false,
            );
            let batch = records_fuzz::frame(payload, count, attributes.0);
            records_fuzz::check_batches(&batch);
        }
        2 => records_fuzz::check_metadata_value(body),
        _ => {
            let Some((&k, rest)) = body.split_first() else {
                return;
            };
            let k = (k as usize % 8).min(rest.len());
            records_fuzz::check_control(Some(&rest[..k]), Some(&rest[k..]));
        }
    }
}

/// Helpers of [`record_batches`].
pub mod records_fuzz {
    use crate::protocol::records::{
        batches, crc32c, BatchBuilder, BatchView, Compression, ControlRecord,
        MetadataRecordAndVersion, ReadLimits, Record, TimestampType,
    };

    /// Wraps record bytes in a batch header with a correct length and CRC.
    pub fn frame(records: &[u8], count: i32, attributes: i16) -> Vec<u8> {
        let mut b = Vec::with_capacity(61 + records.len());
        b.extend_from_slice(&5i64.to_be_bytes());
        b.extend_from_slice(&((49 + records.len()) as i32).to_be_bytes());
        b.extend_from_slice(&3i32.to_be_bytes());
        b.push(2);
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&attributes.to_be_bytes());
        b.extend_from_slice(&(count - 1).max(0).to_be_bytes());
        b.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
        b.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
        b.extend_from_slice(&(-1i64).to_be_bytes());
        b.extend_from_slice(&(-1i16).to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&count.to_be_bytes());
        b.extend_from_slice(records);
        let crc = crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    }

    /// What a record means independently of how its batch encodes it.
    type Meaning<'p> = (
        i64,
        i64,
        Option<&'p [u8]>,
        Option<&'p [u8]>,
        Vec<(&'p [u8], Option<&'p [u8]>)>,
    );

    fn meaning<'p>(batch: &BatchView<'_>, r: &Record<'p>) -> Meaning<'p> {
        let created = batch.base_timestamp().wrapping_add(r.timestamp_delta);
        let headers = r.headers.iter().map(|h| (h.key, h.value)).collect();
        (r.offset, created, r.key, r.value, headers)
    }

    /// Rebuilds a batch (uncompressed) from its decoded records; None when Kafka's builder would
    /// refuse them (offsets not increasing, negative timestamps, no records...).
    pub fn rebuild(batch: &BatchView<'_>, records: &[Record<'_>]) -> Option<Vec<u8>> {
        let mut b = BatchBuilder::new(batch.base_offset())
            .partition_leader_epoch(batch.partition_leader_epoch())
            .control(batch.is_control())
            .transactional(batch.is_transactional())
            .producer(
                batch.producer_id(),
                batch.producer_epoch(),
                batch.base_sequence(),
            );
        if batch.timestamp_type() == TimestampType::LogAppendTime {
            b = b.log_append_time(batch.max_timestamp());
        }
        if let Some(h) = batch.delete_horizon_ms() {
            b = b.delete_horizon_ms(h);
        }
        for r in records {
            let ts = batch.base_timestamp().wrapping_add(r.timestamp_delta);
            b.append_raw(r.offset, ts, r.key, r.value, &r.headers)
                .ok()?;
        }
        let bytes = b.build().ok()?;
        (!bytes.is_empty()).then_some(bytes)
    }

    /// Splits, validates, iterates and re-encodes.
    pub fn check_batches(buf: &[u8]) {
        let limits = ReadLimits {
            max_decompressed_bytes: 1 << 20,
        };
        let mut it = batches(buf);
        for batch in it.by_ref() {
            assert!(batch.size() >= 61 && batch.position() + batch.size() <= buf.len());
            let _ = (
                batch.last_offset(),
                batch.next_offset(),
                batch.delete_horizon_ms(),
            );
            let _ = batch.validate();
            let Ok(records) = batch.records_with(&limits) else {
                continue;
            };
            let mut decoded = Vec::new();
            let mut all_ok = true;
            for r in records.iter() {
                let Ok(r) = r else {
                    all_ok = false;
                    break;
                };
                if batch.is_control() {
                    check_control(r.key, r.value);
                } else if let Some(v) = r.value {
                    check_metadata_value(v);
                }
                decoded.push(r);
            }
            if !all_ok {
                continue;
            }
            let Some(rebuilt) = rebuild(&batch, &decoded) else {
                continue;
            };
            let again = BatchView::parse(&rebuilt).expect("a rebuilt batch parses");
            again.validate().expect("a rebuilt batch is valid");
            assert_eq!(again.compression().unwrap(), Compression::None);
            let records2 = again
                .records()
                .expect("a rebuilt batch has readable records");
            let decoded2: Vec<_> = records2
                .iter()
                .collect::<Result<_, _>>()
                .expect("a rebuilt batch's records decode");
            let m1: Vec<_> = decoded.iter().map(|r| meaning(&batch, r)).collect();
            let m2: Vec<_> = decoded2.iter().map(|r| meaning(&again, r)).collect();
            assert_eq!(m1, m2, "rebuilding changed the records");
            assert_eq!(
                rebuild(&again, &decoded2).as_deref(),
                Some(&rebuilt[..]),
                "rebuilding is not a fixed point"
            );
        }
        let end = it.end().cloned().expect("iteration ended");
        assert_eq!(end.position(buf.len()), it.position());
    }

    /// A metadata record value: whatever decodes re-encodes to a fixed point and renders JSON.
    pub fn check_metadata_value(value: &[u8]) {
        let Ok(m) = MetadataRecordAndVersion::decode(value) else {
            return;
        };
        let encoded = m.encode().expect("a decoded metadata record re-encodes");
        let again = MetadataRecordAndVersion::decode(&encoded).unwrap_or_else(|e| {
            panic!("re-encoded {} does not decode: {e}", m.record.schema_name())
        });
        assert_eq!(
            again.encode().unwrap(),
            encoded,
            "metadata encode is not a fixed point"
        );
        let _ = m.to_kafka_json();
    }

    /// A control record: whatever decodes re-encodes to a fixed point and renders JSON.
    pub fn check_control(key: Option<&[u8]>, value: Option<&[u8]>) {
        let Ok(c) = ControlRecord::decode(key, value) else {
            return;
        };
        let k = c.key_bytes();
        let v = c
            .value_bytes()
            .expect("a decoded control record re-encodes");
        let again =
            ControlRecord::decode(Some(&k), Some(&v)).expect("re-encoded control record decodes");
        assert_eq!(
            again.value_bytes().unwrap(),
            v,
            "control encode is not a fixed point"
        );
        let _ = c.to_kafka_json();
    }
}

#[cfg(test)]
mod record_batch_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_record_batches(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            record_batches(&data);
        }

        #[test]
        fn structured_record_bytes(mode in 0u8..4, sel in any::<u8>(), data in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut input = vec![mode, sel];
            input.extend_from_slice(&data);
            record_batches(&input);
        }
    }

    #[test]
    fn mutations_of_a_built_batch() {
        use crate::protocol::messages::FeatureLevelRecord;
        use crate::protocol::records::{BatchBuilder, MetadataRecordAndVersion, RecordHeader};
        let mut b = BatchBuilder::new(3).partition_leader_epoch(2);
        let rec = MetadataRecordAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 27,
                ..Default::default()
            },
            0,
        );
        b.append_metadata(1, &rec).unwrap();
        b.append(
            2,
            Some(b"k"),
            Some(b"v"),
            &[RecordHeader {
                key: b"h",
                value: None,
            }],
        )
        .unwrap();
        let bytes = b.build().unwrap();
        let mut input = vec![0u8];
        input.extend_from_slice(&bytes);
        record_batches(&input);
        for i in 1..input.len() {
            for bit in [0x01u8, 0x80] {
                let mut m = input.clone();
                m[i] ^= bit;
                record_batches(&m);
            }
            record_batches(&input[..i]);
        }
    }
}

/// Any bytes as `meta.properties` and as a server.properties file: parsed or refused with an
/// error, never a panic.
pub fn properties_files(data: &[u8]) {
    let text = crate::properties::decode_bytes(data);
    let _ = crate::log::meta_properties::MetaProperties::parse(&text);
    let _ = crate::server::config::ControllerConfig::parse(&text, &[]);
}

#[cfg(test)]
mod properties_tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_properties_files(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            super::properties_files(&data);
        }

        #[test]
        fn key_value_shaped_text_as_properties_files(
            lines in proptest::collection::vec("[a-z.]{1,24}[=: ][ -~]{0,40}", 0..24)
        ) {
            super::properties_files(lines.join("\n").as_bytes());
        }
    }
}

/// Any bytes as a checkpoint file (`decode_snapshot`, what FetchSnapshot downloads and
/// `metadata-state` read), as raft response bodies at every version the node sends, and as
/// committed metadata records for the node's replay: decoded or refused, never a panic; a
/// checkpoint that decodes re-encodes to one that decodes to the same contents.
pub fn snapshot_and_raft_responses(data: &[u8]) {
    use crate::raft::convert::snapshot::{decode_snapshot, encode_snapshot};
    use crate::raft::OffsetAndEpoch;
    if let Ok((header, records)) = decode_snapshot(OffsetAndEpoch::new(0, 0), data.to_vec()) {
        if let Ok(bytes) = encode_snapshot(&header, &records, 1 << 20) {
            let (again, again_records) =
                decode_snapshot(header.id, bytes).expect("a re-encoded checkpoint decodes");
            assert_eq!(again_records, records);
            assert_eq!(again.voters, header.voters);
        }
    }
    for api in crate::server::raft_wire::RAFT_APIS {
        for version in api.min_version..=api.max_version {
            let _ = crate::server::raft_wire::decode_response(api.kind, version, data);
        }
    }
    let mut controller = crate::controller::Controller::new();
    let _ = controller.load_snapshot(0, [data]);
}

#[cfg(test)]
mod snapshot_tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_a_checkpoint_or_a_raft_response(
            data in proptest::collection::vec(any::<u8>(), 0..512)
        ) {
            super::snapshot_and_raft_responses(&data);
        }
    }

    /// A real checkpoint, cut and bit-flipped everywhere.
    #[test]
    fn mutations_of_a_real_checkpoint() {
        use crate::raft::convert::snapshot::encode_snapshot;
        use crate::raft::{OffsetAndEpoch, SnapshotHeader};
        let header = SnapshotHeader {
            id: OffsetAndEpoch::new(7, 2),
            last_contained_log_timestamp: 5,
            kraft_version: 0,
            voters: None,
        };
        let records = [vec![1, 20, 0, 0], vec![1, 12, 0, 3, 7, b'x', 0, 33, 0]];
        let input = encode_snapshot(&header, &records, 1 << 20).unwrap();
        for i in 0..input.len() {
            let mut m = input.clone();
            m[i] ^= 0x41;
            super::snapshot_and_raft_responses(&m);
            super::snapshot_and_raft_responses(&input[..i]);
        }
    }
}

/// Arbitrary metadata record sequences into the controller, as a follower (committed batches,
/// raw bytes included) and as a leader (written batches, commits, renounces): never a panic;
/// every invariant holds after every step; a refused record changes nothing; and a renounce
/// leaves exactly the image a fresh replay of the committed records gives.
pub fn controller_replay(data: &[u8]) {
    use crate::controller::fuzz_model::{record, Draw};
    use crate::controller::Controller;
    use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion, Offset};

    let encode = |r: &MetadataRecord| {
        MetadataRecordAndVersion::new(r.clone(), r.info().highest_version)
            .encode()
            .expect("vocabulary records encode")
    };
    let mut d = Draw(data);
    let mut c = Controller::new();
    let mut next: Offset = 0;
    // Records that replayed, with their offsets; `written` are a leader's, not yet committed.
    let mut committed: Vec<(Offset, MetadataRecord)> = Vec::new();
    let mut written: Vec<(Offset, MetadataRecord)> = Vec::new();
    let mut written_batches: Vec<usize> = Vec::new();
    while !d.is_empty() {
        let before = c.clone();
        let base = next;
        // The decoded records of this step's batch, to check what a refusal left applied.
        let mut batch: Vec<MetadataRecord> = Vec::new();
        let op = d.below(6);
        let n = d.below(4) as usize + 1;
        let outcome = match op {
            0 if written.is_empty() => {
                let len = d.below(24) as usize;
                let raw: Vec<u8> = (0..len).map(|_| d.byte()).collect();
                let r = c.replay_committed_batch(next, std::slice::from_ref(&raw));
                if r.is_ok() {
                    if let Ok(decoded) = MetadataRecordAndVersion::decode(&raw) {
                        committed.push((next, decoded.record));
                    }
                    next += 1;
                }
                r
            }
            1 | 2 if written.is_empty() => {
                let records: Vec<MetadataRecord> = (0..n).map(|_| record(&mut d)).collect();
                batch = records.clone();
                let values: Vec<Vec<u8>> = records.iter().map(encode).collect();
                let r = c.replay_committed_batch(next, &values);
                if r.is_ok() {
                    for rec in records {
                        committed.push((next, rec));
                        next += 1;
                    }
                }
                r
            }
            3 => {
                let records: Vec<MetadataRecord> = (0..n).map(|_| record(&mut d)).collect();
                batch = records.clone();
                let r = c.replay_written_batch(next, &records);
                if r.is_ok() {
                    written_batches.push(records.len());
                    for rec in records {
                        written.push((next, rec));
                        next += 1;
                    }
                }
                r
            }
            4 if !written.is_empty() => {
                // Raft commits whole batches: the high watermark is at a batch end.
                let k = written_batches
                    .drain(..n.min(written_batches.len()))
                    .sum::<usize>();
                let upto = written[k - 1].0;
                committed.extend(written.drain(..k));
                c.on_committed(upto);
                Ok(())
            }
            5 => {
                c.renounce()
                    .expect("a renounce always finds the committed version");
                written.clear();
                written_batches.clear();
                next = c.last_applied() + 1;
                let mut fresh = Controller::new();
                for (offset, rec) in &committed {
                    fresh.replay(rec, *offset).expect("it replayed once");
                }
                fresh.on_committed(c.committed());
                assert_eq!(
                    fresh.image(),
                    c.image(),
                    "a renounce leaves the committed image"
                );
                assert_eq!(fresh.open_transaction(), c.open_transaction());
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = outcome {
            // A fatal fault: the node would stop here. The records of the batch before the
            // refused one are applied, the refused one is not.
            let applied = (e.offset - base) as usize;
            assert!(applied <= batch.len().max(1), "{e}");
            let mut expected = before;
            for (i, rec) in batch.iter().take(applied).enumerate() {
                expected
                    .replay(rec, base + i as Offset)
                    .expect("it replayed once");
            }
            assert_eq!(
                c.image(),
                expected.image(),
                "a refused record leaves no trace: {e}"
            );
            assert_eq!(c.last_applied(), e.offset - 1, "{e}");
            return;
        }
        c.check().unwrap_or_else(|e| panic!("after op {op}: {e}"));
    }
}

#[cfg(test)]
mod controller_replay_tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

        #[test]
        fn any_record_sequence_into_the_controller(
            data in proptest::collection::vec(any::<u8>(), 0..400)
        ) {
            super::controller_replay(&data);
        }
    }
}

mod sasl;
mod scram;
mod tls;
pub use sasl::{jaas_config, sasl_frames};
pub use scram::scram_messages;
pub use tls::{keystore_bytes, principal_rules};
