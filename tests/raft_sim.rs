//! Seeded simulation of the raft core: random faults with invariants checked after every
//! event, then a liveness phase (see `kraftd::raft::sim::chaos`). Some seeds fail nodes'
//! storage (EIO, ENOSPC, torn writes): the run reports how many, and fails if a kind of fault
//! was never injected.
//!
//! * `cargo test --features testkit --test raft_sim` runs seeds 0..500; `SIM_SEEDS=100000` runs more.
//! * `SIM_SEED=S` replays one seed and prints its transcript tail on failure;
//!   `SIM_PRINT=S` prints seed S's whole transcript (`SIM_VERBOSE=1`: every message).
//! * The same seed always gives the same trace (checked below).

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;

use kraftd::log::memory_faults::{FaultKind, StorageOp};
use kraftd::raft::config::ElectionRules;
use kraftd::raft::sim::admin::VoterChangeLog;
use kraftd::raft::sim::chaos::{run_seed, run_seed_with_transcript, ChaosBudget, SeedReport};
use kraftd::raft::sim::faults::FaultLog;
use kraftd::raft::sim::kill_loop::{run_kill_loop, KILLS};
use kraftd::raft::sim::state_machine::{MachineFactory, MachineLog};
use kraftd::raft::sim::Verbosity;
use sim_seeds::{env_u64, replay_hint, run_seed_range, run_seeds, verbosity};

mod sim_seeds;

const TEST: &str = "raft_sim";

fn run_one(seed: u64, verbosity: Verbosity) -> Result<SeedReport, String> {
    run_seed(seed, &ChaosBudget::default(), verbosity)
}

/// The storage faults of many seeds.
#[derive(Default)]
struct FaultTally {
    /// Seeds in which at least one fault of the kind fired.
    seeds_by_kind: BTreeMap<FaultKind, u64>,
    seeds_with_faults: u64,
    fired: BTreeMap<(StorageOp, FaultKind), u64>,
    torn_tails_cut: u64,
    torn_snapshots_removed: u64,
    restarts_after_fault: u64,
}

impl FaultTally {
    fn add(&mut self, f: &FaultLog) {
        if f.fired_total() > 0 {
            self.seeds_with_faults += 1;
        }
        for kind in FaultKind::ALL {
            if f.fired_of(kind) > 0 {
                *self.seeds_by_kind.entry(kind).or_default() += 1;
            }
        }
        for (k, n) in &f.fired {
            *self.fired.entry(*k).or_default() += n;
        }
        self.torn_tails_cut += f.torn_tails_cut;
        self.torn_snapshots_removed += f.torn_snapshots_removed;
        self.restarts_after_fault += f.restarts_after_fault;
    }

    fn report(&self, seeds: u64) -> String {
        let kinds: Vec<String> = FaultKind::ALL
            .iter()
            .map(|k| format!("{k} {}", self.seeds_by_kind.get(k).unwrap_or(&0)))
            .collect();
        let fired: Vec<String> = self
            .fired
            .iter()
            .map(|((op, kind), n)| format!("{op}/{kind}={n}"))
            .collect();
        format!(
            "storage faults fired in {} of {seeds} seeds (seeds per kind: {}); faults by operation: {}; \
             torn tails cut by recovery: {}; torn snapshots removed: {}; restarts after a fault: {}",
            self.seeds_with_faults,
            kinds.join(", "),
            fired.join(" "),
            self.torn_tails_cut,
            self.torn_snapshots_removed,
            self.restarts_after_fault
        )
    }

    /// Every kind of fault, on every operation it applies to, fired somewhere, and recovery
    /// cut torn tails: the injection works.
    fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for op in StorageOp::ALL {
            for kind in FaultKind::ALL.into_iter().filter(|k| k.applies_to(op)) {
                if !self.fired.contains_key(&(op, kind)) {
                    missing.push(format!("no {op}/{kind} fault fired"));
                }
            }
        }
        if self.torn_tails_cut == 0 {
            missing.push("no recovery cut a torn tail".into());
        }
        if self.restarts_after_fault == 0 {
            missing.push("no node restarted after a fault".into());
        }
        missing
    }
}

/// Below this many seeds a run may miss a kind of fault by chance.
const SEEDS_THAT_INJECT_EVERY_FAULT: u64 = 500;

#[test]
fn simulation_seeds_keep_every_invariant_and_converge() {
    if let Some(seed) = env_u64("SIM_SEED") {
        match run_one(seed, verbosity()) {
            Ok(report) => println!("seed {seed} ok: {report:?}"),
            Err(e) => panic!("seed {seed} failed: {e}\n{}", replay_hint(TEST, seed)),
        }
        return;
    }
    let seeds = env_u64("SIM_SEEDS").unwrap_or(500);
    let mut proposed = 0;
    let mut acknowledged = 0;
    let mut tally = FaultTally::default();
    let mut machines = MachineTally::default();
    let mut voter_changes = VoterChangeLog::default();
    let mut stranded = Vec::new();
    let run = run_seeds(TEST, seeds, |seed| {
        let r = run_one(seed, Verbosity::Quiet)?;
        if !r.stranded.is_empty() {
            stranded.push(format!("{seed} {:?}", r.stranded));
        }
        proposed += r.proposed;
        acknowledged += r.acknowledged as u64;
        tally.add(&r.faults);
        machines.add(&r.machines);
        voter_changes.add(&r.voter_changes);
        Ok(())
    });
    println!(
        "{seeds} seeds ({proposed} proposals, {acknowledged} records acknowledged as committed and found in every log) in {:.1}s",
        run.secs
    );
    println!("{}", tally.report(seeds));
    println!("{}", machines.report());
    let outcomes: Vec<String> = voter_changes
        .outcomes
        .iter()
        .map(|((change, error), n)| format!("{change} {error}={n}"))
        .collect();
    println!("operator voter changes answered: {}", outcomes.join(", "));
    println!(
        "seeds with nodes stranded by a voter removed without learning it, in a quorum without pre-vote (as Kafka leaves them): {} {stranded:?}",
        stranded.len()
    );
    run.assert_passed();
    // Voter changes run at kraft.version 1: adds and removes must complete, and some must be
    // refused or time out while another is pending or the commit is slow.
    // kraft.version 0 seeds upgrade to 1 (some refused until every voter has reported).
    let exercised = ["add", "remove"].iter().all(|c| {
        voter_changes.count(c, "NONE") > 0 && voter_changes.count(c, "REQUEST_TIMED_OUT") > 0
    }) && voter_changes.count("upgrade", "NONE") > 0
        && voter_changes.count("upgrade", "INVALID_UPDATE_VERSION") > 0;
    assert!(
        seeds < SEEDS_THAT_INJECT_EVERY_FAULT || exercised,
        "voter changes are not exercised: {outcomes:?}"
    );
    let missing = tally.missing();
    assert!(
        seeds < SEEDS_THAT_INJECT_EVERY_FAULT || missing.is_empty(),
        "the fault injection is not exercised: {}",
        missing.join("; ")
    );
    let missing = machines.missing();
    assert!(
        seeds < SEEDS_THAT_INJECT_EVERY_FAULT || missing.is_empty(),
        "the replicated machines are not exercised: {}",
        missing.join("; ")
    );
}

/// What the replicated machines of many seeds did: the seeds in which each thing happened, and
/// the totals.
#[derive(Default)]
struct MachineTally {
    total: MachineLog,
    seeds_reverting_writes: u64,
    seeds_loading_snapshots: u64,
}

impl MachineTally {
    fn add(&mut self, m: &MachineLog) {
        self.total.add(m);
        self.seeds_reverting_writes += u64::from(m.renounces_reverting_writes > 0);
        self.seeds_loading_snapshots += u64::from(m.snapshots_loaded > 0);
    }

    fn report(&self) -> String {
        let t = &self.total;
        format!(
            "machines: {} committed states compared across replicas; {} proposals applied ahead of their commit ({} not); \
             {} renounces, {} reverting uncommitted writes (in {} seeds); {} snapshots written, {} loaded (in {} seeds)",
            t.states_compared,
            t.written_ahead,
            t.not_taken_ahead,
            t.renounces,
            t.renounces_reverting_writes,
            self.seeds_reverting_writes,
            t.snapshots_written,
            t.snapshots_loaded,
            self.seeds_loading_snapshots
        )
    }

    /// The speculative path, its revert and snapshot loading all ran somewhere.
    fn missing(&self) -> Vec<String> {
        let t = &self.total;
        let mut missing = Vec::new();
        if t.written_ahead == 0 {
            missing.push("no leader's machine applied a proposal ahead of its commit".into());
        }
        if t.renounces_reverting_writes == 0 {
            missing.push("no renounce reverted uncommitted writes".into());
        }
        if t.snapshots_loaded == 0 {
            missing.push("no machine loaded a snapshot".into());
        }
        missing
    }
}

/// A seed in which a storage fault fires (a snapshot write fails with ENOSPC).
const SEED_WITH_A_FAULT: u64 = 12;

#[test]
fn the_same_seed_gives_the_same_trace() {
    for seed in [1u64, 7, 42, SEED_WITH_A_FAULT] {
        let a = run_one(seed, Verbosity::Quiet).expect("seed passes");
        let b = run_one(seed, Verbosity::Quiet).expect("seed passes");
        assert_eq!(
            a.trace_hash, b.trace_hash,
            "seed {seed} is not deterministic"
        );
        assert_eq!(
            a.faults, b.faults,
            "seed {seed}'s faults are not deterministic"
        );
        if seed == SEED_WITH_A_FAULT {
            assert!(
                a.faults.fired_total() > 0,
                "seed {seed} no longer injects a fault ({:?}): pick another SEED_WITH_A_FAULT",
                a.faults
            );
        }
    }
}

/// `SIM_PRINT=S cargo test --features testkit --test raft_sim print_transcript -- --nocapture`.
#[test]
fn print_transcript() {
    let Some(seed) = env_u64("SIM_PRINT") else {
        return;
    };
    let (report, transcript) = run_seed_with_transcript(seed, &ChaosBudget::default(), verbosity());
    println!("{}", transcript.join("\n"));
    println!("{report:?}");
}

/// Issue #36: quorums mixing kraftd voters with stand-ins for Java voters elect a new leader
/// within `LEADERLESS_BOUND` after every kill of the leader, then converge
/// (`kraftd::raft::sim::kill_loop`); the seeds are split in two halves to use both cores.
/// `SIM_KILL_SEEDS=N` runs more seeds; `SIM_KILL_SEED=S` replays one and prints its transcript
/// tail on failure.
#[test]
fn mixed_quorums_elect_a_leader_after_every_kill_first_half() {
    kill_loop_seeds(|seeds| 0..seeds / 2);
}

#[test]
fn mixed_quorums_elect_a_leader_after_every_kill_second_half() {
    kill_loop_seeds(|seeds| seeds / 2..seeds);
}

fn kill_loop_seeds(half: impl Fn(u64) -> std::ops::Range<u64>) {
    if let Some(seed) = env_u64("SIM_KILL_SEED") {
        if half(u64::MAX).start == 0 {
            let (r, _) = run_kill_loop(
                seed,
                ElectionRules::Kraftd,
                MachineFactory::default(),
                verbosity(),
            );
            match r {
                Ok(report) => println!("seed {seed} ok: {report:?}"),
                Err(e) => panic!("kill loop seed {seed} failed: {e}"),
            }
        }
        return;
    }
    let seeds = half(env_u64("SIM_KILL_SEEDS").unwrap_or(KILL_LOOP_SEEDS));
    let mut windows = Vec::new();
    let (mut kraftd_won, mut elections) = (0, 0);
    let run = run_seed_range(TEST, seeds.clone(), |seed| {
        let (r, _) = run_kill_loop(
            seed,
            ElectionRules::Kraftd,
            MachineFactory::default(),
            Verbosity::Quiet,
        );
        let r = r.map_err(|e| format!("kill loop: {e}\n  replay with SIM_KILL_SEED={seed}"))?;
        windows.extend(&r.leaderless_ms);
        kraftd_won += r.kraftd_won.iter().filter(|w| **w).count();
        elections += r.kraftd_won.len();
        Ok(())
    });
    println!(
        "kill loop: mixed-quorum seeds {seeds:?}, {} kills in {:.1}s; {}; a kraftd voter won {kraftd_won} of {elections} elections",
        windows.len(),
        run.secs,
        leaderless_summary(&mut windows)
    );
    run.assert_passed();
    assert_eq!(
        windows.len() as u64,
        (seeds.end - seeds.start) * KILLS as u64,
        "every kill is timed"
    );
}

/// The planted rule before issue #36 (a prospective keeps stale refusals) fails the kill loop:
/// the property can fail, and catches that bug.
#[test]
fn the_kill_loop_catches_the_planted_stale_refusal_rule() {
    let failing = (0..PLANTED_SEEDS).find_map(|seed| {
        let (r, _) = run_kill_loop(
            seed,
            ElectionRules::KraftdKeepingStaleRefusals,
            MachineFactory::default(),
            Verbosity::Quiet,
        );
        r.err().map(|e| (seed, e))
    });
    let (seed, e) = failing.unwrap_or_else(|| {
        panic!("no seed of {PLANTED_SEEDS} caught the planted stale-refusal rule")
    });
    assert!(
        e.contains("no leader"),
        "seed {seed} failed otherwise than by a stall: {e}"
    );
    println!(
        "the planted rule stalls seed {seed}: {}",
        e.lines().next().unwrap_or("")
    );
}

/// Seeds of the kill loop in `make test` (issue #36 asks for at least 2,000).
const KILL_LOOP_SEEDS: u64 = 2_000;
/// Seeds tried under the planted rule; the first stall comes much sooner.
const PLANTED_SEEDS: u64 = 500;

/// Median, p99 and longest leaderless window, in virtual ms.
fn leaderless_summary(windows: &mut [u64]) -> String {
    windows.sort_unstable();
    let at = |q: f64| {
        windows
            .get(((windows.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    format!(
        "leaderless after a kill: median {} ms, p99 {} ms, longest {} ms",
        at(0.5),
        at(0.99),
        windows.last().copied().unwrap_or(0)
    )
}
