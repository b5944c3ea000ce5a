//! A listener on a real socket: connection limits, and a SASL listener authenticating kraftd's
//! own outbound client.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::context::{QuorumView, ServerContext};
use super::limits::{ConnectionLimits, ConnectionSettings};
use super::listener::{bind, serve, Security};
use crate::protocol::codec::{ApiMessage, Message};
use crate::protocol::frame::encode_request;
use crate::protocol::messages::ApiVersionsRequest;

async fn listening(settings: ConnectionSettings, security: Security) -> u16 {
    let socket = bind("CONTROLLER", "127.0.0.1:0").await.unwrap();
    let port = socket.local_addr().unwrap().port();
    let mut ctx = ServerContext::new(1, Some("c".into()), 1 << 20, QuorumView::default());
    ctx.connections = Arc::new(ConnectionLimits::new(settings));
    tokio::spawn(serve(
        socket,
        "CONTROLLER".into(),
        Arc::new(ctx),
        None,
        security,
    ));
    port
}

fn api_versions() -> Vec<u8> {
    let request = ApiVersionsRequest {
        client_software_name: "t".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    encode_request(ApiVersionsRequest::API_KEY, 3, 1, Some("t"), &request).unwrap()
}

/// Sends ApiVersions; whether an answer came within `wait`.
async fn answered(s: &mut TcpStream, wait: Duration) -> bool {
    if s.write_all(&api_versions()).await.is_err() {
        return false;
    }
    let mut size = [0u8; 4];
    matches!(
        tokio::time::timeout(wait, s.read_exact(&mut size)).await,
        Ok(Ok(_))
    ) && {
        let mut rest = vec![0; i32::from_be_bytes(size) as usize];
        s.read_exact(&mut rest).await.is_ok()
    }
}

#[tokio::test]
async fn a_connection_over_the_per_ip_limit_is_closed() {
    let settings = ConnectionSettings {
        max_per_ip: 1,
        ..Default::default()
    };
    let port = listening(settings, Security::default()).await;
    let mut first = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    assert!(answered(&mut first, Duration::from_secs(5)).await);
    let mut second = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    assert!(!answered(&mut second, Duration::from_secs(5)).await);
    drop(first);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut third = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    assert!(answered(&mut third, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn at_max_connections_the_listener_waits_for_a_free_slot() {
    let settings = ConnectionSettings {
        max_connections: 1,
        ..Default::default()
    };
    let port = listening(settings, Security::default()).await;
    let mut first = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    assert!(answered(&mut first, Duration::from_secs(5)).await);
    // Accepted by the kernel, not served while the slot is taken...
    let mut second = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    assert!(!answered(&mut second, Duration::from_millis(300)).await);
    // ... and served once it frees (the request already sent is answered).
    drop(first);
    let mut size = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), second.read_exact(&mut size))
        .await
        .expect("served once a slot frees")
        .unwrap();
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    let settings = ConnectionSettings {
        max_idle: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let port = listening(settings, Security::default()).await;
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(5), s.read(&mut byte)).await;
    assert!(matches!(read, Ok(Ok(0))), "{read:?}");
}

#[tokio::test]
async fn kraftd_authenticates_to_a_sasl_listener_over_peers() {
    use super::config::{Password, SecurityProtocol};
    use super::peer::{Completion, OutboundRequest, PeerSettings, Peers};
    use super::sasl::jaas::JaasConfig;
    use super::sasl::plain::PlainUsers;
    use super::sasl::settings::{ClientSasl, EnabledMechanism, ListenerSasl};
    use super::sasl::Mechanism;
    let jaas = JaasConfig::parse(
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=\"pw\";",
    )
    .unwrap();
    let sasl = ListenerSasl {
        listener: "CONTROLLER".into(),
        protocol: SecurityProtocol::SaslPlaintext,
        mechanisms: vec![EnabledMechanism {
            mechanism: Mechanism::Plain,
            reauth_ms: 0,
            plain_users: Some(Arc::new(PlainUsers::from_jaas(&jaas.entries[0]))),
        }],
        max_receive_size: 524_288,
    };
    let security = Security {
        tls: None,
        sasl: Some(Arc::new(sasl)),
    };
    let port = listening(ConnectionSettings::default(), security).await;
    for (password, ok) in [("pw", true), ("wrong", false)] {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let settings = PeerSettings {
            sasl: Some(Arc::new(ClientSasl {
                mechanism: Mechanism::Plain,
                username: "admin".into(),
                password: Password::new(password),
            })),
            ..Default::default()
        };
        let peers = Peers::start(vec![(1, format!("127.0.0.1:{port}"))], settings, tx.clone());
        let request = OutboundRequest {
            token: 1,
            api_key: ApiVersionsRequest::API_KEY,
            min_version: 3,
            max_version: 3,
            encode_body: Box::new(|v| {
                ApiVersionsRequest {
                    client_software_name: "t".into(),
                    client_software_version: "1".into(),
                    ..Default::default()
                }
                .encode_to_vec(v)
            }),
        };
        peers.send(1, request, &tx);
        match rx.recv().await.unwrap() {
            Completion::Response { .. } => assert!(ok),
            Completion::Failed { reason, .. } => {
                assert!(!ok, "{reason}");
                assert!(reason.contains("Invalid username or password"), "{reason}");
            }
        }
    }
}
