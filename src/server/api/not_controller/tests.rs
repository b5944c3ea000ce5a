//! Java's non-active answers, one behaviour at a time. The answers are compared with a real
//! Java controller's in the compat suite (`compat/tests/not_controller.rs`).

use super::samples::{envelope, sample_request};
use super::*;
use crate::protocol::codec::Uuid;
use crate::protocol::frame::encode_request;
use crate::protocol::messages::{
    CreateDelegationTokenRequest, EnvelopeRequest, EnvelopeResponse, RequestHeader,
};

fn follower() -> NonActive {
    NonActive {
        active_elsewhere: Some(3),
        delete_topic_enable: true,
        forwarded: false,
    }
}

fn json(key: i16, version: i16, body: &[u8]) -> serde_json::Value {
    response_json(key, version, body).unwrap().unwrap()
}

#[test]
fn every_api_at_every_version_answers_not_controller_or_a_check_java_makes_first() {
    for api in CONTROLLER_APIS {
        for v in api.min_version..=api.max_version {
            let body = sample_request(api.key, v, "t1", Uuid([9; 16]))
                .unwrap()
                .unwrap();
            let a = answer(api.key, v, &body, &follower()).unwrap().unwrap();
            let reply = json(api.key, v, &a.body);
            let expected = match api.key {
                // Without an authorizer Java answers SECURITY_DISABLED before anything else.
                29..=31 => ErrorCode::SECURITY_DISABLED,
                // Token requests straight over PLAINTEXT are refused before the controller.
                38..=40 => ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                // A 4.4 controller has no handler for these, active or not.
                41 | 50 => ErrorCode::UNKNOWN_SERVER_ERROR,
                _ => ErrorCode::NOT_CONTROLLER,
            };
            assert!(reports(&reply, expected), "{} v{v}: {reply}", api.name);
            assert_eq!(
                a.not_controller,
                expected == ErrorCode::NOT_CONTROLLER,
                "{} v{v}",
                api.name
            );
        }
    }
}

#[test]
fn the_message_names_the_leader_as_java_does() {
    let body = sample_request(19, 7, "orders", Uuid::ZERO)
        .unwrap()
        .unwrap();
    let a = answer(19, 7, &body, &follower()).unwrap().unwrap();
    let reply = json(19, 7, &a.body);
    assert_eq!(reply["topics"][0]["name"], "orders");
    assert_eq!(
        reply["topics"][0]["errorMessage"],
        "The active controller appears to be node 3."
    );
    let none = NonActive {
        active_elsewhere: None,
        ..follower()
    };
    let a = answer(19, 7, &body, &none).unwrap().unwrap();
    assert_eq!(
        json(19, 7, &a.body)["topics"][0]["errorMessage"],
        "No controller appears to be active."
    );
}

#[test]
fn empty_requests_are_answered_without_asking_for_the_active_controller() {
    // Java's quorum controller completes these at once, active or not.
    for key in [19, 20, 37, 43, 44, 33, 45, 49, 51, 56] {
        let api = CONTROLLER_APIS.iter().find(|a| a.key == key).unwrap();
        let v = api.max_version;
        let body = match key {
            // An empty election list (not null: null means every partition).
            43 => crate::protocol::messages::ElectLeadersRequest {
                topic_partitions: Some(vec![]),
                ..Default::default()
            }
            .encode_to_vec(v)
            .unwrap(),
            _ => default_body(key, v),
        };
        let a = answer(key, v, &body, &follower()).unwrap().unwrap();
        assert!(
            !a.not_controller,
            "{} v{v}: {}",
            api.name,
            json(key, v, &a.body)
        );
    }
}

fn default_body(key: i16, v: i16) -> Vec<u8> {
    use crate::protocol::messages::*;
    match key {
        19 => CreateTopicsRequest::default().encode_to_vec(v),
        20 => DeleteTopicsRequest::default().encode_to_vec(v),
        33 => AlterConfigsRequest::default().encode_to_vec(v),
        37 => CreatePartitionsRequest::default().encode_to_vec(v),
        44 => IncrementalAlterConfigsRequest::default().encode_to_vec(v),
        45 => AlterPartitionReassignmentsRequest::default().encode_to_vec(v),
        49 => AlterClientQuotasRequest::default().encode_to_vec(v),
        51 => AlterUserScramCredentialsRequest::default().encode_to_vec(v),
        56 => AlterPartitionRequest::default().encode_to_vec(v),
        _ => unreachable!(),
    }
    .unwrap()
}

#[test]
fn duplicates_and_the_metadata_topic_are_refused_before_the_controller() {
    use crate::protocol::messages::create_topics_request::CreatableTopic;
    let topic = |name: &str| CreatableTopic {
        name: name.into(),
        num_partitions: 1,
        replication_factor: 1,
        ..Default::default()
    };
    let request = crate::protocol::messages::CreateTopicsRequest {
        topics: vec![topic("a"), topic("a"), topic("__cluster_metadata")],
        ..Default::default()
    };
    let body = request.encode_to_vec(7).unwrap();
    let a = answer(19, 7, &body, &follower()).unwrap().unwrap();
    let reply = json(19, 7, &a.body);
    assert!(!a.not_controller, "{reply}");
    let codes: Vec<_> = reply["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["errorCode"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            ("a".to_string(), 42),
            ("__cluster_metadata".to_string(), 42)
        ]
    );
}

#[test]
fn topic_deletion_disabled_is_reported_before_the_controller() {
    let ctx = NonActive {
        delete_topic_enable: false,
        ..follower()
    };
    for (v, code) in [
        (2, ErrorCode::INVALID_REQUEST),
        (6, ErrorCode::TOPIC_DELETION_DISABLED),
    ] {
        let body = sample_request(20, v, "t", Uuid::ZERO).unwrap().unwrap();
        let a = answer(20, v, &body, &ctx).unwrap().unwrap();
        assert!(reports(&json(20, v, &a.body), code), "v{v}");
    }
}

fn inner_frame(key: i16, version: i16, body: Vec<u8>) -> Vec<u8> {
    let framed = encode_request(
        key,
        version,
        41,
        Some("broker-101"),
        &crate::protocol::codec::RawBody(body),
    )
    .unwrap();
    framed[4..].to_vec()
}

#[test]
fn a_forwarded_request_answered_not_controller_becomes_an_envelope_not_controller() {
    // A forwarded CreateDelegationToken past the PLAINTEXT check, answered by a node that is
    // not active (`not_controller::create_delegation_token`), fails the Envelope as a whole.
    let inner = sample_request(38, 3, "t", Uuid::ZERO).unwrap().unwrap();
    let request = CreateDelegationTokenRequest::decode_exact(&inner, 3).unwrap();
    let forwarded = NonActive {
        forwarded: true,
        ..follower()
    };
    let reply = create_delegation_token(&request, 3, &forwarded);
    assert_eq!(reply.error_code, ErrorCode::NOT_CONTROLLER.0);
    let outer = crate::server::api::Enveloped {
        version: 0,
        correlation_id: 7,
    };
    let answer = crate::server::api::ControllerReply::CreateDelegationToken(Box::new(reply));
    let crate::server::api::Outcome::Respond(bytes) =
        crate::server::api::answer_reply(&answer, 38, 3, 41, Some(outer))
    else {
        panic!("not answered");
    };
    let mut reader = crate::protocol::codec::Reader::new(&bytes[4..]);
    let header = crate::protocol::messages::ResponseHeader::decode(&mut reader, 1).unwrap();
    assert_eq!(header.correlation_id, 7);
    let r = EnvelopeResponse::decode_exact(reader.rest(), 0).unwrap();
    assert_eq!(r.error_code, ErrorCode::NOT_CONTROLLER.0);
    assert_eq!(r.response_data, None);
}

#[test]
fn a_forwarded_acl_request_goes_to_the_node_with_the_envelopes_principal() {
    let inner = sample_request(30, 3, "t", Uuid::ZERO).unwrap().unwrap();
    let body = envelope(inner_frame(30, 3, inner)).unwrap();
    let request = EnvelopeRequest::decode_exact(&body, 0).unwrap();
    match answer_envelope(&request, &follower()).unwrap() {
        EnvelopeAnswer::Node {
            key,
            correlation_id,
            principal,
            ..
        } => {
            assert_eq!((key, correlation_id), (30, 41));
            assert_eq!(principal.to_string(), "User:ANONYMOUS");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn envelope_refusals_follow_javas_order_of_checks() {
    // CreateAcls: the checks below are the Envelope's own, made before the node sees it.
    let inner = || {
        inner_frame(
            30,
            3,
            sample_request(30, 3, "t", Uuid::ZERO).unwrap().unwrap(),
        )
    };
    let refuse = |request: EnvelopeRequest| match answer_envelope(&request, &follower()).unwrap() {
        EnvelopeAnswer::Ready(r) => ErrorCode(r.error_code),
        other => panic!("{other:?}"),
    };
    let good = EnvelopeRequest::decode_exact(&envelope(inner()).unwrap(), 0).unwrap();
    // No principal, or one that does not decode.
    for principal in [None, Some(vec![]), Some(vec![0, 9, 1])] {
        let r = EnvelopeRequest {
            request_principal: principal,
            ..good.clone()
        };
        assert_eq!(refuse(r), ErrorCode::PRINCIPAL_DESERIALIZATION_FAILURE);
    }
    // A client address that is neither IPv4 nor IPv6.
    let r = EnvelopeRequest {
        client_host_address: vec![1, 2, 3],
        ..good.clone()
    };
    assert_eq!(refuse(r), ErrorCode::INVALID_REQUEST);
    // An API that may not be forwarded (BrokerHeartbeat).
    let hb = sample_request(63, 1, "t", Uuid::ZERO).unwrap().unwrap();
    let r = EnvelopeRequest {
        request_data: inner_frame(63, 1, hb),
        ..good.clone()
    };
    assert_eq!(refuse(r), ErrorCode::INVALID_REQUEST);
    // An inner request that does not parse: a truncated header, and a version past the schema.
    let r = EnvelopeRequest {
        request_data: vec![0, 49, 0],
        ..good.clone()
    };
    assert_eq!(refuse(r), ErrorCode::UNSUPPORTED_VERSION);
    let mut past = inner();
    past[2..4].copy_from_slice(&99i16.to_be_bytes());
    let r = EnvelopeRequest {
        request_data: past,
        ..good.clone()
    };
    // Every forwardable API is now the node's: its body is decoded where the node call is made
    // (`api::envelope`, which answers an envelope-level UNSUPPORTED_VERSION when it does not).
    match answer_envelope(&r, &follower()).unwrap() {
        EnvelopeAnswer::Node { key, version, .. } => assert_eq!((key, version), (30, 99)),
        other => panic!("{other:?}"),
    }
    let _ = RequestHeader::default();
}

#[test]
fn a_forwarded_topic_request_goes_to_the_node() {
    for (key, version) in [
        (19, 7),
        (20, 6),
        (37, 3),
        (38, 3),
        (39, 2),
        (40, 2),
        (46, 0),
        (49, 1),
        (67, 0),
    ] {
        let inner = sample_request(key, version, "t", Uuid::ZERO)
            .unwrap()
            .unwrap();
        let body = envelope(inner_frame(key, version, inner)).unwrap();
        let request = EnvelopeRequest::decode_exact(&body, 0).unwrap();
        match answer_envelope(&request, &follower()).unwrap() {
            EnvelopeAnswer::Node {
                key: k,
                version: v,
                correlation_id: 41,
                ..
            } => assert_eq!((k, v), (key, version)),
            other => panic!("api {key}: {other:?}"),
        }
    }
}

#[test]
fn a_forwarded_describe_quorum_is_handed_to_raft() {
    let inner = crate::protocol::messages::DescribeQuorumRequest::default()
        .encode_to_vec(2)
        .unwrap();
    let body = envelope(inner_frame(55, 2, inner)).unwrap();
    let request = EnvelopeRequest::decode_exact(&body, 0).unwrap();
    assert!(matches!(
        answer_envelope(&request, &follower()).unwrap(),
        EnvelopeAnswer::DescribeQuorum {
            version: 2,
            correlation_id: 41,
            ..
        }
    ));
}
