//! `make bench-floor`: the machine's physical floor under a raft commit, measured in the same run
//! as the other benches so that their latencies can be read against it (issue #14).
//!
//! 1. fdatasync: append `FLOOR_WRITE_BYTES` to a file in the bench's data directory and
//!    `sync_data` it, `FLOOR_SYNCS` times: what kraftd's `Segment::flush` does after every
//!    leader append and every follower append of a voter. Measured twice: one writer alone, and
//!    `FLOOR_WRITERS` (3) writers at once, as the three voters of bench-raft on one filesystem
//!    are. They differ a lot on ext4 (a lone fdatasync waits for its own journal commit; concurrent
//!    ones share commits), and the concurrent figure is the one the commit floor is drawn from.
//! 2. loopback TCP round trip: a `FLOOR_PING_BYTES` request answered by an echo thread over one
//!    TCP_NODELAY connection, `FLOOR_PINGS` times: one Fetch response out and the next Fetch in.
//! 3. the floor of a 3-voter commit, composed from those samples the way kraftd's raft commits
//!    a record on an idle quorum (src/raft/common.rs `append_as_leader`, fetch_follower.rs):
//!    the leader appends and fsyncs *before* it counts itself and wakes the parked Fetches; each
//!    follower receives the records, appends, fsyncs, and its next Fetch carries the durable end
//!    that moves the high watermark. A majority is the leader and the faster follower:
//!    `kraftd = fsync_L + min_i(rtt_i + fsync_i)`. Java wakes parked Fetches before it fsyncs
//!    (spec §5.2), overlapping its own fsync: `overlap = max(fsync_L, min_i(rtt_i + fsync_i))`.
//!    Both are sampled (Monte Carlo over the measured samples), not sums of percentiles.
//!
//! Knobs (environment): FLOOR_DIR (target/bench/raft, where bench-raft's nodes keep their logs),
//! FLOOR_SYNCS (1000, per writer), FLOOR_WRITERS (3), FLOOR_WRITE_BYTES (4096), FLOOR_PINGS
//! (10000), FLOOR_PING_BYTES (64), FLOOR_DRAWS (100000). Output: a summary on stdout, target/bench/floor.json.

// clippy.toml keeps the clock, threads and file I/O out of src/raft; a bench owns its own.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::{json, Value};

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// fdatasync latencies (µs) of `syncs` appends of `bytes` each, by each of `writers` threads
/// appending to a file of its own in `dir` at the same time.
fn fsync_samples(dir: &Path, syncs: usize, bytes: usize, writers: usize) -> BoxResult<Vec<f64>> {
    fs::create_dir_all(dir)?;
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let path = dir.join(format!("floor-fsync-{w}.log"));
            std::thread::spawn(move || sync_loop(&path, syncs, bytes))
        })
        .collect();
    let mut samples = Vec::with_capacity(syncs * writers);
    for t in threads {
        samples.extend(t.join().map_err(|_| "fsync thread panicked")??);
    }
    Ok(samples)
}

fn sync_loop(path: &Path, syncs: usize, bytes: usize) -> std::io::Result<Vec<f64>> {
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)?;
    let block = vec![0x5au8; bytes];
    let mut samples = Vec::with_capacity(syncs);
    // A few untimed rounds: the first syncs of a new file also allocate its first extents.
    for round in 0..syncs + 10 {
        file.write_all(&block)?;
        let t = Instant::now();
        file.sync_data()?;
        if round >= 10 {
            samples.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    drop(file);
    fs::remove_file(path)?;
    Ok(samples)
}

/// Round trips (µs) of `pings` requests of `bytes` each to an echo thread over loopback TCP.
fn rtt_samples(pings: usize, bytes: usize) -> BoxResult<Vec<f64>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut conn, _) = listener.accept()?;
        conn.set_nodelay(true)?;
        let mut buf = vec![0u8; bytes];
        while conn.read_exact(&mut buf).is_ok() {
            conn.write_all(&buf)?;
        }
        Ok(())
    });
    let mut conn = TcpStream::connect(addr)?;
    conn.set_nodelay(true)?;
    let mut buf = vec![0x5au8; bytes];
    let mut samples = Vec::with_capacity(pings);
    for round in 0..pings + 100 {
        let t = Instant::now();
        conn.write_all(&buf)?;
        conn.read_exact(&mut buf)?;
        if round >= 100 {
            samples.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    drop(conn);
    echo.join().map_err(|_| "echo thread panicked")??;
    Ok(samples)
}

/// The value below which `q` of the sorted samples lie (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// p50/p99/p99.9/mean/max in µs and a histogram of whole µs, ascending.
fn summary(samples: &[f64]) -> Value {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut hist: BTreeMap<u64, u64> = BTreeMap::new();
    for s in &sorted {
        *hist.entry(s.round() as u64).or_default() += 1;
    }
    let round1 = |v: f64| (v * 10.0).round() / 10.0;
    json!({
        "samples": sorted.len(),
        "p50_us": round1(quantile(&sorted, 0.5)),
        "p99_us": round1(quantile(&sorted, 0.99)),
        "p999_us": round1(quantile(&sorted, 0.999)),
        "mean_us": round1(sorted.iter().sum::<f64>() / sorted.len() as f64),
        "min_us": round1(sorted[0]),
        "max_us": round1(sorted[sorted.len() - 1]),
        "hist_us": hist.into_iter().map(|(us, n)| json!([us, n])).collect::<Vec<_>>(),
    })
}

/// Commit floors drawn from the measured samples: (kraftd's serial order, Java's overlap).
fn commit_floors(fsync: &[f64], rtt: &[f64], draws: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(14);
    let mut pick = |s: &[f64]| s[rng.gen_range(0..s.len())];
    let (mut serial, mut overlap) = (Vec::with_capacity(draws), Vec::with_capacity(draws));
    for _ in 0..draws {
        let leader = pick(fsync);
        let follower_a = pick(rtt) + pick(fsync);
        let follower_b = pick(rtt) + pick(fsync);
        let majority = follower_a.min(follower_b);
        serial.push(leader + majority);
        overlap.push(leader.max(majority));
    }
    (serial, overlap)
}

/// Filesystem type and device of the mount holding `dir` (/proc/self/mountinfo, longest prefix).
fn filesystem_of(dir: &Path) -> Value {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut best: Option<(usize, String, String)> = None;
    for line in info.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(mount), Some(fstype), Some(source)) =
            (fields.get(4), fields.get(sep + 1), fields.get(sep + 2))
        else {
            continue;
        };
        if dir.starts_with(mount) && best.as_ref().is_none_or(|b| mount.len() >= b.0) {
            best = Some((mount.len(), fstype.to_string(), source.to_string()));
        }
    }
    match best {
        Some((_, fstype, source)) => json!({"type": fstype, "device": source}),
        None => Value::Null,
    }
}

fn main() -> BoxResult<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("FLOOR_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/bench/raft"));
    let syncs = knob("FLOOR_SYNCS", 1000).max(1);
    let writers = knob("FLOOR_WRITERS", 3).max(1);
    let write_bytes = knob("FLOOR_WRITE_BYTES", 4096).max(1);
    let pings = knob("FLOOR_PINGS", 10000).max(1);
    let ping_bytes = knob("FLOOR_PING_BYTES", 64).max(1);
    let draws = knob("FLOOR_DRAWS", 100_000).max(1);

    eprintln!(
        "floor: {syncs} x ({write_bytes} B append + fdatasync) in {}, by 1 then {writers} writers",
        dir.display()
    );
    let fsync_alone = fsync_samples(&dir, syncs, write_bytes, 1)?;
    let fsync = fsync_samples(&dir, syncs, write_bytes, writers)?;
    eprintln!("floor: {pings} loopback TCP round trips of {ping_bytes} B");
    let rtt = rtt_samples(pings, ping_bytes)?;
    let (serial, overlap) = commit_floors(&fsync, &rtt, draws);

    let mut fsync_s = summary(&fsync);
    fsync_s["writers"] = json!(writers);
    let mut fsync_alone_s = summary(&fsync_alone);
    fsync_alone_s["writers"] = json!(1);
    let rtt_s = summary(&rtt);
    let mut kraftd = summary(&serial);
    let mut java = summary(&overlap);
    // The composed floors' histograms are draws, not measurements: keep only their quantiles.
    for v in [&mut kraftd, &mut java] {
        v.as_object_mut().map(|o| o.remove("hist_us"));
        v["draws"] = json!(draws);
    }
    kraftd["formula"] = json!("fsync_leader + min over 2 followers (rtt + fsync_follower)");
    java["formula"] = json!("max(fsync_leader, min over 2 followers (rtt + fsync_follower))");
    let out = json!({
        "data_dir": dir.display().to_string(),
        "filesystem": filesystem_of(&dir),
        "write_bytes": write_bytes,
        "ping_bytes": ping_bytes,
        "fsync": fsync_s,
        "fsync_one_writer": fsync_alone_s,
        "rtt": rtt_s,
        "commit_floor_kraftd": kraftd,
        "commit_floor_overlapped": java,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
    });

    let p = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    println!("physical floor (µs)               p50      p99    p99.9");
    for (name, v) in [
        ("fdatasync, 1 writer", &out["fsync_one_writer"]),
        ("fdatasync, concurrent writers", &out["fsync"]),
        ("loopback TCP RTT", &out["rtt"]),
        ("3-voter commit, kraftd order", &out["commit_floor_kraftd"]),
        (
            "3-voter commit, overlapped",
            &out["commit_floor_overlapped"],
        ),
    ] {
        println!(
            "{name:28} {:8.1} {:8.1} {:8.1}",
            p(v, "p50_us"),
            p(v, "p99_us"),
            p(v, "p999_us")
        );
    }
    let path = root.join("target/bench/floor.json");
    fs::create_dir_all(path.parent().ok_or("no parent")?)?;
    fs::write(&path, serde_json::to_string_pretty(&out)? + "\n")?;
    println!("JSON: {}", path.display());
    Ok(())
}
