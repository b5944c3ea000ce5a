//! The node loop's side of the broker lifecycle APIs (BrokerRegistration, BrokerHeartbeat,
//! UnregisterBroker): the request is decided by the controller (`controller::brokers`) and
//! carried through the pipeline; a node that is not the active controller answers as a Java
//! controller that is not active does.

use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use tokio::sync::oneshot;
use tracing::{info, warn};

use super::runner::NodeLoop;
use crate::controller::brokers::{self, BrokerError, RegistrationContext};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse, UnregisterBrokerRequest, UnregisterBrokerResponse,
};
use crate::raft::{FatalError, Instant, QuorumStateStore, RaftLog};
use crate::server::api::not_controller::{self, NonActive};
use crate::server::api::NodeResponse;

type Reply = oneshot::Sender<NodeResponse>;

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    /// What a non-active controller answers with.
    pub(super) fn non_active(&self) -> NonActive {
        let own = self.ctx.node_id;
        NonActive {
            active_elsewhere: self.raft.leader_id().filter(|&l| l != own),
            delete_topic_enable: self.ctx.delete_topic_enable,
            forwarded: false,
        }
    }

    pub(super) fn broker_registration(
        &mut self,
        now: Instant,
        version: i16,
        request: BrokerRegistrationRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        if !self.acting() {
            let r = not_controller::broker_registration(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::BrokerRegistration(r));
            return Ok(());
        }
        let ctx = RegistrationContext {
            cluster_id: self.settings.raft.cluster_id.clone(),
            next_offset: self.raft.next_proposal_offset().unwrap_or(-1),
            kraft_version: self.raft.kraft_version(),
            clean_shutdown_detection: version >= 3,
            topics: self.settings.topics.clone(),
        };
        let state = self.controller.latest_state();
        let active = self.pipeline.active.as_mut().expect("acting");
        let decided = brokers::register_broker(state, &mut active.sessions, &ctx, &request, now.0);
        let result = match decided {
            Ok(result) => result,
            Err(e) => {
                refused("BrokerRegistration", request.broker_id, &e);
                let r = BrokerRegistrationResponse {
                    error_code: e.error_code().0,
                    ..Default::default()
                };
                return self.answer_after_pending(now, reply, NodeResponse::BrokerRegistration(r));
            }
        };
        info!(
            target: "kraftd::controller",
            "registering broker {} (incarnation {}) with epoch {}",
            request.broker_id, request.incarnation_id, result.reply
        );
        self.submit(now, result, move |outcome| {
            let r = match outcome {
                Ok(epoch) => BrokerRegistrationResponse {
                    broker_epoch: epoch,
                    ..Default::default()
                },
                Err(_) => BrokerRegistrationResponse {
                    error_code: ErrorCode::NOT_CONTROLLER.0,
                    ..Default::default()
                },
            };
            let _ = reply.send(NodeResponse::BrokerRegistration(r));
        })?;
        Ok(())
    }

    pub(super) fn broker_heartbeat(
        &mut self,
        now: Instant,
        version: i16,
        request: BrokerHeartbeatRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        if !self.acting() {
            let r = not_controller::broker_heartbeat(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::BrokerHeartbeat(r));
            return Ok(());
        }
        let broker = request.broker_id;
        let state = self.controller.latest_state();
        let active = self.pipeline.active.as_mut().expect("acting");
        let topics = &self.settings.topics;
        let result = match brokers::heartbeat(state, topics, &mut active.sessions, &request, now.0)
        {
            Ok(result) => result,
            Err(e) => {
                refused("BrokerHeartbeat", broker, &e);
                let r = BrokerHeartbeatResponse {
                    error_code: e.error_code().0,
                    ..Default::default()
                };
                return self.answer_after_pending(now, reply, NodeResponse::BrokerHeartbeat(r));
            }
        };
        let entering_shutdown = result.reply.in_controlled_shutdown;
        if !result.records.is_empty() {
            let r = result.reply;
            info!(
                target: "kraftd::controller",
                "broker {broker}: heartbeat (offset {}, wantFence {}, wantShutDown {}) -> fenced {}, \
                 controlled shutdown {}, shut down {}",
                request.current_metadata_offset, request.want_fence, request.want_shut_down,
                r.is_fenced, r.in_controlled_shutdown, r.should_shut_down
            );
            log_partition_changes(broker, &result.records);
        }
        let landed = self.submit(now, result, move |outcome| {
            let r = match outcome {
                Ok(h) => BrokerHeartbeatResponse {
                    is_caught_up: h.is_caught_up,
                    is_fenced: h.is_fenced,
                    should_shut_down: h.should_shut_down,
                    ..Default::default()
                },
                Err(_) => BrokerHeartbeatResponse {
                    error_code: ErrorCode::NOT_CONTROLLER.0,
                    ..Default::default()
                },
            };
            let _ = reply.send(NodeResponse::BrokerHeartbeat(r));
        })?;
        if entering_shutdown {
            // Java's `processBatchEndOffset`: where the records of this decision end.
            let end = landed.map_or(self.controller.last_applied(), |p| p.last_offset);
            if let Some(a) = self.pipeline.active.as_mut() {
                a.sessions.controlled_shutdown_written(broker, end);
            }
        }
        Ok(())
    }

    pub(super) fn unregister_broker(
        &mut self,
        now: Instant,
        version: i16,
        request: UnregisterBrokerRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        if !self.acting() {
            let r = not_controller::unregister_broker(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::UnregisterBroker(r));
            return Ok(());
        }
        let broker = request.broker_id;
        let state = self.controller.latest_state();
        let result = match brokers::unregister_broker(state, &self.settings.topics, broker) {
            Ok(result) => result,
            Err(e) => {
                refused("UnregisterBroker", broker, &e);
                let r = UnregisterBrokerResponse {
                    error_code: e.error_code().0,
                    error_message: Some(e.to_string()),
                    ..Default::default()
                };
                return self.answer_after_pending(now, reply, NodeResponse::UnregisterBroker(r));
            }
        };
        info!(target: "kraftd::controller", "unregistering broker {broker}");
        log_partition_changes(broker, &result.records);
        if let Some(a) = self.pipeline.active.as_mut() {
            a.sessions.remove(broker);
        }
        let message = self.non_active().message();
        self.submit(now, result, move |outcome| {
            let r = match outcome {
                Ok(()) => UnregisterBrokerResponse::default(),
                Err(_) => UnregisterBrokerResponse {
                    error_code: ErrorCode::NOT_CONTROLLER.0,
                    error_message: Some(message),
                    ..Default::default()
                },
            };
            let _ = reply.send(NodeResponse::UnregisterBroker(r));
        })?;
        Ok(())
    }

    /// An error answer, released like any reply without records: after the records written
    /// before it commit (its decision read them); `NOT_CONTROLLER` if they never do.
    pub(super) fn answer_after_pending(
        &mut self,
        now: Instant,
        reply: Reply,
        response: NodeResponse,
    ) -> Result<(), FatalError> {
        self.submit(
            now,
            crate::controller::ControllerResult::reply_only(()),
            move |outcome| {
                let _ = reply.send(match outcome {
                    Ok(()) => response,
                    Err(_) => response.with_error(ErrorCode::NOT_CONTROLLER),
                });
            },
        )?;
        Ok(())
    }
}

/// One line for the partitions a broker's change moves (Java's "changing N partition(s)").
pub(super) fn log_partition_changes(broker: i32, records: &[MetadataRecordAndVersion]) {
    let changed = records
        .iter()
        .filter(|r| matches!(r.record, MetadataRecord::PartitionChange(_)))
        .count();
    if changed > 0 {
        info!(
            target: "kraftd::controller",
            "broker {broker}: changing leadership or ISR of {changed} partition(s)"
        );
    }
}

/// One line per refused request, naming the broker and Java's reason.
fn refused(api: &str, broker: i32, e: &BrokerError) {
    warn!(
        target: "kraftd::controller",
        "{api} from broker {broker} refused with {}: {e}",
        e.error_code().name()
    );
}
