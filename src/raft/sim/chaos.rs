//! The randomized simulation: one seed picks a cluster shape and a schedule of proposals,
//! crashes (losing unflushed data), restarts, partitions, message loss/duplication/delay,
//! resignations, log cleaning and (in some seeds) storage faults; invariants are checked after
//! every event. Then a liveness phase heals everything and requires one leader and equal logs
//! within bounded virtual time, and every record acknowledged as committed in every log (of
//! every node but those Kafka too leaves stranded in a quorum without pre-vote:
//! `Cluster::stranded_by_a_removed_voter`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::admin::VoterChangeLog;
use super::faults::{FaultInjector, FaultLog};
use super::network::Faults;
use super::state_machine::{MachineFactory, MachineLog};
use super::wire::WireVersions;
use super::{Cluster, SimOptions, Verbosity};
use crate::raft::config::ElectionRules;
use crate::raft::time::{Instant, Rng};
use crate::raft::types::NodeId;

/// The outcome of one seed.
#[derive(Debug, Clone)]
pub struct SeedReport {
    pub seed: u64,
    pub shape: String,
    pub events_ms: u64,
    pub proposed: u64,
    pub committed: i64,
    pub trace_hash: u64,
    pub converged_at: Instant,
    /// Records acknowledged as committed (all found in every log at the end).
    pub acknowledged: usize,
    pub faults: FaultLog,
    pub machines: MachineLog,
    /// The operator's voter changes (kraft.version 1 seeds) and how each ended.
    pub voter_changes: VoterChangeLog,
    /// Nodes left behind as Kafka leaves them without pre-vote
    /// (`Cluster::stranded_by_a_removed_voter`); not required to converge.
    pub stranded: Vec<NodeId>,
}

/// How long each phase may run, in virtual milliseconds.
#[derive(Debug, Clone)]
pub struct ChaosBudget {
    pub chaos_ms: u64,
    pub liveness_ms: u64,
}

impl Default for ChaosBudget {
    fn default() -> Self {
        ChaosBudget {
            chaos_ms: 20_000,
            liveness_ms: 60_000,
        }
    }
}

/// Runs one seed; `Err` carries the failure and the transcript tail.
pub fn run_seed(
    seed: u64,
    budget: &ChaosBudget,
    verbosity: Verbosity,
) -> Result<SeedReport, String> {
    run_seed_with_transcript(seed, budget, verbosity).0
}

/// Runs one seed and also returns its whole transcript.
pub fn run_seed_with_transcript(
    seed: u64,
    budget: &ChaosBudget,
    verbosity: Verbosity,
) -> (Result<SeedReport, String>, Vec<String>) {
    run_seed_on(seed, budget, verbosity, MachineFactory::default())
}

/// Runs one seed with every node replicating `machine`'s machines; returns the report and the
/// whole transcript. The seed draws the same schedule whatever the machine.
pub fn run_seed_on(
    seed: u64,
    budget: &ChaosBudget,
    verbosity: Verbosity,
    machine: MachineFactory,
) -> (Result<SeedReport, String>, Vec<String>) {
    let mut rng = Rng::new(seed);
    let voters = *rng.pick(&[1usize, 3, 3, 3, 5]).expect("non-empty");
    let observers = *rng.pick(&[0usize, 0, 1]).expect("non-empty");
    let kraft_version = *rng.pick(&[0i16, 1]).expect("non-empty");
    let snapshot_every = *rng.pick(&[0usize, 4, 8]).expect("non-empty");
    // Half the seeds send every message through the wire codecs at negotiated versions; some
    // of those speak Vote v1 only (a Kafka 3.9 quorum: pre-votes fail, candidacies follow).
    let wire = match rng.below(4) {
        0 | 1 => None,
        2 => Some(WireVersions::latest()),
        _ => Some(WireVersions {
            vote: 1,
            begin_quorum_epoch: rng.below(2) as i16,
            end_quorum_epoch: rng.below(2) as i16,
            // A kraft.version 1 quorum needs directory ids in Fetch (v17+): without them the
            // leader cannot tell a voter from an observer (Kafka's `ReplicaState.matchesKey`).
            fetch: if kraft_version == 0 {
                13 + rng.below(6) as i16
            } else {
                17 + rng.below(2) as i16
            },
            fetch_snapshot: rng.below(2) as i16,
            describe_quorum: rng.below(3) as i16,
        }),
    };
    let wire_desc = match &wire {
        None => "in-memory".to_string(),
        Some(w) => format!("wire(vote v{} fetch v{})", w.vote, w.fetch),
    };
    // A quarter of the seeds linger as Kafka's default does, a quarter briefly.
    let append_linger = Duration::from_millis([0, 0, 5, 25][(seed % 4) as usize]);
    // Half the kraft.version 0 seeds whose Fetch carries replica directory ids (v17+, which
    // voters in the log need) are controller quorums that upgrade to kraft.version 1 under
    // chaos; their observers are controllers and flush, as Java's do.
    let upgrades =
        kraft_version == 0 && wire.as_ref().is_none_or(|w| w.fetch >= 17) && seed % 2 == 0;
    // Half the seeds model killed processes on live hosts: a request to a node that is down
    // is refused at once (kraftd's early election), instead of going unanswered.
    let refused_connections = (seed / 4) % 2 == 0;
    // A third of the seeds mix in stand-ins for Java voters (Kafka's election rules, none of
    // kraftd's departures), a third are all of them, from a generator of their own so that the
    // schedule is drawn as before.
    let (election_rules, rules_desc) = election_rules_of(seed, voters);
    let opts = SimOptions {
        append_linger,
        refused_connections,
        observers_flush: upgrades,
        voters,
        observers,
        kraft_version,
        seed,
        snapshot_every,
        verbosity,
        wire,
        machine,
        election_rules,
        ..SimOptions::default()
    };
    let shape = format!(
        "voters={voters}{rules_desc} observers={observers} kraft.version={kraft_version} snapshot_every={snapshot_every} linger={append_linger:?} {wire_desc}{}",
        if refused_connections { " refusing" } else { "" }
    );
    let mut injector = FaultInjector::for_seed(seed);
    let shape = if injector.enabled() {
        shape + " storage-faults"
    } else {
        shape
    };
    let mut c = Cluster::new(opts);
    c.note(&format!("seed {seed}: {shape}"));
    let result = chaos(&mut c, &mut rng, &mut injector, budget)
        .and_then(|()| liveness(&mut c, budget))
        .and_then(|(at, stranded)| {
            c.check_acknowledged(Some(&stranded))
                .map(|()| (at, stranded))
        });
    let report = match result {
        Ok((converged_at, stranded)) => Ok(SeedReport {
            seed,
            shape,
            events_ms: c.now.millis(),
            proposed: c.proposed,
            committed: c
                .leader()
                .and_then(|l| c.raft(l))
                .and_then(|r| r.high_watermark())
                .unwrap_or(-1),
            trace_hash: c.trace_hash,
            converged_at,
            acknowledged: c.acknowledged.len(),
            faults: c.faults.clone(),
            machines: c.machines.clone(),
            voter_changes: c.voter_changes.clone(),
            stranded: stranded.into_iter().collect(),
        }),
        Err(e) => Err(c.failure(&e, &shape)),
    };
    (report, std::mem::take(&mut c.transcript))
}

impl Cluster {
    /// A seed's failure `e`, with its shape and the tail of its transcript.
    pub(super) fn failure(&self, e: &str, shape: &str) -> String {
        let tail: Vec<&str> = self
            .transcript
            .iter()
            .rev()
            .take(60)
            .rev()
            .map(String::as_str)
            .collect();
        format!(
            "{e}\n  shape: {shape}\n  last transcript lines:\n    {}",
            tail.join("\n    ")
        )
    }
}

/// Each node's election rules for `seed`, and how the shape line shows them (K: kraftd's, J:
/// Kafka's, as a Java voter has them; nothing when all are kraftd's).
fn election_rules_of(seed: u64, voters: usize) -> (BTreeMap<NodeId, ElectionRules>, String) {
    let mut rng = Rng::new(seed ^ 0x4a41_5641);
    let java: Vec<bool> = match rng.below(3) {
        0 => return (BTreeMap::new(), String::new()),
        1 => (0..voters).map(|_| rng.chance(0.5)).collect(),
        _ => vec![true; voters],
    };
    let (rules, kinds) = voter_rules(&java, ElectionRules::Kraftd);
    (rules, format!("({kinds})"))
}

/// Voter `i + 1` has Kafka's rules where `java[i]`, else `kraftd`; and the voters' kinds as
/// letters (J, K) for a shape line.
pub(super) fn voter_rules(
    java: &[bool],
    kraftd: ElectionRules,
) -> (BTreeMap<NodeId, ElectionRules>, String) {
    let rules = (1..=java.len() as NodeId)
        .zip(java)
        .map(|(id, j)| (id, if *j { ElectionRules::Kafka } else { kraftd }))
        .collect();
    let kinds = java.iter().map(|j| if *j { 'J' } else { 'K' }).collect();
    (rules, kinds)
}

fn random_node(c: &Cluster, rng: &mut Rng, up: bool) -> Option<NodeId> {
    let ids: Vec<NodeId> = c
        .nodes
        .values()
        .filter(|n| n.is_up() == up)
        .map(|n| n.id)
        .collect();
    rng.pick(&ids).copied()
}

fn chaos(
    c: &mut Cluster,
    rng: &mut Rng,
    injector: &mut FaultInjector,
    budget: &ChaosBudget,
) -> Result<(), String> {
    let end = c.now.plus_millis(budget.chaos_ms);
    // Voter changes draw from their own generator, so the rest of the schedule is drawn as
    // before they existed.
    let mut reconfig = Rng::new(c.opts.seed ^ 0x7ec0_4f19);
    while c.now < end {
        c.run_for(1 + rng.below(100))?;
        injector.maybe_plan(c)?;
        let roll = rng.below(1000);
        match roll {
            0..=299 => {
                c.guarded(|c| c.propose())?;
            }
            300..=314 => {
                if let Some(id) = random_node(c, rng, true) {
                    c.crash(id);
                }
            }
            315..=349 => {
                if let Some(id) = random_node(c, rng, false) {
                    c.guarded(|c| c.restart(id))?;
                }
            }
            350..=364 => {
                if let Some(id) = random_node(c, rng, true) {
                    let all: Vec<NodeId> = c.nodes.keys().copied().collect();
                    c.note(&format!("isolate n{id}"));
                    c.net.isolate(id, all);
                }
            }
            365..=374 => {
                // A random one-way cut.
                let (a, b) = (random_node(c, rng, true), random_node(c, rng, true));
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        c.note(&format!("cut n{a} -> n{b}"));
                        c.net.block(a, b);
                    }
                }
            }
            375..=394 => {
                c.note("heal");
                c.net.heal();
            }
            395..=404 => {
                let drop = rng.below(30) as f64 / 100.0;
                let duplicate = rng.below(10) as f64 / 100.0;
                let max_delay_ms = 1 + rng.below(60);
                c.note(&format!(
                    "faults drop={drop} duplicate={duplicate} max_delay={max_delay_ms}ms"
                ));
                c.net.faults = Faults {
                    drop,
                    duplicate,
                    min_delay_ms: 1,
                    max_delay_ms,
                };
            }
            405..=409 => c.guarded(|c| c.resign())?,
            410..=429 => {
                if let Some(id) = random_node(c, rng, true) {
                    c.guarded(|c| c.clean_log(id))?;
                }
            }
            430..=444 => {
                if let Some(id) = random_node(c, rng, true) {
                    c.guarded(|c| c.describe_quorum(id))?;
                }
            }
            445..=449 => {
                if let Some(id) = random_node(c, rng, true) {
                    c.guarded(|c| c.stop(id))?;
                }
            }
            450..=469 => match c
                .leader()
                .and_then(|l| c.raft(l))
                .map(|r| r.kraft_version())
            {
                Some(0) if c.opts.observers_flush && reconfig.below(4) == 0 => {
                    c.guarded(|c| c.upgrade_kraft_version(false))?
                }
                // Voters change in quorums formatted at kraft.version 1, whose nodes all list
                // every controller as a bootstrap server. An upgraded static quorum keeps
                // `controller.quorum.voters` as its only way to the leader, so a voter removed
                // from it could find no leader again (as in Kafka).
                Some(1..) if c.opts.kraft_version >= 1 => change_a_voter(c, &mut reconfig)?,
                _ => {}
            },
            470..=479 => {
                // A one-way link whose connections are reset (a firewall, say), e.g. a
                // follower's to its live leader: an early election must not unseat it.
                let (a, b) = (random_node(c, rng, true), random_node(c, rng, true));
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        c.note(&format!("refuse n{a} -> n{b}"));
                        c.net.refuse(a, b);
                    }
                }
            }
            _ => {}
        }
        c.observe_leader_health();
    }
    Ok(())
}

/// An operator adds a node that is not a voter, or removes one that is (the leader
/// included), as `kafka-metadata-quorum add-controller` / `remove-controller` would.
fn change_a_voter(c: &mut Cluster, rng: &mut Rng) -> Result<(), String> {
    let Some(voters) = c
        .leader()
        .and_then(|l| c.raft(l))
        .map(|r| r.voters().clone())
    else {
        return Ok(());
    };
    let ids: Vec<NodeId> = c.nodes.keys().copied().collect();
    let Some(&target) = rng.pick(&ids) else {
        return Ok(());
    };
    let add = voters.node(target).is_none();
    // A leader of two voters that removes itself and loses the leadership before the record
    // commits leaves a quorum that cannot elect: the other voter lacks the record and needs
    // the old leader's vote, which its longer log refuses, and the old leader no longer counts
    // itself a voter. Java 4.4 behaves the same (KIP-853 voter sets take effect on append);
    // operators remove a leader from two voters only with both up, so the chaos does not.
    if !add && voters.len() == 2 && c.leader() == Some(target) {
        return Ok(());
    }
    let ack_when_committed = rng.below(4) != 0;
    c.guarded(|c| c.change_voter(target, add, ack_when_committed))
}

/// Heals everything and waits for convergence; returns when, and the nodes left stranded as
/// Kafka leaves them (see below).
pub(super) fn liveness(
    c: &mut Cluster,
    budget: &ChaosBudget,
) -> Result<(Instant, BTreeSet<NodeId>), String> {
    c.note("liveness: heal everything, restart every node");
    c.cancel_fault_plans();
    c.net.heal();
    c.net.faults = Faults::default();
    let down: Vec<NodeId> = c
        .nodes
        .values()
        .filter(|n| !n.is_up())
        .map(|n| n.id)
        .collect();
    for id in down {
        c.guarded(|c| c.restart(id))?;
    }
    let deadline = c.now.plus_millis(budget.liveness_ms);
    let mut proposed_final = false;
    loop {
        c.run_for(100)?;
        // Without pre-vote, a voter removed without learning it can strand itself and nodes
        // outside the leader's voter set at epochs above the leader's, for good: Kafka 4.4
        // does the same (its operations guide has removed controllers shut down first until
        // pre-vote is available). Those nodes need not converge; every other node must, and
        // must hold every acknowledged record. With pre-vote none is exempt.
        let stranded = c.stranded_by_a_removed_voter();
        match c.not_converged_but(&stranded) {
            None if proposed_final => {
                if !stranded.is_empty() {
                    c.note(&format!(
                        "liveness: stranded by a removed voter without pre-vote: {stranded:?}"
                    ));
                }
                return Ok((c.now, stranded));
            }
            None => {
                // Prove progress: one more value must commit everywhere.
                proposed_final = c.guarded(|c| c.propose())?.is_some();
            }
            Some(why) => {
                if c.now >= deadline {
                    return Err(format!(
                        "liveness: not converged after {} ms: {why}",
                        budget.liveness_ms
                    ));
                }
            }
        }
    }
}
