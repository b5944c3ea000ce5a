//! `kraftd metadata-state <metadata log dir> [--at OFFSET] [--json]`: the metadata image a
//! controller replaying this directory holds at an offset.
//!
//! It starts from the latest snapshot that ends at or below the offset (never the bootstrap
//! checkpoint: its records become state only through the first leader's activation, as in Java's
//! loader), replays every batch after it whose last offset is at or below the offset, and prints
//! a summary, or with `--json` the image in the canonical JSON that Java's image dumper prints
//! for the same directory (compat/image-dumper/FORMAT.md): the published image, so an open
//! metadata transaction is left out.
//!
//! It only reads files, so it is safe on a running node's directory (a batch being written is
//! a torn tail and is left out). A record that does not replay is an error (exit 1), as it
//! would stop a Java controller.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::controller::Controller;
use crate::log::snapshot::{parse_file_name, SnapshotFileKind};
use crate::log::RawSnapshotReader;
use crate::log::PARTITION_DIR_NAME;
use crate::protocol::records::metadata::metadata_record_type;
use crate::raft::convert::records::decode_batches;
use crate::raft::SnapshotReader;
use crate::raft::{OffsetAndEpoch, Records};

#[derive(Debug, Args, PartialEq, Eq)]
pub struct MetadataStateArgs {
    /// The metadata log directory (holding `__cluster_metadata-0`) or the partition directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Replay the batches that end at or below this offset (default: everything)
    #[arg(long, value_name = "OFFSET")]
    pub at: Option<i64>,
    /// Print the image as canonical JSON (the format of compat/image-dumper)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &MetadataStateArgs) -> Result<i32, String> {
    let partition = if args.dir.join(PARTITION_DIR_NAME).is_dir() {
        args.dir.join(PARTITION_DIR_NAME)
    } else {
        args.dir.clone()
    };
    let at = args.at.unwrap_or(i64::MAX);
    let state = replay_dir(&partition, at)?;
    if args.json {
        let (offset, image) = state.controller.stable_image();
        println!("{}", image.to_json(offset));
    } else {
        print!("{}", state.report());
    }
    Ok(0)
}

/// A replayed directory.
pub struct ReplayedDir {
    pub controller: Controller,
    /// Where the replay started: a snapshot's file name, or the start of the log.
    pub source: String,
    pub data_batches: usize,
    /// Records replayed after the snapshot, by Kafka's record type name.
    pub counts: BTreeMap<&'static str, u64>,
}

/// Replays `partition` (a `__cluster_metadata-0` directory) through the batches ending at or
/// below `at`.
pub fn replay_dir(partition: &Path, at: i64) -> Result<ReplayedDir, String> {
    let mut snapshots = Vec::new();
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(partition)
        .map_err(|e| format!("cannot list {}: {e}", partition.display()))?
    {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if let Some((id, SnapshotFileKind::Frozen)) = parse_file_name(&name) {
            snapshots.push((OffsetAndEpoch::new(id.offset, id.epoch), path));
        } else if let Some(base) = name
            .strip_suffix(".log")
            .and_then(|b| b.parse::<i64>().ok())
        {
            segments.push((base, path));
        }
    }
    segments.sort();
    let mut out = ReplayedDir {
        controller: Controller::new(),
        source: "the start of the log".to_string(),
        data_batches: 0,
        counts: BTreeMap::new(),
    };
    let mut from = 0;
    let snapshot = snapshots
        .iter()
        .filter(|(id, _)| id.offset > 0 && id.offset <= at.saturating_add(1))
        .max_by_key(|(id, _)| (id.offset, id.epoch));
    if let Some((id, path)) = snapshot {
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let raw = RawSnapshotReader::open_path(path, *id).map_err(|e| failed(&e))?;
        let snapshot = SnapshotReader::open(raw).map_err(|e| failed(&e))?;
        // Streamed: the first unreadable batch ends the records and is the error.
        let mut unreadable = None;
        let records = snapshot
            .records()
            .map_while(|r| r.map_err(|e| unreadable = Some(e)).ok());
        out.controller
            .load_snapshot(id.offset - 1, records)
            .map_err(|e| failed(&e))?;
        if let Some(e) = unreadable {
            return Err(failed(&e));
        }
        from = id.offset;
        out.source = format!(
            "snapshot {}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    for (_, path) in &segments {
        let bytes = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
        let split = crate::protocol::records::split_batches(&bytes);
        for view in split.batches {
            if view.base_offset() < from || view.last_offset() > at {
                continue;
            }
            for b in decode_batches(view.bytes()).map_err(|e| format!("{}: {e}", path.display()))? {
                match &b.records {
                    Records::Data(values) => {
                        out.data_batches += 1;
                        for v in values {
                            // The type id is the second byte of every frame below type 128.
                            if let Some(t) = v.get(1).and_then(|t| metadata_record_type(*t as i16))
                            {
                                *out.counts.entry(t.kafka_name).or_default() += 1;
                            }
                        }
                        out.controller
                            .replay_committed_batch(b.base_offset, values)
                            .map_err(|e| format!("{}: {e}", path.display()))?;
                    }
                    _ => out.controller.skip_committed_control_batch(b.last_offset()),
                }
            }
        }
    }
    Ok(out)
}

impl ReplayedDir {
    /// The summary `metadata-state` prints without `--json`.
    pub fn report(&self) -> String {
        let c = &self.controller;
        let image = c.image();
        let mut out = format!(
            "Replayed up to offset {} from {}, then {} data batches\n",
            c.last_applied(),
            self.source,
            self.data_batches
        );
        if let Some(t) = c.open_transaction() {
            out.push_str(&format!(
                "Open metadata transaction since offset {} (not yet published)\n",
                t.begun_at
            ));
        }
        out.push_str("Finalized features:\n");
        for (name, level) in &image.features.levels {
            out.push_str(&format!("  {name}={level}\n"));
        }
        let ids: Vec<String> = image
            .cluster
            .controllers
            .keys()
            .map(|i| i.to_string())
            .collect();
        out.push_str(&format!("Registered controllers: {}\n", ids.join(", ")));
        let brokers: Vec<String> = image
            .cluster
            .brokers
            .values()
            .map(|b| format!("{}{}", b.id, if b.fenced { " (fenced)" } else { "" }))
            .collect();
        out.push_str(&format!("Registered brokers: {}\n", brokers.join(", ")));
        out.push_str(&format!(
            "Topics: {}, partitions: {}\n",
            image.topics.by_id.len(),
            image.topics.partition_count()
        ));
        out.push_str(&format!(
            "Config resources: {}, quota entities: {}, ACLs: {}, SCRAM credentials: {}, delegation tokens: {}, next producer id: {}\n",
            image.configs.resources.len(),
            image.client_quotas.entities.len(),
            image.acls.by_id.len(),
            image.scram.credentials.len(),
            image.delegation_tokens.by_id.len(),
            image.producer_ids.next_producer_id
        ));
        out.push_str("Records replayed:\n");
        for (name, n) in &self.counts {
            out.push_str(&format!("  {name} {n}\n"));
        }
        out
    }
}
