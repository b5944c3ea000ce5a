//! The active controller's periodic sweep of expired delegation tokens (Kafka 4.4's
//! `expireDelegationTokens` periodic task, which runs
//! `DelegationTokenControlManager.sweepExpiredDelegationTokens`).
//!
//! Java registers the task whatever the configuration, and activates it with the controller's
//! other periodic tasks once the activation records are written: the first sweep comes one
//! `delegation.token.expiry.check.interval.ms` later, and every sweep schedules the next one
//! interval later, or after the task's immediate period (10 ms) when it hit the
//! per-sweep bound. A sweep looks at wall-clock `now` and writes a `RemoveDelegationTokenRecord`
//! for every token past its max or expiry timestamp, at most 1000 per sweep.

use super::decide::{expired, TokenSettings};
use super::TokensImage;
use crate::controller::ControllerResult;
use crate::protocol::messages::RemoveDelegationTokenRecord;
use crate::protocol::records::MetadataRecordAndVersion;

/// `DelegationTokenControlManager.MAX_RECORDS_PER_EXPIRATION`.
pub const MAX_REMOVALS_PER_SWEEP: usize = 1_000;
/// `PeriodicTask`'s default immediate period: how soon a sweep that hit the bound runs again.
pub const IMMEDIATE_RERUN_MS: u64 = 10;

/// A token a sweep removes, as Java logs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredToken {
    pub token_id: String,
    /// `type:name`.
    pub owner: String,
}

/// What a sweep found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Swept {
    pub expired: Vec<ExpiredToken>,
    /// The bound was hit: more expired tokens may be left (the task runs again at once).
    pub more: bool,
}

/// `sweepExpiredDelegationTokens` at wall-clock `now` (ms) over `tokens`, the tokens of Java's
/// token cache (filled from committed metadata). A controller without a secret has none there:
/// its token publisher cannot compute a token's HMAC, so nothing is ever swept.
pub fn sweep_expired_tokens(
    tokens: &TokensImage,
    settings: &TokenSettings,
    now: i64,
) -> ControllerResult<Swept> {
    let mut swept = Swept::default();
    let mut records = Vec::new();
    if !settings.enabled() {
        return ControllerResult::new(records, swept);
    }
    for (id, token) in tokens.by_id.iter() {
        if !expired(token, now) {
            continue;
        }
        records.push(MetadataRecordAndVersion::new(
            RemoveDelegationTokenRecord {
                token_id: id.clone(),
                ..Default::default()
            },
            0,
        ));
        swept.expired.push(ExpiredToken {
            token_id: id.clone(),
            owner: token.owner.clone(),
        });
        if records.len() >= MAX_REMOVALS_PER_SWEEP {
            swept.more = true;
            break;
        }
    }
    ControllerResult::new(records, swept)
}

/// When the active controller sweeps next: soft state, started afresh at every activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenSweeper {
    interval_ms: u64,
    due_ms: u64,
}

impl TokenSweeper {
    /// A controller active from `now_ms`: the first sweep is one interval later.
    pub fn activate(settings: &TokenSettings, now_ms: u64) -> TokenSweeper {
        let interval_ms = settings.expiry_check_interval_ms.max(1) as u64;
        TokenSweeper {
            interval_ms,
            due_ms: now_ms.saturating_add(interval_ms),
        }
    }

    /// When the next sweep is due (ms).
    pub fn next_due(&self) -> u64 {
        self.due_ms
    }

    /// The sweep, if one is due at `now_ms`; the next one is scheduled as it runs (as Java
    /// reschedules when the task runs, not when its records commit).
    pub fn run(
        &mut self,
        tokens: &TokensImage,
        settings: &TokenSettings,
        now_ms: u64,
    ) -> Option<ControllerResult<Swept>> {
        if now_ms < self.due_ms {
            return None;
        }
        let result = sweep_expired_tokens(tokens, settings, now_ms as i64);
        let wait = if result.reply.more {
            IMMEDIATE_RERUN_MS
        } else {
            self.interval_ms
        };
        self.due_ms = now_ms.saturating_add(wait);
        Some(result)
    }
}
