//! Seeded simulation of the raft core: random faults with invariants checked after every
//! event, then a liveness phase (see `kraftd::raft::sim::chaos`).
//!
//! * `cargo test --test raft_sim` runs seeds 0..500; `SIM_SEEDS=100000` runs more.
//! * `SIM_SEED=S` replays one seed and prints its transcript tail on failure;
//!   `SIM_PRINT=S` prints seed S's whole transcript (`SIM_VERBOSE=1`: every message).
//! * The same seed always gives the same trace (checked below).

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::time::Instant as WallClock;

use kraftd::raft::sim::chaos::{run_seed, run_seed_with_transcript, ChaosBudget, SeedReport};
use kraftd::raft::sim::Verbosity;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn verbosity() -> Verbosity {
    if std::env::var("SIM_VERBOSE").is_ok() {
        Verbosity::Messages
    } else {
        Verbosity::Roles
    }
}

fn replay_hint(seed: u64) -> String {
    format!("replay with: SIM_SEED={seed} cargo test --test raft_sim -- --nocapture")
}

fn run_one(seed: u64, verbosity: Verbosity) -> Result<SeedReport, String> {
    run_seed(seed, &ChaosBudget::default(), verbosity)
}

#[test]
fn simulation_seeds_keep_every_invariant_and_converge() {
    if let Some(seed) = env_u64("SIM_SEED") {
        match run_one(seed, verbosity()) {
            Ok(report) => println!("seed {seed} ok: {report:?}"),
            Err(e) => panic!("seed {seed} failed: {e}\n{}", replay_hint(seed)),
        }
        return;
    }
    let seeds = env_u64("SIM_SEEDS").unwrap_or(500);
    let started = WallClock::now();
    let mut failures = Vec::new();
    let mut proposed = 0;
    for seed in 0..seeds {
        match run_one(seed, Verbosity::Quiet) {
            Ok(r) => proposed += r.proposed,
            Err(e) => {
                let first = e.lines().next().unwrap_or("").to_string();
                failures.push(format!("seed {seed}: {first}\n  {}", replay_hint(seed)));
                if failures.len() >= 5 {
                    break;
                }
            }
        }
    }
    println!(
        "{seeds} seeds ({proposed} proposals) in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failing seed(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    for seed in [1u64, 7, 42] {
        let a = run_one(seed, Verbosity::Quiet).expect("seed passes");
        let b = run_one(seed, Verbosity::Quiet).expect("seed passes");
        assert_eq!(
            a.trace_hash, b.trace_hash,
            "seed {seed} is not deterministic"
        );
    }
}

/// `SIM_PRINT=S cargo test --test raft_sim print_transcript -- --nocapture`.
#[test]
fn print_transcript() {
    let Some(seed) = env_u64("SIM_PRINT") else {
        return;
    };
    let (report, transcript) = run_seed_with_transcript(seed, &ChaosBudget::default(), verbosity());
    println!("{}", transcript.join("\n"));
    println!("{report:?}");
}
