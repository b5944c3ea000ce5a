//! The node loop's side of UpdateFeatures: the controller decides (`controller::features::update`),
//! raft checks and writes a kraft.version upgrade on the controller's behalf, and the reply is
//! released once the decision's records commit. A node that is not the active controller
//! answers as a non-active Java controller does.

use tokio::sync::oneshot;
use tracing::{info, warn};

use super::runner::NodeLoop;
use crate::controller::features::update::{
    update_features, FeatureRefusal, FeatureUpdate, FeatureUpdateContext, KraftVersionAccess,
    RaftRefusal, UpgradeType,
};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::update_features_response::UpdatableFeatureResult;
use crate::protocol::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};
use crate::raft::{Epoch, FatalError, Instant, QuorumStateStore, Raft, RaftLog};
use crate::server::api::not_controller;
use crate::server::api::NodeResponse;

type Reply = oneshot::Sender<NodeResponse>;

/// Raft as the controller reaches it while deciding, as the leader of `epoch` at `now`.
struct LeaderRaft<'a, L: RaftLog, S: QuorumStateStore> {
    raft: &'a mut Raft<L, S>,
    epoch: Epoch,
    now: Instant,
}

impl<L: RaftLog, S: QuorumStateStore> KraftVersionAccess for LeaderRaft<'_, L, S> {
    fn kraft_version(&self) -> i16 {
        self.raft.kraft_version()
    }

    fn upgrade_kraft_version(
        &mut self,
        level: i16,
        validate_only: bool,
    ) -> Result<(), RaftRefusal> {
        self.raft
            .upgrade_kraft_version(self.now, self.epoch, level, validate_only)
            .map(|_| ())
            .map_err(|e| RaftRefusal {
                code: e.error_code(),
                message: e.to_string(),
            })
    }
}

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    pub(super) fn update_features(
        &mut self,
        now: Instant,
        version: i16,
        request: UpdateFeaturesRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        if !self.acting() {
            let r = not_controller::update_features(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::UpdateFeatures(r));
            return Ok(());
        }
        let updates: Vec<FeatureUpdate> = request
            .feature_updates
            .iter()
            .map(|u| FeatureUpdate {
                feature: u.feature.clone(),
                level: u.max_version_level,
                // v0 has only AllowDowngrade, which Java 4.4 ignores: its UpgradeType keeps
                // the default, UPGRADE.
                upgrade_type: UpgradeType::from_code(u.upgrade_type),
            })
            .collect();
        let ctx = FeatureUpdateContext {
            node_id: self.ctx.node_id,
            quorum_node_ids: self
                .settings
                .raft
                .static_voters
                .iter()
                .map(|(id, _)| *id)
                .collect(),
            static_min_insync_replicas: self.settings.activation_min_insync_replicas.unwrap_or(1),
        };
        let epoch = self.raft.epoch();
        let mut raft = LeaderRaft {
            raft: &mut self.raft,
            epoch,
            now,
        };
        let result = update_features(
            self.controller.latest_state(),
            &ctx,
            &updates,
            request.validate_only,
            &mut raft,
        );
        let described: Vec<String> = updates
            .iter()
            .map(|u| format!("{}={} ({:?})", u.feature, u.level, u.upgrade_type))
            .collect();
        match &result.reply {
            Ok(()) => info!(
                target: "kraftd::controller",
                "UpdateFeatures {}{}: accepted, {} record(s)",
                described.join(", "),
                if request.validate_only { " (validate only)" } else { "" },
                result.records.len()
            ),
            Err(e) => warn!(
                target: "kraftd::controller",
                "UpdateFeatures {} refused with {}: {e}",
                described.join(", "),
                e.error_code().name()
            ),
        }
        let message = self.non_active().message();
        self.submit(now, result, move |outcome| {
            let r = match outcome {
                Ok(decided) => response(&request, version, decided.as_ref().err()),
                Err(_) => UpdateFeaturesResponse {
                    error_code: ErrorCode::NOT_CONTROLLER.0,
                    error_message: Some(message),
                    ..Default::default()
                },
            };
            let _ = reply.send(NodeResponse::UpdateFeatures(r));
        })?;
        Ok(())
    }
}

/// Java's UpdateFeatures answer: one error for the whole request; a success at v0 or v1 also
/// lists each feature as NONE.
fn response(
    request: &UpdateFeaturesRequest,
    version: i16,
    refusal: Option<&FeatureRefusal>,
) -> UpdateFeaturesResponse {
    let code = refusal.map_or(ErrorCode::NONE, |e| e.error_code());
    let results = if version <= 1 && refusal.is_none() {
        request
            .feature_updates
            .iter()
            .map(|u| UpdatableFeatureResult {
                feature: u.feature.clone(),
                error_code: ErrorCode::NONE.0,
                // Java's `Errors.NONE.message()`.
                error_message: Some("NONE".to_string()),
                ..Default::default()
            })
            .collect()
    } else {
        Vec::new()
    };
    UpdateFeaturesResponse {
        error_code: code.0,
        error_message: refusal.map(|e| {
            format!(
                "The update failed for all features since the following feature had an error: {e}"
            )
        }),
        results,
        ..Default::default()
    }
}
