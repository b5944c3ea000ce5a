//! This node's own controller registration (KIP-919): a record when leading (the quorum
//! controller's decision), a `ControllerRegistration` request to the active controller on the
//! controller channel when following; and the finalized features it publishes.

use tracing::info;

use super::quorum_access::NodeQuorum;
use super::registration;
use super::runner::NodeLoop;
use crate::controller::controller_registration::registration_supported;
use crate::protocol::codec::{ApiMessage, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{ControllerRegistrationRequest, ControllerRegistrationResponse};
use crate::raft::{FatalError, Instant, QuorumStateStore, RaftLog};
use crate::server::context::FinalizedFeatures;
use crate::server::peer::OutboundRequest;

/// How long to wait before registering again after a failure or an unanswered attempt.
const RETRY_MS: u64 = 1000;
/// How long a written or acknowledged registration may take to show up in the replay.
const SETTLE_MS: u64 = 5000;

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    /// Registers this node with the active controller unless the committed log already shows
    /// this incarnation. Like Java's `ControllerRegistrationManager`, it looks at committed
    /// metadata only: a new leader registers after its bootstrap records commit, in a batch
    /// of its own (which also moves the finalized features' epoch to where Java has it).
    pub(super) fn maybe_register_self(&mut self, now: Instant) -> Result<(), FatalError> {
        let own = self.ctx.node_id;
        let incarnation = self.registrations.incarnation;
        let committed = &self.controller.machine().committed_state().image;
        if self.shutting_down
            || self.registrations.own_token.is_some()
            || now < self.registrations.own_next_attempt
            || committed
                .cluster
                .controllers
                .get(&own)
                .map(|c| c.incarnation_id)
                == Some(incarnation)
            || !registration_supported(committed)
        {
            return Ok(());
        }
        let request = registration::own_request(
            own,
            incarnation,
            &self.settings.raft.listeners,
            &self.settings.listener_protocols,
        );
        if self.raft.is_leader() {
            let quorum = NodeQuorum {
                raft: &mut self.raft,
                now,
                shutting_down: self.shutting_down,
            };
            if !self.controller.acting(&quorum) {
                return Ok(());
            }
            if let Some(write) = self.controller.register_self(&quorum, &request) {
                self.write(now, write, None)?;
            }
            self.registrations.own_next_attempt = now.plus_millis(SETTLE_MS);
            return Ok(());
        }
        let Some(leader) = self.raft.leader_id().filter(|&l| l != own) else {
            return Ok(());
        };
        let listener = &self.settings.raft.default_listener;
        let Some(address) = self.raft.voters().address(leader, listener).cloned() else {
            return Ok(());
        };
        // Sent at the versions kraftd serves itself: the schema's.
        let token = self.next_token;
        self.next_token += 1;
        self.send_to_active_controller(
            leader,
            &address,
            OutboundRequest {
                token,
                api_key: ControllerRegistrationRequest::API_KEY,
                min_version: ControllerRegistrationRequest::LOWEST_VERSION,
                max_version: ControllerRegistrationRequest::HIGHEST_VERSION,
                encode_body: Box::new(move |v| request.encode_to_vec(v)),
            },
        );
        self.registrations.own_token = Some(token);
        self.registrations.own_next_attempt = now.plus_millis(RETRY_MS);
        Ok(())
    }

    /// The active controller's answer to this node's registration (or why there was none).
    /// `answer` is the response's version and body, or why the request failed.
    pub(super) fn own_registration_answered(&mut self, answer: Result<(i16, Vec<u8>), String>) {
        self.registrations.own_token = None;
        let now = self.clock.now();
        let outcome = answer.and_then(|(version, body)| {
            ControllerRegistrationResponse::decode_exact(&body, version).map_err(|e| e.to_string())
        });
        match outcome {
            Ok(r) if r.error_code == 0 => {
                info!(
                    target: "kraftd::raft",
                    "registered with the active controller (incarnation {})",
                    self.registrations.incarnation
                );
                self.registrations.own_next_attempt = now.plus_millis(SETTLE_MS);
            }
            Ok(r) => {
                info!(
                    target: "kraftd::raft",
                    "the active controller refused this controller's registration ({}: {}); retrying",
                    ErrorCode(r.error_code).name(),
                    r.error_message.unwrap_or_default()
                );
                self.registrations.own_next_attempt = now.plus_millis(RETRY_MS);
            }
            Err(why) => {
                info!(target: "kraftd::raft", "controller registration not answered ({why}); retrying");
                self.registrations.own_next_attempt = now.plus_millis(RETRY_MS);
            }
        }
    }

    /// The finalized feature levels of the committed image (Java's `FeaturesPublisher` sees
    /// published, so committed, images only), and raft's kraft.version from 1 on (as a Java
    /// controller adds it to its levels).
    fn finalized_levels(&self) -> std::collections::BTreeMap<String, i16> {
        let levels = &self
            .controller
            .machine()
            .committed_state()
            .image
            .features
            .levels;
        let mut finalized: std::collections::BTreeMap<String, i16> =
            levels.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let kraft = self.raft.kraft_version();
        if kraft > 0 && !finalized.is_empty() {
            finalized.insert(crate::protocol::features::KRAFT_VERSION.to_string(), kraft);
        }
        finalized
    }

    /// Finalized features for ApiVersions and `kafka-features describe`.
    pub(super) fn publish_features(&mut self) {
        let levels = self.finalized_levels();
        if self.ctx.finalized_features().levels == levels {
            return;
        }
        let finalized = FinalizedFeatures {
            epoch: self.controller.machine().committed_point(),
            levels,
        };
        self.ctx.update_quorum(|view| view.finalized = finalized);
    }

    /// Publishes the committed ACLs for the checks made outside the loop, once the node has
    /// caught up.
    pub(super) fn publish_acls(&self) {
        if self.ctx.authorizer.is_some() && self.controller.is_caught_up() {
            self.ctx
                .publish_acls(&self.controller.machine().stable_image().1.acls);
        }
    }

    /// Publishes the committed SCRAM credentials for SASL/SCRAM connections (from the first
    /// replay on, leader or follower: the snapshot and log at start-up, bootstrap records,
    /// every committed credential record).
    pub(super) fn publish_scram(&self) {
        self.ctx
            .publish_scram(&self.controller.machine().stable_image().1.scram);
    }
}
