//! `make soak-election`: elections under repeated kill -9, on three static quorums one after
//! the other (3 kraftd voters, 3 Java voters, Java voters 1 and 2 with kraftd voter 3). Each
//! quorum's leader, whichever kind it is, is killed `KRAFTD_SOAK_KILLS` times (default 200),
//! at a random point of its idle-write and fetch cycles; the killed voter restarts a random
//! 5-10 s after its kill, and the next kill waits until every voter has caught up.
//!
//! Every election must finish within [`GIVE_UP`]. Per quorum: the kills, the longest
//! leaderless window (kill to a new leader seen), the median and p99 of those windows and who
//! won; printed as a table and written to `target/bench/election_soak.json`. Timings are
//! reported, not asserted. At ~10 s per kill, 200 kills take over half an hour per quorum;
//! `SOAK_KILLS=5` is a quick check. Without `KRAFTD_SOAK_KILLS` (`make test`) it is a smoke run
//! of the driver: one kill of the 3-kraftd quorum.

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::failover_bench::{bench_dir, XorShift};
use crate::harness::elections::{addrs_without, poll_for_new_leader};
use crate::harness::mixed_quorum::Mixed;
use crate::load::stats::{Latencies, LatencySummary};

/// An election that has not finished this long after the kill fails the soak.
const GIVE_UP: Duration = Duration::from_secs(30);
/// A killed voter restarts this long after its kill, plus up to [`RESTART_SPREAD_MS`].
const RESTART_AFTER_MS: u64 = 5_000;
const RESTART_SPREAD_MS: u64 = 5_000;
/// The kill comes up to this long after the quorum was seen caught up.
const PAUSE_SPREAD_MS: u64 = 1_000;
const DEFAULT_KILLS: usize = 200;

#[test]
fn election_soak() {
    let smoke = std::env::var_os("KRAFTD_SOAK_KILLS").is_none();
    let kills = if smoke { 1 } else { kills_from_env() };
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    eprintln!("election_soak: {kills} kills per quorum, draw seed {seed}");
    let mut draws = XorShift(seed | 1);
    let quorums: [(&str, &[i32]); 3] = [
        ("3 kraftd", &[1, 2, 3]),
        ("3 java", &[]),
        ("2 java + 1 kraftd", &[3]),
    ];
    let chosen = if smoke {
        vec!["kraftd".to_string()]
    } else {
        quorums_from_env()
    };
    let soaks: Vec<Soak> = quorums
        .into_iter()
        .zip(["kraftd", "java", "mixed"])
        .filter(|(_, key)| chosen.iter().any(|c| c == key))
        .map(|((name, kraftd), _)| soak(name, kraftd, kills, &mut draws))
        .collect();

    eprintln!(
        "\n{:<18} {:>6} {:>12} {:>10} {:>10}  wins",
        "quorum", "kills", "longest ms", "median ms", "p99 ms"
    );
    for s in &soaks {
        let f = s.figures();
        eprintln!(
            "{:<18} {:>6} {:>12.0} {:>10.0} {:>10.0}  {:?}",
            s.name,
            s.elections.len(),
            f.max_ms,
            f.p50_ms,
            f.p99_ms,
            s.wins()
        );
    }
    if smoke {
        return; // a smoke run's figures are no soak's: target/bench keeps the last soak's
    }
    let path = bench_dir().join("election_soak.json");
    std::fs::create_dir_all(path.parent().unwrap())
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.parent().unwrap().display()));
    let doc = json!({
        "kills_per_quorum": kills,
        "draw_seed": seed,
        "give_up_ms": ms(GIVE_UP),
        "quorums": soaks.iter().map(Soak::json).collect::<Vec<_>>(),
    });
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap())
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    eprintln!("wrote {}", path.display());
}

/// `KRAFTD_SOAK_QUORUMS` (`make soak-election SOAK_QUORUMS=mixed`): the quorums to soak, of
/// `kraftd`, `java` and `mixed`, comma-separated; all three when unset.
fn quorums_from_env() -> Vec<String> {
    let all = ["kraftd", "java", "mixed"];
    let Some(v) = std::env::var("KRAFTD_SOAK_QUORUMS")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        return all.map(String::from).to_vec();
    };
    let chosen: Vec<String> = v.split(',').map(|q| q.trim().to_string()).collect();
    if let Some(bad) = chosen.iter().find(|q| !all.contains(&q.as_str())) {
        panic!("KRAFTD_SOAK_QUORUMS: {bad:?} is not one of {all:?}");
    }
    chosen
}

fn kills_from_env() -> usize {
    match std::env::var("KRAFTD_SOAK_KILLS")
        .ok()
        .filter(|n| !n.is_empty())
    {
        None => DEFAULT_KILLS,
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => panic!("KRAFTD_SOAK_KILLS must be a positive number of kills, not {n:?}"),
        },
    }
}

/// One kill and the election after it.
struct Election {
    killed: (i32, &'static str),
    winner: (i32, &'static str),
    /// From the kill until a poll saw the new leader.
    leaderless: Duration,
}

struct Soak {
    name: &'static str,
    elections: Vec<Election>,
}

/// Kills the leader of a fresh quorum `kills` times (the ids in `kraftd` run kraftd).
fn soak(name: &'static str, kraftd: &[i32], kills: usize, draws: &mut XorShift) -> Soak {
    let mut q = Mixed::start(kraftd);
    let mut elections = Vec::with_capacity(kills);
    for n in 1..=kills {
        q.wait_caught_up(0);
        thread::sleep(Duration::from_millis(draws.below(PAUSE_SPREAD_MS)));
        let before = q.wait_for_leader(-1);
        let old = before.leader_id;
        let killed = (old, q.member(old).kind());
        let restart_after =
            Duration::from_millis(RESTART_AFTER_MS + draws.below(RESTART_SPREAD_MS + 1));
        let t0 = Instant::now();
        q.member(old).kill9();
        let live = addrs_without(&q, old);
        let (view, leaderless) =
            poll_for_new_leader(&live, before.leader_epoch, t0, GIVE_UP, |_| {}).unwrap_or_else(
                || {
                    panic!(
                "{name}, kill {n}/{kills}: no leader within {GIVE_UP:?} of killing {} {old} \
                         (leader of epoch {}); the voters' logs are in {}",
                killed.1,
                before.leader_epoch,
                q.dir.path().display()
            )
                },
            );
        let winner = (view.leader_id, q.member(view.leader_id).kind());
        eprintln!(
            "{name}, kill {n}/{kills}: killed {} {old} of epoch {}; {} {} leads epoch {} after \
             {} ms; restart after {restart_after:.1?}",
            killed.1,
            before.leader_epoch,
            winner.1,
            winner.0,
            view.leader_epoch,
            leaderless.as_millis()
        );
        elections.push(Election {
            killed,
            winner,
            leaderless,
        });
        thread::sleep(restart_after.saturating_sub(t0.elapsed()));
        q.restart_member(old);
    }
    q.wait_caught_up(0);
    q.stop();
    Soak { name, elections }
}

impl Soak {
    /// The leaderless windows' nearest-rank percentiles (max: the longest).
    fn figures(&self) -> LatencySummary {
        let mut windows = Latencies::default();
        for e in &self.elections {
            windows.record(e.leaderless);
        }
        windows.summary()
    }

    fn wins(&self) -> BTreeMap<&'static str, usize> {
        let mut wins = BTreeMap::new();
        for e in &self.elections {
            *wins.entry(e.winner.1).or_insert(0) += 1;
        }
        wins
    }

    fn json(&self) -> serde_json::Value {
        let f = self.figures();
        json!({
            "quorum": self.name,
            "kills": self.elections.len(),
            "longest_leaderless_ms": f.max_ms,
            "median_ms": f.p50_ms,
            "p99_ms": f.p99_ms,
            "wins": self.wins(),
            "elections": self.elections.iter().map(|e| json!({
                "killed": {"id": e.killed.0, "kind": e.killed.1},
                "winner": {"id": e.winner.0, "kind": e.winner.1},
                "leaderless_ms": ms(e.leaderless),
            })).collect::<Vec<_>>(),
        })
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
