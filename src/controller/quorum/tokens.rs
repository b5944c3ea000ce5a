//! CreateDelegationToken, RenewDelegationToken and
//! ExpireDelegationToken. `ControllerApis.allowTokenRequests` comes first, active or not: a
//! token-authenticated principal, or a request straight over PLAINTEXT (kraftd's only listener
//! protocol), is refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED. Then the active controller
//! decides (`controller::tokens::decide`) and answers once the record commits; NOT_CONTROLLER
//! when not active or when leadership is lost first. And the active controller's periodic
//! sweep of expired tokens (`controller::tokens::sweep`).

use tracing::{info, warn};

use super::not_active::{self, NonActive};
use super::{ControllerReply, Decision, QuorumAccess, QuorumController, Then, Write};
use crate::controller::acls::{operation, resource};
use crate::controller::principal::RequestPrincipal;
use crate::controller::tokens::decide::{
    create_token, expire_token, renew_token, CreatedToken, NewTokenRequest, Principal, TokenError,
};
use crate::controller::topics::metadata_version;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    CreateDelegationTokenRequest, CreateDelegationTokenResponse, ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse, RenewDelegationTokenRequest, RenewDelegationTokenResponse,
};

/// `DelegationTokenManager.ErrorTimestamp`: the timestamps of a refusal made before the
/// controller is asked.
const ERROR_TIMESTAMP: i64 = -1;

/// `allowTokenRequests`: forwarded requests may come over PLAINTEXT; a direct one here always
/// does.
fn token_requests_allowed(forwarded: bool, principal: &RequestPrincipal) -> bool {
    forwarded && !principal.token_authenticated
}

/// `CreateDelegationTokenResponse.prepareResponse`: the requester only from v3.
fn create_response(
    version: i16,
    code: ErrorCode,
    owner: &Principal,
    requester: &Principal,
    token: Option<&CreatedToken>,
    refused_timestamp: i64,
) -> CreateDelegationTokenResponse {
    let mut r = CreateDelegationTokenResponse {
        error_code: code.0,
        principal_type: owner.principal_type.clone(),
        principal_name: owner.name.clone(),
        issue_timestamp_ms: token.map_or(refused_timestamp, |t| t.issue_timestamp),
        expiry_timestamp_ms: token.map_or(refused_timestamp, |t| t.expiry_timestamp),
        max_timestamp_ms: token.map_or(refused_timestamp, |t| t.max_timestamp),
        token_id: token.map(|t| t.token_id.clone()).unwrap_or_default(),
        hmac: token.map(|t| t.hmac.clone()).unwrap_or_default(),
        ..Default::default()
    };
    if version > 2 {
        r.token_requester_principal_type = requester.principal_type.clone();
        r.token_requester_principal_name = requester.name.clone();
    }
    r
}

fn log_decision(api: &str, principal: &Principal, outcome: Result<String, TokenError>) {
    match outcome {
        Ok(done) => info!(target: "kraftd::controller", "{api} by {principal}: {done}"),
        Err(e) => warn!(
            target: "kraftd::controller",
            "{api} by {principal} refused with {}: {e}",
            e.error_code().name()
        ),
    }
}

impl QuorumController {
    /// The non-active answer to a request past `allowTokenRequests` (so forwarded).
    fn forwarded_non_active(&self, quorum: &dyn QuorumAccess) -> NonActive {
        NonActive {
            forwarded: true,
            ..self.non_active(quorum)
        }
    }

    pub(super) fn create_delegation_token(
        &mut self,
        quorum: &dyn QuorumAccess,
        now: u64,
        version: i16,
        request: CreateDelegationTokenRequest,
        forwarded: bool,
        principal: &RequestPrincipal,
    ) -> Decision {
        let requester = Principal::new(&principal.principal_type, &principal.name);
        let anonymous = Principal::new("User", "ANONYMOUS");
        // ControllerApis names the owner first; a name without a type makes `KafkaPrincipal`
        // throw, answered by the request's error response (ANONYMOUS for both).
        let owner = match (
            request.owner_principal_type.as_deref(),
            request.owner_principal_name.as_deref(),
        ) {
            (_, None) | (_, Some("")) => requester.clone(),
            (Some(t), Some(n)) => Principal::new(t, n),
            (None, Some(_)) => {
                warn!(target: "kraftd::controller", "CreateDelegationToken by {requester} names an owner without a principal type");
                let r = create_response(
                    version,
                    ErrorCode::UNKNOWN_SERVER_ERROR,
                    &anonymous,
                    &anonymous,
                    None,
                    ERROR_TIMESTAMP,
                );
                return Decision::Answer(ControllerReply::CreateDelegationToken(Box::new(r)));
            }
        };
        if !token_requests_allowed(forwarded, principal) {
            let r = create_response(
                version,
                ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                &owner,
                &requester,
                None,
                ERROR_TIMESTAMP,
            );
            return Decision::Answer(ControllerReply::CreateDelegationToken(Box::new(r)));
        }
        // A token for someone else needs CREATE_TOKENS on that user (`ControllerApis`).
        if owner != requester
            && !self.authorized(
                principal,
                resource::USER,
                &owner.to_string(),
                operation::CREATE_TOKENS,
            )
        {
            warn!(target: "kraftd::controller", "CreateDelegationToken by {requester} for {owner} refused: it needs CREATE_TOKENS on {owner}");
            let r = create_response(
                version,
                ErrorCode::DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                &owner,
                &requester,
                None,
                ERROR_TIMESTAMP,
            );
            return Decision::Answer(ControllerReply::CreateDelegationToken(Box::new(r)));
        }
        let non_active = self.forwarded_non_active(quorum);
        if !self.acting_with_metadata_version(quorum) {
            let r = not_active::create_delegation_token(&request, version, &non_active);
            return Decision::Answer(ControllerReply::CreateDelegationToken(Box::new(r)));
        }
        let new_token = NewTokenRequest {
            owner: owner.clone(),
            requester: requester.clone(),
            renewers: request
                .renewers
                .iter()
                .map(|r| (r.principal_type.clone(), r.principal_name.clone()))
                .collect(),
            max_lifetime_ms: request.max_lifetime_ms,
        };
        let mv = metadata_version(self.machine.image());
        let decided = create_token(
            &self.settings.tokens,
            mv,
            &new_token,
            now as i64,
            &mut self.topic_random.ids,
        );
        log_decision(
            "CreateDelegationToken",
            &requester,
            decided
                .reply
                .as_ref()
                .map(|t| format!("token {} for {owner}", t.token_id))
                .map_err(|e| *e),
        );
        Decision::write_either(decided, |outcome| {
            let r = match outcome {
                Ok(Ok(t)) => {
                    create_response(version, ErrorCode::NONE, &owner, &requester, Some(t), 0)
                }
                // The manager's refusals leave the response's timestamps at 0.
                Ok(Err(e)) => create_response(version, e.error_code(), &owner, &requester, None, 0),
                Err(_) => not_active::create_delegation_token(&request, version, &non_active),
            };
            ControllerReply::CreateDelegationToken(Box::new(r))
        })
    }

    pub(super) fn renew_delegation_token(
        &mut self,
        quorum: &dyn QuorumAccess,
        now: u64,
        version: i16,
        request: RenewDelegationTokenRequest,
        forwarded: bool,
        principal: &RequestPrincipal,
    ) -> Decision {
        let refused = |code: ErrorCode, expiry| RenewDelegationTokenResponse {
            error_code: code.0,
            expiry_timestamp_ms: expiry,
            ..Default::default()
        };
        if !token_requests_allowed(forwarded, principal) {
            let r = refused(
                ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                ERROR_TIMESTAMP,
            );
            return Decision::Answer(ControllerReply::RenewDelegationToken(r));
        }
        let non_active = self.forwarded_non_active(quorum);
        if !self.acting_with_metadata_version(quorum) {
            let r = not_active::renew_delegation_token(&request, version, &non_active);
            return Decision::Answer(ControllerReply::RenewDelegationToken(r));
        }
        let who = Principal::new(&principal.principal_type, &principal.name);
        let mv = metadata_version(self.machine.image());
        // Java finds tokens in its cache, which its publisher fills from committed metadata.
        let decided = renew_token(
            &self.machine.committed_state().image.delegation_tokens,
            &self.settings.tokens,
            mv,
            &who,
            &request.hmac,
            request.renew_period_ms,
            now as i64,
        );
        log_decision(
            "RenewDelegationToken",
            &who,
            decided.reply.map(|e| format!("expires at {e}")),
        );
        Decision::write_either(decided, |outcome| {
            let r = match outcome {
                Ok(Ok(expiry)) => refused(ErrorCode::NONE, *expiry),
                Ok(Err(e)) => refused(e.error_code(), 0),
                Err(_) => not_active::renew_delegation_token(&request, version, &non_active),
            };
            ControllerReply::RenewDelegationToken(r)
        })
    }

    pub(super) fn expire_delegation_token(
        &mut self,
        quorum: &dyn QuorumAccess,
        now: u64,
        version: i16,
        request: ExpireDelegationTokenRequest,
        forwarded: bool,
        principal: &RequestPrincipal,
    ) -> Decision {
        let answer = |code: ErrorCode, expiry| ExpireDelegationTokenResponse {
            error_code: code.0,
            expiry_timestamp_ms: expiry,
            ..Default::default()
        };
        if !token_requests_allowed(forwarded, principal) {
            let r = answer(
                ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                ERROR_TIMESTAMP,
            );
            return Decision::Answer(ControllerReply::ExpireDelegationToken(r));
        }
        let non_active = self.forwarded_non_active(quorum);
        if !self.acting_with_metadata_version(quorum) {
            let r = not_active::expire_delegation_token(&request, version, &non_active);
            return Decision::Answer(ControllerReply::ExpireDelegationToken(r));
        }
        let who = Principal::new(&principal.principal_type, &principal.name);
        let mv = metadata_version(self.machine.image());
        let decided = expire_token(
            &self.machine.committed_state().image.delegation_tokens,
            &self.settings.tokens,
            mv,
            &who,
            &request.hmac,
            request.expiry_time_period_ms,
            now as i64,
        );
        log_decision(
            "ExpireDelegationToken",
            &who,
            decided.reply.map(|e| format!("expires at {e}")),
        );
        Decision::write_either(decided, |outcome| {
            let r = match outcome {
                Ok(Ok(expiry)) => answer(ErrorCode::NONE, *expiry),
                Ok(Err(e)) => answer(e.error_code(), 0),
                Err(_) => not_active::expire_delegation_token(&request, version, &non_active),
            };
            ControllerReply::ExpireDelegationToken(r)
        })
    }

    /// The active controller's sweep of expired tokens, when due: their removals go through
    /// the normal commit path (nobody waits for them).
    pub(super) fn sweep_expired_tokens(&mut self, now: u64) -> Option<Write> {
        // Java's token cache holds committed tokens.
        let tokens = &self.machine.committed_state().image.delegation_tokens;
        let active = self.active.as_mut()?;
        let result = active.token_sweep.run(tokens, &self.settings.tokens, now)?;
        for t in &result.reply.expired {
            info!(
                target: "kraftd::controller",
                "Delegation token expired for token: {} for owner: {}",
                t.token_id,
                t.owner
            );
        }
        if result.records.is_empty() {
            return None;
        }
        let what = format!(
            "Periodic task expireDelegationTokens generated {} records (more to sweep: {})",
            result.records.len(),
            result.reply.more
        );
        Some(Write::periodic(result.records, Some(Then::Log(what))))
    }
}
