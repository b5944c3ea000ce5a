//! What the seeded simulation tests (`raft_sim`, `controller_sim`) share: their environment
//! knobs and the loop over seeds that collects the first failures with the command replaying
//! each.

// A test harness owns its clock.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::time::Instant as WallClock;

use kraftd::raft::sim::Verbosity;

/// A number from the environment (`SIM_SEEDS`, `SIM_SEED`, `SIM_PRINT`).
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// `SIM_VERBOSE=1`: every message in the transcript.
pub fn verbosity() -> Verbosity {
    if std::env::var("SIM_VERBOSE").is_ok() {
        Verbosity::Messages
    } else {
        Verbosity::Roles
    }
}

/// The command that replays `seed` of the test binary `test`.
pub fn replay_hint(test: &str, seed: u64) -> String {
    format!("replay with: SIM_SEED={seed} cargo test --release --features testkit --test {test} -- --nocapture")
}

/// What a run of many seeds came to.
pub struct SeedRun {
    pub secs: f64,
    /// The first failing seeds (at most 5), each with its first line and how to replay it.
    pub failures: Vec<String>,
}

impl SeedRun {
    pub fn assert_passed(&self) {
        assert!(
            self.failures.is_empty(),
            "{} failing seed(s):\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// Runs seeds `0..seeds` of the test binary `test`, stopping after 5 failures.
pub fn run_seeds(test: &str, seeds: u64, run: impl FnMut(u64) -> Result<(), String>) -> SeedRun {
    run_seed_range(test, 0..seeds, run)
}

/// Runs `seeds` of the test binary `test`, stopping after 5 failures.
pub fn run_seed_range(
    test: &str,
    seeds: std::ops::Range<u64>,
    mut run: impl FnMut(u64) -> Result<(), String>,
) -> SeedRun {
    let started = WallClock::now();
    let mut failures = Vec::new();
    for seed in seeds {
        if let Err(e) = run(seed) {
            let first = e.lines().next().unwrap_or("").to_string();
            failures.push(format!(
                "seed {seed}: {first}\n  {}",
                replay_hint(test, seed)
            ));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    SeedRun {
        secs: started.elapsed().as_secs_f64(),
        failures,
    }
}
