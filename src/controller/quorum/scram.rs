//! AlterUserScramCredentials: the controller decides every user
//! (`controller::scram::alter`) against the latest state, and the answer goes out once the
//! records commit (`NOT_CONTROLLER` for every user if leadership is lost first).

use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::acls::authorizer::Denied;
use crate::controller::scram::alter::{
    alter_user_scram_credentials, ScramDeletion, ScramResult, ScramUpsertion,
};
use crate::controller::topics::metadata_version;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use crate::protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};

fn result(r: &ScramResult) -> AlterUserScramCredentialsResult {
    let (code, message) = match &r.outcome {
        Ok(()) => (ErrorCode::NONE, None),
        Err(e) => (e.error_code(), e.message()),
    };
    AlterUserScramCredentialsResult {
        user: r.user.clone(),
        error_code: code.0,
        error_message: message,
        ..Default::default()
    }
}

impl QuorumController {
    pub(super) fn alter_user_scram_credentials(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AlterUserScramCredentialsRequest,
    ) -> Decision {
        if !self.acting_with_metadata_version(quorum) {
            let r = not_active::alter_user_scram_credentials(
                &request,
                version,
                &self.non_active(quorum),
            );
            return Decision::Answer(ControllerReply::AlterUserScramCredentials(r));
        }
        let deletions: Vec<ScramDeletion> = request
            .deletions
            .iter()
            .map(|d| ScramDeletion {
                name: d.name.clone(),
                mechanism: d.mechanism,
            })
            .collect();
        let upsertions: Vec<ScramUpsertion> = request
            .upsertions
            .iter()
            .map(|u| ScramUpsertion {
                name: u.name.clone(),
                mechanism: u.mechanism,
                iterations: u.iterations,
                salt: u.salt.clone(),
                salted_password: u.salted_password.clone(),
            })
            .collect();
        let image = self.machine.image();
        let decided = alter_user_scram_credentials(
            &image.scram,
            metadata_version(image),
            &deletions,
            &upsertions,
        );
        // Names and outcomes only: never the salt or keys.
        let described: Vec<String> = decided
            .reply
            .iter()
            .map(|r| match &r.outcome {
                Ok(()) => format!("{:?}: SUCCESS", r.user),
                Err(e) => format!("{:?}: {} ({e})", r.user, e.error_code().name()),
            })
            .collect();
        let line = format!(
            "AlterUserScramCredentials: {} record(s); {}",
            decided.records.len(),
            described.join(", ")
        );
        if decided.reply.iter().all(|r| r.outcome.is_ok()) {
            info!(target: "kraftd::controller", "{line}");
        } else {
            warn!(target: "kraftd::controller", "{line}");
        }
        let non_active = self.non_active(quorum);
        Decision::write_either(decided, |outcome| {
            let r = match outcome {
                Ok(results) => AlterUserScramCredentialsResponse {
                    results: results.iter().map(result).collect(),
                    ..Default::default()
                },
                Err(_) => not_active::alter_user_scram_credentials(&request, version, &non_active),
            };
            ControllerReply::AlterUserScramCredentials(r)
        })
    }
}

impl QuorumController {
    /// AlterUserScramCredentials refused its cluster operation: one result per user, sorted by
    /// name.
    pub(super) fn alter_user_scram_credentials_refused(
        r: &AlterUserScramCredentialsRequest,
        _v: i16,
        denied: &Denied,
    ) -> AlterUserScramCredentialsResponse {
        let code = denied.error_code().0;
        not_active::alter_user_scram_credentials_error(r, code, denied.exception_message())
    }
}
