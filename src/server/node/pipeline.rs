//! The quorum controller's decisions carried out: an answer goes out at once; a write's records
//! are proposed to raft (the controller replays them at once when they follow everything it
//! holds) and its answer is parked in the [`Purgatory`] until they commit. Losing the
//! leadership reverts the controller to its committed state and answers every parked reply
//! with its NOT_CONTROLLER form.

use tokio::sync::oneshot;
use tracing::{error, info, warn};

use super::quorum_access::NodeQuorum;
use super::runner::NodeLoop;
use crate::controller::quorum::{ControllerReply, Decision, Landed, Write};
use crate::raft::{FatalError, Instant, QuorumStateStore, RaftLog};

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    /// Carries out the controller's decision on a request whose answer goes to `reply`.
    pub(super) fn carry_out(
        &mut self,
        now: Instant,
        decision: Decision,
        reply: oneshot::Sender<ControllerReply>,
    ) -> Result<(), FatalError> {
        match decision {
            Decision::Answer(answer) => {
                let _ = reply.send(answer);
                Ok(())
            }
            Decision::Write(write) => self.write(now, write, Some(reply)),
        }
    }

    /// Proposes a write's records as this leader, tells the controller where they landed, and
    /// parks its answer until they commit. A write without records waits for the records
    /// written before it (its decision read them).
    pub(super) fn write(
        &mut self,
        now: Instant,
        write: Write,
        reply: Option<oneshot::Sender<ControllerReply>>,
    ) -> Result<(), FatalError> {
        let epoch = self.raft.epoch();
        let Write {
            records,
            reply: answer,
            then,
        } = write;
        let (landed, wait_for) = if records.is_empty() {
            let pending = self.controller.machine().last_applied();
            let committed = self.raft.high_watermark().unwrap_or(0) - 1;
            (None, Some(if pending > committed { pending } else { -1 }))
        } else {
            match self.raft.propose(now, epoch, records.clone()) {
                Ok(p) => {
                    let landed = Landed {
                        epoch: p.epoch,
                        base_offset: p.base_offset,
                        last_offset: p.last_offset,
                    };
                    (Some(landed), Some(p.last_offset))
                }
                Err(e) => {
                    warn!(target: "kraftd::controller", "could not append metadata records: {e}");
                    (None, None)
                }
            }
        };
        if let Err(e) = self.controller.on_written(landed, &records, then) {
            // The controller's own record: a bug, fatal as in Java.
            error!(target: "kraftd::controller", "the controller cannot replay its own records: {e}");
            return Err(self.halt(FatalError::CorruptRecord {
                offset: e.offset,
                detail: e.to_string(),
            }));
        }
        let (Some(reply), Some(answer)) = (reply, answer) else {
            return Ok(());
        };
        match wait_for {
            // Raft refused the records: the leadership they were decided under is gone.
            None => {
                let _ = reply.send(answer.lost);
            }
            Some(offset) => self.purgatory.park(
                offset,
                epoch,
                Box::new(move |outcome| {
                    let _ = reply.send(match outcome {
                        Ok(()) => answer.committed,
                        Err(_) => answer.lost,
                    });
                }),
            ),
        }
        Ok(())
    }

    /// The controller's periodic decisions due at `now` (fencing, elections, the token sweep),
    /// each carried out before the next is decided.
    pub(super) fn run_periodic(&mut self, now: Instant) -> Result<(), FatalError> {
        loop {
            let quorum = NodeQuorum {
                raft: &mut self.raft,
                now,
                shutting_down: self.shutting_down,
            };
            let Some(write) = self.controller.tick(now.0, &quorum) else {
                return Ok(());
            };
            self.write(now, write, None)?;
        }
    }

    /// Renounces when the controller acted as the leader's and the node no longer leads that
    /// epoch. Called before committed batches are replayed, which may be another leader's.
    pub(super) fn maybe_renounce(&mut self) -> Result<(), FatalError> {
        let now = self.clock.now();
        let quorum = NodeQuorum {
            raft: &mut self.raft,
            now,
            shutting_down: self.shutting_down,
        };
        match self.controller.renounce_unless_leading(&quorum) {
            Ok(None) => Ok(()),
            Ok(Some(renounced)) => {
                let failed = self.purgatory.len();
                self.purgatory.fail_all();
                info!(
                    target: "kraftd::controller",
                    "no longer the active controller of epoch {}: reverted {} uncommitted offset(s), \
                     {failed} parked repl(ies) answered NOT_CONTROLLER",
                    renounced.epoch,
                    renounced.reverted
                );
                Ok(())
            }
            Err(e) => Err(self.halt(FatalError::CorruptRecord {
                offset: e.wanted,
                detail: e.to_string(),
            })),
        }
    }

    /// Releases parked replies whose records are committed.
    pub(super) fn release_parked(&mut self) {
        let leading = self.raft.is_leader().then(|| self.raft.epoch());
        self.purgatory.release(self.raft.high_watermark(), leading);
    }
}
