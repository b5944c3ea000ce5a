//! Other controllers' registrations (KIP-919, Kafka's `QuorumController.registerController`),
//! answered once their record commits, and UnregisterController
//! (`kafka-cluster unregister-controller`).

use tracing::{info, warn};

use super::{ControllerReply, Decision, QuorumAccess, QuorumController, Then};
use crate::controller::controller_registration::{register_controller, unregister_controller};
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    ControllerRegistrationRequest, ControllerRegistrationResponse, UnregisterControllerRequest,
    UnregisterControllerResponse,
};

/// A refusal of a registration.
pub fn registration_refused(error: ErrorCode, message: String) -> ControllerRegistrationResponse {
    ControllerRegistrationResponse {
        error_code: error.0,
        error_message: Some(message),
        ..Default::default()
    }
}

fn not_committed() -> ControllerReply {
    ControllerReply::Register(registration_refused(
        ErrorCode::NOT_CONTROLLER,
        "The active controller changed before the registration was committed.".into(),
    ))
}

impl QuorumController {
    pub(super) fn register_controller(
        &mut self,
        quorum: &dyn QuorumAccess,
        request: ControllerRegistrationRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            return Decision::Answer(ControllerReply::Register(registration_refused(
                ErrorCode::NOT_CONTROLLER,
                "This is not the active controller.".into(),
            )));
        }
        match register_controller(self.machine.image(), &request) {
            Ok(record) => Decision::write(
                ControllerResult::new(vec![record], ()),
                |()| ControllerReply::Register(ControllerRegistrationResponse::default()),
                not_committed(),
            )
            .then(Then::Log(format!(
                "registering controller {} (incarnation {})",
                request.controller_id, request.incarnation_id
            ))),
            Err(refusal) => Decision::after_pending_or(
                ControllerReply::Register(registration_refused(
                    refusal.error_code(),
                    refusal.to_string(),
                )),
                not_committed(),
            ),
        }
    }

    /// Decided against the latest state, answered once the UnregisterControllerRecord commits
    /// (NOT_CONTROLLER, with the active controller's whereabouts, if it never does or this
    /// node is not active).
    pub(super) fn unregister_controller(
        &mut self,
        quorum: &dyn QuorumAccess,
        request: UnregisterControllerRequest,
    ) -> Decision {
        let not_controller = ControllerReply::UnregisterController(UnregisterControllerResponse {
            error_code: ErrorCode::NOT_CONTROLLER.0,
            error_message: Some(self.non_active(quorum).message()),
            ..Default::default()
        });
        if !self.acting(quorum) {
            return Decision::Answer(not_controller);
        }
        let id = request.controller_id;
        let local = self.settings.node_id;
        match unregister_controller(&self.machine.latest_state().image, local, id) {
            Ok(record) => {
                info!(target: "kraftd::controller", "unregistering controller {id}");
                Decision::write(
                    ControllerResult::new(vec![record], ()),
                    |()| {
                        ControllerReply::UnregisterController(
                            UnregisterControllerResponse::default(),
                        )
                    },
                    not_controller,
                )
            }
            Err(refusal) => {
                warn!(
                    target: "kraftd::controller",
                    "UnregisterController of controller {id} refused with {}: {refusal}",
                    refusal.error_code().name()
                );
                let refused = UnregisterControllerResponse {
                    error_code: refusal.error_code().0,
                    error_message: Some(refusal.to_string()),
                    ..Default::default()
                };
                Decision::after_pending_or(
                    ControllerReply::UnregisterController(refused),
                    not_controller,
                )
            }
        }
    }
}
