//! The active controller's delegation-token decisions (Kafka's `DelegationTokenControlManager`):
//! create, renew and expire, checked in Java's order. Tokens are found by their HMAC
//! (HMAC-SHA512 of the token id, keyed with `delegation.token.secret.key`), among the tokens
//! of the image Java's token cache mirrors. The responses carry codes only, no messages.

use std::fmt;

use hmac::{Mac, SimpleHmac};
use sha2::Sha512;

use super::{DelegationToken, TokensImage};
use crate::controller::java::JavaRandom;
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{DelegationTokenRecord, RemoveDelegationTokenRecord};
use crate::protocol::records::MetadataRecordAndVersion;

/// `DelegationTokenManagerConfigs.DELEGATION_TOKEN_MAX_LIFE_TIME_MS_DEFAULT` (7 days).
pub const DEFAULT_MAX_LIFETIME_MS: i64 = 604_800_000;
/// `DELEGATION_TOKEN_EXPIRY_TIME_MS_DEFAULT` (1 day).
pub const DEFAULT_EXPIRY_TIME_MS: i64 = 86_400_000;
/// `DELEGATION_TOKEN_EXPIRY_CHECK_INTERVAL_MS_DEFAULT` (1 hour).
pub const DEFAULT_EXPIRY_CHECK_INTERVAL_MS: i64 = 3_600_000;

/// The controller's token configuration.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSettings {
    /// `delegation.token.secret.key`; unset or empty disables tokens (as `ControllerServer`
    /// passes null then).
    pub secret_key: Option<String>,
    /// `delegation.token.max.lifetime.ms`.
    pub max_lifetime_ms: i64,
    /// `delegation.token.expiry.time.ms`: the renew period.
    pub expiry_time_ms: i64,
    /// `delegation.token.expiry.check.interval.ms`: how often the active controller sweeps
    /// expired tokens.
    pub expiry_check_interval_ms: i64,
}

impl Default for TokenSettings {
    fn default() -> TokenSettings {
        TokenSettings {
            secret_key: None,
            max_lifetime_ms: DEFAULT_MAX_LIFETIME_MS,
            expiry_time_ms: DEFAULT_EXPIRY_TIME_MS,
            expiry_check_interval_ms: DEFAULT_EXPIRY_CHECK_INTERVAL_MS,
        }
    }
}

/// Never prints the secret.
impl fmt::Debug for TokenSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSettings")
            .field("secret_key", &self.secret_key.as_ref().map(|_| "[hidden]"))
            .field("max_lifetime_ms", &self.max_lifetime_ms)
            .field("expiry_time_ms", &self.expiry_time_ms)
            .field("expiry_check_interval_ms", &self.expiry_check_interval_ms)
            .finish()
    }
}

impl TokenSettings {
    /// `DelegationTokenManager.createHmac`: HMAC-SHA512 of the token id, keyed with the secret.
    pub fn hmac(&self, token_id: &str) -> Option<Vec<u8>> {
        let key = self.secret_key.as_deref().filter(|k| !k.is_empty())?;
        let mut mac = SimpleHmac::<Sha512>::new_from_slice(key.as_bytes()).ok()?;
        mac.update(token_id.as_bytes());
        Some(mac.finalize().into_bytes().to_vec())
    }

    pub(super) fn enabled(&self) -> bool {
        self.secret_key.as_deref().is_some_and(|k| !k.is_empty())
    }
}

/// A `KafkaPrincipal`: type and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub principal_type: String,
    pub name: String,
}

impl Principal {
    pub fn new(principal_type: &str, name: &str) -> Principal {
        Principal {
            principal_type: principal_type.to_string(),
            name: name.to_string(),
        }
    }
}

/// `type:name`, as records store principals.
impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

/// Why a token request is refused (the responses carry only the code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("delegation tokens are disabled (no delegation.token.secret.key)")]
    AuthDisabled,
    #[error("the metadata.version does not support delegation tokens")]
    UnsupportedVersion,
    #[error("a renewer's principal type is not User")]
    InvalidPrincipalType,
    #[error("no token has this HMAC")]
    NotFound,
    #[error("the principal is neither the token's owner nor one of its renewers")]
    OwnerMismatch,
    #[error("the token has expired")]
    Expired,
}

impl TokenError {
    pub fn error_code(self) -> ErrorCode {
        match self {
            TokenError::AuthDisabled => ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED,
            TokenError::UnsupportedVersion => ErrorCode::UNSUPPORTED_VERSION,
            TokenError::InvalidPrincipalType => ErrorCode::INVALID_PRINCIPAL_TYPE,
            TokenError::NotFound => ErrorCode::DELEGATION_TOKEN_NOT_FOUND,
            TokenError::OwnerMismatch => ErrorCode::DELEGATION_TOKEN_OWNER_MISMATCH,
            TokenError::Expired => ErrorCode::DELEGATION_TOKEN_EXPIRED,
        }
    }
}

/// A CreateDelegationToken as the controller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTokenRequest {
    /// The request's owner, or the requester when it names none.
    pub owner: Principal,
    pub requester: Principal,
    /// (type, name) as sent.
    pub renewers: Vec<(String, String)>,
    pub max_lifetime_ms: i64,
}

/// A created token, as the response describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedToken {
    pub token_id: String,
    pub hmac: Vec<u8>,
    pub issue_timestamp: i64,
    pub expiry_timestamp: i64,
    pub max_timestamp: i64,
}

/// Java's overflow-safe `sum`.
fn sum(now: i64, duration: i64) -> i64 {
    if now > i64::MAX.wrapping_sub(duration) {
        i64::MAX
    } else {
        now.wrapping_add(duration)
    }
}

fn gate(settings: &TokenSettings, mv: MetadataVersion) -> Result<(), TokenError> {
    if !settings.enabled() {
        return Err(TokenError::AuthDisabled);
    }
    if !mv.is_delegation_token_supported() {
        return Err(TokenError::UnsupportedVersion);
    }
    Ok(())
}

fn token_record(id: &str, t: &DelegationToken, expiry: i64) -> MetadataRecordAndVersion {
    let record = DelegationTokenRecord {
        owner: t.owner.clone(),
        requester: t.requester.clone(),
        renewers: t.renewers.clone(),
        issue_timestamp: t.issue_timestamp,
        max_timestamp: t.max_timestamp,
        expiration_timestamp: expiry,
        token_id: id.to_string(),
        ..Default::default()
    };
    MetadataRecordAndVersion::new(record, 0)
}

/// `createDelegationToken` at wall-clock `now` (ms); the token id is drawn from `ids`.
pub fn create_token(
    settings: &TokenSettings,
    mv: MetadataVersion,
    request: &NewTokenRequest,
    now: i64,
    ids: &mut JavaRandom,
) -> ControllerResult<Result<CreatedToken, TokenError>> {
    let refused = |e| ControllerResult::new(Vec::new(), Err(e));
    if let Err(e) = gate(settings, mv) {
        return refused(e);
    }
    let mut max_lifetime = settings.max_lifetime_ms;
    if request.max_lifetime_ms > 0 {
        max_lifetime = max_lifetime.min(request.max_lifetime_ms);
    }
    let max_timestamp = sum(now, max_lifetime);
    let expiry_timestamp = max_timestamp.min(sum(now, settings.expiry_time_ms));
    // Java draws the id before it looks at the renewers.
    let token_id = ids.uuid().to_string();
    if request.renewers.iter().any(|(t, _)| t != "User") {
        return refused(TokenError::InvalidPrincipalType);
    }
    let hmac = settings.hmac(&token_id).expect("enabled");
    let token = DelegationToken {
        owner: request.owner.to_string(),
        requester: request.requester.to_string(),
        renewers: request
            .renewers
            .iter()
            .map(|(t, n)| format!("{t}:{n}"))
            .collect(),
        issue_timestamp: now,
        max_timestamp,
        expiry_timestamp,
    };
    let record = token_record(&token_id, &token, expiry_timestamp);
    ControllerResult::new(
        vec![record],
        Ok(CreatedToken {
            token_id,
            hmac,
            issue_timestamp: now,
            expiry_timestamp,
            max_timestamp,
        }),
    )
}

/// `getToken`: the token whose HMAC is `hmac`.
fn find<'a>(
    tokens: &'a TokensImage,
    settings: &TokenSettings,
    hmac: &[u8],
) -> Option<(&'a String, &'a DelegationToken)> {
    tokens
        .by_id
        .iter()
        .find(|(id, _)| settings.hmac(id).as_deref() == Some(hmac))
        .map(|(id, t)| (id, t.as_ref()))
}

/// `allowedToRenew`: the owner or a renewer.
fn may_renew(t: &DelegationToken, principal: &Principal) -> bool {
    let p = principal.to_string();
    t.owner == p || t.renewers.contains(&p)
}

/// Past its max or its expiry (both strictly).
pub(super) fn expired(t: &DelegationToken, now: i64) -> bool {
    t.max_timestamp < now || t.expiry_timestamp < now
}

/// `renewDelegationToken`: the new expiry timestamp.
pub fn renew_token(
    tokens: &TokensImage,
    settings: &TokenSettings,
    mv: MetadataVersion,
    principal: &Principal,
    hmac: &[u8],
    renew_period_ms: i64,
    now: i64,
) -> ControllerResult<Result<i64, TokenError>> {
    let refused = |e| ControllerResult::new(Vec::new(), Err(e));
    if let Err(e) = gate(settings, mv) {
        return refused(e);
    }
    let Some((id, token)) = find(tokens, settings, hmac) else {
        return refused(TokenError::NotFound);
    };
    if expired(token, now) {
        return refused(TokenError::Expired);
    }
    if !may_renew(token, principal) {
        return refused(TokenError::OwnerMismatch);
    }
    let mut renew_lifetime = settings.expiry_time_ms;
    if renew_period_ms > 0 {
        renew_lifetime = renew_lifetime.min(renew_period_ms);
    }
    // Java adds without its overflow guard here.
    let expiry = token.max_timestamp.min(now.wrapping_add(renew_lifetime));
    ControllerResult::new(vec![token_record(id, token, expiry)], Ok(expiry))
}

/// `expireDelegationToken`: the new expiry timestamp; a negative period removes the token.
pub fn expire_token(
    tokens: &TokensImage,
    settings: &TokenSettings,
    mv: MetadataVersion,
    principal: &Principal,
    hmac: &[u8],
    expiry_time_period_ms: i64,
    now: i64,
) -> ControllerResult<Result<i64, TokenError>> {
    let refused = |e| ControllerResult::new(Vec::new(), Err(e));
    if let Err(e) = gate(settings, mv) {
        return refused(e);
    }
    let Some((id, token)) = find(tokens, settings, hmac) else {
        return refused(TokenError::NotFound);
    };
    if !may_renew(token, principal) {
        return refused(TokenError::OwnerMismatch);
    }
    if expiry_time_period_ms < 0 {
        let record = RemoveDelegationTokenRecord {
            token_id: id.clone(),
            ..Default::default()
        };
        return ControllerResult::new(vec![MetadataRecordAndVersion::new(record, 0)], Ok(now));
    }
    if expired(token, now) {
        return refused(TokenError::Expired);
    }
    let expiry = token.max_timestamp.min(sum(now, expiry_time_period_ms));
    ControllerResult::new(vec![token_record(id, token, expiry)], Ok(expiry))
}
