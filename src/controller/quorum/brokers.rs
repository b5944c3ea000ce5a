//! The broker lifecycle APIs (BrokerRegistration, BrokerHeartbeat, UnregisterBroker), decided
//! by `controller::brokers` against the latest state and answered once their records commit; a
//! controller that is not the active one answers as a non-active Java controller does.

use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController, Then, Write};
use crate::controller::brokers::{self, BrokerError, Expiry, RegistrationContext};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse, UnregisterBrokerRequest, UnregisterBrokerResponse,
};

impl QuorumController {
    pub(super) fn broker_registration(
        &mut self,
        quorum: &dyn QuorumAccess,
        now: u64,
        version: i16,
        request: BrokerRegistrationRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            let r = not_active::broker_registration(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::BrokerRegistration(r));
        }
        let ctx = RegistrationContext {
            cluster_id: self.settings.cluster_id.clone(),
            next_offset: quorum.next_proposal_offset().unwrap_or(-1),
            kraft_version: quorum.kraft_version(),
            clean_shutdown_detection: version >= 3,
            topics: self.settings.topics.clone(),
        };
        let state = self.machine.latest_state();
        let active = self.active.as_mut().expect("acting");
        let decided = brokers::register_broker(state, &mut active.sessions, &ctx, &request, now);
        let result = match decided {
            Ok(result) => result,
            Err(e) => {
                refused("BrokerRegistration", request.broker_id, &e);
                let r = BrokerRegistrationResponse {
                    error_code: e.error_code().0,
                    ..Default::default()
                };
                return Decision::after_pending(ControllerReply::BrokerRegistration(r));
            }
        };
        info!(
            target: "kraftd::controller",
            "registering broker {} (incarnation {}) with epoch {}",
            request.broker_id, request.incarnation_id, result.reply
        );
        Decision::write(
            result,
            |epoch| {
                ControllerReply::BrokerRegistration(BrokerRegistrationResponse {
                    broker_epoch: epoch,
                    ..Default::default()
                })
            },
            ControllerReply::BrokerRegistration(BrokerRegistrationResponse {
                error_code: ErrorCode::NOT_CONTROLLER.0,
                ..Default::default()
            }),
        )
    }

    pub(super) fn broker_heartbeat(
        &mut self,
        quorum: &dyn QuorumAccess,
        now: u64,
        version: i16,
        request: BrokerHeartbeatRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            let r = not_active::broker_heartbeat(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::BrokerHeartbeat(r));
        }
        let broker = request.broker_id;
        let state = self.machine.latest_state();
        let active = self.active.as_mut().expect("acting");
        let topics = &self.settings.topics;
        let result = match brokers::heartbeat(state, topics, &mut active.sessions, &request, now) {
            Ok(result) => result,
            Err(e) => {
                refused("BrokerHeartbeat", broker, &e);
                let r = BrokerHeartbeatResponse {
                    error_code: e.error_code().0,
                    ..Default::default()
                };
                return Decision::after_pending(ControllerReply::BrokerHeartbeat(r));
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
        let decision = Decision::write(
            result,
            |h| {
                ControllerReply::BrokerHeartbeat(BrokerHeartbeatResponse {
                    is_caught_up: h.is_caught_up,
                    is_fenced: h.is_fenced,
                    should_shut_down: h.should_shut_down,
                    ..Default::default()
                })
            },
            ControllerReply::BrokerHeartbeat(BrokerHeartbeatResponse {
                error_code: ErrorCode::NOT_CONTROLLER.0,
                ..Default::default()
            }),
        );
        if entering_shutdown {
            decision.then(Then::ControlledShutdown { broker })
        } else {
            decision
        }
    }

    pub(super) fn unregister_broker(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: UnregisterBrokerRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            let r = not_active::unregister_broker(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::UnregisterBroker(r));
        }
        let broker = request.broker_id;
        let state = self.machine.latest_state();
        let result = match brokers::unregister_broker(state, &self.settings.topics, broker) {
            Ok(result) => result,
            Err(e) => {
                refused("UnregisterBroker", broker, &e);
                let r = UnregisterBrokerResponse {
                    error_code: e.error_code().0,
                    error_message: Some(e.to_string()),
                    ..Default::default()
                };
                return Decision::after_pending(ControllerReply::UnregisterBroker(r));
            }
        };
        info!(target: "kraftd::controller", "unregistering broker {broker}");
        log_partition_changes(broker, &result.records);
        if let Some(a) = self.active.as_mut() {
            a.sessions.remove(broker);
        }
        let message = self.non_active(quorum).message();
        Decision::write(
            result,
            |()| ControllerReply::UnregisterBroker(UnregisterBrokerResponse::default()),
            ControllerReply::UnregisterBroker(UnregisterBrokerResponse {
                error_code: ErrorCode::NOT_CONTROLLER.0,
                error_message: Some(message),
                ..Default::default()
            }),
        )
    }

    /// Fences a broker whose session expired (Java's periodic `maybeFenceStaleBroker`).
    pub(super) fn fence_stale_broker(&mut self, now: u64) -> Option<Write> {
        loop {
            let image = self.machine.image();
            let active = self.active.as_mut()?;
            match brokers::expire_one(image, &self.settings.topics, &mut active.sessions, now) {
                Expiry::None => return None,
                Expiry::Dropped { broker, epoch } => info!(
                    target: "kraftd::controller",
                    "Removing heartbeat tracker entry for broker {broker} at epoch {epoch}: no longer its registration"
                ),
                Expiry::Fence {
                    broker,
                    epoch,
                    result,
                } => {
                    info!(
                        target: "kraftd::controller",
                        "Fencing broker {broker} at epoch {epoch} because its session has timed out."
                    );
                    log_partition_changes(broker, &result.records);
                    return Some(Write::periodic(result.records, None));
                }
            }
        }
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
