//! ACLs, delegation tokens, client quotas and SCRAM credentials as a non-active controller
//! answers them.

use super::*;

pub fn describe_acls(_r: &DescribeAclsRequest, _v: i16, _ctx: &NonActive) -> DescribeAclsResponse {
    // Without an authorizer (AclApis' message names the broker even on a controller).
    DescribeAclsResponse {
        error_code: ErrorCode::SECURITY_DISABLED.0,
        error_message: Some("No Authorizer is configured on the broker".into()),
        ..Default::default()
    }
}

pub fn create_acls(r: &CreateAclsRequest, _v: i16, _ctx: &NonActive) -> CreateAclsResponse {
    // kraftd runs no authorizer: Java's answer without one is SECURITY_DISABLED.
    CreateAclsResponse {
        results: r
            .creations
            .iter()
            .map(|_| AclCreationResult {
                error_code: ErrorCode::SECURITY_DISABLED.0,
                error_message: Some("No Authorizer is configured.".into()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn delete_acls(r: &DeleteAclsRequest, _v: i16, _ctx: &NonActive) -> DeleteAclsResponse {
    DeleteAclsResponse {
        filter_results: r
            .filters
            .iter()
            .map(|_| DeleteAclsFilterResult {
                error_code: ErrorCode::SECURITY_DISABLED.0,
                error_message: Some("No Authorizer is configured.".into()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Java refuses delegation-token requests that arrive directly over PLAINTEXT (kraftd's only
/// listener protocol); forwarded ones go on to the quorum controller.
fn token_requests_allowed(ctx: &NonActive) -> bool {
    ctx.forwarded
}

pub fn create_delegation_token(
    r: &CreateDelegationTokenRequest,
    v: i16,
    ctx: &NonActive,
) -> CreateDelegationTokenResponse {
    let code = if token_requests_allowed(ctx) {
        ErrorCode::NOT_CONTROLLER
    } else {
        ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    };
    // A PLAINTEXT connection's principal is User:ANONYMOUS; the token's owner is the one the
    // request names, or the requester.
    // A PLAINTEXT connection's principal is User:ANONYMOUS. Refused directly, the answer
    // names the owner the request gives (or the requester); refused by the quorum
    // controller, it names ANONYMOUS for both.
    let (owner_type, owner_name) = match (&r.owner_principal_type, &r.owner_principal_name) {
        (t, Some(n)) if !n.is_empty() && !ctx.forwarded => {
            (t.clone().unwrap_or_default(), n.clone())
        }
        _ => ("User".to_string(), "ANONYMOUS".to_string()),
    };
    let mut reply = CreateDelegationTokenResponse {
        error_code: code.0,
        principal_type: owner_type,
        principal_name: owner_name,
        issue_timestamp_ms: -1,
        expiry_timestamp_ms: -1,
        max_timestamp_ms: -1,
        token_id: String::new(),
        hmac: Vec::new(),
        ..Default::default()
    };
    if v > 2 {
        reply.token_requester_principal_type = "User".into();
        reply.token_requester_principal_name = "ANONYMOUS".into();
    }
    reply
}

/// Renew and Expire answer alike: NOT_CONTROLLER once past the PLAINTEXT check, else
/// Java's refusal with its error timestamp (-1). Returns (error code, expiry timestamp).
fn token_change_answer(ctx: &NonActive) -> (i16, i64) {
    if token_requests_allowed(ctx) {
        (NOT_CONTROLLER, 0)
    } else {
        (ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.0, -1)
    }
}

pub fn renew_delegation_token(
    _r: &RenewDelegationTokenRequest,
    _v: i16,
    ctx: &NonActive,
) -> RenewDelegationTokenResponse {
    let (error_code, expiry_timestamp_ms) = token_change_answer(ctx);
    RenewDelegationTokenResponse {
        error_code,
        expiry_timestamp_ms,
        ..Default::default()
    }
}

pub fn expire_delegation_token(
    _r: &ExpireDelegationTokenRequest,
    _v: i16,
    ctx: &NonActive,
) -> ExpireDelegationTokenResponse {
    let (error_code, expiry_timestamp_ms) = token_change_answer(ctx);
    ExpireDelegationTokenResponse {
        error_code,
        expiry_timestamp_ms,
        ..Default::default()
    }
}

/// Kafka 4.4's `ControllerApis` advertises DescribeDelegationToken but has no handler for it
/// (brokers describe tokens from their own image): "Unsupported ApiKey", answered through the
/// request's error response, UNKNOWN_SERVER_ERROR and no tokens, active or not.
pub fn describe_delegation_token(
    _r: &DescribeDelegationTokenRequest,
    _v: i16,
    _ctx: &NonActive,
) -> DescribeDelegationTokenResponse {
    DescribeDelegationTokenResponse {
        error_code: ErrorCode::UNKNOWN_SERVER_ERROR.0,
        ..Default::default()
    }
}

pub fn alter_client_quotas(
    r: &AlterClientQuotasRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AlterClientQuotasResponse {
    alter_client_quotas_failed(r, NOT_CONTROLLER, NOT_CONTROLLER_TEXT)
}

/// Every entity of `r` refused with `code` and `message`.
pub fn alter_client_quotas_failed(
    r: &AlterClientQuotasRequest,
    code: i16,
    message: &str,
) -> AlterClientQuotasResponse {
    AlterClientQuotasResponse {
        entries: r
            .entries
            .iter()
            .map(|e| quotas::EntryData {
                error_code: code,
                error_message: Some(message.into()),
                entity: e
                    .entity
                    .iter()
                    .map(|d| quotas::EntityData {
                        entity_type: d.entity_type.clone(),
                        entity_name: d.entity_name.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Kafka 4.4's `ControllerApis` advertises DescribeUserScramCredentials but has no handler for
/// it: `handle` throws "Unsupported ApiKey", answered through the request's error response
/// (UNKNOWN_SERVER_ERROR, whose message `ApiError` drops) with one result per user named, its
/// user left empty. Active or not, a controller answers so; brokers describe credentials.
/// Asked for every user (a null list), Java's error response throws (NullPointerException on
/// the null list) and the request is never answered; kraftd answers the error without results.
pub fn describe_user_scram_credentials(
    r: &DescribeUserScramCredentialsRequest,
    _v: i16,
    _ctx: &NonActive,
) -> DescribeUserScramCredentialsResponse {
    let unsupported = ErrorCode::UNKNOWN_SERVER_ERROR.0;
    DescribeUserScramCredentialsResponse {
        error_code: unsupported,
        error_message: None,
        results: r
            .users
            .iter()
            .flatten()
            .map(
                |_| describe_user_scram_credentials_response::DescribeUserScramCredentialsResult {
                    error_code: unsupported,
                    error_message: None,
                    ..Default::default()
                },
            )
            .collect(),
        ..Default::default()
    }
}

pub fn alter_user_scram_credentials(
    r: &AlterUserScramCredentialsRequest,
    _v: i16,
    ctx: &NonActive,
) -> AlterUserScramCredentialsResponse {
    alter_user_scram_credentials_error(r, NOT_CONTROLLER, Some(ctx.message()))
}

/// One result per user, sorted by name (Java collects them into a set), each with the error.
pub fn alter_user_scram_credentials_error(
    r: &AlterUserScramCredentialsRequest,
    code: i16,
    message: Option<String>,
) -> AlterUserScramCredentialsResponse {
    let users: BTreeSet<&str> = r
        .deletions
        .iter()
        .map(|d| d.name.as_str())
        .chain(r.upsertions.iter().map(|u| u.name.as_str()))
        .collect();
    AlterUserScramCredentialsResponse {
        results: users
            .into_iter()
            .map(|user| scram::AlterUserScramCredentialsResult {
                user: user.to_string(),
                error_code: code,
                error_message: message.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
