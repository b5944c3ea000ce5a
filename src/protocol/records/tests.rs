//! Unit tests across the record-batch pieces (golden bytes from Kafka are in
//! protocol-tests/records.rs).

use super::*;
use crate::protocol::messages::leader_change_message::Voter;
use crate::protocol::messages::{LeaderChangeMessage, NoOpRecord};

const T0: i64 = 1_700_000_000_000;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Spec §6.5(a), identical to what Kafka 4.4's `MemoryRecords.withLeaderChangeMessage` writes.
const LEADER_CHANGE_BATCH: &str = "00000000000000000000005e00000001021735ab2b0020000000000000018bcf
    e568000000018bcfe56800ffffffffffffffffffffffffffff00000001580000
    0008000000024400000000000104000000010000000002000000000300030000
    00010000000002000000";

fn voters(ids: &[i32]) -> Vec<Voter> {
    ids.iter()
        .map(|&voter_id| Voter {
            voter_id,
            ..Default::default()
        })
        .collect()
}

fn leader_change_batch() -> Vec<u8> {
    let mut b = BatchBuilder::new_control(0).partition_leader_epoch(1);
    let msg = LeaderChangeMessage {
        leader_id: 1,
        voters: voters(&[1, 2, 3]),
        granting_voters: voters(&[1, 2]),
        ..Default::default()
    };
    b.append_control(T0, &ControlRecord::LeaderChange(msg))
        .unwrap();
    b.build().unwrap()
}

#[test]
fn builder_writes_kafkas_leader_change_batch() {
    assert_eq!(leader_change_batch(), hex(LEADER_CHANGE_BATCH));
}

#[test]
fn view_reads_every_header_field() {
    let bytes = hex(LEADER_CHANGE_BATCH);
    let b = BatchView::parse(&bytes).unwrap();
    assert_eq!(b.size(), 106);
    assert_eq!(b.batch_length(), 94);
    assert_eq!(b.base_offset(), 0);
    assert_eq!(b.last_offset(), 0);
    assert_eq!(b.next_offset(), 1);
    assert_eq!(b.partition_leader_epoch(), 1);
    assert_eq!(b.magic(), 2);
    assert_eq!(b.stored_crc(), 0x1735ab2b);
    assert!(b.is_control() && !b.is_transactional());
    assert_eq!(b.compression().unwrap(), Compression::None);
    assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
    assert_eq!((b.base_timestamp(), b.max_timestamp()), (T0, T0));
    assert_eq!(
        (b.producer_id(), b.producer_epoch(), b.base_sequence()),
        (-1, -1, -1)
    );
    assert_eq!(b.record_count(), 1);
    assert_eq!(b.delete_horizon_ms(), None);
    b.validate().unwrap();
    let records = b.records().unwrap();
    let recs: Vec<_> = records.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 1);
    let rec = ControlRecord::decode(recs[0].key, recs[0].value).unwrap();
    assert_eq!(rec.record_type(), ControlRecordType::LeaderChange);
}

#[test]
fn data_records_round_trip_through_builder_and_view() {
    let headers = [
        RecordHeader {
            key: b"h1",
            value: Some(b"v1"),
        },
        RecordHeader {
            key: b"",
            value: None,
        },
    ];
    let mut b = BatchBuilder::new(1000).partition_leader_epoch(7);
    b.append(T0, None, None, &[]).unwrap();
    b.append(T0 - 5, Some(b""), Some(&[7u8; 300]), &headers)
        .unwrap();
    b.append_with_offset(1010, -1, Some(b"k"), Some(b"v"), &[])
        .unwrap();
    assert_eq!(b.next_offset(), 1011);
    let bytes = b.build().unwrap();
    let v = BatchView::parse(&bytes).unwrap();
    v.validate().unwrap();
    assert_eq!(
        (v.base_offset(), v.last_offset(), v.record_count()),
        (1000, 1010, 3)
    );
    assert_eq!((v.base_timestamp(), v.max_timestamp()), (T0, T0));
    let records = v.records().unwrap();
    assert!(!records.is_decompressed());
    let recs: Vec<_> = records.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs[0].offset, 1000);
    assert_eq!((recs[0].key, recs[0].value), (None, None));
    assert_eq!(recs[1].timestamp, T0 - 5);
    assert_eq!(recs[1].key, Some(&b""[..]));
    assert_eq!(recs[1].headers, headers);
    assert_eq!(recs[2].offset, 1010);
    assert_eq!(recs[2].timestamp, -1);
    assert_eq!(
        recs.iter().map(|r| r.size_in_bytes).sum::<usize>(),
        bytes.len() - 61
    );
}

#[test]
fn builder_refuses_what_kafka_refuses() {
    let mut b = BatchBuilder::new(10);
    assert!(matches!(
        b.append_with_offset(9, 0, None, None, &[]),
        Err(BuildError::OffsetOutOfRange { .. })
    ));
    b.append(0, None, None, &[]).unwrap();
    assert!(matches!(
        b.append_with_offset(10, 0, None, None, &[]),
        Err(BuildError::OffsetNotIncreasing { .. })
    ));
    assert!(matches!(
        b.append(-2, None, None, &[]),
        Err(BuildError::NegativeTimestamp { .. })
    ));
    let footer = ControlRecord::SnapshotFooter(Default::default());
    assert!(matches!(
        b.append_control(0, &footer),
        Err(BuildError::ControlMismatch { .. })
    ));
    let mut c = BatchBuilder::new_control(0);
    assert!(matches!(
        c.append(0, None, None, &[]),
        Err(BuildError::ControlMismatch { .. })
    ));
    let t = BatchBuilder::new(0).transactional(true);
    assert!(matches!(t.build(), Err(BuildError::BadProducerState(_))));
    assert_eq!(BatchBuilder::new(0).build().unwrap(), Vec::<u8>::new());
}

#[test]
fn crc_covers_attributes_to_end_but_not_the_epoch() {
    let bytes = hex(LEADER_CHANGE_BATCH);
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        let Ok(v) = BatchView::parse(&b) else {
            continue;
        };
        // The CRC covers bytes 21.. (and is at 17..21); a changed length changes what it covers.
        let covered = i >= 17 || (8..12).contains(&i);
        assert_eq!(v.verify_crc().is_err(), covered, "flip at byte {i}");
        if covered {
            assert_eq!(v.verify_crc().unwrap_err().position(), 17);
            assert!(v.validate().is_err());
        }
    }
}

#[test]
fn split_reports_torn_tails_where_they_start() {
    let mut buf = leader_change_batch();
    let first = buf.len();
    let mut b = BatchBuilder::new(1).partition_leader_epoch(1);
    b.append_metadata(T0, &MetadataRecordAndVersion::new(NoOpRecord::default(), 0))
        .unwrap();
    b.write_to(&mut buf).unwrap();
    let whole = split_batches(&buf);
    assert_eq!(whole.batches.len(), 2);
    assert!(whole.end.is_clean());
    assert_eq!(whole.valid_bytes(), buf.len());
    for cut in 0..buf.len() {
        let s = split_batches(&buf[..cut]);
        let complete = if cut >= first { 1 } else { 0 };
        assert_eq!(s.batches.len(), complete, "cut {cut}");
        let start = if cut >= first { first } else { 0 };
        match s.end {
            SplitEnd::Clean => assert!(cut == 0 || cut == first, "cut {cut}"),
            SplitEnd::Torn {
                position,
                available,
                ..
            } => {
                assert_eq!((position, available), (start, cut - start), "cut {cut}")
            }
            SplitEnd::Corrupt { .. } => panic!("cut {cut}: {:?}", s.end),
        }
        assert_eq!(s.end.position(cut), start.min(cut));
    }
}

#[test]
fn split_reports_corruption() {
    let mut buf = leader_change_batch();
    buf.extend_from_slice(&[0u8; 20]); // a preallocated, zero-filled tail
    let s = split_batches(&buf);
    assert_eq!(s.batches.len(), 1);
    let SplitEnd::Corrupt { position, error } = &s.end else {
        panic!("{:?}", s.end)
    };
    assert_eq!(*position, 106);
    assert_eq!(error.kind, ErrorKind::BadBatchLength { length: 0 });
    assert_eq!(
        error.to_string(),
        "at byte 114: invalid batch length 0 (a v2 batch length is at least 49)"
    );

    let mut v1 = leader_change_batch();
    v1[16] = 1;
    let SplitEnd::Corrupt { error, .. } = split_batches(&v1).end else {
        panic!()
    };
    assert_eq!(error.kind, ErrorKind::UnsupportedMagic { magic: 1 });

    let big = leader_change_batch();
    let mut it = batches(&big).with_max_batch_size(100);
    assert!(it.next().is_none());
    assert!(matches!(
        it.end(),
        Some(SplitEnd::Corrupt { position: 0, .. })
    ));
}

/// A batch around arbitrary record bytes, with a correct length and CRC.
fn batch_around(records: &[u8], count: i32, attributes: i16) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((49 + records.len()) as i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&attributes.to_be_bytes());
    b.extend_from_slice(&(count - 1).to_be_bytes());
    b.extend_from_slice(&[0; 8 + 8]);
    b.extend_from_slice(&(-1i64).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

fn one_record_payload() -> Vec<u8> {
    let mut b = BatchBuilder::new(0);
    b.append(0, Some(b"key"), Some(b"value"), &[]).unwrap();
    b.build().unwrap()[61..].to_vec()
}

#[test]
fn record_errors_name_the_record_and_byte() {
    let payload = one_record_payload();
    // Two records declared, one present.
    let bytes = batch_around(&payload, 2, 0);
    let v = BatchView::parse(&bytes).unwrap();
    v.validate().unwrap();
    let records = v.records().unwrap();
    let recs: Vec<_> = records.iter().collect();
    assert!(recs[0].is_ok());
    let e = recs[1].clone().unwrap_err();
    assert_eq!(e.at, Location::Buffer(61 + payload.len()));
    assert!(
        matches!(e.kind, ErrorKind::BadRecord { index: 1, .. }),
        "{e}"
    );
    assert_eq!(recs.len(), 2);
    // Zero records declared, one present.
    let bytes = batch_around(&payload, 0, 0);
    let v = BatchView::parse(&bytes).unwrap();
    let e = v.records().unwrap().iter().next().unwrap().unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::TrailingRecordBytes { count: 0, .. }),
        "{e}"
    );
    // A negative count and an unknown codec.
    let bytes = batch_around(&payload, -1, 0);
    assert!(matches!(
        BatchView::parse(&bytes)
            .unwrap()
            .records()
            .unwrap_err()
            .kind,
        ErrorKind::BadRecordCount { count: -1 }
    ));
    let bytes = batch_around(&payload, 1, 6);
    assert!(matches!(
        BatchView::parse(&bytes)
            .unwrap()
            .records()
            .unwrap_err()
            .kind,
        ErrorKind::UnknownCompression { id: 6 }
    ));
    // A huge header count is refused before allocating.
    let mut p = payload.clone();
    let last = p.len() - 1;
    p[last] = 0xfe; // varint header count, continued...
    p.extend_from_slice(&[0xff, 0xff, 0x0f]);
    p[0] += 3; // record length grows by the 3 added bytes (zig-zag: +6)
    p[0] += 3;
    let bytes = batch_around(&p, 1, 0);
    let e = BatchView::parse(&bytes)
        .unwrap()
        .records()
        .unwrap()
        .iter()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("header count"), "{e}");
}

fn compressed(codec: Compression, payload: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match codec {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(payload).unwrap();
            e.finish().unwrap()
        }
        Compression::Snappy => {
            let mut out = vec![
                0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
            ];
            for chunk in payload.chunks(32 * 1024) {
                let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
                out.extend_from_slice(&(c.len() as i32).to_be_bytes());
                out.extend_from_slice(&c);
            }
            out
        }
        Compression::Zstd => {
            ruzstd::encoding::compress_to_vec(payload, ruzstd::encoding::CompressionLevel::Fastest)
        }
        Compression::Lz4 | Compression::None => unreachable!(),
    }
}

#[test]
fn compressed_batches_decode_and_zip_bombs_are_refused() {
    let payload = one_record_payload();
    for codec in [Compression::Gzip, Compression::Snappy, Compression::Zstd] {
        let bytes = batch_around(&compressed(codec, &payload), 1, codec.id() as i16);
        let v = BatchView::parse(&bytes).unwrap();
        v.validate().unwrap();
        let records = v.records().unwrap();
        assert!(records.is_decompressed());
        assert_eq!(records.payload(), &payload[..], "{codec}");
        let r = records.iter().next().unwrap().unwrap();
        assert_eq!(r.value, Some(&b"value"[..]));

        let zeros = vec![0u8; 3 << 20];
        let bomb = batch_around(&compressed(codec, &zeros), 1, codec.id() as i16);
        let v = BatchView::parse(&bomb).unwrap();
        let limits = ReadLimits {
            max_decompressed_bytes: 1 << 20,
        };
        let e = v.records_with(&limits).unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::DecompressedTooLarge {
                codec,
                limit: 1 << 20
            },
            "{codec}"
        );
        assert_eq!(e.at, Location::Buffer(61));
        assert_eq!(v.records().unwrap().payload().len(), 3 << 20);

        let c = compressed(codec, &payload);
        for cut in 0..c.len() {
            let _ = decompress(codec, &c[..cut], 1 << 20); // never panics
        }
        assert!(
            decompress(codec, &c[..c.len() - 1], 1 << 20).is_err() || codec == Compression::Snappy
        );
    }
}

#[test]
fn raw_snappy_without_xerial_framing_is_read() {
    let payload = one_record_payload();
    let raw = snap::raw::Encoder::new().compress_vec(&payload).unwrap();
    assert_eq!(
        decompress(Compression::Snappy, &raw, 1 << 20).unwrap(),
        payload
    );
}

#[test]
fn zstd_frames_asking_for_huge_windows_are_read_within_the_limit() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 97) as u8).collect();
    let mut frame = compressed(Compression::Zstd, &data);
    // Ask for the largest window zstd allows (3.75 TiB); the data needs far less.
    if frame[4] & 0x20 == 0 {
        frame[5] = 0xff;
    } else {
        return; // single-segment: no window descriptor to inflate
    }
    assert_eq!(
        decompress(Compression::Zstd, &frame, 1 << 20).unwrap(),
        data
    );
    assert!(matches!(
        decompress(Compression::Zstd, &frame, 1000),
        Err(ErrorKind::DecompressedTooLarge { .. })
    ));
    // Two frames back to back, with a skippable frame between.
    let mut two = frame.clone();
    two.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 9, 9]);
    two.extend_from_slice(&frame);
    assert_eq!(
        decompress(Compression::Zstd, &two, 1 << 20).unwrap().len(),
        2 * data.len()
    );
}

#[test]
fn corrupted_compressed_streams_never_panic() {
    let mut b = BatchBuilder::new(0);
    for i in 0..40 {
        let v = format!("value {i} of a batch that compresses {}", i % 7);
        b.append(i, Some(b"k"), Some(v.as_bytes()), &[]).unwrap();
    }
    let payload = b.build().unwrap()[61..].to_vec();
    let mut lz4 = vec![0x04, 0x22, 0x4D, 0x18, 0x70, 0x40, 0];
    lz4[6] = (super::lz4::xxh32(&lz4[4..6], 0) >> 8) as u8;
    let block = lz4_flex::block::compress(&payload);
    lz4.extend_from_slice(&(block.len() as u32).to_le_bytes());
    lz4.extend_from_slice(&block);
    lz4.extend_from_slice(&super::lz4::xxh32(&block, 0).to_le_bytes());
    lz4.extend_from_slice(&[0; 4]);
    assert_eq!(
        decompress(Compression::Lz4, &lz4, 1 << 20).unwrap(),
        payload
    );
    let streams = [
        (Compression::Gzip, compressed(Compression::Gzip, &payload)),
        (
            Compression::Snappy,
            compressed(Compression::Snappy, &payload),
        ),
        (Compression::Zstd, compressed(Compression::Zstd, &payload)),
        (Compression::Lz4, lz4),
    ];
    for (codec, stream) in streams {
        for i in 0..stream.len() {
            for x in [0x01u8, 0x80, 0xff] {
                let mut m = stream.clone();
                m[i] ^= x;
                if let Ok(out) = decompress(codec, &m, 1 << 16) {
                    assert!(out.len() <= 1 << 16);
                }
            }
        }
    }
}
