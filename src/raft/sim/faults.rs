//! Storage faults in the simulation: a node's memory storage fails as planned (EIO, ENOSPC or
//! a torn write, `log::memory_faults`); the node must emit its fatal action naming the file and
//! the OS error and take no input after it; then its process exits (unflushed tail dropped,
//! torn tail cut by recovery, faults cleared) and it is restarted later from what is durable.

use std::collections::BTreeMap;

use super::{Cluster, Verbosity};
use crate::log::memory_faults::{FaultKind, FaultPlan, StorageOp};
use crate::raft::fatal::FatalError;
use crate::raft::log::RaftLog;
use crate::raft::node::{Input, ProposeError};
use crate::raft::time::Rng;
use crate::raft::types::NodeId;

/// What the faults of one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultLog {
    /// Plans armed (a plan whose node crashes first never fires).
    pub planned: u64,
    /// Faults that fired, by operation and kind.
    pub fired: BTreeMap<(StorageOp, FaultKind), u64>,
    /// Recoveries that cut a torn batch from a segment.
    pub torn_tails_cut: u64,
    /// Recoveries that removed a torn snapshot's `.part`.
    pub torn_snapshots_removed: u64,
    /// Restarts of a node that had halted on a fault.
    pub restarts_after_fault: u64,
}

impl FaultLog {
    pub fn fired_total(&self) -> u64 {
        self.fired.values().sum()
    }

    /// Faults of `kind` that fired, whatever the operation.
    pub fn fired_of(&self, kind: FaultKind) -> u64 {
        self.fired
            .iter()
            .filter(|((_, k), _)| *k == kind)
            .map(|(_, n)| n)
            .sum()
    }
}

/// The seed's fault schedule, drawn from a generator of its own so that a seed without faults
/// runs exactly as it would without this injector.
pub struct FaultInjector {
    rng: Rng,
    enabled: bool,
}

/// The share of seeds that inject faults, in percent.
const FAULTY_SEEDS_PERCENT: u64 = 40;
/// The chance, per chaos step of a faulty seed, that a fault is planned, in thousandths.
const PLAN_PER_MILLE: u64 = 15;

impl FaultInjector {
    pub fn for_seed(seed: u64) -> FaultInjector {
        let mut rng = Rng::new(seed ^ 0xfa17_0000_d15c_0000);
        let enabled = rng.below(100) < FAULTY_SEEDS_PERCENT;
        FaultInjector { rng, enabled }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Sometimes plans a fault on a live node without one: an operation, how many of them
    /// succeed first, and how it fails.
    pub fn maybe_plan(&mut self, c: &mut Cluster) -> Result<(), String> {
        if !self.enabled || self.rng.below(1000) >= PLAN_PER_MILLE {
            return Ok(());
        }
        let up: Vec<NodeId> = c
            .nodes
            .values()
            .filter(|n| n.raft.as_ref().is_some_and(|r| !r.log().has_fault_plan()))
            .map(|n| n.id)
            .collect();
        let Some(&id) = self.rng.pick(&up) else {
            return Ok(());
        };
        // Appends and flushes happen on every proposal, truncations and snapshots seldom.
        let (op, after) = match self.rng.below(100) {
            0..=29 => (StorageOp::Append, self.rng.below(40)),
            30..=59 => (StorageOp::Flush, self.rng.below(40)),
            60..=84 => (StorageOp::Truncate, 0),
            _ => (StorageOp::Snapshot, self.rng.below(3)),
        };
        let kinds: Vec<FaultKind> = FaultKind::ALL
            .into_iter()
            .filter(|k| k.applies_to(op))
            .collect();
        let kind = *self.rng.pick(&kinds).expect("every operation can fail");
        let plan = FaultPlan {
            op,
            after,
            kind,
            torn_permille: 1 + self.rng.below(998) as u16,
        };
        c.plan_fault(id, plan)
    }
}

impl Cluster {
    /// Cancels every fault planned that has not fired (the storage is healed).
    pub fn cancel_fault_plans(&mut self) {
        for raft in self.nodes.values_mut().filter_map(|n| n.raft.as_mut()) {
            raft.log.cancel_fault_plan();
        }
    }

    /// Makes `plan` fail node `id`'s storage (a live node).
    pub fn plan_fault(&mut self, id: NodeId, plan: FaultPlan) -> Result<(), String> {
        let raft = self
            .nodes
            .get_mut(&id)
            .and_then(|n| n.raft.as_mut())
            .ok_or_else(|| format!("n{id} is down: its storage fails only while it runs"))?;
        raft.log.plan_fault(plan).map_err(|e| e.to_string())?;
        self.faults.planned += 1;
        self.emit(
            Verbosity::Roles,
            format!(
                "n{id}: storage fault planned: {} number {} fails with {}",
                plan.op,
                plan.after + 1,
                plan.kind
            ),
        );
        Ok(())
    }

    /// Node `id` emitted `Action::Fatal(why)`. It must be the fault planned for its storage,
    /// named by file and OS error, and the node must take no input after it; then the process
    /// exits: what was not durable is lost and recovery repairs the rest.
    pub(super) fn halted(&mut self, id: NodeId, why: FatalError) -> Result<(), String> {
        let now = self.now;
        let raft = self
            .nodes
            .get_mut(&id)
            .and_then(|n| n.raft.as_mut())
            .expect("a node that acts is up");
        let Some(fault) = raft.log().injected_fault().cloned() else {
            return Err(format!("n{id} fatal: {why}"));
        };
        let named = matches!(&why, FatalError::Storage { file: Some(f), errno: Some(e), .. }
            if *f == fault.file && *e == fault.kind.errno());
        if !named {
            return Err(format!(
                "n{id} halted with `{why}`, which does not name the injected fault ({} {} on {})",
                fault.op,
                fault.kind,
                fault.file.display()
            ));
        }
        let stepped = raft.step(now, Input::Tick);
        let proposed = raft.propose(now, raft.epoch(), vec![b"after the halt".to_vec()]);
        if !stepped.is_empty() || !matches!(proposed, Err(ProposeError::Stopped(_))) {
            return Err(format!(
                "n{id} acts after its fatal action: {stepped:?}, a proposal gets {proposed:?}"
            ));
        }
        self.emit(Verbosity::Roles, format!("n{id}: halts: {why}"));
        *self.faults.fired.entry((fault.op, fault.kind)).or_default() += 1;
        // What the halted process holds in memory may be mid-operation (a snapshot frozen, the
        // log not yet truncated to it): the invariants are checked on what a restart finds.
        let end_before = self.nodes[&id].log().end_offset();
        self.take_down(id);
        let node = self.nodes.get_mut(&id).expect("node");
        node.faulted = true;
        let log = node.log();
        let recovery = log.last_recovery().clone();
        let mut line = format!(
            "n{id}: the process exits; after recovery the log ends at {} (was {end_before})",
            log.end_offset()
        );
        if recovery.kept_unflushed_batches > 0 {
            line += &format!(
                "; {} unflushed batch(es) had reached the medium whole",
                recovery.kept_unflushed_batches
            );
        }
        if let Some(cut) = &recovery.cut {
            self.faults.torn_tails_cut += 1;
            line += &format!(
                "; recovery cut {} at byte {} ({} bytes dropped: {})",
                cut.path.display(),
                cut.stop.position(),
                cut.dropped_bytes,
                cut.stop
            );
        }
        if let Some(s) = recovery.removed_partial_snapshot {
            self.faults.torn_snapshots_removed += 1;
            line += &format!("; removed the torn snapshot {s}.checkpoint.part");
        }
        self.emit(Verbosity::Roles, line);
        self.check()
    }
}
