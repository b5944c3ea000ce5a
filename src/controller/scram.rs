//! SCRAM credentials by mechanism and user (Kafka's `ScramImage`), and the active
//! controller's AlterUserScramCredentials decision (`alter`) with the keys it derives (`keys`).

pub mod alter;
pub mod keys;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Value};

use super::json::bytes;
use crate::protocol::messages::UserScramCredentialRecord;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramCredential {
    pub salt: Vec<u8>,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
    pub iterations: i32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScramImage {
    /// By (mechanism type code, user name).
    pub credentials: OrdMap<(i8, String), Arc<ScramCredential>>,
}

impl ScramImage {
    pub fn replay(&mut self, r: &UserScramCredentialRecord) {
        let c = ScramCredential {
            salt: r.salt.clone(),
            stored_key: r.stored_key.clone(),
            server_key: r.server_key.clone(),
            iterations: r.iterations,
        };
        self.credentials
            .insert((r.mechanism, r.name.clone()), Arc::new(c));
    }

    /// Removing a credential that is not there changes nothing, as in Java.
    pub fn replay_remove(&mut self, mechanism: i8, name: &str) {
        self.credentials.remove(&(mechanism, name.to_string()));
    }

    pub fn to_json(&self) -> Value {
        let mut by_mechanism = serde_json::Map::new();
        for ((mechanism, user), c) in &self.credentials {
            let users = by_mechanism
                .entry(mechanism.to_string())
                .or_insert_with(|| Value::Object(Default::default()));
            let v = json!({
                "salt": bytes(&c.salt),
                "storedKey": bytes(&c.stored_key),
                "serverKey": bytes(&c.server_key),
                "iterations": c.iterations,
            });
            users
                .as_object_mut()
                .expect("inserted as an object")
                .insert(user.clone(), v);
        }
        Value::Object(by_mechanism)
    }
}
