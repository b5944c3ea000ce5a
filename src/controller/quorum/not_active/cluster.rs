//! Features, broker and controller registration and producer ids as a non-active controller
//! answers them.

use super::*;

pub fn update_features(
    _r: &UpdateFeaturesRequest,
    _v: i16,
    ctx: &NonActive,
) -> UpdateFeaturesResponse {
    UpdateFeaturesResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        ..Default::default()
    }
}

pub fn broker_registration(
    _r: &BrokerRegistrationRequest,
    _v: i16,
    _ctx: &NonActive,
) -> BrokerRegistrationResponse {
    BrokerRegistrationResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}

pub fn broker_heartbeat(
    _r: &BrokerHeartbeatRequest,
    _v: i16,
    _ctx: &NonActive,
) -> BrokerHeartbeatResponse {
    BrokerHeartbeatResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}

pub fn unregister_broker(
    _r: &UnregisterBrokerRequest,
    _v: i16,
    ctx: &NonActive,
) -> UnregisterBrokerResponse {
    // Kafka 4.4 fills in the message here, unlike for the other broker lifecycle APIs.
    UnregisterBrokerResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        ..Default::default()
    }
}

pub fn unregister_controller(
    _r: &UnregisterControllerRequest,
    _v: i16,
    ctx: &NonActive,
) -> UnregisterControllerResponse {
    // Java's `getErrorResponse`: the NotControllerException's code and message.
    UnregisterControllerResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        ..Default::default()
    }
}

pub fn allocate_producer_ids(
    _r: &AllocateProducerIdsRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AllocateProducerIdsResponse {
    AllocateProducerIdsResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}
