//! Issue #14's failover figures, by SIGKILL of the active controller of a static quorum with no
//! brokers, on three quorums side by side: 3 kraftd voters, 3 Java voters, and Java voters 1 and
//! 2 with kraftd voter 3 (there only a Java leader is killed, to see which kind wins); then by
//! SIGTERM of the active controller of the 3-kraftd and the 3-Java quorum (a clean shutdown:
//! the leader resigns with EndQuorumEpoch first).
//!
//! Each kill is timed from the kill to the first DescribeQuorum poll (every few milliseconds)
//! that shows a new leader, and to the first that shows it committed a record of its epoch (the
//! high watermark past the old leader's log end). Each surviving voter's detection time is read
//! from its own log: its first pre-vote (`Prospective`) after the kill.
//!
//! `KRAFTD_FAILOVER_KILLS=<n>` (`make bench-failover`) kills n times per quorum and writes
//! `target/bench/failover.json`; without it, as a smoke run of the driver in `make test`, one
//! kill on the two quorums that take every path of it (the mixed quorum's Java-leader kill -9,
//! the 3-kraftd SIGTERM; `election_soak`'s smoke run kills the leader of every kind of quorum). `KRAFTD_FAILOVER_PARTITIONS=<n>` (`make bench-failover`: 100,000)
//! first creates n partitions (topics of 10, RF 3) on 3 simulated brokers, which keep
//! heartbeating through the kills, so that each new leader takes over a controller of that size. Timings are printed, never asserted: the test asserts only that every
//! kill is followed by a new leader.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::harness::elections::POLL;
use crate::harness::mixed_quorum::{Mixed, Stop, TIMEOUT};
use crate::harness::quorum_probe::{leader_view, voter_end};
use crate::load::fleet::{Fleet, FleetConfig};
use crate::load::topics::{create_topics, TopicStorm};
use crate::load_generator::{controllers_of, runtime, FIRST_BROKER};

#[test]
fn failover_after_the_active_controller_is_killed() {
    let smoke = std::env::var_os("KRAFTD_FAILOVER_KILLS").is_none();
    let kills = kills_from_env();
    let partitions = partitions_from_env();
    let quorums: [(&str, &[i32], Stop); 5] = [
        ("3 kraftd", &[1, 2, 3], Stop::Kill9),
        ("3 java", &[], Stop::Kill9),
        ("2 java + 1 kraftd", &[3], Stop::Kill9),
        ("3 kraftd, SIGTERM", &[1, 2, 3], Stop::Sigterm),
        ("3 java, SIGTERM", &[], Stop::Sigterm),
    ];
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    eprintln!("failover: {kills} kills per quorum, {partitions} partitions, pause seed {seed}");
    let mut pauses = XorShift(seed | 1);
    let mut report = Vec::new();
    let smoke_run = ["2 java + 1 kraftd", "3 kraftd, SIGTERM"];
    for (name, kraftd, stop) in quorums {
        if smoke && !smoke_run.contains(&name) {
            continue;
        }
        let mut q = Mixed::start(kraftd);
        let brokers = Brokers::with_partitions(&q, partitions);
        let mut runs = Vec::new();
        for n in 1..=kills {
            if !kraftd.is_empty() && kraftd.len() < 3 {
                lead_with_java(&mut q);
            }
            let pause = Duration::from_millis(pauses.below(1000));
            let run = kill_leader(&mut q, pause, stop);
            eprintln!("{name}, kill {n}/{kills}: {}", run.summary());
            runs.push(run);
        }
        let summary = Summary::of(name, &runs);
        eprintln!("{}", summary.line());
        let fleet = brokers.map_or(Value::Null, |b| b.stop(name));
        report.push(json!({
            "quorum": name,
            "brokers": fleet,
            "summary": summary.json(),
            "kills": runs.iter().map(Kill::json).collect::<Vec<_>>(),
        }));
        q.stop();
    }
    let path = bench_dir().join("failover.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let doc = json!({
        "kills_per_quorum": kills,
        "partitions": partitions,
        "pause_seed": seed,
        "quorums": report,
    });
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    eprintln!("wrote {}", path.display());
}

fn kills_from_env() -> usize {
    match std::env::var("KRAFTD_FAILOVER_KILLS").ok() {
        None => 1,
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => panic!("KRAFTD_FAILOVER_KILLS must be a positive number, not {n:?}"),
        },
    }
}

fn partitions_from_env() -> usize {
    match std::env::var("KRAFTD_FAILOVER_PARTITIONS").ok() {
        None => 0,
        Some(n) => n.parse::<usize>().unwrap_or_else(|_| {
            panic!("KRAFTD_FAILOVER_PARTITIONS must be a number of partitions, not {n:?}")
        }),
    }
}

/// Partitions per topic when the quorum is loaded.
const PER_TOPIC: usize = 10;

/// Three simulated brokers heartbeating to whichever controller leads, holding the partitions
/// the quorum was loaded with; their runtime runs them while the kills go on.
struct Brokers {
    runtime: tokio::runtime::Runtime,
    fleet: Fleet,
}

impl Brokers {
    /// None for 0 partitions: the quorum holds only its bootstrap records.
    fn with_partitions(q: &Mixed, partitions: usize) -> Option<Brokers> {
        if partitions == 0 {
            return None;
        }
        let controllers = controllers_of(q);
        controllers.set_leader(q.wait_for_leader(0).leader_id);
        let runtime = runtime();
        let fleet = runtime.block_on(async {
            let fleet = Fleet::start(
                controllers.clone(),
                FleetConfig {
                    cluster_id: q.cluster_id.clone(),
                    first_broker_id: FIRST_BROKER,
                    brokers: 3,
                    // Kafka's default broker.heartbeat.interval.ms.
                    heartbeat_interval: Duration::from_secs(2),
                    start_spread: Duration::ZERO,
                },
            );
            fleet
                .wait_unfenced(Duration::from_secs(120))
                .await
                .expect("3 brokers unfenced");
            let storm = TopicStorm {
                prefix: "failover".into(),
                topics: partitions.div_ceil(PER_TOPIC),
                partitions: PER_TOPIC as i32,
                replication_factor: 3,
                per_request: 10,
                concurrency: 8,
            };
            let s = create_topics(controllers, &storm).await;
            assert_eq!(
                s.created, storm.topics,
                "every topic created before the kills: {:?}",
                s.errors
            );
            eprintln!(
                "failover: {} partitions created in {:.1?}",
                storm.topics * PER_TOPIC,
                s.wall
            );
            fleet
        });
        Some(Brokers { runtime, fleet })
    }

    /// Stops the brokers; fencings during the kills are printed, not failures (a controller
    /// that takes over late may fence a broker whose session lapsed meanwhile).
    fn stop(self, quorum: &str) -> Value {
        let report = self.runtime.block_on(self.fleet.stop());
        eprintln!(
            "{quorum}: brokers: {} fencings, {} of {} unfenced at the end",
            report.fencings, report.unfenced, report.brokers
        );
        json!({"brokers": report.brokers, "fencings": report.fencings, "unfenced_at_end": report.unfenced})
    }
}

pub(crate) fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("bench")
}

/// What one kill of the leader led to.
struct Kill {
    /// How long after the quorum was seen caught up the kill came.
    pause: Duration,
    killed: (i32, &'static str),
    winner: (i32, &'static str),
    epochs: (i32, i32),
    /// From the kill until a poll showed the new leader, and its first commit.
    elected: Duration,
    committed: Duration,
    /// Each surviving voter's first pre-vote after the kill, from its log (None: none logged,
    /// e.g. it only voted for the other).
    detection: BTreeMap<i32, Option<Duration>>,
}

impl Kill {
    fn summary(&self) -> String {
        format!(
            "after {:?}, killed {} {} at epoch {}; {} {} leads epoch {} after {:.0?}, committed after {:.0?}; \
             pre-vote started after {:?}",
            self.pause,
            self.killed.1,
            self.killed.0,
            self.epochs.0,
            self.winner.1,
            self.winner.0,
            self.epochs.1,
            self.elected,
            self.committed,
            self.detection
        )
    }

    fn json(&self) -> Value {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        json!({
            "pause_ms": self.pause.as_millis() as u64,
            "killed": {"id": self.killed.0, "kind": self.killed.1},
            "winner": {"id": self.winner.0, "kind": self.winner.1},
            "old_epoch": self.epochs.0,
            "new_epoch": self.epochs.1,
            "elected_ms": ms(self.elected),
            "committed_ms": ms(self.committed),
            "detection_ms": self.detection.iter()
                .map(|(id, d)| (id.to_string(), d.map(ms).map_or(Value::Null, Value::from)))
                .collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// Kills the leader, times the election and restarts the killed voter. The kill comes at a
/// random point (up to a second) after the quorum was seen caught up, so that it falls anywhere
/// in the leader's idle-write and the followers' fetch cycles.
fn kill_leader(q: &mut Mixed, pause: Duration, stop: Stop) -> Kill {
    q.wait_caught_up(0);
    thread::sleep(pause);
    let before = q.wait_caught_up(0);
    let old = before.leader_id;
    let old_end = voter_end(&before, old).expect("the leader lists itself");
    let logs: Vec<usize> = (1..=3).map(|i| q.member(i).log_text().len()).collect();
    let killed = (old, q.member(old).kind());
    let wall = SystemTime::now();
    let t0 = Instant::now();
    match stop {
        Stop::Kill9 => q.member(old).kill9(),
        Stop::Sigterm => q.member(old).sigterm(),
    }
    let live: Vec<u16> = q
        .voters
        .iter()
        .filter(|v| v.id != old)
        .map(|v| v.port)
        .collect();
    let mut elected = None;
    let (view, committed) = loop {
        if let Some(d) = leader_view(&live).filter(|d| d.leader_epoch > before.leader_epoch) {
            let at = t0.elapsed();
            elected.get_or_insert(at);
            if d.high_watermark > old_end {
                break (d, at);
            }
        }
        assert!(
            t0.elapsed() < TIMEOUT,
            "no new leader committed within {TIMEOUT:?} of killing leader {old}"
        );
        thread::sleep(POLL);
    };
    let detection = (1..=3)
        .filter(|&i| i != old)
        .map(|i| {
            let text = q.member(i).log_text();
            let first = text[logs[(i - 1) as usize]..]
                .lines()
                .find(|l| is_pre_vote_start(l))
                .and_then(log_time)
                .and_then(|t| t.duration_since(wall).ok());
            (i, first)
        })
        .collect();
    let kill = Kill {
        pause,
        killed,
        winner: (view.leader_id, q.member(view.leader_id).kind()),
        epochs: (before.leader_epoch, view.leader_epoch),
        elected: elected.expect("set before the commit"),
        committed,
        detection,
    };
    if stop == Stop::Sigterm {
        q.member(old).assert_clean_exit(&format!("leader {old}"));
    }
    q.restart_member(old);
    q.wait_caught_up(0);
    kill
}

/// Moves leadership to a Java voter: the kraftd leader is killed and restarted (not counted).
fn lead_with_java(q: &mut Mixed) {
    loop {
        let d = q.wait_caught_up(0);
        if q.member(d.leader_id).kind() == "java" {
            return;
        }
        q.member(d.leader_id).kill9();
        q.wait_for_leader(d.leader_epoch);
        q.restart_member(d.leader_id);
    }
}

/// kraftd's `now Prospective at epoch` and Java's `Transitioning to Prospective state`.
fn is_pre_vote_start(line: &str) -> bool {
    line.contains("now Prospective at epoch") || line.contains("Transitioning to Prospective state")
}

/// The wall time of a log line: both kinds start it with `[YYYY-MM-DD?HH:MM:SS,mmm]` in local
/// time.
fn log_time(line: &str) -> Option<SystemTime> {
    let stamp = line.strip_prefix('[')?.get(..23)?;
    let num = |r: std::ops::Range<usize>| stamp.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    let days = days_from_civil(y, mo, d);
    let local_ms = ((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms;
    let utc_ms = local_ms - utc_offset_secs() * 1000;
    Some(UNIX_EPOCH + Duration::from_millis(u64::try_from(utc_ms).ok()?))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// This machine's offset from UTC now, in seconds (the logs are in local time).
fn utc_offset_secs() -> i64 {
    // SAFETY: localtime_r writes only into the tm it is given.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// The pauses before the kills: xorshift64, enough to spread them (also election_soak's).
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Medians and win counts over one quorum's kills.
struct Summary {
    name: &'static str,
    kills: usize,
    wins: BTreeMap<&'static str, usize>,
    elected_ms: (f64, f64),
    committed_ms: (f64, f64),
    detection_ms: (f64, f64),
}

impl Summary {
    fn of(name: &'static str, runs: &[Kill]) -> Summary {
        let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
        let mut wins = BTreeMap::new();
        for r in runs {
            *wins.entry(r.winner.1).or_insert(0) += 1;
        }
        let detections: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.detection.values().flatten().map(ms))
            .collect();
        Summary {
            name,
            kills: runs.len(),
            wins,
            elected_ms: median_max(runs.iter().map(|r| ms(&r.elected)).collect()),
            committed_ms: median_max(runs.iter().map(|r| ms(&r.committed)).collect()),
            detection_ms: median_max(detections),
        }
    }

    fn line(&self) -> String {
        format!(
            "{}: {} kills; wins {:?}; new leader after median {:.0} ms (max {:.0}), committed \
             after {:.0} ms (max {:.0}); first pre-vote after {:.0} ms (max {:.0})",
            self.name,
            self.kills,
            self.wins,
            self.elected_ms.0,
            self.elected_ms.1,
            self.committed_ms.0,
            self.committed_ms.1,
            self.detection_ms.0,
            self.detection_ms.1
        )
    }

    fn json(&self) -> Value {
        json!({
            "kills": self.kills,
            "wins": self.wins,
            "elected_ms": {"median": self.elected_ms.0, "max": self.elected_ms.1},
            "committed_ms": {"median": self.committed_ms.0, "max": self.committed_ms.1},
            "first_pre_vote_ms": {"median": self.detection_ms.0, "max": self.detection_ms.1},
        })
    }
}

/// The median and the maximum (NaN for none).
fn median_max(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() - 1])
}
