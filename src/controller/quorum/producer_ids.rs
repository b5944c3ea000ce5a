//! AllocateProducerIds: the controller hands the broker the next block
//! of producer ids (`controller::producer_ids`) against the latest state, and the block is
//! answered once its `ProducerIdsRecord` commits (`NOT_CONTROLLER` if leadership is lost
//! first, and a later leader hands the block out again, never having answered it).

use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::producer_ids::allocate_producer_ids;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{AllocateProducerIdsRequest, AllocateProducerIdsResponse};

impl QuorumController {
    pub(super) fn allocate_producer_ids(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AllocateProducerIdsRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            let r = not_active::allocate_producer_ids(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::AllocateProducerIds(r));
        }
        let (broker, epoch) = (request.broker_id, request.broker_epoch);
        let result = match allocate_producer_ids(self.machine.image(), broker, epoch) {
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
                return Decision::Answer(ControllerReply::AllocateProducerIds(r));
            }
        };
        info!(
            target: "kraftd::controller",
            "broker {broker} (epoch {epoch}) gets producer ids [{}, {})",
            result.reply.start,
            result.reply.start + i64::from(result.reply.len)
        );
        Decision::write(
            result,
            |block| {
                ControllerReply::AllocateProducerIds(AllocateProducerIdsResponse {
                    producer_id_start: block.start,
                    producer_id_len: block.len,
                    ..Default::default()
                })
            },
            ControllerReply::AllocateProducerIds(AllocateProducerIdsResponse {
                error_code: ErrorCode::NOT_CONTROLLER.0,
                ..Default::default()
            }),
        )
    }
}
