//! `make bench`: kraftd's metadata log (`kraftd::log::FileLog`) side by side with Kafka's own
//! (`org.apache.kafka.raft.internals.KafkaRaftLog`, driven by bench/java/StorageBench.java), over
//! the same workload, data directory filesystem and machine, in one run, reported as ratios.
//!
//! Phases (each runs kraftd then Java, or Java then kraftd on odd repeats, to spread load drift):
//!   1. append + fsync after every batch, as a raft leader does: batches of 1 and of
//!      `BENCH_RECORDS_PER_BATCH` records of `BENCH_RECORD_BYTES`-byte values (null keys);
//!      batches/s and MB/s after an untimed warm-up;
//!   2. recovery: write `BENCH_RECOVERY_MB` of such batches without fsync, fsync once, drop
//!      the log without any close (a crash after the flush), then time the open (kraftd scans
//!      every batch and checks CRCs; Java's createLog recovers every segment);
//!   3. sequential read of that whole log, `BENCH_READ_MAX_BYTES` per read, copying the bytes
//!      into memory and walking the batch headers: MB/s.
//!
//! Java runs in its own JVM per phase (JVM start-up is not timed). The recovery log was just
//! written, so recovery and read are measured with the log in the page cache on both sides.
//!
//! Knobs (environment): BENCH_JAVA_CP (set by the Makefile; required), BENCH_JAVA_LOG4J,
//! BENCH_JAVA_OPTS ("-Xms1g -Xmx1g"), BENCH_DIR (target/bench/data), BENCH_REPEAT (1),
//! BENCH_BATCHES_1 (20000), BENCH_BATCHES_100 (2000), BENCH_WARMUP_1 (1000), BENCH_WARMUP_100
//! (100), BENCH_MAX_SECS (30, per append phase and side), BENCH_RECORD_BYTES (256),
//! BENCH_RECORDS_PER_BATCH (100), BENCH_RECOVERY_MB (1024), BENCH_READ_MAX_BYTES (1048576).
//! Results: a table on stdout and JSON in target/bench/storage.json.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kraftd::log::{FileLog, Isolation, LogConfig};
use kraftd::protocol::records::{batches, BatchBuilder};
use kraftd::raft::RaftLog;
use rand::{rngs::StdRng, RngCore, SeedableRng};
use serde_json::{json, Value};

const EPOCH: i32 = 1;
const PARTITION: &str = "__cluster_metadata-0";
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

struct Settings {
    root: PathBuf,
    data: PathBuf,
    java_cp: String,
    java_opts: Vec<String>,
    java_log4j: Option<String>,
    repeat: usize,
    batches_1: u64,
    batches_n: u64,
    warmup_1: u64,
    warmup_n: u64,
    max_secs: f64,
    record_bytes: usize,
    per_batch: usize,
    recovery_mb: u64,
    read_max_bytes: usize,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> BoxResult<T> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map_err(|_| format!("{name}={v:?} is not a valid value").into()),
        _ => Ok(default),
    }
}

impl Settings {
    fn from_env() -> BoxResult<Settings> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let java_cp = std::env::var("BENCH_JAVA_CP").map_err(|_| {
            "BENCH_JAVA_CP is not set: run `make bench`, which compiles bench/java and passes Kafka's classpath"
        })?;
        let data = match std::env::var("BENCH_DIR") {
            Ok(d) if !d.is_empty() => PathBuf::from(d),
            _ => root.join("target/bench/data"),
        };
        Ok(Settings {
            data,
            java_cp,
            java_opts: env_or("BENCH_JAVA_OPTS", "-Xms1g -Xmx1g".to_string())?
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            java_log4j: std::env::var("BENCH_JAVA_LOG4J")
                .ok()
                .filter(|s| !s.is_empty()),
            repeat: env_or("BENCH_REPEAT", 1usize)?.max(1),
            batches_1: env_or("BENCH_BATCHES_1", 20_000)?,
            batches_n: env_or("BENCH_BATCHES_100", 2_000)?,
            warmup_1: env_or("BENCH_WARMUP_1", 1_000)?,
            warmup_n: env_or("BENCH_WARMUP_100", 100)?,
            max_secs: env_or("BENCH_MAX_SECS", 30.0)?,
            record_bytes: env_or("BENCH_RECORD_BYTES", 256)?,
            per_batch: env_or("BENCH_RECORDS_PER_BATCH", 100)?,
            recovery_mb: env_or("BENCH_RECOVERY_MB", 1024)?,
            read_max_bytes: env_or("BENCH_READ_MAX_BYTES", 1 << 20)?,
            root,
        })
    }
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn load1() -> f64 {
    loadavg()
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}

fn command_line(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// Writes back every dirty page on the machine (untimed), so that a phase's fsyncs do not pay for
/// the previous phase's (or the other side's) writeback.
fn settle() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

fn reset_dir(dir: &Path) -> BoxResult<()> {
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    fs::create_dir_all(dir)?;
    Ok(())
}

/// One uncompressed v2 batch of `count` records with `bytes`-byte pseudo-random values and null
/// keys (as the raft layer writes metadata records), in epoch [`EPOCH`]. The base offset is
/// patched per append (it is outside the CRC), as Java's side does.
fn template(count: usize, bytes: usize) -> BoxResult<Vec<u8>> {
    let mut rng = StdRng::seed_from_u64(42);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    let mut b = BatchBuilder::new(0).partition_leader_epoch(EPOCH);
    let mut value = vec![0u8; bytes];
    for _ in 0..count {
        rng.fill_bytes(&mut value);
        b.append(now, None, Some(&value), &[])?;
    }
    Ok(b.build()?)
}

fn set_base_offset(batch: &mut [u8], offset: i64) {
    batch[..8].copy_from_slice(&offset.to_be_bytes());
}

// ---------------------------------------------------------------- kraftd

fn kraftd_append(
    s: &Settings,
    dir: &Path,
    per_batch: usize,
    warmup: u64,
    n: u64,
) -> BoxResult<Value> {
    let mut log = FileLog::open(dir, LogConfig::default())?;
    log.initialize_leader_epoch(EPOCH)?;
    let mut batch = template(per_batch, s.record_bytes)?;
    for _ in 0..warmup {
        set_base_offset(&mut batch, log.end_offset());
        log.append_bytes_as_leader(&batch, EPOCH)?;
        log.flush()?;
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(s.max_secs);
    let mut next_report = start + PROGRESS_EVERY;
    let mut done = 0u64;
    while done < n {
        set_base_offset(&mut batch, log.end_offset());
        log.append_bytes_as_leader(&batch, EPOCH)?;
        log.flush()?;
        done += 1;
        if done % 64 == 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if now >= next_report {
                eprintln!("  kraftd append: {done}/{n} batches");
                next_report = now + PROGRESS_EVERY;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(json!({
        "batches": done,
        "batch_bytes": batch.len(),
        "bytes": done * batch.len() as u64,
        "secs": secs,
        "end_offset": log.end_offset(),
    }))
}

fn kraftd_write(s: &Settings, dir: &Path) -> BoxResult<Value> {
    let mut log = FileLog::open(dir, LogConfig::default())?;
    log.initialize_leader_epoch(EPOCH)?;
    let mut batch = template(s.per_batch, s.record_bytes)?;
    let target = s.recovery_mb << 20;
    let mut written = 0u64;
    let start = Instant::now();
    let mut next_report = start + PROGRESS_EVERY;
    while written < target {
        set_base_offset(&mut batch, log.end_offset());
        log.append_bytes_as_leader(&batch, EPOCH)?;
        written += batch.len() as u64;
        if Instant::now() >= next_report {
            eprintln!("  kraftd write: {}/{} MiB", written >> 20, s.recovery_mb);
            next_report = Instant::now() + PROGRESS_EVERY;
        }
    }
    log.flush()?;
    let secs = start.elapsed().as_secs_f64();
    let end = log.end_offset();
    drop(log); // no close: FileLog has none, and the next open recovers everything anyway
    Ok(json!({ "bytes": written, "secs": secs, "end_offset": end }))
}

fn kraftd_recover(s: &Settings, dir: &Path) -> BoxResult<Value> {
    let t0 = Instant::now();
    let log = FileLog::open(dir, LogConfig::default())?;
    let open_secs = t0.elapsed().as_secs_f64();
    let end = log.end_offset();
    eprintln!("  kraftd recover: opened in {open_secs:.3} s, end offset {end}; reading");
    let mut offset = log.start_offset();
    let (mut bytes, mut nbatches) = (0u64, 0u64);
    let t1 = Instant::now();
    while offset < end {
        let info = log.read_bytes(offset, Isolation::Uncommitted, s.read_max_bytes)?;
        if info.records.is_empty() {
            return Err(format!("empty read at offset {offset}").into());
        }
        let mut next = offset;
        for b in batches(&info.records) {
            next = b.last_offset() + 1;
            nbatches += 1;
        }
        bytes += info.records.len() as u64;
        offset = next;
    }
    let read_secs = t1.elapsed().as_secs_f64();
    Ok(json!({
        "open_secs": open_secs,
        "end_offset": end,
        "read_bytes": bytes,
        "read_batches": nbatches,
        "read_secs": read_secs,
    }))
}

// ---------------------------------------------------------------- Java

fn java(s: &Settings, args: &[String]) -> BoxResult<Value> {
    let mut cmd = Command::new("java");
    cmd.args(&s.java_opts);
    if let Some(l) = &s.java_log4j {
        cmd.arg(format!("-Dlog4j2.configurationFile={l}"));
    }
    cmd.arg("-cp")
        .arg(&s.java_cp)
        .arg("StorageBench")
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let out = cmd.output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "java StorageBench {args:?} failed ({}): {stdout}",
            out.status
        )
        .into());
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| format!("java StorageBench {args:?} printed no result: {stdout}"))?;
    Ok(serde_json::from_str(line)?)
}

fn java_append(
    s: &Settings,
    dir: &Path,
    per_batch: usize,
    warmup: u64,
    n: u64,
) -> BoxResult<Value> {
    java(
        s,
        &[
            "append".into(),
            dir.display().to_string(),
            per_batch.to_string(),
            s.record_bytes.to_string(),
            warmup.to_string(),
            n.to_string(),
            s.max_secs.to_string(),
        ],
    )
}

fn java_write(s: &Settings, dir: &Path) -> BoxResult<Value> {
    java(
        s,
        &[
            "write".into(),
            dir.display().to_string(),
            s.per_batch.to_string(),
            s.record_bytes.to_string(),
            s.recovery_mb.to_string(),
        ],
    )
}

fn java_recover(s: &Settings, dir: &Path) -> BoxResult<Value> {
    java(
        s,
        &[
            "recover".into(),
            dir.display().to_string(),
            s.read_max_bytes.to_string(),
        ],
    )
}

// ---------------------------------------------------------------- driver

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    Kraftd,
    Java,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Kraftd => "kraftd",
            Side::Java => "java",
        }
    }
}

/// One measured figure of one run: value and the 1-minute load average when it was taken.
#[derive(Clone, Copy)]
struct Sample {
    value: f64,
    load: f64,
}

#[derive(Default)]
struct Results {
    /// (metric, side) -> samples
    samples: BTreeMap<(&'static str, Side), Vec<Sample>>,
    raw: Vec<Value>,
}

impl Results {
    fn add(&mut self, metric: &'static str, side: Side, value: f64, load: f64) {
        self.samples
            .entry((metric, side))
            .or_default()
            .push(Sample { value, load });
    }
    fn median(&self, metric: &'static str, side: Side) -> Option<f64> {
        let mut v: Vec<f64> = self
            .samples
            .get(&(metric, side))?
            .iter()
            .map(|s| s.value)
            .collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    }
}

fn mb_per_s(bytes: f64, secs: f64) -> f64 {
    bytes / (1 << 20) as f64 / secs
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(f64::NAN)
}

/// The metrics: (key, label, unit, higher is better).
const METRICS: [(&str, &str, &str, bool); 7] = [
    (
        "append1_batches_per_s",
        "append+fsync, 1-record batches",
        "batches/s",
        true,
    ),
    (
        "append1_mb_per_s",
        "append+fsync, 1-record batches",
        "MB/s",
        true,
    ),
    (
        "appendN_batches_per_s",
        "append+fsync, N-record batches",
        "batches/s",
        true,
    ),
    (
        "appendN_mb_per_s",
        "append+fsync, N-record batches",
        "MB/s",
        true,
    ),
    (
        "read_mb_per_s",
        "sequential read of the whole log",
        "MB/s",
        true,
    ),
    ("recovery_secs", "recovery (open) of the log", "s", false),
    (
        "recovery_mb_per_s",
        "recovery (open) of the log",
        "MB/s",
        true,
    ),
];

fn run_append(
    s: &Settings,
    res: &mut Results,
    side: Side,
    rep: usize,
    per_batch: usize,
) -> BoxResult<()> {
    let (warmup, n, key_b, key_mb) = if per_batch == 1 {
        (
            s.warmup_1,
            s.batches_1,
            "append1_batches_per_s",
            "append1_mb_per_s",
        )
    } else {
        (
            s.warmup_n,
            s.batches_n,
            "appendN_batches_per_s",
            "appendN_mb_per_s",
        )
    };
    let base = s
        .data
        .join(format!("{}-append{per_batch}-{rep}", side.name()));
    reset_dir(&base)?;
    settle();
    let dir = base.join(PARTITION);
    eprintln!(
        "[{}] append+fsync, {per_batch}-record batches: {warmup} warm-up + up to {n} batches (max {} s); load {}",
        side.name(),
        s.max_secs,
        loadavg()
    );
    let v = match side {
        Side::Kraftd => kraftd_append(s, &dir, per_batch, warmup, n)?,
        Side::Java => java_append(s, &dir, per_batch, warmup, n)?,
    };
    let load = load1();
    let secs = f(&v, "secs");
    let bps = f(&v, "batches") / secs;
    let mbps = mb_per_s(f(&v, "bytes"), secs);
    eprintln!(
        "[{}]   {} batches of {} B in {secs:.2} s: {bps:.0} batches/s, {mbps:.2} MB/s (load {})",
        side.name(),
        v["batches"],
        v["batch_bytes"],
        loadavg()
    );
    res.add(key_b, side, bps, load);
    res.add(key_mb, side, mbps, load);
    res.raw.push(json!({"phase": format!("append{per_batch}"), "side": side.name(), "repeat": rep, "load1": load, "result": v}));
    fs::remove_dir_all(&base)?;
    Ok(())
}

fn run_recovery(s: &Settings, res: &mut Results, side: Side, rep: usize) -> BoxResult<()> {
    let base = s.data.join(format!("{}-recovery-{rep}", side.name()));
    reset_dir(&base)?;
    let dir = base.join(PARTITION);
    eprintln!(
        "[{}] recovery: writing {} MiB of {}-record batches (no fsync until the end); load {}",
        side.name(),
        s.recovery_mb,
        s.per_batch,
        loadavg()
    );
    let result = (|| -> BoxResult<(Value, Value)> {
        let w = match side {
            Side::Kraftd => kraftd_write(s, &dir)?,
            Side::Java => java_write(s, &dir)?,
        };
        settle();
        eprintln!(
            "[{}]   wrote {} MiB in {:.2} s; opening (recovery) then reading it all; load {}",
            side.name(),
            f(&w, "bytes") as u64 >> 20,
            f(&w, "secs"),
            loadavg()
        );
        let r = match side {
            Side::Kraftd => kraftd_recover(s, &dir)?,
            Side::Java => java_recover(s, &dir)?,
        };
        if r["end_offset"] != w["end_offset"] {
            return Err(format!(
                "{}: recovered end offset {} but wrote up to {}",
                side.name(),
                r["end_offset"],
                w["end_offset"]
            )
            .into());
        }
        Ok((w, r))
    })();
    let cleanup = fs::remove_dir_all(&base);
    let (w, r) = result?;
    cleanup?;
    let load = load1();
    let bytes = f(&w, "bytes");
    let open = f(&r, "open_secs");
    let read_mbps = mb_per_s(f(&r, "read_bytes"), f(&r, "read_secs"));
    eprintln!(
        "[{}]   open {open:.3} s ({:.0} MB/s), read {read_mbps:.0} MB/s (load {})",
        side.name(),
        mb_per_s(bytes, open),
        loadavg()
    );
    res.add("recovery_secs", side, open, load);
    res.add("recovery_mb_per_s", side, mb_per_s(bytes, open), load);
    res.add("read_mb_per_s", side, read_mbps, load);
    res.raw.push(json!({"phase": "recovery", "side": side.name(), "repeat": rep, "load1": load, "write": w, "recover": r}));
    Ok(())
}

fn main() -> BoxResult<()> {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let s = Settings::from_env()?;
    fs::create_dir_all(&s.data)?;
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let fs_type = command_line("stat", &["-f", "-c", "%T", &s.data.display().to_string()]);
    let java_version = Command::new("java")
        .arg("-version")
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("?")
                .to_string()
        })
        .unwrap_or_else(|| "?".into());
    let load_start = loadavg();
    eprintln!(
        "machine: nproc {nproc}, load {load_start}, data dir {} ({fs_type}), {java_version}",
        s.data.display()
    );
    let mut res = Results::default();
    for rep in 0..s.repeat {
        let order = if rep % 2 == 0 {
            [Side::Kraftd, Side::Java]
        } else {
            [Side::Java, Side::Kraftd]
        };
        eprintln!("== repeat {}/{}", rep + 1, s.repeat);
        for side in order {
            run_append(&s, &mut res, side, rep, 1)?;
        }
        for side in order {
            run_append(&s, &mut res, side, rep, s.per_batch)?;
        }
        for side in order {
            run_recovery(&s, &mut res, side, rep)?;
        }
    }
    let load_end = loadavg();
    let _ = fs::remove_dir(&s.data);

    // The table.
    let n = s.per_batch;
    println!();
    println!(
        "kraftd metadata log vs Kafka {} KafkaRaftLog ({} B values; N = {n}; median of {} run(s); recovery log {} MiB)",
        std::env::var("KAFKA_VERSION").unwrap_or_else(|_| "4.4.0".into()),
        s.record_bytes,
        s.repeat,
        s.recovery_mb
    );
    println!(
        "{:<36} {:>10} {:>12} {:>12} {:>9} {:>9}  load1 per run (k | j)",
        "metric", "unit", "kraftd", "java", "speed", "paired"
    );
    let mut table = Vec::new();
    for (key, label, unit, higher) in METRICS {
        let label = label.replace('N', &n.to_string());
        let (Some(k), Some(j)) = (res.median(key, Side::Kraftd), res.median(key, Side::Java))
        else {
            continue;
        };
        // Speed ratio: > 1 means kraftd is faster. Of the medians, and the median of each
        // repeat's ratio (the two sides of one repeat run back to back, so under similar load).
        let ratio = |k: f64, j: f64| if higher { k / j } else { j / k };
        let speed = ratio(k, j);
        let mut paired: Vec<f64> = res.samples[&(key, Side::Kraftd)]
            .iter()
            .zip(&res.samples[&(key, Side::Java)])
            .map(|(k, j)| ratio(k.value, j.value))
            .collect();
        paired.sort_by(f64::total_cmp);
        let paired_median = paired[paired.len() / 2];
        let loads = |side| {
            res.samples[&(key, side)]
                .iter()
                .map(|x: &Sample| format!("{:.2}", x.load))
                .collect::<Vec<_>>()
                .join(",")
        };
        println!(
            "{label:<36} {unit:>10} {k:>12.2} {j:>12.2} {speed:>8.2}x {paired_median:>8.2}x  {} | {}",
            loads(Side::Kraftd),
            loads(Side::Java)
        );
        table.push(json!({
            "metric": key, "label": label, "unit": unit, "higher_is_better": higher,
            "kraftd": k, "java": j, "speed_ratio_kraftd_over_java": speed,
            "paired_speed_ratios": paired, "paired_speed_ratio_median": paired_median,
            "kraftd_runs": res.samples[&(key, Side::Kraftd)].iter().map(|x| json!({"value": x.value, "load1": x.load})).collect::<Vec<_>>(),
            "java_runs": res.samples[&(key, Side::Java)].iter().map(|x| json!({"value": x.value, "load1": x.load})).collect::<Vec<_>>(),
        }));
    }
    println!("(speed: ratio of the medians, > 1 = kraftd faster; for recovery time java_secs / kraftd_secs.");
    println!(" paired: median over repeats of that repeat's ratio. Recovery and read run with the log in the page cache.)");
    println!(
        "machine: nproc {nproc}, load at start {load_start}, at end {load_end}, data dir {fs_type}, {java_version}"
    );

    let out = json!({
        "machine": {
            "nproc": nproc,
            "load_start": load_start,
            "load_end": load_end,
            "data_dir": s.data.display().to_string(),
            "fs_type": fs_type,
            "kernel": command_line("uname", &["-r"]),
            "java": java_version,
        },
        "settings": {
            "repeat": s.repeat, "record_bytes": s.record_bytes, "records_per_batch": s.per_batch,
            "batches_1": s.batches_1, "batches_n": s.batches_n, "warmup_1": s.warmup_1,
            "warmup_n": s.warmup_n, "max_secs": s.max_secs, "recovery_mb": s.recovery_mb,
            "read_max_bytes": s.read_max_bytes, "java_opts": s.java_opts,
        },
        "results": table,
        "runs": res.raw,
    });
    let path = s.root.join("target/bench/storage.json");
    fs::create_dir_all(path.parent().expect("has a parent"))?;
    fs::write(&path, serde_json::to_string_pretty(&out)? + "\n")?;
    println!("results: {}", path.display());
    Ok(())
}
