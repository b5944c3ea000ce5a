//! The server side of a TLS connection: the handshake, bounded in time, and the principal the
//! client's certificate maps to (`User:ANONYMOUS` without one, as Kafka's SSL principal
//! builder gives).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::live::LiveTls;
use super::principal::{principal_name, PrincipalError};
use crate::controller::principal::RequestPrincipal;

/// How long a client may take over its handshake before the connection is closed, so that
/// half-open handshakes cannot pile up.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a TLS connection was closed before its first request. For one log line.
#[derive(Debug, thiserror::Error)]
pub enum AcceptError {
    #[error("TLS handshake did not finish within {HANDSHAKE_TIMEOUT:?}")]
    TimedOut,
    #[error("TLS handshake failed: {0}")]
    Handshake(std::io::Error),
    #[error("the client certificate names no principal: {0}")]
    Principal(PrincipalError),
}

/// Completes the server side of a handshake on `stream` and names the client.
pub async fn accept(
    live: &LiveTls,
    stream: TcpStream,
    peer: SocketAddr,
) -> Result<(TlsStream<TcpStream>, RequestPrincipal), AcceptError> {
    let tls = live.current();
    let acceptor = TlsAcceptor::from(tls.server.clone());
    let stream = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream))
        .await
        .map_err(|_| AcceptError::TimedOut)?
        .map_err(AcceptError::Handshake)?;
    let leaf = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first());
    let name = principal_name(leaf, &tls.mapper).map_err(AcceptError::Principal)?;
    let principal = RequestPrincipal::user(name, peer.ip());
    Ok((stream, principal))
}
