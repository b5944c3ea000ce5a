//! `kraftd doctor --data-dir DIR`: a stopped node's metadata log directory, read only. It says
//! what start-up would find and do, with start-up's own rules (the segment walk and the
//! snapshot validation of `crate::log`), without changing a byte:
//!
//! - `meta.properties`: present and readable, and naming the node and directory the config says;
//! - `quorum-state`: readable, and at an epoch no lower than the log's last batch;
//! - `log`: every batch's CRC and offsets, segment after segment; a torn or corrupt tail, and
//!   what start-up would cut and delete;
//! - `snapshots`: each snapshot's CRCs, header and footer, and that the log start is covered;
//! - `disk`: the free space of the directory's filesystem (see `disk`).

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::diagnose::{Check, Verdict};
use super::disk::disk_check;
use crate::log::file_log::PARTITION_DIR_NAME;
use crate::log::meta_properties::MetaProperties;
use crate::log::quorum_state::{QuorumStateFile, FILE_NAME as QUORUM_STATE};
use crate::log::scan::ScanStop;
use crate::log::segment::{self, Cut};
use crate::log::segment_log::{walk_segments, SegmentWalk};
use crate::log::snapshot::{self, SnapshotFileKind};
use crate::log::snapshot_io;
use crate::server::disk_space::disk_space;

/// What the config says the directory must be, when `--config` is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub node_id: i32,
    pub metadata_log_dir: PathBuf,
}

/// The log directory (holding `meta.properties`) and its metadata partition directory, from
/// either one.
pub fn directories(data_dir: &Path) -> (PathBuf, PathBuf) {
    if data_dir
        .file_name()
        .is_some_and(|n| n == PARTITION_DIR_NAME)
    {
        let parent = data_dir.parent().unwrap_or(Path::new(".")).to_path_buf();
        (parent, data_dir.to_path_buf())
    } else {
        (data_dir.to_path_buf(), data_dir.join(PARTITION_DIR_NAME))
    }
}

/// Every offline check of `data_dir`.
pub fn diagnose_dir(data_dir: &Path, expected: Option<&Expected>) -> Vec<Check> {
    let (log_dir, partition) = directories(data_dir);
    let bases = segment_bases(&partition);
    let (log_check, walk, max_epoch) = log_check(&partition, &bases);
    let log_start = bases.first().copied().unwrap_or(0);
    vec![
        meta_check(&log_dir, expected),
        quorum_state_check(&partition, max_epoch),
        log_check,
        snapshots_check(&partition, log_start, walk.end_offset.unwrap_or(0)),
        disk_check(&log_dir.display().to_string(), disk_space(&log_dir)),
    ]
}

fn check(name: &'static str, verdict: Verdict, summary: String) -> Check {
    Check {
        name,
        verdict,
        summary,
        findings: Vec::new(),
        fix: None,
    }
}

fn meta_check(log_dir: &Path, expected: Option<&Expected>) -> Check {
    let meta = match MetaProperties::read_from_dir(log_dir) {
        Ok(m) => m,
        Err(e) => {
            let mut c = check("meta.properties", Verdict::Down, e.to_string());
            c.fix = Some(
                "start-up refuses this directory: format it (kraftd format) if it is new, or \
                 restore its meta.properties"
                    .into(),
            );
            return c;
        }
    };
    let mut c = check(
        "meta.properties",
        Verdict::Healthy,
        format!(
            "cluster {}, node {}, directory {}",
            meta.cluster_id.as_deref().unwrap_or("(none)"),
            meta.node_id.map_or("(none)".to_string(), |n| n.to_string()),
            meta.directory_id
                .map_or("(none)".to_string(), |d| d.to_string())
        ),
    );
    if let Some(x) = expected {
        if meta.node_id != Some(x.node_id) {
            c.verdict = Verdict::Down;
            c.findings.push(format!(
                "the config's node.id is {}, the directory's is {:?}",
                x.node_id, meta.node_id
            ));
        }
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        if !same(&x.metadata_log_dir, log_dir) {
            c.verdict = c.verdict.max(Verdict::Degraded);
            c.findings.push(format!(
                "the config's metadata log dir is {}, not this directory",
                x.metadata_log_dir.display()
            ));
        }
        if c.verdict != Verdict::Healthy {
            c.fix = Some("start the node with the config this directory was formatted for".into());
        }
    }
    c
}

/// The segments' bases, sorted (none if the directory cannot be listed).
fn segment_bases(partition: &Path) -> Vec<i64> {
    let mut bases: Vec<i64> = fs::read_dir(partition)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            segment::parse_offset_name(&e.file_name().to_string_lossy(), segment::LOG_SUFFIX)
        })
        .collect();
    bases.sort_unstable();
    bases
}

/// Start-up's walk over the segments of `partition`, reading only: what recovery would keep,
/// cut and delete, and the highest batch epoch it would keep; or why a segment cannot be read.
pub fn walk_read_only(partition: &Path) -> Result<(SegmentWalk, Option<i32>), String> {
    walk_bases(partition, &segment_bases(partition))
}

/// [`walk_read_only`] over the segments `bases` of `partition`, already listed.
fn walk_bases(partition: &Path, bases: &[i64]) -> Result<(SegmentWalk, Option<i32>), String> {
    let mut max_epoch: Option<i32> = None;
    let walk = walk_segments(bases, |base, expected| {
        let path = partition.join(segment::file_name(base));
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let len = file
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        let mut end = expected;
        let outcome = segment::recover(&file, len, base, expected, |_, meta| {
            end = meta.last_offset + 1;
            max_epoch = max_epoch.max(Some(meta.epoch));
        })
        .map_err(|e| format!("{}: {e}", path.display()))?;
        let cut = outcome.stop.map(|stop| Cut {
            path: path.clone(),
            stop,
            dropped_bytes: len - outcome.valid_len,
        });
        Ok::<_, String>((end, cut))
    })?;
    Ok((walk, max_epoch))
}

/// The log check, the walk, and the highest batch epoch kept.
fn log_check(partition: &Path, bases: &[i64]) -> (Check, SegmentWalk, Option<i32>) {
    let (walk, max_epoch) = match walk_bases(partition, bases) {
        Ok(w) => w,
        Err(e) => {
            let mut c = check(
                "log",
                Verdict::Down,
                format!("a segment cannot be read: {e}"),
            );
            c.fix = Some("check the disk and the files' permissions".into());
            return (c, SegmentWalk::default(), None);
        }
    };
    let start = bases.first().copied().unwrap_or(0);
    let end = walk.end_offset.unwrap_or(start);
    let mut c = check(
        "log",
        Verdict::Healthy,
        format!(
            "{} segment(s), offsets {start} to {end}, every batch's CRC and offsets valid",
            bases.len()
        ),
    );
    if let Some(cut) = &walk.cut {
        let what = match &cut.stop {
            ScanStop::Torn { .. } => "a torn tail (a write cut short by a crash)".to_string(),
            ScanStop::Corrupt { reason, .. } => format!("corruption ({reason})"),
        };
        c.verdict = Verdict::Degraded;
        c.summary = format!(
            "{what} in {}: start-up cuts it at byte {}, dropping {} bytes; the log then ends at offset {end}",
            cut.path.display(),
            cut.stop.position(),
            cut.dropped_bytes
        );
    }
    if let Some((base, expected)) = walk.gap {
        c.verdict = Verdict::Degraded;
        c.findings.push(format!(
            "segment {base} starts where offset {expected} was expected"
        ));
    }
    for base in &walk.stale {
        c.findings.push(format!(
            "start-up deletes {} (after the cut, it can hold only unflushed data)",
            partition.join(segment::file_name(*base)).display()
        ));
    }
    if c.verdict != Verdict::Healthy {
        c.fix = Some(
            "safe to start: start-up cuts exactly this, and the node fetches the rest from the \
             leader; to keep evidence, copy the directory first"
                .into(),
        );
    }
    (c, walk, max_epoch)
}

fn quorum_state_check(partition: &Path, log_epoch: Option<i32>) -> Check {
    let path = partition.join(QUORUM_STATE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return check(
                "quorum-state",
                Verdict::Healthy,
                format!("{} is absent: start-up begins at epoch 0", path.display()),
            )
        }
        Err(e) => {
            let mut c = check(
                "quorum-state",
                Verdict::Down,
                format!("cannot read {}: {e}", path.display()),
            );
            c.fix = Some("check the disk and the file's permissions".into());
            return c;
        }
    };
    let state = match QuorumStateFile::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            let mut c = check(
                "quorum-state",
                Verdict::Down,
                format!("{} does not parse: {e}", path.display()),
            );
            c.fix = Some(
                "start-up refuses it; restore the file, or remove it only if this node cannot \
                 have voted in a later epoch than its log shows"
                    .into(),
            );
            return c;
        }
    };
    let e = &state.election;
    let mut c = check(
        "quorum-state",
        Verdict::Healthy,
        format!(
            "epoch {}, leader {}, voted for {}",
            e.epoch,
            e.leader_id.map_or("none".to_string(), |l| l.to_string()),
            e.voted_key
                .as_ref()
                .map_or("none".to_string(), |v| v.id.to_string())
        ),
    );
    if let Some(log_epoch) = log_epoch.filter(|l| *l > e.epoch) {
        c.verdict = Verdict::Degraded;
        c.findings.push(format!(
            "the log holds batches of epoch {log_epoch}, above the file's epoch {}: the file is older than the log (restored from elsewhere?)",
            e.epoch
        ));
        c.fix = Some(
            "the node may vote again in an epoch it already voted in; restore the matching \
             quorum-state, or replace this node's data by fetching from the leader"
                .into(),
        );
    }
    c
}

fn snapshots_check(partition: &Path, log_start: i64, log_end: i64) -> Check {
    let mut ids: Vec<snapshot::OffsetAndEpoch> = fs::read_dir(partition)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| snapshot::parse_file_name(&e.file_name().to_string_lossy()))
        .filter(|(_, kind)| *kind == SnapshotFileKind::Frozen)
        .map(|(id, _)| id)
        .collect();
    ids.sort();
    let mut c = check("snapshots", Verdict::Healthy, String::new());
    let mut valid = Vec::new();
    for id in &ids {
        let path = partition.join(snapshot::file_name(*id));
        if id.offset < log_start {
            c.findings.push(format!(
                "start-up deletes {} (below the log start offset {log_start})",
                path.display()
            ));
            continue;
        }
        match snapshot_io::validate_file(&path) {
            Ok(_) => valid.push(*id),
            Err(e) => {
                c.verdict = Verdict::Down;
                c.findings.push(e.to_string());
            }
        }
    }
    if log_start > 0 && !valid.iter().any(|id| id.offset >= log_start) {
        c.verdict = Verdict::Down;
        c.findings.push(format!(
            "the log starts at offset {log_start}, but no valid snapshot covers the records below it"
        ));
    }
    c.summary = match valid.last() {
        Some(latest) => format!(
            "{} valid of {}; the latest ends at offset {} (epoch {}), {} records before the log end",
            valid.len(),
            ids.len(),
            latest.offset,
            latest.epoch,
            (log_end - latest.offset).max(0)
        ),
        None if ids.is_empty() => "none".to_string(),
        None => format!("none of {} is valid", ids.len()),
    };
    if c.verdict == Verdict::Down {
        c.fix = Some(
            "start-up refuses a corrupt snapshot: restore it, or replace this node's data by \
             fetching from the leader (format a new directory and add the node back)"
                .into(),
        );
    }
    c
}
