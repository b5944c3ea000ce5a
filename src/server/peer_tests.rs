//! The dialler against real sockets: silent, refusing and answering peers.

use super::*;
use crate::protocol::messages::{DescribeClusterRequest, DescribeClusterResponse};
use crate::server::context::{ControllerEndpoint, QuorumView, ServerContext};
use std::sync::Arc;

async fn local_controller() -> u16 {
    let socket = crate::server::listener::bind("CONTROLLER", "127.0.0.1:0")
        .await
        .unwrap();
    let port = socket.local_addr().unwrap().port();
    let mut view = QuorumView {
        leader_id: Some(1),
        controllers: vec![ControllerEndpoint {
            node_id: 1,
            listener: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port,
        }],
        ..Default::default()
    };
    // DescribeCluster wants a finalized metadata.version (4.4-IV0 here).
    view.finalized
        .levels
        .insert(crate::protocol::features::METADATA_VERSION.into(), 31);
    let ctx = Arc::new(ServerContext::new(1, Some("c".into()), 1 << 20, view));
    tokio::spawn(crate::server::listener::serve(
        socket,
        "CONTROLLER".into(),
        ctx,
        None,
        crate::server::listener::Security::default(),
    ));
    port
}

fn describe_cluster(token: u64) -> OutboundRequest {
    OutboundRequest {
        token,
        api_key: DescribeClusterRequest::API_KEY,
        min_version: 0,
        max_version: 9, // more than the peer serves: negotiation picks its maximum
        encode_body: Box::new(|v| {
            DescribeClusterRequest {
                endpoint_type: 2,
                ..Default::default()
            }
            .encode_to_vec(v)
        }),
    }
}

#[tokio::test]
async fn requests_complete_in_order_at_the_negotiated_version() {
    let port = local_controller().await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let peers = Peers::start(
        vec![(1, format!("127.0.0.1:{port}"))],
        PeerSettings::default(),
        tx.clone(),
    );
    for token in 0..5 {
        peers.send(1, describe_cluster(token), &tx);
    }
    for token in 0..5 {
        match rx.recv().await.unwrap() {
            Completion::Response {
                peer,
                token: got,
                version,
                body,
            } => {
                assert_eq!((peer, got, version), (1, token, 2));
                let r = DescribeClusterResponse::decode_exact(&body, version).unwrap();
                assert_eq!((r.error_code, r.controller_id), (0, 1));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn an_unreachable_peer_fails_fast_and_an_unknown_one_at_once() {
    // Bind then drop: nothing listens on this port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let peers = Peers::start(
        vec![(2, format!("127.0.0.1:{port}"))],
        PeerSettings::default(),
        tx.clone(),
    );
    peers.send(2, describe_cluster(7), &tx);
    peers.send(3, describe_cluster(8), &tx);
    let mut failed = Vec::new();
    for _ in 0..2 {
        match rx.recv().await.unwrap() {
            Completion::Failed { peer, token, .. } => failed.push((peer, token)),
            other => panic!("{other:?}"),
        }
    }
    failed.sort();
    assert_eq!(failed, vec![(2, 7), (3, 8)]);
}

#[tokio::test]
async fn a_silent_peer_times_out_and_the_connection_is_dropped() {
    // Accepts, answers the handshake, then never answers again.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut size = [0u8; 4];
        s.read_exact(&mut size).await.unwrap();
        let mut req = vec![0u8; i32::from_be_bytes(size) as usize];
        s.read_exact(&mut req).await.unwrap();
        let ctx = ServerContext::new(9, None, 1 << 20, QuorumView::default());
        let connection = crate::controller::principal::RequestPrincipal::anonymous(
            std::net::Ipv4Addr::LOCALHOST.into(),
        );
        if let crate::server::api::Outcome::Respond(bytes) =
            crate::server::api::handle(&ctx, "C", &connection, &req)
        {
            s.write_all(&bytes).await.unwrap();
        }
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let settings = PeerSettings {
        request_timeout: Duration::from_millis(200),
        ..Default::default()
    };
    let peers = Peers::start(vec![(9, format!("127.0.0.1:{port}"))], settings, tx.clone());
    peers.send(9, describe_cluster(1), &tx);
    match rx.recv().await.unwrap() {
        Completion::Failed { token, reason, .. } => {
            assert_eq!(token, 1);
            assert!(reason.contains("timed out"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_connect_without_a_route_has_no_path_and_a_refusal_is_a_stopped_peer() {
    use std::io::ErrorKind;
    for (error, kind) in [
        (ErrorKind::ConnectionRefused, FailKind::Refused),
        (ErrorKind::HostUnreachable, FailKind::NoPath),
        (ErrorKind::NetworkUnreachable, FailKind::NoPath),
        (ErrorKind::ConnectionReset, FailKind::Disconnected),
    ] {
        assert_eq!(connect_error_kind(error), kind, "{error:?}");
    }
}
