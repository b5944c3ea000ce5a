//! The node loop's side of AllocateProducerIds: the controller hands the broker the next block
//! of producer ids (`controller::producer_ids`) against the latest state, and the block is
//! answered once its `ProducerIdsRecord` commits (`NOT_CONTROLLER` if leadership is lost
//! first, and a later leader hands the block out again, never having answered it).

use tokio::sync::oneshot;
use tracing::{info, warn};

use super::runner::NodeLoop;
use crate::controller::producer_ids::allocate_producer_ids;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{AllocateProducerIdsRequest, AllocateProducerIdsResponse};
use crate::raft::{FatalError, Instant, QuorumStateStore, RaftLog};
use crate::server::api::not_controller;
use crate::server::api::NodeResponse;

type Reply = oneshot::Sender<NodeResponse>;

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    pub(super) fn allocate_producer_ids(
        &mut self,
        now: Instant,
        version: i16,
        request: AllocateProducerIdsRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        if !self.acting() {
            let r = not_controller::allocate_producer_ids(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::AllocateProducerIds(r));
            return Ok(());
        }
        let (broker, epoch) = (request.broker_id, request.broker_epoch);
        let result = match allocate_producer_ids(self.controller.image(), broker, epoch) {
            Ok(result) => result,
            Err(e) => {
                warn!(
                    target: "kraftd::controller",
                    "AllocateProducerIds from broker {broker} (epoch {epoch}) refused with {}: {e}",
                    e.error_code().name()
                );
                // Java completes a decision that throws at once; the response has no message.
                let r = AllocateProducerIdsResponse {
                    error_code: e.error_code().0,
                    ..Default::default()
                };
                let _ = reply.send(NodeResponse::AllocateProducerIds(r));
                return Ok(());
            }
        };
        info!(
            target: "kraftd::controller",
            "broker {broker} (epoch {epoch}) gets producer ids [{}, {})",
            result.reply.start,
            result.reply.start + i64::from(result.reply.len)
        );
        self.submit(now, result, move |outcome| {
            let r = match outcome {
                Ok(block) => AllocateProducerIdsResponse {
                    producer_id_start: block.start,
                    producer_id_len: block.len,
                    ..Default::default()
                },
                Err(_) => AllocateProducerIdsResponse {
                    error_code: ErrorCode::NOT_CONTROLLER.0,
                    ..Default::default()
                },
            };
            let _ = reply.send(NodeResponse::AllocateProducerIds(r));
        })?;
        Ok(())
    }
}
