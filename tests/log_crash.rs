//! Crash safety of the metadata log: random appends, flushes and truncations, then a crash that
//! damages only what was never flushed (a file cut at a random byte, garbage appended, a later
//! segment lost, Java's index files cut short). On reopen the log must be a prefix of what was
//! written that contains every flushed batch, and recovery must be idempotent.
//!
//! A failing case is printed in full (proptest shrinks it first) and saved under
//! `tests/log_crash.proptest-regressions`, which later runs replay first. More cases:
//! `PROPTEST_CASES=2000 cargo test --test log_crash`.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use kraftd::log::storage::Storage;
use kraftd::log::{FileLog, Isolation, LogConfig, LogCore, MemoryLog, RollConfig};
use kraftd::protocol::records::{split_batches, BatchBuilder};
use kraftd::raft::RaftLog;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Append `batches` batches of `records` records; bump the epoch first if `new_epoch`.
    Append {
        batches: usize,
        records: usize,
        new_epoch: bool,
    },
    Flush,
    /// Truncate `back` offsets below the end (clamped to the log start).
    Truncate {
        back: i64,
    },
}

#[derive(Debug, Clone)]
enum Damage {
    /// Cut every file holding unflushed bytes at a point chosen by `fraction` in its unflushed part.
    Cut { fraction: f64 },
    /// Cut, then append garbage to the last surviving segment.
    Garbage { fraction: f64, bytes: Vec<u8> },
    /// Delete segments that hold only unflushed data (their directory entry never reached disk).
    LoseLaterSegments,
    /// Cut Java's index files short (kraftd must ignore or drop them).
    CutIndexes { len: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (1usize..4, 1usize..5, proptest::bool::weighted(0.15))
            .prop_map(|(batches, records, new_epoch)| Op::Append { batches, records, new_epoch }),
        2 => Just(Op::Flush),
        1 => (0i64..12).prop_map(|back| Op::Truncate { back }),
    ]
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0.0f64..=1.0).prop_map(|fraction| Damage::Cut { fraction }),
        (0.0f64..=1.0, proptest::collection::vec(any::<u8>(), 1..200))
            .prop_map(|(fraction, bytes)| Damage::Garbage { fraction, bytes }),
        Just(Damage::LoseLaterSegments),
        (0usize..20).prop_map(|len| Damage::CutIndexes { len }),
    ]
}

fn batch(base: i64, records: usize, epoch: i32) -> Vec<u8> {
    let mut b = BatchBuilder::new(base).partition_leader_epoch(epoch);
    for i in 0..records {
        b.append(
            1_000 + base,
            None,
            Some(format!("r{}", base + i as i64).as_bytes()),
            &[],
        )
        .unwrap();
    }
    b.build().unwrap()
}

/// What the test expects: the batches written, and how many offsets are durable.
#[derive(Debug, Default)]
struct Model {
    batches: Vec<(i64, i64, Vec<u8>)>, // (base, next, bytes)
    durable_end: i64,
    epoch: i32,
}

impl Model {
    fn end(&self) -> i64 {
        self.batches.last().map_or(0, |b| b.1)
    }
}

fn run_ops<S: Storage>(log: &mut LogCore<S>, ops: &[Op], model: &mut Model) {
    for op in ops {
        match op {
            Op::Append {
                batches,
                records,
                new_epoch,
            } => {
                if *new_epoch || model.epoch == 0 {
                    model.epoch += 1;
                    log.initialize_leader_epoch(model.epoch).unwrap();
                }
                for _ in 0..*batches {
                    let base = log.end_offset();
                    let bytes = batch(base, *records, model.epoch);
                    log.append_bytes_as_leader(&bytes, model.epoch).unwrap();
                    model.batches.push((base, base + *records as i64, bytes));
                }
            }
            Op::Flush => {
                log.flush().unwrap();
                model.durable_end = model.end();
            }
            Op::Truncate { back } => {
                let target = (log.end_offset() - back).max(log.start_offset());
                log.truncate_to(target).unwrap();
                // Kafka truncates whole batches: the one holding `target` goes too.
                model.batches.retain(|b| b.1 <= target);
                model.durable_end = model.durable_end.min(model.end());
                assert_eq!(log.end_offset(), model.end());
            }
        }
        assert!(log.flushed_end_offset() >= model.durable_end);
    }
}

fn read_all<S: Storage>(log: &LogCore<S>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = log.start_offset();
    while offset < log.end_offset() {
        let r = log
            .read_bytes(offset, Isolation::Uncommitted, 4096)
            .unwrap()
            .records;
        offset = split_batches(&r)
            .batches
            .last()
            .expect("progress")
            .next_offset();
        out.extend(r);
    }
    out
}

/// The recovered log must be a prefix of the model holding every durable batch.
fn check_prefix(recovered: &[u8], model: &Model, end: i64) -> Result<(), TestCaseError> {
    let expected: Vec<u8> = model
        .batches
        .iter()
        .filter(|b| b.1 <= end)
        .flat_map(|b| b.2.iter().copied())
        .collect();
    prop_assert!(
        end == 0 || model.batches.iter().any(|b| b.1 == end),
        "end {end} is not a batch boundary of what was written"
    );
    prop_assert!(
        end >= model.durable_end,
        "lost flushed data: end {end} < durable {}",
        model.durable_end
    );
    prop_assert!(
        end <= model.end(),
        "end {end} beyond what was written ({})",
        model.end()
    );
    prop_assert_eq!(
        recovered,
        &expected[..],
        "the recovered log is not the expected prefix up to {}",
        end
    );
    Ok(())
}

fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

/// Byte position in `bytes` (a segment's contents) where offsets reach `durable_end`.
fn durable_position(bytes: &[u8], durable_end: i64) -> usize {
    split_batches(bytes)
        .batches
        .iter()
        .take_while(|b| b.next_offset() <= durable_end)
        .last()
        .map_or(0, |b| b.position() + b.size())
}

fn damage_files(dir: &Path, model: &Model, damage: &Damage) {
    let segments = segment_files(dir);
    let cut = |fraction: f64| {
        for seg in &segments {
            let bytes = fs::read(seg).unwrap();
            let keep = durable_position(&bytes, model.durable_end);
            let at = keep + ((bytes.len() - keep) as f64 * fraction) as usize;
            OpenOptions::new()
                .write(true)
                .open(seg)
                .unwrap()
                .set_len(at as u64)
                .unwrap();
        }
    };
    match damage {
        Damage::Cut { fraction } => cut(*fraction),
        Damage::Garbage { fraction, bytes } => {
            cut(*fraction);
            let last = segments.last().unwrap();
            OpenOptions::new()
                .append(true)
                .open(last)
                .unwrap()
                .write_all(bytes)
                .unwrap();
        }
        Damage::LoseLaterSegments => {
            for seg in &segments[1..] {
                let base: i64 = seg.file_stem().unwrap().to_str().unwrap().parse().unwrap();
                if base >= model.durable_end {
                    fs::remove_file(seg).unwrap();
                }
            }
        }
        Damage::CutIndexes { len } => {
            for seg in &segments {
                fs::write(seg.with_extension("index"), vec![7u8; *len]).unwrap();
                fs::write(seg.with_extension("timeindex"), vec![9u8; *len / 2]).unwrap();
            }
        }
    }
}

/// Every file of `dir` with its bytes, sorted by name.
fn directory_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

static CASE: AtomicU32 = AtomicU32::new(0);

fn file_case(segment_bytes: u64, ops: &[Op], damage: &Damage) -> Result<(), TestCaseError> {
    let dir = std::env::temp_dir().join(format!(
        "kraftd-log-crash-{}-{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    let config = LogConfig {
        roll: RollConfig {
            segment_bytes,
            segment_ms: i64::MAX,
        },
        ..LogConfig::default()
    };
    let mut model = Model::default();
    {
        let mut log = FileLog::open(&dir, config).unwrap();
        run_ops(&mut log, ops, &mut model);
        // The process dies here: nothing more is written.
    }
    damage_files(&dir, &model, damage);
    // `kraftd doctor --data-dir` reads what start-up will do, changing nothing.
    let before = directory_bytes(&dir);
    let (predicted, _) = kraftd::server::doctor::offline::walk_read_only(&dir)
        .map_err(|e| TestCaseError::fail(format!("doctor: {e}")))?;
    prop_assert_eq!(
        directory_bytes(&dir),
        before,
        "the doctor changed the directory"
    );
    let log =
        FileLog::open(&dir, config).map_err(|e| TestCaseError::fail(format!("reopen: {e}")))?;
    let report = log.open_report();
    prop_assert_eq!(predicted.end_offset, Some(log.end_offset()));
    prop_assert_eq!(predicted.cut.as_ref(), report.cuts.first());
    prop_assert_eq!(predicted.stale.len(), report.deleted_segments.len());
    let recovered = read_all(&log);
    check_prefix(&recovered, &model, log.end_offset())?;
    let end = log.end_offset();
    drop(log);
    // Recovery is idempotent, and the log takes appends again.
    let mut log = FileLog::open(&dir, config).unwrap();
    prop_assert!(
        log.open_report().cuts.is_empty(),
        "second open cut again: {:?}",
        log.open_report()
    );
    prop_assert_eq!(log.end_offset(), end);
    prop_assert_eq!(read_all(&log), recovered);
    let epoch = log.last_fetched_epoch().max(1);
    log.append_bytes_as_leader(&batch(end, 1, epoch), epoch)
        .unwrap();
    log.flush().unwrap();
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn file_log_recovers_a_prefix_holding_every_flushed_batch(
        segment_bytes in prop_oneof![Just(150u64), Just(400), Just(1 << 20)],
        ops in proptest::collection::vec(op(), 1..40),
        damage in damage(),
    ) {
        file_case(segment_bytes, &ops, &damage)?;
    }

    #[test]
    fn memory_log_crash_keeps_exactly_the_flushed_prefix(ops in proptest::collection::vec(op(), 1..40)) {
        let mut log = MemoryLog::with_config(LogConfig::default());
        let mut model = Model::default();
        run_ops(&mut log, &ops, &mut model);
        log.crash().unwrap();
        prop_assert_eq!(log.end_offset(), log.flushed_end_offset());
        let recovered = read_all(&log);
        check_prefix(&recovered, &model, log.end_offset())?;
        prop_assert!(log.end_offset() >= model.durable_end);
    }
}
