//! The next producer id block (Kafka's `ProducerIdsImage`).

use serde_json::{json, Value};

use crate::protocol::messages::ProducerIdsRecord;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerIdsImage {
    /// The first id of the next block to hand out (-1: none handed out yet).
    pub next_producer_id: i64,
}

impl Default for ProducerIdsImage {
    fn default() -> Self {
        ProducerIdsImage {
            next_producer_id: -1,
        }
    }
}

impl ProducerIdsImage {
    pub fn replay(&mut self, r: &ProducerIdsRecord) {
        self.next_producer_id = r.next_producer_id;
    }

    pub fn to_json(&self) -> Value {
        json!({"nextProducerId": self.next_producer_id})
    }
}
