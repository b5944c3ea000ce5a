//! UpdateFeatures: the controller decides (`controller::features::update`), raft checks and
//! writes a kraft.version upgrade on the controller's behalf ([`super::QuorumAccess`]), and the
//! reply is released once the decision's records commit. A node that is not the active controller
//! answers as a non-active Java controller does.

use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::features::update::{
    update_features, FeatureRefusal, FeatureUpdate, FeatureUpdateContext, UpgradeType,
};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::update_features_response::UpdatableFeatureResult;
use crate::protocol::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};

impl QuorumController {
    pub(super) fn update_features(
        &mut self,
        quorum: &mut dyn QuorumAccess,
        version: i16,
        request: UpdateFeaturesRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            let r = not_active::update_features(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::UpdateFeatures(r));
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
            node_id: self.settings.node_id,
            quorum_node_ids: self.settings.static_voter_ids.clone(),
            static_min_insync_replicas: self.settings.activation_min_insync_replicas.unwrap_or(1),
        };
        let result = update_features(
            self.machine.latest_state(),
            &ctx,
            &updates,
            request.validate_only,
            quorum,
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
        let message = self.non_active(quorum).message();
        Decision::write(
            result,
            |decided| {
                ControllerReply::UpdateFeatures(response(&request, version, decided.as_ref().err()))
            },
            ControllerReply::UpdateFeatures(UpdateFeaturesResponse {
                error_code: ErrorCode::NOT_CONTROLLER.0,
                error_message: Some(message),
                ..Default::default()
            }),
        )
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
