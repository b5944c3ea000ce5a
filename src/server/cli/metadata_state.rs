//! `kraftd metadata-state <metadata log dir> [--at OFFSET]`: what a controller replaying this
//! directory holds at an offset. It starts from the latest snapshot that ends at or below the
//! offset (never the bootstrap checkpoint: its records become state only through activation),
//! replays the committed-looking batches after it, and prints the finalized feature levels,
//! the registered controllers and how many records of each type it replayed.
//!
//! It only reads files, so it is safe on a running node's directory (a batch being written is
//! a torn tail and is left out). A record that does not decode is an error (exit 1), as it
//! would stop a Java controller.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::log::snapshot::{parse_file_name, SnapshotFileKind};
use crate::log::RawSnapshotReader;
use crate::log::PARTITION_DIR_NAME;
use crate::raft::convert::records::decode_batches;
use crate::raft::SnapshotReader;
use crate::raft::{OffsetAndEpoch, Records};
use crate::server::node::replay::Replay;

#[derive(Debug, Args, PartialEq, Eq)]
pub struct MetadataStateArgs {
    /// The metadata log directory (holding `__cluster_metadata-0`) or the partition directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Replay up to and including this offset (default: everything)
    #[arg(long, value_name = "OFFSET")]
    pub at: Option<i64>,
}

pub fn run(args: &MetadataStateArgs) -> Result<i32, String> {
    let partition = if args.dir.join(PARTITION_DIR_NAME).is_dir() {
        args.dir.join(PARTITION_DIR_NAME)
    } else {
        args.dir.clone()
    };
    let at = args.at.unwrap_or(i64::MAX);
    let state = replay_dir(&partition, at)?;
    print!("{}", state.report);
    Ok(0)
}

/// A replayed directory and the text that describes it.
pub struct ReplayedDir {
    pub replay: Replay,
    pub report: String,
}

/// Replays `partition` (a `__cluster_metadata-0` directory) up to and including offset `at`.
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
    let mut replay = Replay::new();
    let mut from = 0;
    let mut source = "the start of the log".to_string();
    let snapshot = snapshots
        .iter()
        .filter(|(id, _)| id.offset > 0 && id.offset <= at.saturating_add(1))
        .max_by_key(|(id, _)| (id.offset, id.epoch));
    if let Some((id, path)) = snapshot {
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let raw = RawSnapshotReader::open_path(path, *id).map_err(|e| failed(&e))?;
        let snapshot = SnapshotReader::open(raw).map_err(|e| failed(&e))?;
        replay.begin_snapshot(id.offset);
        for value in snapshot.records() {
            let value = value.map_err(|e| failed(&e))?;
            replay
                .apply_snapshot_record(&value)
                .map_err(|e| failed(&e))?;
        }
        from = id.offset;
        source = format!(
            "snapshot {}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    let mut batches = 0;
    for (_, path) in &segments {
        let bytes = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
        let split = crate::protocol::records::split_batches(&bytes);
        for view in split.batches {
            if view.base_offset() < from || view.last_offset() > at {
                continue;
            }
            for b in decode_batches(view.bytes()).map_err(|e| format!("{}: {e}", path.display()))? {
                if matches!(b.records, Records::Data(_)) {
                    batches += 1;
                }
                replay
                    .apply_batch(&b)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
    }
    let report = render(&replay, &source, batches);
    Ok(ReplayedDir { replay, report })
}

fn render(replay: &Replay, source: &str, batches: usize) -> String {
    let mut out = format!(
        "Replayed up to offset {} from {source}, then {batches} data batches\n",
        replay.applied
    );
    out.push_str("Finalized features:\n");
    for (name, level) in &replay.features {
        out.push_str(&format!("  {name}={level}\n"));
    }
    let ids: Vec<String> = replay.controllers.keys().map(|i| i.to_string()).collect();
    out.push_str(&format!("Registered controllers: {}\n", ids.join(", ")));
    out.push_str("Records replayed:\n");
    let counts: BTreeMap<_, _> = replay.counts.iter().collect();
    for (name, n) in counts {
        out.push_str(&format!("  {name} {n}\n"));
    }
    out
}
