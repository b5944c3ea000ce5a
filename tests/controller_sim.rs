//! The seeded raft simulation with a controller on every node (tests/controller_machine): the
//! same chaos as tests/raft_sim.rs (partitions, crashes, storage faults, resignations,
//! snapshots loaded by followers and restarted nodes). A kraftd node runs kraftd's
//! `QuorumController` as the node loop drives it (activation, periodic decisions, the requests
//! simulated brokers and admin tools send); a node with Kafka's election rules stands in for a
//! Java controller and writes records directly, transactions across batches among them. The
//! invariant ConsistentImage is checked at every committed offset every replica reaches, a
//! leader's renounce is checked to return it to the committed image, `Controller::check` runs
//! after every step, and a kraftd leader must abort a transaction it inherits before writing.
//! A committed record a controller refuses fails the seed: its leader decided it from its own
//! image.
//!
//! * `cargo test --release --features testkit --test controller_sim` runs seeds 0..3000;
//!   `SIM_SEEDS=N` runs more (`make sim-controller SEEDS=N`).
//! * `SIM_SEED=S` replays one seed and prints its transcript tail on failure;
//!   `SIM_PRINT=S` prints seed S's whole transcript (`SIM_VERBOSE=1`: every message).

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod controller_machine;
mod controller_requests;
mod sim_seeds;

use std::sync::{Arc, Mutex};

use controller_machine::{factory, ControllerTally};
use kraftd::raft::config::ElectionRules;
use kraftd::raft::sim::chaos::{run_seed_on, ChaosBudget, SeedReport};
use kraftd::raft::sim::kill_loop::run_kill_loop;
use kraftd::raft::sim::state_machine::MachineLog;
use kraftd::raft::sim::Verbosity;
use sim_seeds::{env_u64, replay_hint, run_seeds, verbosity};

const TEST: &str = "controller_sim";

/// Seeds in a default run: about 25 s in release on a shared 2-core machine.
const DEFAULT_SEEDS: u64 = 3000;
/// Below this many seeds a run may miss a path by chance.
const SEEDS_THAT_EXERCISE_EVERY_PATH: u64 = 300;

/// The metadata.version seed `seed`'s cluster is formatted at: the latest level of each Kafka
/// release from 3.7 on, the releases a 4.4 controller may find in a log.
fn bootstrap_metadata_version(seed: u64) -> i16 {
    const RELEASES: [i16; 8] = [19, 20, 21, 25, 27, 29, 30, 33];
    RELEASES[(seed % RELEASES.len() as u64) as usize]
}

/// Runs one seed; its report, what its controllers did, and its transcript.
fn run_one(
    seed: u64,
    verbosity: Verbosity,
) -> (Result<SeedReport, String>, ControllerTally, Vec<String>) {
    let tally = Arc::new(Mutex::new(ControllerTally::default()));
    let (report, transcript) = run_seed_on(
        seed,
        &ChaosBudget::default(),
        verbosity,
        factory(tally.clone(), bootstrap_metadata_version(seed)),
    );
    let tally = tally.lock().expect("tally").clone();
    (report, tally, transcript)
}

/// Totals of many seeds, and in how many seeds each path ran.
#[derive(Default)]
struct Totals {
    controllers: ControllerTally,
    machines: MachineLog,
    proposed: u64,
    seeds_reverting_writes: u64,
    seeds_reverting_transactions: u64,
    seeds_leaving_transactions_open: u64,
    seeds_aborting_inherited: u64,
    seeds_kraftd_aborting_inherited: u64,
    seeds_loading_snapshots: u64,
}

impl Totals {
    fn add(&mut self, r: &SeedReport, c: &ControllerTally) {
        self.proposed += r.proposed;
        add_tally(&mut self.controllers, c);
        self.machines.add(&r.machines);
        self.seeds_reverting_writes += u64::from(c.renounces_reverting_writes > 0);
        self.seeds_reverting_transactions += u64::from(c.transactions_reverted > 0);
        self.seeds_leaving_transactions_open += u64::from(c.transactions_left_open > 0);
        self.seeds_aborting_inherited += u64::from(c.inherited_aborted > 0);
        self.seeds_kraftd_aborting_inherited += u64::from(c.inherited_aborted_by_kraftd > 0);
        self.seeds_loading_snapshots += u64::from(c.snapshots_loaded > 0);
    }

    fn report(&self) -> String {
        let (c, m) = (&self.controllers, &self.machines);
        format!(
            "{} proposals ({} applied ahead of their commit, {} not): kraftd controllers decided {} activations, {} periodic writes \
             and {} requests to write (answering {} others without a write), Java stand-ins {}; \
             {} records written ahead, {} committed records replayed; \
             {} committed images compared across replicas; {} renounces, {} reverting uncommitted writes (in {} seeds), \
             {} reverting an uncommitted transaction (in {} seeds), {} leaving a committed one open (in {} seeds), \
             {} inherited transactions aborted (in {} seeds; {} by a kraftd activation, in {} seeds), {} transactions ended by their leader; \
             {} image snapshots taken ({} deferred by an open transaction), {} loaded with {} records (in {} seeds)",
            self.proposed,
            m.written_ahead,
            m.not_taken_ahead,
            c.activations,
            c.periodic_writes,
            c.requests_written,
            c.requests_answered,
            c.stand_in_proposals,
            c.records_written_ahead,
            c.records_replayed,
            m.states_compared,
            m.renounces,
            c.renounces_reverting_writes,
            self.seeds_reverting_writes,
            c.transactions_reverted,
            self.seeds_reverting_transactions,
            c.transactions_left_open,
            self.seeds_leaving_transactions_open,
            c.inherited_aborted,
            self.seeds_aborting_inherited,
            c.inherited_aborted_by_kraftd,
            self.seeds_kraftd_aborting_inherited,
            c.transactions_ended,
            c.snapshots_taken,
            c.snapshots_deferred,
            c.snapshots_loaded,
            c.snapshot_records_loaded,
            self.seeds_loading_snapshots,
        )
    }

    /// Every path the invariant is about ran somewhere.
    fn missing(&self) -> Vec<&'static str> {
        let c = &self.controllers;
        let checks = [
            (
                c.renounces_reverting_writes,
                "no renounce reverted uncommitted writes",
            ),
            (
                c.transactions_reverted,
                "no renounce reverted an uncommitted transaction",
            ),
            (
                c.transactions_left_open,
                "no renounce left a committed transaction open",
            ),
            (
                c.inherited_aborted,
                "no leader aborted an inherited transaction",
            ),
            (c.snapshots_loaded, "no controller loaded an image snapshot"),
            (
                c.activations,
                "no kraftd controller wrote activation records",
            ),
            (
                c.periodic_writes,
                "no kraftd controller wrote a periodic decision",
            ),
            (
                c.requests_written,
                "no kraftd controller decided a request to write",
            ),
            (
                c.inherited_aborted_by_kraftd,
                "no kraftd activation aborted an inherited transaction",
            ),
            (c.stand_in_proposals, "no Java stand-in proposed"),
        ];
        checks
            .into_iter()
            .filter(|(n, _)| *n == 0)
            .map(|(_, why)| why)
            .collect()
    }
}

/// Adds another run's counts to `totals`.
fn add_tally(totals: &mut ControllerTally, o: &ControllerTally) {
    totals.records_written_ahead += o.records_written_ahead;
    totals.records_replayed += o.records_replayed;
    totals.renounces_reverting_writes += o.renounces_reverting_writes;
    totals.transactions_reverted += o.transactions_reverted;
    totals.transactions_left_open += o.transactions_left_open;
    totals.inherited_aborted += o.inherited_aborted;
    totals.inherited_aborted_by_kraftd += o.inherited_aborted_by_kraftd;
    totals.transactions_ended += o.transactions_ended;
    totals.snapshots_loaded += o.snapshots_loaded;
    totals.snapshot_records_loaded += o.snapshot_records_loaded;
    totals.snapshots_taken += o.snapshots_taken;
    totals.snapshots_deferred += o.snapshots_deferred;
    totals.activations += o.activations;
    totals.periodic_writes += o.periodic_writes;
    totals.requests_written += o.requests_written;
    totals.requests_answered += o.requests_answered;
    totals.stand_in_proposals += o.stand_in_proposals;
}

#[test]
fn controller_images_are_equal_at_equal_committed_offsets() {
    if let Some(seed) = env_u64("SIM_SEED") {
        let (report, tally, transcript) = run_one(seed, verbosity());
        match report {
            Ok(r) => println!("seed {seed} ok: {r:?}\n{tally:?}"),
            Err(e) => panic!(
                "seed {seed} failed: {e}\n{}\n(transcript: {} lines)",
                replay_hint(TEST, seed),
                transcript.len()
            ),
        }
        return;
    }
    let seeds = env_u64("SIM_SEEDS").unwrap_or(DEFAULT_SEEDS);
    let mut totals = Totals::default();
    let run = run_seeds(TEST, seeds, |seed| {
        let (report, c, _) = run_one(seed, Verbosity::Quiet);
        report.map(|r| totals.add(&r, &c))
    });
    println!(
        "{seeds} seeds in {:.1}s ({:.0} seeds/s): {}",
        run.secs,
        seeds as f64 / run.secs,
        totals.report()
    );
    run.assert_passed();
    let missing = totals.missing();
    assert!(
        seeds < SEEDS_THAT_EXERCISE_EVERY_PATH || missing.is_empty(),
        "the controller's paths are not exercised: {}",
        missing.join("; ")
    );
}

#[test]
fn the_same_seed_gives_the_same_controller_trace() {
    for seed in [3u64, 12, 77] {
        let (a, ta, _) = run_one(seed, Verbosity::Quiet);
        let (b, tb, _) = run_one(seed, Verbosity::Quiet);
        let (a, b) = (a.expect("seed passes"), b.expect("seed passes"));
        assert_eq!(
            a.trace_hash, b.trace_hash,
            "seed {seed} is not deterministic"
        );
        assert_eq!(ta, tb, "seed {seed}'s controllers are not deterministic");
        assert!(
            ta.records_written_ahead > 0 && ta.records_replayed > 0,
            "seed {seed} replicates no controller records: {ta:?}"
        );
    }
}

/// `SIM_PRINT=S cargo test --release --features testkit --test controller_sim print_transcript
/// -- --nocapture`.
#[test]
fn print_transcript() {
    let Some(seed) = env_u64("SIM_PRINT") else {
        return;
    };
    let (report, tally, transcript) = run_one(seed, verbosity());
    println!("{}", transcript.join("\n"));
    println!("{report:?}\n{tally:?}");
}

/// Issue #36's kill loop (`kraftd::raft::sim::kill_loop`) with the metadata controller as the
/// replicated machine: mixed quorums of kraftd voters and stand-ins for Java voters elect a new
/// leader within the bound after every kill of the leader, and the controllers' images stay
/// consistent through every change of leader. `SIM_KILL_SEEDS=N` runs more seeds.
#[test]
fn mixed_controller_quorums_elect_a_leader_after_every_kill() {
    let seeds = env_u64("SIM_KILL_SEEDS").unwrap_or(KILL_LOOP_SEEDS);
    let mut kills = 0;
    let run = run_seeds(TEST, seeds, |seed| {
        let tally = Arc::new(Mutex::new(ControllerTally::default()));
        let (r, _) = run_kill_loop(
            seed,
            ElectionRules::Kraftd,
            factory(tally, bootstrap_metadata_version(seed)),
            Verbosity::Quiet,
        );
        let r = r.map_err(|e| format!("kill loop: {e}"))?;
        kills += r.leaderless_ms.len();
        Ok(())
    });
    println!(
        "kill loop: {seeds} mixed controller-quorum seeds, {kills} kills in {:.1}s",
        run.secs
    );
    run.assert_passed();
}

/// Controller seeds of the kill loop in `make test`.
const KILL_LOOP_SEEDS: u64 = 300;
