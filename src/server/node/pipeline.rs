//! The active controller's pipeline in the node loop: a controller decision (records and a
//! reply) is proposed to raft, its records are replayed into the controller at their offsets
//! at once (the latest state the next decision reads), and its reply is parked in the
//! [`Purgatory`] until the records commit. Losing the leadership reverts the controller to its
//! committed state and fails every parked reply with `NOT_CONTROLLER`.
//!
//! The controller acts as the leader's from its activation in an epoch (`claim`) until the
//! node no longer leads that epoch (`maybe_renounce`). It decides only while it holds every
//! record below the next proposal: a proposal it could not apply at once (a control batch
//! landed in between, or a raw append) is replayed when committed, and decisions wait for it.

use tracing::{error, info, warn};

use super::purgatory::{LeadershipLost, Purgatory};
use super::runner::NodeLoop;
use crate::controller::brokers::{self, BrokerSessions, Expiry};
use crate::controller::tokens::sweep::TokenSweeper;
use crate::controller::ControllerResult;
use crate::raft::{Epoch, FatalError, Instant, Offset, Proposed, QuorumStateStore, RaftLog};

/// The controller acting as the active one in `epoch`.
pub(super) struct Active {
    pub epoch: Epoch,
    /// The brokers' sessions (soft state, rebuilt at every activation).
    pub sessions: BrokerSessions,
    /// When expired delegation tokens are next swept (restarted at every activation).
    pub token_sweep: TokenSweeper,
    /// The end of the last proposal of this epoch the controller did not apply when written.
    not_taken_end: Offset,
}

#[derive(Default)]
pub(super) struct Pipeline {
    pub active: Option<Active>,
    pub purgatory: Purgatory,
}

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    /// The controller becomes the active one of this epoch: brokers' sessions start afresh.
    pub(super) fn claim(&mut self, now: Instant) {
        let epoch = self.raft.epoch();
        let sessions = BrokerSessions::activate(
            self.controller.image(),
            self.settings.broker_session_timeout_ms,
            now.0,
        );
        info!(
            target: "kraftd::controller",
            "active controller of epoch {epoch}: {} registered broker(s) get a fresh session",
            self.controller.image().cluster.brokers.len()
        );
        self.pipeline.active = Some(Active {
            epoch,
            sessions,
            token_sweep: TokenSweeper::activate(&self.settings.tokens, now.0),
            not_taken_end: 0,
        });
    }

    /// Renounces when the controller acted as the leader's and the node no longer leads that
    /// epoch. Called before committed batches are replayed, which may be another leader's.
    pub(super) fn maybe_renounce(&mut self) -> Result<(), FatalError> {
        let Some(active) = &self.pipeline.active else {
            return Ok(());
        };
        if self.raft.is_leader() && self.raft.epoch() == active.epoch {
            return Ok(());
        }
        let epoch = active.epoch;
        self.pipeline.active = None;
        let reverted = self.controller.last_applied() - self.controller.committed_point();
        self.controller.renounce().map_err(|e| {
            self.halt(FatalError::CorruptRecord {
                offset: e.wanted,
                detail: e.to_string(),
            })
        })?;
        let failed = self.pipeline.purgatory.len();
        self.pipeline.purgatory.fail_all();
        info!(
            target: "kraftd::controller",
            "no longer the active controller of epoch {epoch}: reverted {reverted} uncommitted offset(s), \
             {failed} parked repl(ies) answered NOT_CONTROLLER"
        );
        Ok(())
    }

    /// Whether the controller may decide now: active in the current epoch and holding every
    /// record below the next proposal.
    pub(super) fn acting(&self) -> bool {
        match &self.pipeline.active {
            Some(a) => {
                self.raft.is_leader()
                    && self.raft.epoch() == a.epoch
                    && !self.shutting_down
                    && a.not_taken_end <= self.controller.last_applied() + 1
            }
            None => false,
        }
    }

    /// Acting, with a finalized metadata.version: a node without one (a bare raft node, which
    /// writes no activation records) answers the flows that need it as a non-active controller
    /// would, rather than deciding without a version.
    pub(super) fn acting_with_metadata_version(&self) -> bool {
        self.acting()
            && crate::controller::topics::finalized_metadata_version(self.controller.image())
                .is_some()
    }

    /// Proposes metadata record values as this leader; the controller applies them at once when
    /// they follow everything it holds. `Ok(None)`: raft refused them (logged).
    pub(super) fn propose_metadata(
        &mut self,
        now: Instant,
        values: Vec<Vec<u8>>,
    ) -> Result<Option<Proposed>, FatalError> {
        let epoch = self.raft.epoch();
        let proposed = match self.raft.propose(now, epoch, values.clone()) {
            Ok(p) => p,
            Err(e) => {
                warn!(target: "kraftd::controller", "could not append metadata records: {e}");
                return Ok(None);
            }
        };
        let applies = self.settings.replay_metadata
            && self
                .pipeline
                .active
                .as_ref()
                .is_some_and(|a| a.epoch == proposed.epoch)
            && proposed.base_offset == self.controller.last_applied() + 1;
        if applies {
            if let Err(e) = self
                .controller
                .replay_written_values(proposed.base_offset, &values)
            {
                // The controller's own record: a bug, fatal as in Java.
                error!(target: "kraftd::controller", "the controller cannot replay its own records: {e}");
                return Err(self.halt(FatalError::CorruptRecord {
                    offset: e.offset,
                    detail: e.to_string(),
                }));
            }
        } else if let Some(a) = self.pipeline.active.as_mut() {
            a.not_taken_end = a.not_taken_end.max(proposed.last_offset + 1);
        }
        Ok(Some(proposed))
    }

    /// Carries out a decision: its records are proposed (applied at once) and `reply` runs once
    /// they commit, or with `LeadershipLost`. A decision without records waits for the records
    /// written before it. Returns where its records landed.
    pub(super) fn submit<R: Send + 'static>(
        &mut self,
        now: Instant,
        result: ControllerResult<R>,
        reply: impl FnOnce(Result<R, LeadershipLost>) + Send + 'static,
    ) -> Result<Option<Proposed>, FatalError> {
        let epoch = self.raft.epoch();
        let ControllerResult { records, reply: r } = result;
        let (wait_for, proposed) = if records.is_empty() {
            let pending = self.controller.last_applied();
            let committed = self.raft.high_watermark().unwrap_or(0) - 1;
            (if pending > committed { pending } else { -1 }, None)
        } else {
            let values = records
                .iter()
                .map(|r| r.encode().expect("the controller's own records encode"))
                .collect();
            match self.propose_metadata(now, values)? {
                Some(p) => (p.last_offset, Some(p)),
                None => {
                    reply(Err(LeadershipLost));
                    return Ok(None);
                }
            }
        };
        self.pipeline.purgatory.park(
            wait_for,
            epoch,
            Box::new(move |outcome| reply(outcome.map(|()| r))),
        );
        Ok(proposed)
    }

    /// Releases parked replies whose records are committed.
    pub(super) fn release_parked(&mut self) {
        let leading = self.raft.is_leader().then(|| self.raft.epoch());
        self.pipeline
            .purgatory
            .release(self.raft.high_watermark(), leading);
    }

    /// Fences brokers whose session expired (Java's periodic `maybeFenceStaleBroker`).
    pub(super) fn maybe_fence_stale_brokers(&mut self, now: Instant) -> Result<(), FatalError> {
        while self.acting() {
            let image = self.controller.image();
            let topics = &self.settings.topics;
            let active = self.pipeline.active.as_mut().expect("acting");
            match brokers::expire_one(image, topics, &mut active.sessions, now.0) {
                Expiry::None => break,
                Expiry::Dropped { broker, epoch } => info!(
                    target: "kraftd::controller",
                    "Removing heartbeat tracker entry for broker {broker} at epoch {epoch}: no longer its registration"
                ),
                Expiry::Fence {
                    broker,
                    epoch,
                    result,
                } => {
                    info!(
                        target: "kraftd::controller",
                        "Fencing broker {broker} at epoch {epoch} because its session has timed out."
                    );
                    super::broker_flow::log_partition_changes(broker, &result.records);
                    self.submit(now, result, |_| {})?;
                }
            }
        }
        Ok(())
    }

    /// When a broker session next expires.
    pub(super) fn next_session_expiry(&self) -> Option<Instant> {
        self.pipeline
            .active
            .as_ref()
            .and_then(|a| a.sessions.next_expiry())
            .map(Instant)
    }
}
