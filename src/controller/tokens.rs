//! Delegation tokens by id (Kafka's `DelegationTokenImage`), the active controller's token
//! decisions (`decide`) and its periodic sweep of expired tokens (`sweep`).

pub mod decide;
pub mod sweep;
#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Value};

use crate::protocol::messages::DelegationTokenRecord;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegationToken {
    pub owner: String,
    pub requester: String,
    pub renewers: Vec<String>,
    pub issue_timestamp: i64,
    pub max_timestamp: i64,
    pub expiry_timestamp: i64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokensImage {
    pub by_id: OrdMap<String, Arc<DelegationToken>>,
}

impl TokensImage {
    pub fn replay(&mut self, r: &DelegationTokenRecord) {
        let t = DelegationToken {
            owner: r.owner.clone(),
            requester: r.requester.clone(),
            renewers: r.renewers.clone(),
            issue_timestamp: r.issue_timestamp,
            max_timestamp: r.max_timestamp,
            expiry_timestamp: r.expiration_timestamp,
        };
        self.by_id.insert(r.token_id.clone(), Arc::new(t));
    }

    pub fn replay_remove(&mut self, token_id: &str) {
        self.by_id.remove(token_id);
    }

    pub fn to_json(&self) -> Value {
        self.by_id
            .iter()
            .map(|(id, t)| {
                let v = json!({
                    "owner": t.owner,
                    "requester": t.requester,
                    "renewers": t.renewers,
                    "issueTimestamp": t.issue_timestamp,
                    "maxTimestamp": t.max_timestamp,
                    "expiryTimestamp": t.expiry_timestamp,
                });
                (id.clone(), v)
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}
