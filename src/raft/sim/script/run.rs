//! Carries out directives on a cluster and collects what each prints: the transcript lines
//! its events produced (per the verbosity), then any report of its own.

use std::collections::BTreeMap;

use super::directive::Directive;
use crate::raft::log::RaftLog;
use crate::raft::mem_log::LogInspect;
use crate::raft::sim::state_machine::MachineFactory;
use crate::raft::sim::{Cluster, SimNode};
use crate::raft::types::NodeId;

pub struct Runner {
    cluster: Option<Cluster>,
    /// The machines `add-nodes machine=NAME` may name.
    machines: BTreeMap<String, MachineFactory>,
    /// A letter per distinct committed state the `machines` directive has shown, in order.
    states: BTreeMap<u64, char>,
}

impl Runner {
    pub fn new(machines: &[(&str, MachineFactory)]) -> Runner {
        let mut known: BTreeMap<String, MachineFactory> = machines
            .iter()
            .map(|(name, f)| (name.to_string(), f.clone()))
            .collect();
        known.entry("values".into()).or_default();
        Runner {
            cluster: None,
            machines: known,
            states: BTreeMap::new(),
        }
    }

    /// Carries out one directive and checks every invariant; returns its output (never empty:
    /// `ok` when nothing was printed).
    pub fn execute(&mut self, d: &Directive) -> Result<Vec<String>, String> {
        if let Directive::AddNodes { opts, machine } = d {
            if self.cluster.is_some() {
                return Err("the cluster exists already (one `add-nodes` per script)".into());
            }
            let mut opts = opts.as_ref().clone();
            if let Some(name) = machine {
                opts.machine = self.machines.get(name).cloned().ok_or_else(|| {
                    let known: Vec<&str> = self.machines.keys().map(String::as_str).collect();
                    format!(
                        "`machine={name}`: this run knows the machines {}",
                        known.join(", ")
                    )
                })?;
            }
            let cluster =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Cluster::new(opts)))
                    .map_err(|p| {
                        let why = p.downcast_ref::<String>().map(String::as_str);
                        format!("the cluster does not start: {}", why.unwrap_or("panic"))
                    })?;
            self.cluster = Some(cluster);
        }
        let c = self
            .cluster
            .as_mut()
            .ok_or("no cluster yet: a script starts with `add-nodes`")?;
        let result = match d {
            Directive::Machines => {
                machine_lines(c, &mut self.states)
                    .into_iter()
                    .for_each(|l| say(c, l));
                Ok(())
            }
            _ => c.guarded(|c| apply(c, d)),
        };
        let result = result.and_then(|()| c.check());
        let mut lines: Vec<String> = c.transcript.drain(..).collect();
        if let Err(e) = result {
            return Err(format!(
                "{e}\n  output so far:\n    {}",
                lines.join("\n    ")
            ));
        }
        if lines.is_empty() {
            lines.push("ok".into());
        }
        Ok(lines)
    }
}

/// A line of the directive's own (shown whatever the verbosity).
fn say(c: &mut Cluster, line: String) {
    c.transcript.push(line);
}

fn node(c: &Cluster, id: NodeId) -> Result<&SimNode, String> {
    c.nodes
        .get(&id)
        .ok_or_else(|| format!("there is no n{id} (nodes are n1..n{})", c.nodes.len()))
}

fn up(c: &Cluster, id: NodeId) -> Result<(), String> {
    match node(c, id)?.is_up() {
        true => Ok(()),
        false => Err(format!("n{id} is down")),
    }
}

fn apply(c: &mut Cluster, d: &Directive) -> Result<(), String> {
    match d {
        Directive::AddNodes { .. } | Directive::Machines => {}
        Directive::Tick(ms) => c.run_for(*ms)?,
        Directive::Propose { n, epoch } => {
            for _ in 0..*n {
                let (leader, value) = (c.leader(), c.next_value());
                // A proposal taken prints its own line (`Cluster::propose_decided_in`).
                match (leader, c.propose_decided_in(*epoch)?) {
                    (_, Some(Ok(_))) => {}
                    (l, Some(Err(e))) => {
                        let l = l.map_or("?".into(), |l| format!("n{l}"));
                        say(c, format!("t={} {l} refuses v{value}: {e}", c.now));
                        break;
                    }
                    (_, None) => {
                        say(c, "no leader takes the proposal".into());
                        break;
                    }
                }
            }
        }
        Directive::Resign => match c.leader() {
            Some(_) => c.resign()?,
            None => say(c, "no leader to resign".into()),
        },
        Directive::Crash(id) => {
            up(c, *id)?;
            c.crash(*id);
        }
        Directive::Restart {
            node: id,
            election_jitter,
        } => {
            if node(c, *id)?.is_up() {
                return Err(format!("n{id} is up"));
            }
            if let Some(jitter) = election_jitter {
                if !node(c, *id)?.is_voter {
                    return Err(format!("n{id} is an observer: it holds no elections"));
                }
                let fixed = c
                    .opts
                    .fixed_timing
                    .as_mut()
                    .expect("scripts use fixed timing");
                fixed.election_jitter.insert(*id, *jitter);
            }
            c.restart(*id)?;
        }
        Directive::AddVoter {
            node,
            ack_when_committed,
        } => c.change_voter(*node, true, *ack_when_committed)?,
        Directive::RemoveVoter(node) => c.change_voter(*node, false, true)?,
        Directive::UpgradeKraftVersion { validate_only } => {
            c.upgrade_kraft_version(*validate_only)?
        }
        Directive::Stop(id) => {
            up(c, *id)?;
            c.stop(*id)?;
        }
        Directive::FailStorage { node: id, plan } => {
            up(c, *id)?;
            c.plan_fault(*id, *plan)?;
        }
        Directive::Partition(groups) => {
            for id in groups.iter().flatten() {
                node(c, *id)?;
            }
            for (i, a) in groups.iter().enumerate() {
                for b in &groups[i + 1..] {
                    for &x in a {
                        for &y in b {
                            c.net.block(x, y);
                            c.net.block(y, x);
                        }
                    }
                }
            }
        }
        Directive::Isolate(id) => {
            node(c, *id)?;
            let all: Vec<NodeId> = c.nodes.keys().copied().collect();
            c.net.isolate(*id, all);
        }
        Directive::Cut((from, to)) => {
            node(c, *from)?;
            node(c, *to)?;
            c.net.block(*from, *to);
        }
        Directive::Heal => c.net.heal(),
        Directive::Hold((from, to)) => {
            node(c, *from)?;
            node(c, *to)?;
            c.net.hold((*from, *to));
        }
        Directive::Deliver((from, to)) => {
            node(c, *from)?;
            node(c, *to)?;
            let n = c.deliver_link(*from, *to)?;
            say(c, format!("n{from}->n{to}: delivered {n} message(s)"));
        }
        Directive::Drop((from, to)) => {
            node(c, *from)?;
            node(c, *to)?;
            let n = c.net.take_link((*from, *to)).len();
            say(c, format!("n{from}->n{to}: dropped {n} message(s)"));
        }
        Directive::Delay { link, ms } => {
            if let Some((from, to)) = link {
                node(c, *from)?;
                node(c, *to)?;
            }
            c.net.set_delay(*link, *ms)?;
        }
        Directive::CleanLog(ids) => {
            for &id in ids {
                up(c, id)?;
                let before = node(c, id)?.log().start_offset();
                c.clean_log(id)?;
                let log = node(c, id)?.log();
                if log.start_offset() == before {
                    let latest = log.latest_snapshot_id().map(|s| s.to_string());
                    let line = format!(
                        "n{id}: log start stays at {before} (latest snapshot {})",
                        latest.as_deref().unwrap_or("none")
                    );
                    say(c, line);
                }
            }
        }
        Directive::SetVerbosity(v) => c.opts.verbosity = *v,
        Directive::Status => {
            let lines: Vec<String> = c.nodes.values().map(status).collect();
            lines.into_iter().for_each(|l| say(c, l));
        }
        Directive::Log(id) => {
            let lines = log_lines(node(c, *id)?);
            lines.into_iter().for_each(|l| say(c, l));
        }
        Directive::Converged => {
            let line = match c.not_converged() {
                Some(why) => format!("not converged: {why}"),
                None => {
                    let l = c.leader().expect("converged has a leader");
                    let r = c.raft(l).expect("the leader is up");
                    let end = r.log().end_offset();
                    format!(
                        "converged: n{l} leads e{}; every node has end offset and HW {end}",
                        r.epoch()
                    )
                }
            };
            say(c, line);
        }
    }
    Ok(())
}

/// Per node: `n1: through 7, state B; 2 writes ahead: <latest state>` (or `n3: down`). Equal
/// committed states share a letter, first seen first.
fn machine_lines(c: &Cluster, states: &mut BTreeMap<u64, char>) -> Vec<String> {
    c.nodes
        .values()
        .map(|n| {
            if !n.is_up() {
                return format!("n{}: down", n.id);
            }
            let m = &n.sm.machine;
            let next = (b'A' + states.len() as u8 % 26) as char;
            let letter = *states.entry(m.committed_digest()).or_insert(next);
            let ahead = match n.sm.written_ahead() {
                0 => String::new(),
                w => format!("; {w} offsets written ahead"),
            };
            format!(
                "n{}: through {}, state {letter}{ahead}: {}",
                n.id,
                n.sm.next_offset - 1,
                m.describe()
            )
        })
        .collect()
}

/// `n2: Follower(e1 leader=1 voted=1) end=3 hw=3`, plus the log start when above 0.
fn status(n: &SimNode) -> String {
    // A live node is a voter of its latest voter set; a crashed one is shown as it started.
    let voter = n.raft.as_ref().map_or(n.is_voter, |r| r.is_voter());
    let kind = if voter { "" } else { " (observer)" };
    let mut line = format!(
        "n{}{kind}: {} end={}",
        n.id,
        n.role_line(),
        n.log().end_offset()
    );
    if let Some(hw) = n.raft.as_ref().and_then(|r| r.high_watermark()) {
        line += &format!(" hw={hw}");
    }
    if n.log().start_offset() > 0 {
        line += &format!(" start={}", n.log().start_offset());
    }
    line
}

/// A header line, then the batches: one line per segment when segments are modelled.
fn log_lines(n: &SimNode) -> Vec<String> {
    let log = n.log();
    let snapshots: Vec<String> = log.snapshot_ids().iter().map(|s| s.to_string()).collect();
    let hw = n.raft.as_ref().and_then(|r| r.high_watermark());
    let mut lines = vec![format!(
        "n{} log: start={} end={} hw={} snapshots={}",
        n.id,
        log.start_offset(),
        log.end_offset(),
        hw.map_or("none".to_string(), |hw| hw.to_string()),
        if snapshots.is_empty() {
            "none".to_string()
        } else {
            snapshots.join(",")
        }
    )];
    let batches = log.batches();
    // Segments are shown only when the script sets their size.
    let modelled =
        log.config().roll.segment_bytes != crate::log::RollConfig::default().segment_bytes;
    match modelled.then(|| log.segment_bases()) {
        None => lines.extend(batches.iter().map(|b| format!("  {b}"))),
        Some(bases) => {
            for (i, &base) in bases.iter().enumerate() {
                let end = bases.get(i + 1).copied().unwrap_or(i64::MAX);
                let inside: Vec<_> = batches
                    .iter()
                    .filter(|b| b.base_offset >= base && b.base_offset < end)
                    .collect();
                let bytes: usize = inside.iter().map(|b| b.size_in_bytes()).sum();
                let shown: Vec<String> = inside.iter().map(|b| b.to_string()).collect();
                lines.push(format!(
                    "  segment {base} ({bytes} bytes): {}",
                    if shown.is_empty() {
                        "empty".to_string()
                    } else {
                        shown.join(" ")
                    }
                ));
            }
        }
    }
    lines
}
