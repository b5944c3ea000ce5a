//! `kraftd metadata-state <metadata log dir> [--at OFFSET] [--json] [--write-snapshot OUT_DIR]`:
//! the metadata image a controller replaying this directory holds at an offset, and optionally
//! that image as a snapshot file Kafka can load.
//!
//! It starts from the latest snapshot that ends at or below the offset (never the bootstrap
//! checkpoint: its records become state only through the first leader's activation, as in Java's
//! loader), replays every batch after it whose last offset is at or below the offset, and prints
//! a summary, or with `--json` the image in the canonical JSON that Java's image dumper prints
//! for the same directory (compat/image-dumper/FORMAT.md): the published image, so an open
//! metadata transaction is left out.
//!
//! `--write-snapshot` writes `<end offset>-<epoch>.checkpoint` into OUT_DIR: the published
//! image's records (src/controller/snapshot), with the epoch, timestamp, kraft.version and voters
//! of the log at that offset. An image its own metadata.version cannot hold whole is refused, as
//! Java's snapshot writer refuses it.
//!
//! It only reads the log, so it is safe on a running node's directory (a batch being written is
//! a torn tail and is left out). A record that does not replay is an error (exit 1), as it
//! would stop a Java controller.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::checkpoint::{load_checkpoint, CheckpointError};
use crate::controller::{Controller, ReplayError, SnapshotError, SnapshotLoad};
use crate::log::scan::scan_file;
use crate::log::snapshot::{parse_file_name, OffsetAndEpoch, SnapshotFileKind};
use crate::log::PARTITION_DIR_NAME;
use crate::protocol::messages::VotersRecord;
use crate::protocol::records::metadata::metadata_record_type;
use crate::protocol::records::MAX_BATCH_SIZE_BYTES;
use crate::raft::convert::records::decode_batches;
use crate::raft::convert::ConvertError;
use crate::raft::log::{Batch, ControlRecord};
use crate::raft::{LogError, Records, SnapshotHeader, SnapshotWriter};
use crate::server::image_snapshot::{write_image, ImageSnapshotError};

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
    /// Write the image as a snapshot, `<end offset>-<epoch>.checkpoint`, into this directory
    #[arg(long, value_name = "OUT_DIR")]
    pub write_snapshot: Option<PathBuf>,
}

/// Why `metadata-state` could not replay a directory or write its snapshot. Each names the
/// file or directory concerned.
#[derive(Debug, thiserror::Error)]
pub enum MetadataStateError {
    #[error("cannot list {}: {source}", .dir.display())]
    List {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A segment cannot be opened or read.
    #[error("{}: {source}", .path.display())]
    Segment {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A record of a segment does not replay (it would stop a Java controller too).
    #[error("{}: {source}", .path.display())]
    Replay {
        path: PathBuf,
        #[source]
        source: ReplayError,
    },
    #[error("cannot print the image: {0}")]
    Print(#[source] std::io::Error),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error("nothing was replayed, so there is no image to snapshot; give a directory whose log holds metadata records")]
    NothingReplayed,
    #[error("cannot create {}: {source}", .dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The snapshot writer failed (a full disk, an existing file).
    #[error(transparent)]
    Write(#[from] LogError),
    #[error(transparent)]
    Image(#[from] ImageSnapshotError),
    #[error("cannot stat {}: {source}", .path.display())]
    Stat {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub fn run(args: &MetadataStateArgs) -> Result<i32, MetadataStateError> {
    let partition = if args.dir.join(PARTITION_DIR_NAME).is_dir() {
        args.dir.join(PARTITION_DIR_NAME)
    } else {
        args.dir.clone()
    };
    let at = args.at.unwrap_or(i64::MAX);
    let state = replay_dir(&partition, at)?;
    let written = match &args.write_snapshot {
        Some(out) => Some(write_snapshot(&state, out)?),
        None => None,
    };
    if args.json {
        let (offset, image) = state.controller.stable_image();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        image
            .write_json(offset, &mut out)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .map_err(MetadataStateError::Print)?;
    } else if written.is_none() {
        print!("{}", state.report());
    }
    if let Some(w) = written {
        let line = format!(
            "Wrote {} ({} records in {} data batches, {} bytes)",
            w.path.display(),
            w.records,
            w.data_batches,
            w.bytes
        );
        // stdout is the JSON's when it is asked for.
        if args.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    Ok(0)
}

/// A snapshot file `metadata-state --write-snapshot` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenCheckpoint {
    pub path: PathBuf,
    pub bytes: u64,
    pub records: u64,
    pub data_batches: u64,
}

/// Writes the published image of `state` as a snapshot into `out`, through the writer and the
/// record grouping the node's own snapshots use.
pub fn write_snapshot(
    state: &ReplayedDir,
    out: &Path,
) -> Result<WrittenCheckpoint, MetadataStateError> {
    let (offset, records) = state.controller.snapshot()?;
    let header = state
        .raft
        .header_at(offset)
        .ok_or(MetadataStateError::NothingReplayed)?;
    std::fs::create_dir_all(out).map_err(|source| MetadataStateError::CreateDir {
        dir: out.to_path_buf(),
        source,
    })?;
    let mut writer = SnapshotWriter::create_in(out, header, MAX_BATCH_SIZE_BYTES)?;
    write_image(&mut writer, records, offset)?;
    // Sealed first, so that the last data batch is counted.
    writer.seal()?;
    let (records, data_batches) = (writer.record_count(), writer.data_batch_count());
    let path = writer.freeze_in(out)?;
    let bytes = match std::fs::metadata(&path) {
        Ok(m) => m.len(),
        Err(source) => return Err(MetadataStateError::Stat { path, source }),
    };
    Ok(WrittenCheckpoint {
        path,
        bytes,
        records,
        data_batches,
    })
}

/// What a snapshot of the replayed image needs from the raft log besides the image: the epoch
/// and timestamp of the batch holding its last offset, and the kraft.version and voters then.
#[derive(Debug, Default)]
pub struct RaftHistory {
    /// (last offset, epoch, timestamp) of each batch replayed (or of the snapshot started from).
    batches: Vec<(i64, i32, i64)>,
    /// kraft.version and voters as of an offset, oldest first.
    kraft: Vec<(i64, i16, Option<VotersRecord>)>,
}

impl RaftHistory {
    fn batch(&mut self, b: &Batch) {
        self.batches.push((b.last_offset(), b.epoch, b.append_time));
        let Records::Control(records) = &b.records else {
            return;
        };
        for r in records {
            let (version, voters) = self
                .kraft
                .last()
                .map_or((0, None), |(_, k, v)| (*k, v.clone()));
            match r {
                ControlRecord::KRaftVersion(k) => {
                    self.kraft.push((b.last_offset(), k.k_raft_version, voters))
                }
                ControlRecord::Voters(v) => {
                    self.kraft.push((b.last_offset(), version, Some(v.clone())))
                }
                _ => {}
            }
        }
    }

    /// The header of a snapshot holding everything through `offset`; None before any batch.
    pub fn header_at(&self, offset: i64) -> Option<SnapshotHeader> {
        let &(_, epoch, timestamp) = self.batches.iter().find(|(last, ..)| *last >= offset)?;
        let (kraft_version, voters) = self
            .kraft
            .iter()
            .rev()
            .find(|(at, ..)| *at <= offset)
            .map_or((0, None), |(_, k, v)| (*k, v.clone()));
        Some(SnapshotHeader {
            id: OffsetAndEpoch::new(offset + 1, epoch),
            last_contained_log_timestamp: timestamp,
            kraft_version,
            voters,
        })
    }
}

/// A replayed directory.
pub struct ReplayedDir {
    pub controller: Controller,
    /// Where the replay started: a snapshot's file name, or the start of the log.
    pub source: String,
    pub data_batches: usize,
    /// Records replayed after the snapshot, by Kafka's record type name.
    pub counts: BTreeMap<&'static str, u64>,
    pub raft: RaftHistory,
}

/// Replays `partition` (a `__cluster_metadata-0` directory) through the batches ending at or
/// below `at`.
pub fn replay_dir(partition: &Path, at: i64) -> Result<ReplayedDir, MetadataStateError> {
    let mut snapshots = Vec::new();
    let mut segments = Vec::new();
    let list = |source| MetadataStateError::List {
        dir: partition.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(partition).map_err(list)? {
        let path = entry.map_err(list)?.path();
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
        raft: RaftHistory::default(),
    };
    let mut from = 0;
    // The bootstrap checkpoint holds no state, but a dynamic quorum's kraft.version and voters.
    if let Some((_, path)) = snapshots.iter().find(|(id, _)| id.offset == 0) {
        let mut nothing = SnapshotLoad::new(-1);
        let bootstrap = load_checkpoint(path, &mut nothing)?;
        out.raft
            .kraft
            .push((-1, bootstrap.kraft_version, bootstrap.voters));
    }
    let snapshot = snapshots
        .iter()
        .filter(|(id, _)| id.offset > 0 && id.offset <= at.saturating_add(1))
        .max_by_key(|(id, _)| (id.offset, id.epoch));
    if let Some((id, path)) = snapshot {
        let mut load = SnapshotLoad::new(id.offset - 1);
        let loaded = load_checkpoint(path, &mut load)?;
        out.controller.finish_snapshot_load(load);
        out.raft
            .batches
            .push((id.offset - 1, id.epoch, loaded.last_contained_log_timestamp));
        out.raft
            .kraft
            .push((id.offset - 1, loaded.kraft_version, loaded.voters));
        from = id.offset;
        out.source = format!(
            "snapshot {}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    for (_, path) in &segments {
        replay_segment(path, from, at, &mut out)?;
    }
    Ok(out)
}

/// Replays the batches of one segment from offset `from` through `at`, a batch at a time.
fn replay_segment(
    path: &Path,
    from: i64,
    at: i64,
    out: &mut ReplayedDir,
) -> Result<(), MetadataStateError> {
    let unreadable = |source| MetadataStateError::Segment {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(unreadable)?;
    let len = file.metadata().map_err(unreadable)?.len();
    let mut refused = None;
    // A torn or corrupt tail ends the replay there, as it ends the log.
    scan_file(&file, len, |_, view| {
        if view.base_offset() < from || view.last_offset() > at {
            return Ok(());
        }
        for b in decode_batches(view.bytes()).map_err(SegmentStop::Undecodable)? {
            if let Err(e) = replay_batch(&b, out) {
                refused = Some(e);
                return Err(SegmentStop::Refused);
            }
        }
        Ok(())
    })
    .map_err(unreadable)?;
    match refused {
        Some(source) => Err(MetadataStateError::Replay {
            path: path.to_path_buf(),
            source,
        }),
        None => Ok(()),
    }
}

/// Why the replay of a segment stops at a batch.
#[derive(Debug, thiserror::Error)]
enum SegmentStop {
    /// A corrupt batch: like a torn tail, it ends the log there.
    #[error("{0}")]
    Undecodable(ConvertError),
    /// A record does not replay: the error is kept beside the scan.
    #[error("refused")]
    Refused,
}

fn replay_batch(b: &Batch, out: &mut ReplayedDir) -> Result<(), crate::controller::ReplayError> {
    out.raft.batch(b);
    match &b.records {
        Records::Data(values) => {
            out.data_batches += 1;
            for v in values {
                // The type id is the second byte of every frame below type 128.
                if let Some(t) = v.get(1).and_then(|t| metadata_record_type(*t as i16)) {
                    *out.counts.entry(t.kafka_name).or_default() += 1;
                }
            }
            out.controller.replay_committed_batch(b.base_offset, values)
        }
        _ => {
            out.controller.skip_committed_control_batch(b.last_offset());
            Ok(())
        }
    }
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
