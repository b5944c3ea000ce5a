//! Writes a synthetic `__cluster_metadata-0` segment for the image benchmark (`make bench-image`):
//! metadata.version 4.4-IV2, `BROKERS` registered brokers with one log directory each, then
//! `TOPICS` topics of `PARTITIONS` partitions with `REPLICAS` replicas, one batch per topic as
//! CreateTopics writes them.
//!
//! ```text
//! synth_metadata_log OUT_DIR [TOPICS=1000] [PARTITIONS=1000] [REPLICAS=3] [BROKERS=REPLICAS]
//! ```

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::register_broker_record::BrokerEndpoint;
use kraftd::protocol::messages::{
    FeatureLevelRecord, PartitionRecord, RegisterBrokerRecord, TopicRecord,
};
use kraftd::protocol::records::{BatchBuilder, MetadataRecord, MetadataRecordAndVersion};

const EPOCH: i32 = 1;
const TIMESTAMP: i64 = 1_800_000_000_000;

fn arg(args: &[String], i: usize, default: usize) -> usize {
    args.get(i).map_or(default, |a| {
        a.parse()
            .unwrap_or_else(|_| panic!("argument {i} ({a}) is not a count"))
    })
}

fn uuid(kind: u8, n: u64) -> Uuid {
    let mut b = [0u8; 16];
    b[0] = kind;
    b[8..].copy_from_slice(&n.to_be_bytes());
    Uuid(b)
}

fn batch(out: &mut impl Write, base: &mut i64, records: &[MetadataRecord]) {
    let mut b = BatchBuilder::new(*base).partition_leader_epoch(EPOCH);
    for r in records {
        let version = r.info().highest_version;
        b.append_metadata(
            TIMESTAMP,
            &MetadataRecordAndVersion::new(r.clone(), version),
        )
        .expect("the record encodes");
    }
    out.write_all(&b.build().expect("the batch builds"))
        .expect("write the segment");
    *base = b.next_offset();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(out) = args.get(1) else {
        eprintln!("usage: synth_metadata_log OUT_DIR [TOPICS] [PARTITIONS] [REPLICAS] [BROKERS]");
        std::process::exit(2);
    };
    let topics = arg(&args, 2, 1000);
    let partitions = arg(&args, 3, 1000);
    let replicas = arg(&args, 4, 3);
    let brokers = arg(&args, 5, replicas).max(replicas);
    let dir = Path::new(out).join("__cluster_metadata-0");
    fs::create_dir_all(&dir).expect("create the partition directory");
    let path = dir.join("00000000000000000000.log");
    let mut w = BufWriter::with_capacity(1 << 20, File::create(&path).expect("create the segment"));
    let mut base = 0;

    let mut setup: Vec<MetadataRecord> = vec![FeatureLevelRecord {
        name: "metadata.version".into(),
        feature_level: 33,
        ..Default::default()
    }
    .into()];
    for b in 0..brokers {
        setup.push(
            RegisterBrokerRecord {
                broker_id: b as i32,
                incarnation_id: uuid(1, b as u64),
                broker_epoch: b as i64 + 1,
                end_points: vec![BrokerEndpoint {
                    name: "PLAINTEXT".into(),
                    host: format!("broker-{b}"),
                    port: 9092,
                    security_protocol: 0,
                    ..Default::default()
                }],
                rack: None,
                fenced: false,
                log_dirs: vec![uuid(2, b as u64)],
                ..Default::default()
            }
            .into(),
        );
    }
    batch(&mut w, &mut base, &setup);

    for t in 0..topics {
        let topic_id = uuid(3, t as u64);
        let mut records: Vec<MetadataRecord> = vec![TopicRecord {
            name: format!("topic-{t:05}"),
            topic_id,
            ..Default::default()
        }
        .into()];
        for p in 0..partitions {
            let first = (t + p) % brokers;
            let placed: Vec<i32> = (0..replicas)
                .map(|r| ((first + r) % brokers) as i32)
                .collect();
            records.push(
                PartitionRecord {
                    partition_id: p as i32,
                    topic_id,
                    directories: placed.iter().map(|b| uuid(2, *b as u64)).collect(),
                    isr: placed.clone(),
                    leader: placed[0],
                    replicas: placed,
                    leader_epoch: 0,
                    partition_epoch: 0,
                    ..Default::default()
                }
                .into(),
            );
        }
        batch(&mut w, &mut base, &records);
    }
    w.flush().expect("flush the segment");
    println!(
        "{}: {base} records ({topics} topics x {partitions} partitions x {replicas} replicas, {brokers} brokers)",
        path.display()
    );
}
