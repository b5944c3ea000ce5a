//! Producer id blocks: the image (Kafka's `ProducerIdsImage`) and the active controller's
//! decision handing a broker the next block (Kafka's `ProducerIdControlManager`).

use serde_json::{json, Value};

use super::brokers::{check_broker_epoch, BrokerError};
use super::{ControllerResult, MetadataImage};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ProducerIdsRecord;
use crate::protocol::records::MetadataRecordAndVersion;

/// Java's `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`.
pub const BLOCK_SIZE: i32 = 1000;

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

    /// The first id of the next block: Java's empty block starts at 0.
    pub fn next_block_start(&self) -> i64 {
        self.next_producer_id.max(0)
    }
}

/// A block of producer ids handed to a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerIdBlock {
    pub start: i64,
    pub len: i32,
}

/// Why AllocateProducerIds is refused: Java's exception, its code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProducerIdsError {
    /// `checkBrokerEpoch`: unknown broker or another epoch (STALE_BROKER_EPOCH).
    #[error(transparent)]
    Broker(#[from] BrokerError),
    #[error("Exhausted all producerIds as the next block's end producerId has exceeded the int64 type limit")]
    Exhausted,
}

impl ProducerIdsError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ProducerIdsError::Broker(e) => e.error_code(),
            ProducerIdsError::Exhausted => ErrorCode::UNKNOWN_SERVER_ERROR,
        }
    }
}

/// Java's `generateNextProducerId`: the broker must be registered with `broker_epoch` (a
/// fenced broker may allocate too); the next block is read from the latest image, which holds
/// every block handed out, committed or not, so none is handed out twice.
pub fn allocate_producer_ids(
    image: &MetadataImage,
    broker_id: i32,
    broker_epoch: i64,
) -> Result<ControllerResult<ProducerIdBlock>, ProducerIdsError> {
    check_broker_epoch(image, broker_id, broker_epoch)?;
    let start = image.producer_ids.next_block_start();
    if start > i64::MAX - i64::from(BLOCK_SIZE) {
        return Err(ProducerIdsError::Exhausted);
    }
    let record = ProducerIdsRecord {
        broker_id,
        broker_epoch,
        next_producer_id: start + i64::from(BLOCK_SIZE),
        ..Default::default()
    };
    Ok(ControllerResult::new(
        vec![MetadataRecordAndVersion::new(record, 0)],
        ProducerIdBlock {
            start,
            len: BLOCK_SIZE,
        },
    ))
}

#[cfg(test)]
mod tests;
