//! The cluster's event loop: deliver messages and fire timers in time order, carry out each
//! node's actions, run the state machines, and check every invariant after every event.

use super::checks::NodeView;
use super::network::Envelope;
use super::state_machine::Deciding;
use super::{node_of, trace, Cluster, SimNode, Verbosity};
use crate::raft::config::ElectionRules;
use crate::raft::log::RaftLog;
use crate::raft::msg::RequestId;
use crate::raft::node::{Action, Input, ProposeError};
use crate::raft::time::Instant;
use crate::raft::types::{Epoch, NodeId, Offset};
use std::collections::{BTreeMap, BTreeSet};

impl Cluster {
    /// The time of the next delivery or timer.
    pub fn next_event(&self) -> Instant {
        let timers = self
            .nodes
            .values()
            .filter_map(|n| n.raft.as_ref().map(|r| r.next_deadline()))
            .min();
        self.net
            .next_delivery()
            .unwrap_or(Instant::NEVER)
            .min(timers.unwrap_or(Instant::NEVER))
    }

    /// Processes every event due up to `until`, then moves the clock to `until`.
    pub fn run_until(&mut self, until: Instant) -> Result<(), String> {
        let mut spins = 0u32;
        loop {
            let next = self.next_event();
            if next > until {
                break;
            }
            if next <= self.now {
                spins += 1;
                if spins > 10_000 {
                    let due: Vec<String> = self
                        .nodes
                        .values()
                        .filter_map(|n| n.raft.as_ref().map(|r| (n.id, r)))
                        .filter(|(_, r)| r.next_deadline() <= self.now)
                        .map(|(id, r)| format!("n{id} ({}) due at {}", r.role(), r.next_deadline()))
                        .collect();
                    return Err(format!(
                        "livelock at t={}: {}",
                        self.now,
                        if due.is_empty() {
                            "a message is due".to_string()
                        } else {
                            due.join(", ")
                        }
                    ));
                }
            } else {
                spins = 0;
                self.now = next;
            }
            self.guarded(|c| c.process_due())?;
        }
        self.now = self.now.max(until);
        Ok(())
    }

    /// Runs `f`, turning a panic (a broken per-node invariant) into an error so that the
    /// caller still has the transcript.
    pub fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<T, String> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".into());
                Err(format!("t={}: panicked: {msg}", self.now))
            }
        }
    }

    pub fn run_for(&mut self, ms: u64) -> Result<(), String> {
        self.run_until(self.now.plus_millis(ms))
    }

    fn process_due(&mut self) -> Result<(), String> {
        if let Some(env) = self.net.pop_due(self.now) {
            return self.deliver(env);
        }
        let due: Vec<NodeId> = self
            .nodes
            .values()
            .filter(|n| {
                n.raft
                    .as_ref()
                    .is_some_and(|r| r.next_deadline() <= self.now)
            })
            .map(|n| n.id)
            .collect();
        for id in due {
            let now = self.now;
            if let Some(raft) = self.nodes.get_mut(&id).and_then(|n| n.raft.as_mut()) {
                let actions = raft.step(now, Input::Tick);
                self.after_step(id, actions)?;
            }
        }
        Ok(())
    }

    /// Delivers now every message on the directed link `from -> to`, held or in flight, in
    /// the order they would have arrived; returns how many.
    pub fn deliver_link(&mut self, from: NodeId, to: NodeId) -> Result<usize, String> {
        let messages = self.net.take_link((from, to));
        let count = messages.len();
        for env in messages {
            self.guarded(|c| c.deliver(env))?;
        }
        Ok(count)
    }

    fn deliver(&mut self, env: Envelope) -> Result<(), String> {
        let now = self.now;
        match env {
            Envelope::Failed {
                to,
                via,
                corr,
                error,
            } => {
                let Some(raft) = self.nodes.get_mut(&to).and_then(|n| n.raft.as_mut()) else {
                    return Ok(());
                };
                let actions = raft.step(
                    now,
                    Input::SendFailed {
                        to: via,
                        corr,
                        error,
                    },
                );
                self.emit(
                    Verbosity::Messages,
                    format!("n{to}: send to n{via} failed: {}", error.name()),
                );
                self.after_step(to, actions)
            }
            Envelope::Refused { to, via, corr } => {
                let Some(raft) = self.nodes.get_mut(&to).and_then(|n| n.raft.as_mut()) else {
                    return Ok(());
                };
                let actions = raft.step(now, Input::ConnectionRefused { to: via, corr });
                self.emit(
                    Verbosity::Messages,
                    format!("n{to}: connection to n{via} refused"),
                );
                self.after_step(to, actions)
            }
            Envelope::Request {
                from,
                to,
                via,
                corr,
                request,
            } => {
                let down = !self.nodes.get(&to).is_some_and(|n| n.is_up());
                if self.net.is_refusing(from, to) || (down && self.opts.refused_connections) {
                    let env = Envelope::Refused {
                        to: from,
                        via,
                        corr,
                    };
                    self.net.send(now, env, &mut self.rng);
                    return Ok(());
                }
                if down {
                    return Ok(());
                }
                if self.opts.verbosity >= Verbosity::Messages {
                    let line = format!("n{to} <- n{from}: {}", trace::request(&request));
                    self.emit(Verbosity::Messages, line);
                }
                let id = RequestId(self.next_request_id);
                self.next_request_id += 1;
                let node = self.nodes.get_mut(&to).expect("node");
                node.pending.insert(id, (from, via, corr));
                let raft = node.raft.as_mut().expect("up");
                let actions = raft.step(
                    now,
                    Input::Request {
                        id,
                        listener: None,
                        request,
                    },
                );
                self.after_step(to, actions)
            }
            Envelope::Response {
                from,
                to,
                via,
                corr,
                response,
            } => {
                if !self.nodes.get(&to).is_some_and(|n| n.is_up()) {
                    return Ok(());
                }
                if self.opts.verbosity >= Verbosity::Messages {
                    let line = format!("n{to} <- n{from}: {}", trace::response(&response));
                    self.emit(Verbosity::Messages, line);
                }
                let raft = self
                    .nodes
                    .get_mut(&to)
                    .and_then(|n| n.raft.as_mut())
                    .expect("up");
                let actions = raft.step(
                    now,
                    Input::Response {
                        from: via,
                        corr,
                        response,
                    },
                );
                self.after_step(to, actions)
            }
        }
    }

    /// Carries out a node's actions, runs its state machine, checks the invariants.
    pub(super) fn after_step(
        &mut self,
        id: NodeId,
        mut actions: Vec<Action>,
    ) -> Result<(), String> {
        if let Some(raft) = self.nodes.get_mut(&id).and_then(|n| n.raft.as_mut()) {
            actions.extend(raft.take_actions());
        }
        // A leader's state machine that claimed leadership earlier must never need a snapshot.
        let claimed_before = self.nodes[&id]
            .raft
            .as_ref()
            .is_some_and(|r| r.is_leader() && self.nodes[&id].sm.claimed_epoch == Some(r.epoch()));
        for a in actions {
            self.carry_out(id, a)?;
        }
        self.run_machine(id, claimed_before)?;
        // A fault while the state machine wrote its snapshot halts the node there.
        let late = self
            .nodes
            .get_mut(&id)
            .and_then(|n| n.raft.as_mut())
            .filter(|r| r.fatal_error().is_some())
            .map(|r| r.take_actions());
        if let Some(late) = late {
            if !late.iter().any(|a| matches!(a, Action::Fatal(_))) {
                return Err(format!("n{id} halted without emitting its fatal action"));
            }
            for a in late {
                self.carry_out(id, a)?;
            }
        }
        self.check()
    }

    /// Runs a node's machine after a step: a renounce if it lost the leadership it acted for,
    /// then everything newly committed. Checks the machine's own invariants, ConsistentImage at
    /// every committed offset it reaches, and the renounce's state.
    fn run_machine(&mut self, id: NodeId, claimed: bool) -> Result<(), String> {
        let (every, now) = (self.opts.snapshot_every, self.now);
        let fail = |e: String| format!("t={now}: n{id}'s machine: {e}");
        let at = |e: String| format!("t={now}: {e}");
        let node = self.nodes.get_mut(&id).expect("node");
        let Some(raft) = node.raft.as_mut() else {
            return Ok(());
        };
        if let Some(r) = node.sm.maybe_renounce(raft).map_err(fail)? {
            self.machines.renounces += 1;
            self.machines.renounces_reverting_writes += u64::from(r.reverted_writes);
            self.checker
                .check_renounced(id, r.committed, r.latest_digest)
                .map_err(at)?;
        }
        let applied = node.sm.catch_up(raft, every).map_err(fail)?;
        for (offset, digest) in &applied.reached {
            self.checker.check_image(id, *offset, *digest).map_err(at)?;
        }
        self.machines.states_compared += applied.reached.len() as u64;
        self.machines.snapshots_loaded += u64::from(applied.loaded_snapshot.is_some());
        self.machines.snapshots_written += u64::from(applied.wrote_snapshot);
        node.sm.machine.check().map_err(fail)?;
        if let Some(start) = raft.leader_epoch_start_offset() {
            // Announced as leader (`Action::LeaderChange`): its own epoch is readable.
            if node.sm.claimed_epoch == Some(raft.epoch()) && node.sm.next_offset <= start {
                return Err(format!(
                    "LeaderChangeAfterCommit: n{id} was told it leads e{} but its state machine is at {} <= epoch start {start}",
                    raft.epoch(),
                    node.sm.next_offset
                ));
            }
        }
        if let Some(s) = applied.loaded_snapshot {
            self.emit(
                Verbosity::Roles,
                format!("n{id}: state machine loads snapshot {s}"),
            );
            if claimed {
                return Err(format!(
                    "LeaderNeverLoadSnapshot: leader n{id} loaded snapshot {s}"
                ));
            }
        }
        Ok(())
    }

    fn carry_out(&mut self, id: NodeId, action: Action) -> Result<(), String> {
        let now = self.now;
        match action {
            Action::Send {
                to,
                address,
                corr,
                request,
            } => {
                let target = address
                    .as_ref()
                    .and_then(node_of)
                    .or((to >= 0).then_some(to));
                if let Some(target) = target.filter(|t| self.nodes.contains_key(t)) {
                    let env = match self.opts.wire.as_ref().map(|w| w.pass_request(&request)) {
                        None => Envelope::Request {
                            from: id,
                            to: target,
                            via: to,
                            corr,
                            request,
                        },
                        Some(Ok(request)) => Envelope::Request {
                            from: id,
                            to: target,
                            via: to,
                            corr,
                            request,
                        },
                        // Kafka's network client learns a peer's versions (ApiVersions) on a
                        // live connection and forgets them on a disconnect
                        // (`NetworkClient.processDisconnection`), so a request the peer cannot
                        // take fails with UNSUPPORTED_VERSION only while the peer is up and
                        // reachable; otherwise it is never sent and goes unanswered.
                        Some(Err(_)) if !self.reachable(id, target) => return Ok(()),
                        Some(Err(error)) => Envelope::Failed {
                            to: id,
                            via: to,
                            corr,
                            error,
                        },
                    };
                    self.net.send(now, env, &mut self.rng);
                }
            }
            Action::Respond { id: rid, response } => {
                let node = self.nodes.get_mut(&id).expect("node");
                let pending = node.pending.remove(&rid);
                if let Some((super::admin::ADMIN, _, _)) = pending {
                    self.admin_answer(id, &response);
                } else if let Some((requester, via, corr)) = pending {
                    let response = match self.opts.wire.as_ref() {
                        Some(w) => w.pass_response(&response)?,
                        None => response,
                    };
                    let env = Envelope::Response {
                        from: id,
                        to: requester,
                        via,
                        corr,
                        response,
                    };
                    self.net.send(now, env, &mut self.rng);
                }
            }
            Action::Committed { upto: hw } => {
                self.emit(Verbosity::Messages, format!("n{id}: high watermark {hw}"));
                let raft = self.nodes[&id].raft.as_ref().expect("up");
                self.acknowledged.acknowledge(id, raft.log(), hw)?;
                for (offset, set) in raft.voter_history().iter().filter(|(o, _)| *o < hw) {
                    self.committed_voter_sets.insert(*offset, set.clone());
                }
            }
            Action::LeaderChange {
                epoch,
                leader,
                local,
            } => {
                if local {
                    self.nodes.get_mut(&id).expect("node").sm.claim(epoch);
                }
                let who = leader.map_or("no leader".into(), |l| format!("leader n{l}"));
                self.emit(
                    Verbosity::Messages,
                    format!("n{id}: state machine learns {who} of e{epoch}"),
                );
            }
            Action::LoadSnapshot(s) => self.emit(
                Verbosity::Roles,
                format!("n{id}: log replaced by snapshot {s}"),
            ),
            Action::RoleChanged {
                epoch,
                role,
                leader,
                voted,
            } => {
                let mut new = format!("{role}(e{epoch}");
                if let Some(l) = leader.filter(|l| *l != id) {
                    new += &format!(" leader={l}");
                }
                if let Some(v) = voted {
                    new += &format!(" voted={}", v.id);
                }
                new += ")";
                if role == "Candidate" {
                    self.check_no_leader_unseated(id, epoch)?;
                }
                let node = self.nodes.get_mut(&id).expect("node");
                let old = std::mem::replace(&mut node.last_role, new.clone());
                if old != new {
                    self.emit(Verbosity::Roles, format!("n{id}: {old} -> {new}"));
                }
            }
            Action::VotersChanged {
                offset,
                voters,
                as_leader,
            } => {
                if as_leader {
                    self.appended_voter_sets.push((offset, voters.clone()));
                }
                let ids: Vec<String> = voters.ids().map(|v| format!("n{v}")).collect();
                self.emit(
                    Verbosity::Roles,
                    format!("n{id}: voters [{}] from offset {offset}", ids.join(", ")),
                );
            }
            Action::Fatal(why) => return self.halted(id, why),
        }
        Ok(())
    }

    fn views(nodes: &BTreeMap<NodeId, SimNode>) -> Vec<NodeView<'_>> {
        nodes
            .values()
            .map(|n| {
                let raft = n.raft.as_ref();
                NodeView {
                    id: n.id,
                    directory_id: Some(super::directory_id(n.id)),
                    is_voter: n.is_voter,
                    log: n.log(),
                    store: n.store(),
                    high_watermark: raft.and_then(|r| r.high_watermark()),
                    leader_epoch: raft.filter(|r| r.is_leader()).map(|r| r.epoch()),
                    voter_history: raft.map_or(&[], |r| r.voter_history()),
                }
            })
            .collect()
    }

    /// Whether `from` can hold a connection to `to`: `to` is up and no partition cuts the
    /// link either way.
    pub(super) fn reachable(&self, from: NodeId, to: NodeId) -> bool {
        self.nodes.get(&to).is_some_and(|n| n.is_up())
            && !self.net.is_blocked(from, to)
            && !self.net.is_blocked(to, from)
            && !self.net.is_refusing(from, to)
            && !self.net.is_refusing(to, from)
    }

    /// Checks every cluster invariant now.
    pub fn check(&mut self) -> Result<(), String> {
        self.observe_leader_health();
        let views = Self::views(&self.nodes);
        let result = self.checker.check(&views);
        result.map_err(|e| format!("t={}: {e}", self.now))
    }

    /// Every record acknowledged as committed is durable on a majority of the voters; with
    /// `everywhere_but` (a converged cluster), it is also in the log of every node but those.
    pub fn check_acknowledged(
        &mut self,
        everywhere_but: Option<&BTreeSet<NodeId>>,
    ) -> Result<(), String> {
        let committed: Vec<(Offset, crate::raft::types::VoterSet)> = self
            .committed_voter_sets
            .iter()
            .map(|(o, s)| (*o, s.clone()))
            .collect();
        let views = Self::views(&self.nodes);
        let mut result = self.acknowledged.check_durable_on_majority(
            &views,
            &committed,
            &self.appended_voter_sets,
        );
        if let Some(exempt) = everywhere_but {
            let views: Vec<NodeView<'_>> = views
                .into_iter()
                .filter(|v| !exempt.contains(&v.id))
                .collect();
            result = result.and_then(|()| self.acknowledged.check_everywhere(&views));
        }
        result.map_err(|e| format!("t={}: {e}", self.now))
    }

    /// The value the next proposal carries (`v1`, `v2`, … in transcripts).
    pub fn next_value(&self) -> u64 {
        self.next_value
    }

    /// Proposes the next value on the current leader; its offset if taken.
    pub fn propose(&mut self) -> Result<Option<Offset>, String> {
        Ok(self.propose_decided_in(None)?.and_then(Result::ok))
    }

    /// Proposes what the current leader's machine decides, as decided in `epoch` (default: its
    /// current one). `None` without a leader (or with one whose machine decides from its state
    /// and does not hold the whole log yet); else its offset, or why the leader refused it.
    pub fn propose_decided_in(
        &mut self,
        epoch: Option<Epoch>,
    ) -> Result<Option<Result<Offset, ProposeError>>, String> {
        let Some(l) = self.leader() else {
            return Ok(None);
        };
        let value = self.next_value;
        let now = self.now;
        let node = self.nodes.get_mut(&l).expect("leader");
        let raft = node.raft.as_mut().expect("leader is up");
        if !node.sm.may_decide(raft) {
            // Its machine does not hold the whole log yet: no leader that could decide.
            return Ok(None);
        }
        let java = node.cfg.election_rules == ElectionRules::Kafka;
        let deciding = Deciding {
            n: value,
            now,
            raft: &mut *raft,
            java,
        };
        let Some(proposal) = node.sm.machine.decide(deciding) else {
            // Nothing to write now (the decision answered without records).
            self.emit(Verbosity::Roles, format!("n{l}: decides nothing to write"));
            return Ok(None);
        };
        let epoch = epoch.unwrap_or(raft.epoch());
        match raft.propose(now, epoch, proposal.records.clone()) {
            Ok(proposed) => {
                let offset = proposed.last_offset;
                self.next_value += 1;
                self.proposed += 1;
                let ahead = node
                    .sm
                    .written(proposed, &proposal.records)
                    .map_err(|e| format!("t={now}: n{l}'s machine refuses {e}"))?;
                if ahead {
                    self.machines.written_ahead += 1;
                } else {
                    self.machines.not_taken_ahead += 1;
                }
                // One proposal is one turn of the driver: the step after it drains the
                // accumulator, so (at a zero linger) each proposal is its own batch.
                let mut actions = raft.take_actions();
                actions.extend(raft.step(now, Input::Tick));
                // The stimulus, before what it causes (a halt on a failed append, say).
                self.emit(
                    Verbosity::Roles,
                    format!("n{l}: propose {} at offset {offset}", proposal.label),
                );
                self.after_step(l, actions)?;
                Ok(Some(Ok(offset)))
            }
            Err(e) => {
                node.sm.machine.not_written_ahead(None).map_err(|m| {
                    format!("t={now}: n{l}'s machine refuses its refused proposal: {m}")
                })?;
                Ok(Some(Err(e)))
            }
        }
    }

    /// Asks the leader to resign (graceful: EndQuorumEpoch to its voters).
    pub fn resign(&mut self) -> Result<(), String> {
        let Some(l) = self.leader() else {
            return Ok(());
        };
        let now = self.now;
        self.emit(Verbosity::Roles, format!("n{l}: resign"));
        let raft = self
            .nodes
            .get_mut(&l)
            .and_then(|n| n.raft.as_mut())
            .expect("leader is up");
        raft.resign(now);
        let actions = raft.take_actions();
        self.after_step(l, actions)
    }

    /// Moves a node's log start to its latest snapshot (retention), if allowed.
    pub fn clean_log(&mut self, id: NodeId) -> Result<(), String> {
        let Some(raft) = self.nodes.get_mut(&id).and_then(|n| n.raft.as_mut()) else {
            return Ok(());
        };
        let Some(latest) = raft.log().latest_snapshot_id() else {
            return Ok(());
        };
        if raft.delete_before_snapshot(latest) || raft.fatal_error().is_some() {
            let actions = raft.take_actions();
            self.emit(
                Verbosity::Roles,
                format!("n{id}: log start moves to snapshot {latest}"),
            );
            self.after_step(id, actions)?;
        }
        Ok(())
    }
}
