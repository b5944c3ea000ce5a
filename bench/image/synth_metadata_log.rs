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

use kraftd::protocol::records::{BatchBuilder, MetadataRecord, MetadataRecordAndVersion};

#[path = "../synth_records.rs"]
mod synth_records;

const EPOCH: i32 = 1;
const TIMESTAMP: i64 = 1_800_000_000_000;

fn arg(args: &[String], i: usize, default: usize) -> usize {
    args.get(i).map_or(default, |a| {
        a.parse()
            .unwrap_or_else(|_| panic!("argument {i} ({a}) is not a count"))
    })
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

    batch(&mut w, &mut base, &synth_records::setup(brokers));
    for t in 0..topics {
        batch(
            &mut w,
            &mut base,
            &synth_records::topic(t, partitions, replicas, brokers),
        );
    }
    w.flush().expect("flush the segment");
    println!(
        "{}: {base} records ({topics} topics x {partitions} partitions x {replicas} replicas, {brokers} brokers)",
        path.display()
    );
}
