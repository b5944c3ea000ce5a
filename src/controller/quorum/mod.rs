//! The quorum controller (Kafka's `QuorumController` with its `ControllerApis` front): every
//! decision the controller quorum makes, sans-IO like the raft core.
//!
//! The node loop drives it and does nothing else with metadata:
//! * [`QuorumController::handle`] screens, authorizes and decides one request, and returns a
//!   [`Decision`]: answer now, or write records and answer once they commit;
//! * [`QuorumController::on_written`] hears where the node's proposal of those records landed,
//!   and replays them at once when they follow everything the controller holds;
//! * [`QuorumController::tick`] makes the periodic decisions (fencing, elections, the token
//!   sweep), one at a time, and [`QuorumController::next_deadline`] says when the next is due;
//! * [`QuorumController::activate`] and [`QuorumController::renounce_unless_leading`] begin and
//!   end an epoch as the active controller.
//!
//! Time is an argument (`now`, milliseconds of the node's monotonic clock), randomness comes from
//! the seeded [`TopicRandom`], and what it reads of raft comes through [`QuorumAccess`].

pub mod acls;
pub(crate) mod apis;
mod authorization;
mod brokers;
mod configs;
mod controllers;
mod decision;
mod describe_configs;
mod features;
mod leadership;
pub mod not_active;
mod producer_ids;
mod quotas;
mod reassignments;
pub mod request;
mod scram;
mod tokens;
mod topics;

pub use decision::{Decision, Landed, LeadershipLost, Reply, Then, Write};
pub use not_active::NonActive;
pub use request::{AclRequest, ControllerReply, ControllerRequest};

use tracing::{info, warn};

use super::acls::authorizer::AuthorizerConfig;
use super::brokers::BrokerSessions;
use super::features::update::KraftVersionAccess;
use super::principal::RequestPrincipal;
use super::tokens::decide::TokenSettings;
use super::tokens::sweep::TokenSweeper;
use super::topics::{TopicRandom, TopicsContext};
use super::{Controller, NoSuchVersion, ReplayError};
use crate::protocol::records::Offset;

/// What the controller reads of raft when it decides, and the one thing it asks of it (a
/// kraft.version upgrade, [`KraftVersionAccess`]). The node loop implements it over its raft
/// core; transcripts and the simulation over their own.
pub trait QuorumAccess: KraftVersionAccess {
    /// The current epoch.
    fn epoch(&self) -> i32;
    /// The leader this node knows of in the current epoch.
    fn leader_id(&self) -> Option<i32>;
    /// This node leads the current epoch.
    fn is_leader(&self) -> bool;
    /// This node is shutting down: it takes no more writes.
    fn shutting_down(&self) -> bool;
    /// The offset the next proposal would get, when leading.
    fn next_proposal_offset(&self) -> Option<Offset>;
    /// The ids of the voters in force.
    fn voter_ids(&self) -> Vec<i32>;
}

/// What the quorum controller knows of its own configuration.
#[derive(Debug, Clone)]
pub struct ControllerSettings {
    pub node_id: i32,
    pub cluster_id: String,
    /// The static voters' ids (`controller.quorum.voters`; empty for a dynamic quorum).
    pub static_voter_ids: Vec<i32>,
    /// `delete.topic.enable`.
    pub delete_topic_enable: bool,
    /// `authorizer.class.name` and its settings; `None`: no authorizer.
    pub authorizer: Option<AuthorizerConfig>,
    /// `broker.session.timeout.ms`: a broker without a heartbeat this long is fenced.
    pub broker_session_timeout_ms: u64,
    /// Write Kafka's activation records when leading an empty log, with this cluster-wide
    /// `min.insync.replicas` (None: a bare raft node, which writes no metadata).
    pub activation_min_insync_replicas: Option<u32>,
    /// What topic decisions need of this controller's configuration.
    pub topics: TopicsContext,
    /// Seeds the replica placer's and the topic ids' randomness.
    pub topic_seed: u64,
    /// `leader.imbalance.check.interval.seconds` in ms when `auto.leader.rebalance.enable`
    /// (None: leaderships are not moved back to preferred replicas on their own).
    pub leader_rebalance_interval_ms: Option<u64>,
    /// The delegation-token configuration.
    pub tokens: TokenSettings,
}

/// The controller acting as the active one in `epoch`: soft state, rebuilt at every activation.
struct Active {
    epoch: i32,
    /// The brokers' sessions.
    sessions: BrokerSessions,
    /// When expired delegation tokens are next swept.
    token_sweep: TokenSweeper,
    /// When the periodic elections are next due.
    elections: leadership::ElectionDeadlines,
    /// The end of the last proposal of this epoch the controller did not apply when written.
    /// Invariant: the controller decides only once it holds every record below it.
    not_taken_end: Offset,
}

/// What [`QuorumController::renounce_unless_leading`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renounced {
    pub epoch: i32,
    /// Uncommitted offsets reverted.
    pub reverted: Offset,
}

pub struct QuorumController {
    /// The state machine: the image and its versions. Only its `replay` mutates metadata.
    machine: Controller,
    settings: ControllerSettings,
    /// Some from the activation in an epoch until the node no longer leads that epoch.
    active: Option<Active>,
    /// The randomness topic decisions draw from (the replica placer's and new topic ids').
    topic_random: TopicRandom,
    /// The node has once replayed every batch committed when it knew a high watermark (Java's
    /// metadata loader then publishes its first image): until then the authorizer has not
    /// loaded the ACLs and answers only super users.
    caught_up: bool,
}

impl QuorumController {
    pub fn new(settings: ControllerSettings) -> QuorumController {
        QuorumController {
            machine: Controller::new(),
            topic_random: TopicRandom::seeded(settings.topic_seed),
            settings,
            active: None,
            caught_up: false,
        }
    }

    /// The state machine, for reading.
    pub fn machine(&self) -> &Controller {
        &self.machine
    }

    /// The state machine, for replaying committed batches and loading snapshots (the node's
    /// snapshot policy does both).
    pub fn machine_mut(&mut self) -> &mut Controller {
        &mut self.machine
    }

    /// The node has replayed every committed batch once: the authorizer has its first load.
    pub fn caught_up(&mut self) {
        self.caught_up = true;
    }

    pub fn is_caught_up(&self) -> bool {
        self.caught_up
    }

    /// The active controller's brokers with their last contact in ms (none when not active).
    pub fn broker_last_contacts(&self) -> Vec<(i32, Option<u64>)> {
        self.active
            .as_ref()
            .map_or_else(Vec::new, |a| a.sessions.last_contacts())
    }

    /// The epoch this controller acts as the active one in, if any.
    pub fn active_epoch(&self) -> Option<i32> {
        self.active.as_ref().map(|a| a.epoch)
    }

    /// Whether the controller may decide now: active in the current epoch, taking writes, and
    /// holding every record below the next proposal.
    pub fn acting(&self, quorum: &dyn QuorumAccess) -> bool {
        self.active.as_ref().is_some_and(|a| {
            quorum.is_leader()
                && quorum.epoch() == a.epoch
                && !quorum.shutting_down()
                && a.not_taken_end <= self.machine.last_applied() + 1
        })
    }

    /// Acting, with a finalized metadata.version: a node without one (a bare raft node, which
    /// writes no activation records) answers the requests that need it as a non-active
    /// controller would, rather than deciding without a version.
    fn acting_with_metadata_version(&self, quorum: &dyn QuorumAccess) -> bool {
        self.acting(quorum)
            && super::topics::finalized_metadata_version(self.machine.image()).is_some()
    }

    /// What a non-active controller answers with.
    fn non_active(&self, quorum: &dyn QuorumAccess) -> NonActive {
        NonActive::of(
            self.settings.node_id,
            quorum.leader_id(),
            self.settings.delete_topic_enable,
        )
    }

    /// Decides one request from `principal`. `ControllerApis` authorizes before anything else.
    pub fn handle(
        &mut self,
        now: u64,
        principal: &RequestPrincipal,
        request: ControllerRequest,
        quorum: &mut dyn QuorumAccess,
    ) -> Decision {
        if let Some(refused) = self.cluster_refusal(&request, principal) {
            return Decision::Answer(refused);
        }
        self.dispatch(now, principal, request, quorum)
    }

    /// The controller becomes the active one of the current epoch, once the node's log holds
    /// every record before it (and the epoch's LeaderChange) and the controller has replayed
    /// them. Brokers' sessions start afresh. The activation records, if the log holds no
    /// metadata yet (Kafka's `ActivationRecordsGenerator`), from the bootstrap checkpoint's
    /// record values.
    pub fn activate(
        &mut self,
        now: u64,
        epoch: i32,
        bootstrap: impl FnOnce() -> Option<Vec<Vec<u8>>>,
    ) -> Option<Write> {
        let sessions = BrokerSessions::activate(
            self.machine.image(),
            self.settings.broker_session_timeout_ms,
            now,
        );
        info!(
            target: "kraftd::controller",
            "active controller of epoch {epoch}: {} registered broker(s) get a fresh session",
            self.machine.image().cluster.brokers.len()
        );
        self.active = Some(Active {
            epoch,
            sessions,
            token_sweep: TokenSweeper::activate(&self.settings.tokens, now),
            elections: leadership::ElectionDeadlines::activate(
                now,
                self.settings.leader_rebalance_interval_ms,
            ),
            not_taken_end: 0,
        });
        let min_insync_replicas = self.settings.activation_min_insync_replicas?;
        let log = super::activation::ReplayedLog {
            metadata_version: self.machine.image().features.metadata_version(),
            open_transaction: self.machine.open_transaction(),
        };
        match super::activation::activation_records(log, bootstrap, min_insync_replicas) {
            Ok(records) if records.is_empty() => None,
            Ok(records) => Some(Write {
                records,
                reply: None,
                then: Some(Then::Activated {
                    aborted: log.open_transaction.map(|t| t.begun_at),
                    bootstrap: log.metadata_version.is_none(),
                }),
            }),
            Err(e) => {
                tracing::error!(target: "kraftd::raft", "cannot activate the metadata log: {e}");
                None
            }
        }
    }

    /// Renounces when the controller acted as the leader's and the node no longer leads that
    /// epoch: what it wrote ahead of the commit point is reverted. Called before committed
    /// batches are replayed, which may be another leader's. The node fails its parked replies.
    pub fn renounce_unless_leading(
        &mut self,
        quorum: &dyn QuorumAccess,
    ) -> Result<Option<Renounced>, NoSuchVersion> {
        match &self.active {
            Some(a) if !(quorum.is_leader() && quorum.epoch() == a.epoch) => self.renounce(),
            _ => Ok(None),
        }
    }

    /// Stops acting as the active controller, if it was: what it wrote ahead of the commit
    /// point is reverted.
    pub fn renounce(&mut self) -> Result<Option<Renounced>, NoSuchVersion> {
        let Some(active) = self.active.take() else {
            return Ok(None);
        };
        let reverted = self.machine.last_applied() - self.machine.committed_point();
        self.machine.renounce()?;
        Ok(Some(Renounced {
            epoch: active.epoch,
            reverted,
        }))
    }

    /// Where the node's proposal of a decision's records landed (`None`: nothing was proposed,
    /// or raft refused them). They are replayed at once when they follow everything the
    /// controller holds; otherwise decisions wait until they are replayed as committed.
    pub fn on_written(
        &mut self,
        landed: Option<Landed>,
        values: &[Vec<u8>],
        then: Option<Then>,
    ) -> Result<(), ReplayError> {
        if let Some(p) = landed {
            let applies = self.active.as_ref().is_some_and(|a| a.epoch == p.epoch)
                && p.base_offset == self.machine.last_applied() + 1;
            if applies {
                self.machine.replay_written_values(p.base_offset, values)?;
            } else if let Some(a) = self.active.as_mut() {
                a.not_taken_end = a.not_taken_end.max(p.last_offset + 1);
            }
        }
        let end = landed.map_or(self.machine.last_applied(), |p| p.last_offset);
        match then {
            None => {}
            Some(Then::ControlledShutdown { broker }) => {
                // Java's `processBatchEndOffset`: where the records of this decision end.
                if let Some(a) = self.active.as_mut() {
                    a.sessions.controlled_shutdown_written(broker, end);
                }
            }
            Some(Then::Log(what)) => {
                if let Some(p) = landed {
                    info!(target: "kraftd::controller", "{what} at offset {}", p.last_offset);
                }
            }
            Some(Then::Activated { aborted, bootstrap }) => {
                if let Some(p) = landed {
                    if let Some(begun_at) = aborted {
                        info!(
                            target: "kraftd::raft",
                            "aborted the metadata transaction left open at offset {begun_at} by the previous leader (offset {})",
                            p.base_offset
                        );
                    }
                    if bootstrap {
                        info!(
                            target: "kraftd::raft",
                            "the metadata log held no metadata.version: wrote the bootstrap records (activation) at offsets {}..={}",
                            p.base_offset,
                            p.last_offset
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The next periodic decision due at `now`, if any: a broker whose session expired is
    /// fenced, the elections run, expired tokens are swept. The node carries each out before
    /// asking again, so that each is decided on the state the one before left.
    pub fn tick(&mut self, now: u64, quorum: &dyn QuorumAccess) -> Option<Write> {
        if !self.acting(quorum) {
            return None;
        }
        if let Some(w) = self.fence_stale_broker(now) {
            return Some(w);
        }
        if let Some(w) = self.run_due_election(now) {
            return Some(w);
        }
        self.sweep_expired_tokens(now)
    }

    /// When the next periodic decision is due (None unless acting).
    pub fn next_deadline(&self, quorum: &dyn QuorumAccess) -> Option<u64> {
        if !self.acting(quorum) {
            return None;
        }
        let a = self.active.as_ref()?;
        let mut due = a.elections.next_due().min(a.token_sweep.next_due());
        if let Some(expiry) = a.sessions.next_expiry() {
            due = due.min(expiry);
        }
        Some(due)
    }

    /// This node's own registration, as the leader: a record in a batch of its own.
    pub fn register_self(
        &mut self,
        quorum: &dyn QuorumAccess,
        request: &crate::protocol::messages::ControllerRegistrationRequest,
    ) -> Option<Write> {
        if !self.acting(quorum) {
            return None;
        }
        match super::controller_registration::register_controller(self.machine.image(), request) {
            Err(refusal) => {
                warn!(target: "kraftd::raft", "cannot register this controller: {refusal}");
                None
            }
            Ok(record) => Some(Write::periodic(
                vec![record],
                Some(Then::Log(format!(
                    "registering this controller (incarnation {})",
                    request.incarnation_id
                ))),
            )),
        }
    }
}
