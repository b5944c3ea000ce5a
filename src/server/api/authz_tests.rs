//! Transcripts of the checks made before raft or DescribeCluster sees a request: a controller
//! running StandardAuthorizer (`super.users=User:admin`) answers this connection
//! (User:ANONYMOUS) from the ACLs the node loop published, and before any are published (the
//! authorizer's first load) answers everyone but super users UNKNOWN_SERVER_ERROR.

use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::controller::acls::authorizer::AuthorizerConfig;
use crate::controller::acls::{permission, AclsImage};
use crate::protocol::codec::{Reader, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::features::METADATA_VERSION;
use crate::protocol::messages::{
    fetch_request, vote_request, AccessControlEntryRecord, DescribeClusterRequest,
    DescribeClusterResponse, DescribeQuorumRequest, DescribeQuorumResponse, FetchRequest,
    FetchResponse, ResponseHeader, VoteRequest, VoteResponse,
};
use crate::server::context::QuorumView;

const LISTENER: &str = "CONTROLLER";

fn anonymous() -> RequestPrincipal {
    RequestPrincipal::anonymous(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// A controller with an authorizer, metadata.version 4.4-IV0 published, no ACLs loaded yet.
fn controller() -> ServerContext {
    let mut view = QuorumView::default();
    view.finalized.levels.insert(METADATA_VERSION.into(), 31);
    let mut ctx = ServerContext::new(1, Some("c".into()), 1 << 20, view);
    ctx.authorizer = Some(AuthorizerConfig::parse(Some("User:admin"), None).unwrap());
    ctx
}

/// ACLs on the cluster for User:ANONYMOUS: (operation, permission).
fn cluster_acls(acls: &[(i8, i8)]) -> AclsImage {
    let mut image = AclsImage::default();
    for (i, &(op, perm)) in acls.iter().enumerate() {
        image.replay(&AccessControlEntryRecord {
            id: Uuid([i as u8 + 1; 16]),
            resource_type: resource::CLUSTER,
            resource_name: CLUSTER_NAME.into(),
            pattern_type: crate::controller::acls::pattern::LITERAL,
            principal: "User:ANONYMOUS".into(),
            host: "*".into(),
            operation: op,
            permission_type: perm,
            ..Default::default()
        });
    }
    image
}

/// Sends `request` from this connection; the outcome.
fn send<M: ApiMessage>(ctx: &ServerContext, version: i16, request: &M) -> Outcome {
    let frame = frame::encode_request(M::API_KEY, version, 5, Some("t"), request).unwrap();
    handle(ctx, LISTENER, &anonymous(), &frame[4..])
}

/// The body of the response `send` wrote, decoded.
fn answer<M: ApiMessage>(outcome: Outcome, key: i16, version: i16) -> M {
    let Outcome::Respond(bytes) = outcome else {
        panic!("expected an answer, got {outcome:?}");
    };
    let mut r = Reader::new(&bytes[4..]);
    ResponseHeader::decode(&mut r, frame::response_header_version(key, version)).unwrap();
    M::decode_exact(r.rest(), version).unwrap()
}

fn vote() -> VoteRequest {
    VoteRequest {
        topics: vec![vote_request::TopicData {
            topic_name: "__cluster_metadata".into(),
            partitions: vec![vote_request::PartitionData {
                replica_epoch: 1,
                replica_id: 2,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn fetch_by_name() -> FetchRequest {
    FetchRequest {
        replica_id: 2,
        session_id: 9,
        topics: vec![fetch_request::FetchTopic {
            topic: "__cluster_metadata".into(),
            partitions: vec![fetch_request::FetchPartition {
                partition: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn describe_cluster(include_operations: bool) -> DescribeClusterRequest {
    DescribeClusterRequest {
        endpoint_type: 2,
        include_cluster_authorized_operations: include_operations,
        ..Default::default()
    }
}

#[test]
fn before_the_first_load_raft_apis_are_answered_unknown_server_error() {
    let ctx = controller();
    let vote: VoteResponse = answer(send(&ctx, 0, &vote()), VoteRequest::API_KEY, 0);
    assert_eq!(ErrorCode(vote.error_code), ErrorCode::UNKNOWN_SERVER_ERROR);
    assert!(vote.topics.is_empty());
    let described: DescribeQuorumResponse = answer(
        send(&ctx, 2, &DescribeQuorumRequest::default()),
        DescribeQuorumRequest::API_KEY,
        2,
    );
    assert_eq!(
        (
            ErrorCode(described.error_code),
            described.error_message.as_deref()
        ),
        (
            ErrorCode::UNKNOWN_SERVER_ERROR,
            Some("The server experienced an unexpected error when processing the request.")
        )
    );
    // DescribeCluster checks its metadata.version, then ALTER (never loaded, no message).
    let cluster: DescribeClusterResponse = answer(
        send(&ctx, 1, &describe_cluster(false)),
        DescribeClusterRequest::API_KEY,
        1,
    );
    assert_eq!(
        (ErrorCode(cluster.error_code), cluster.error_message),
        (ErrorCode::UNKNOWN_SERVER_ERROR, None)
    );
}

#[test]
fn once_loaded_a_connection_without_the_operation_gets_each_apis_error_response() {
    let ctx = controller();
    // Only DESCRIBE: the CLUSTER_ACTION APIs are refused, DescribeQuorum goes to raft.
    ctx.publish_acls(&cluster_acls(&[(operation::DESCRIBE, permission::ALLOW)]));
    let vote: VoteResponse = answer(send(&ctx, 0, &vote()), VoteRequest::API_KEY, 0);
    assert_eq!(
        ErrorCode(vote.error_code),
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED
    );
    // Fetch below v13 names every asked partition, with an unknown high watermark.
    let fetched: FetchResponse =
        answer(send(&ctx, 12, &fetch_by_name()), FetchRequest::API_KEY, 12);
    assert_eq!(
        ErrorCode(fetched.error_code),
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED
    );
    assert_eq!(fetched.session_id, 9);
    let p = &fetched.responses[0].partitions[0];
    assert_eq!(fetched.responses[0].topic, "__cluster_metadata");
    assert_eq!(
        (
            ErrorCode(p.error_code),
            p.high_watermark,
            p.records.as_deref()
        ),
        (ErrorCode::CLUSTER_AUTHORIZATION_FAILED, -1, Some(&[][..]))
    );
    assert!(matches!(
        send(&ctx, 2, &DescribeQuorumRequest::default()),
        Outcome::Raft(_)
    ));
    // DescribeCluster needs ALTER; its refusal names the request and the operation.
    let cluster: DescribeClusterResponse = answer(
        send(&ctx, 1, &describe_cluster(true)),
        DescribeClusterRequest::API_KEY,
        1,
    );
    assert_eq!(
        ErrorCode(cluster.error_code),
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED
    );
    assert_eq!(
        cluster.error_message.as_deref(),
        Some("Request DescribeCluster from User:ANONYMOUS needs ALTER permission.")
    );
}

#[test]
fn describe_cluster_reports_the_cluster_operations_the_connection_holds() {
    let ctx = controller();
    let ops = |ctx: &ServerContext| {
        let r: DescribeClusterResponse = answer(
            send(ctx, 1, &describe_cluster(true)),
            DescribeClusterRequest::API_KEY,
            1,
        );
        assert_eq!(r.error_code, 0, "{r:?}");
        r.cluster_authorized_operations
    };
    ctx.publish_acls(&cluster_acls(&[
        (operation::ALTER, permission::ALLOW),
        (operation::CLUSTER_ACTION, permission::ALLOW),
    ]));
    // ALTER implies DESCRIBE.
    let held = [
        operation::ALTER,
        operation::DESCRIBE,
        operation::CLUSTER_ACTION,
    ];
    assert_eq!(ops(&ctx), held.iter().fold(0, |b, op| b | 1 << op));
    // Without DESCRIBE on the cluster, none are reported.
    ctx.publish_acls(&cluster_acls(&[
        (operation::ALTER, permission::ALLOW),
        (operation::DESCRIBE, permission::DENY),
    ]));
    assert_eq!(ops(&ctx), 0);
    // Not asked for: Java's "omitted" value.
    ctx.publish_acls(&cluster_acls(&[(operation::ALTER, permission::ALLOW)]));
    let r: DescribeClusterResponse = answer(
        send(&ctx, 1, &describe_cluster(false)),
        DescribeClusterRequest::API_KEY,
        1,
    );
    assert_eq!(r.cluster_authorized_operations, i32::MIN);
}

#[test]
fn describe_cluster_needs_a_metadata_version_with_controller_registration_first() {
    let mut view = QuorumView::default();
    let unknown = ServerContext::new(1, None, 1 << 20, view.clone());
    let r: DescribeClusterResponse = answer(
        send(&unknown, 1, &describe_cluster(false)),
        DescribeClusterRequest::API_KEY,
        1,
    );
    assert_eq!(
        (ErrorCode(r.error_code), r.error_message.as_deref()),
        (
            ErrorCode::UNSUPPORTED_VERSION,
            Some("There is no finalized MetadataVersion, so direct-to-controller communication is not supported.")
        )
    );
    // 3.6-IV2 (14) predates controller registration (3.7-IV0, 15).
    view.finalized.levels.insert(METADATA_VERSION.into(), 14);
    let old = ServerContext::new(1, None, 1 << 20, view);
    let r: DescribeClusterResponse = answer(
        send(&old, 1, &describe_cluster(false)),
        DescribeClusterRequest::API_KEY,
        1,
    );
    assert_eq!(
        r.error_message.as_deref(),
        Some(
            "Direct-to-controller communication is not supported with the current MetadataVersion."
        )
    );
}
