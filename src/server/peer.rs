//! Outbound requests to other controllers: one connection per peer, an ApiVersions handshake on
//! each new connection (as Java's NetworkClient does), correlation ids, request timeouts, and
//! reconnection with exponential backoff.
//!
//! The node loop hands requests in and gets completions back on a channel; nothing here knows
//! about raft. Responses on a Kafka connection come back in request order, so each connection
//! keeps a FIFO of what is in flight.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{
    AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, ReadHalf, WriteHalf,
};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};
use tracing::{debug, warn};

use crate::protocol::codec::{ApiMessage, EncodeError, Message, RawBody, Reader};
use crate::protocol::frame::{encode_request, response_header_version};
use crate::protocol::messages::{ApiVersionsRequest, ApiVersionsResponse, ResponseHeader};
use crate::server::metrics::raft::ChannelCounters;
use crate::server::sasl::client as sasl_client;
use crate::server::sasl::settings::ClientSasl;
use crate::server::tls::LiveTls;

/// A client re-authenticates (here: reconnects) after this share of a SASL session's
/// lifetime, as Kafka's client does between 85% and 95% of it.
const REAUTHENTICATE_AT: f64 = 0.85;

/// Largest response frame accepted from a peer (a Fetch answer is bounded by
/// `controller.quorum.fetch.max.bytes`; this leaves room for headers and snapshots).
const MAX_RESPONSE_BYTES: usize = 128 * 1024 * 1024;

/// Builds a request body at the version negotiated with the peer.
pub type EncodeBody = Box<dyn Fn(i16) -> Result<Vec<u8>, EncodeError> + Send + Sync>;

/// A request for one peer.
pub struct OutboundRequest {
    /// The caller's handle for matching the completion.
    pub token: u64,
    pub api_key: i16,
    /// The versions this build can send; the highest the peer also serves is used.
    pub min_version: i16,
    pub max_version: i16,
    pub encode_body: EncodeBody,
}

/// What became of an outbound request.
#[derive(Debug)]
pub enum Completion {
    /// The response body (header removed) and the version it is encoded at.
    Response {
        peer: i32,
        token: u64,
        version: i16,
        body: Vec<u8>,
    },
    /// No response: connection failure, timeout, or no common version. The reason is for logs.
    Failed {
        peer: i32,
        token: u64,
        reason: String,
        kind: FailKind,
    },
}

/// Why a request got no response. Kafka's network client tells a refused connection and an
/// unsupported version from the rest; the rest are told apart for `kraftd doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailKind {
    /// The connection was lost, or a request on it timed out.
    Disconnected,
    /// The request cannot be sent at any version the peer serves.
    UnsupportedVersion,
    /// The connection was refused: nothing listens at the peer's address (its process is
    /// gone; a stalled one still accepts connections).
    Refused,
    /// The peer's host name did not resolve.
    Unresolved,
    /// No network path: the TCP connection attempt went unanswered or found no route (a
    /// partition, a firewall, or the peer's host is down), as opposed to a peer that accepts
    /// connections and then answers nothing ([`FailKind::TimedOut`]).
    NoPath,
    /// Connecting, the TLS handshake, the ApiVersions handshake or SASL did not finish in time
    /// (a stalled process accepts connections but answers nothing).
    TimedOut,
    /// The TLS handshake failed (certificates, trust, protocol).
    Tls,
    /// SASL authentication failed.
    Sasl,
}

/// Timeouts and backoff, from the `controller.quorum.*` settings, and the TLS to dial with.
#[derive(Clone)]
pub struct PeerSettings {
    pub request_timeout: Duration,
    pub retry_backoff: Duration,
    pub max_backoff: Duration,
    pub client_id: &'static str,
    /// The first controller listener's TLS when it is an SSL or SASL_SSL listener (as Kafka's
    /// raft client dials with that listener's settings); `None`: no TLS.
    pub tls: Option<Arc<LiveTls>>,
    /// How to authenticate when that listener is a SASL one; `None`: no SASL.
    pub sasl: Option<Arc<ClientSasl>>,
    /// The frames and bytes these connections send and receive (`raft-channel-metrics`).
    pub channel: Arc<ChannelCounters>,
}

impl std::fmt::Debug for PeerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerSettings")
            .field("request_timeout", &self.request_timeout)
            .field("retry_backoff", &self.retry_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("client_id", &self.client_id)
            .field("tls", &self.tls.as_ref().map(|t| t.listener().to_string()))
            .field("sasl", &self.sasl)
            .field("channel", &self.channel)
            .finish()
    }
}

impl Default for PeerSettings {
    fn default() -> Self {
        PeerSettings {
            request_timeout: Duration::from_millis(2000),
            retry_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(1000),
            client_id: "raft-client",
            tls: None,
            sasl: None,
            channel: Arc::default(),
        }
    }
}

/// Handles to the per-peer tasks.
pub struct Peers {
    senders: HashMap<i32, mpsc::UnboundedSender<OutboundRequest>>,
    addresses: HashMap<i32, String>,
}

impl Peers {
    /// Starts one task per peer (id, "host:port"). Completions arrive on `completions`.
    pub fn start(
        peers: Vec<(i32, String)>,
        settings: PeerSettings,
        completions: mpsc::UnboundedSender<Completion>,
    ) -> Peers {
        let mut all = Peers {
            senders: HashMap::new(),
            addresses: HashMap::new(),
        };
        for (id, address) in peers {
            all.ensure(id, &address, settings.clone(), &completions);
        }
        all
    }

    /// Makes sure a task for `peer` at `address` runs; a changed address replaces the task
    /// (its queued requests fail as disconnected).
    pub fn ensure(
        &mut self,
        peer: i32,
        address: &str,
        settings: PeerSettings,
        completions: &mpsc::UnboundedSender<Completion>,
    ) {
        if self.addresses.get(&peer).is_some_and(|a| a == address) {
            return;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(peer_task(
            peer,
            address.to_string(),
            settings,
            rx,
            completions.clone(),
        ));
        self.senders.insert(peer, tx);
        self.addresses.insert(peer, address.to_string());
    }

    /// Queues a request for `peer`. An unknown peer completes as failed at once.
    pub fn send(
        &self,
        peer: i32,
        request: OutboundRequest,
        completions: &mpsc::UnboundedSender<Completion>,
    ) {
        match self.senders.get(&peer) {
            Some(tx) => {
                if let Err(mpsc::error::SendError(r)) = tx.send(request) {
                    let _ = completions.send(Completion::Failed {
                        peer,
                        token: r.token,
                        reason: "peer task stopped".into(),
                        kind: FailKind::Disconnected,
                    });
                }
            }
            None => {
                let _ = completions.send(Completion::Failed {
                    peer,
                    token: request.token,
                    reason: format!("no address known for node {peer}"),
                    kind: FailKind::Disconnected,
                });
            }
        }
    }
}

/// One open connection and what is in flight on it.
struct Connection {
    /// Frames read by the connection's reader task. Reading happens on its own task because a
    /// half-read frame must never be abandoned when another event wins a `select!`.
    frames: mpsc::UnboundedReceiver<Result<Vec<u8>, String>>,
    reader_task: tokio::task::JoinHandle<()>,
    writer: WriteHalf<PeerStream>,
    /// The peer's served version range per API, from its ApiVersions answer.
    versions: HashMap<i16, (i16, i16)>,
    next_correlation: i32,
    /// When the SASL session should be renewed (KIP-368), if it expires.
    renew_at: Option<Instant>,
}

/// A connection to a peer, plain or TLS.
trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}
type PeerStream = Box<dyn Stream>;

async fn read_frame(
    reader: &mut BufReader<ReadHalf<PeerStream>>,
    channel: &ChannelCounters,
) -> Result<Vec<u8>, String> {
    let size = reader.read_i32().await.map_err(|e| format!("read: {e}"))?;
    if size < 0 || size as usize > MAX_RESPONSE_BYTES {
        return Err(format!("invalid response size {size}"));
    }
    let mut frame = Vec::with_capacity((size as usize).min(64 * 1024));
    let n = reader
        .take(size as u64)
        .read_to_end(&mut frame)
        .await
        .map_err(|e| format!("read: {e}"))?;
    if n != size as usize {
        return Err(format!(
            "connection closed after {n} of a {size}-byte response"
        ));
    }
    channel.received(4 + frame.len());
    Ok(frame)
}

/// Splits a response frame into correlation id and body.
fn split_response(frame: &[u8], api_key: i16, version: i16) -> Result<(i32, Vec<u8>), String> {
    let mut r = Reader::new(frame);
    let header = ResponseHeader::decode(&mut r, response_header_version(api_key, version))
        .map_err(|e| format!("bad response header: {e}"))?;
    Ok((header.correlation_id, r.rest().to_vec()))
}

/// Why a connection could not be made.
struct ConnectFailure {
    reason: String,
    kind: FailKind,
}

impl From<String> for ConnectFailure {
    fn from(reason: String) -> Self {
        ConnectFailure {
            reason,
            kind: FailKind::Disconnected,
        }
    }
}

impl ConnectFailure {
    fn new(kind: FailKind, reason: String) -> ConnectFailure {
        ConnectFailure { reason, kind }
    }
}

/// What a failed TCP connect says of the peer: nothing listens, or no network path to it.
fn connect_error_kind(e: std::io::ErrorKind) -> FailKind {
    use std::io::ErrorKind;
    match e {
        ErrorKind::ConnectionRefused => FailKind::Refused,
        ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => FailKind::NoPath,
        _ => FailKind::Disconnected,
    }
}

async fn connect(address: &str, settings: &PeerSettings) -> Result<Connection, ConnectFailure> {
    let timed_out =
        |what: &str| ConnectFailure::new(FailKind::TimedOut, format!("{what} timed out"));
    let resolved: Vec<std::net::SocketAddr> =
        timeout(settings.request_timeout, tokio::net::lookup_host(address))
            .await
            .map_err(|_| timed_out(&format!("resolving {address}")))?
            .map_err(|e| {
                ConnectFailure::new(FailKind::Unresolved, format!("resolving {address}: {e}"))
            })?
            .collect();
    let stream = timeout(settings.request_timeout, TcpStream::connect(&resolved[..]))
        .await
        .map_err(|_| {
            ConnectFailure::new(FailKind::NoPath, format!("connect to {address} timed out"))
        })?
        .map_err(|e| ConnectFailure {
            reason: format!("connect to {address}: {e}"),
            kind: connect_error_kind(e.kind()),
        })?;
    let _ = stream.set_nodelay(true);
    let stream: PeerStream = match &settings.tls {
        None => Box::new(stream),
        Some(tls) => Box::new(tls_handshake(tls, address, stream, settings).await?),
    };
    let (rd, mut writer) = tokio::io::split(stream);
    let mut reader = BufReader::new(rd);
    // Handshake at v3 (flexible, understood by every Kafka 4.x and by kraftd).
    let request = ApiVersionsRequest {
        client_software_name: "kraftd".into(),
        client_software_version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    };
    let frame = encode_request(
        ApiVersionsRequest::API_KEY,
        3,
        0,
        Some(settings.client_id),
        &request,
    )
    .map_err(|e| e.to_string())?;
    write_frame(&mut writer, &frame, &settings.channel)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let answer = timeout(
        settings.request_timeout,
        read_frame(&mut reader, &settings.channel),
    )
    .await
    .map_err(|_| timed_out(&format!("ApiVersions handshake with {address}")))??;
    let (_, body) = split_response(&answer, ApiVersionsRequest::API_KEY, 3)?;
    let response = ApiVersionsResponse::decode_exact(&body, 3)
        .map_err(|e| format!("ApiVersions answer: {e}"))?;
    if response.error_code != 0 {
        return Err(format!(
            "ApiVersions handshake refused with error code {}",
            response.error_code
        )
        .into());
    }
    let versions: HashMap<i16, (i16, i16)> = response
        .api_keys
        .iter()
        .map(|k| (k.api_key, (k.min_version, k.max_version)))
        .collect();
    let mut next_correlation = 1;
    let mut renew_at = None;
    if let Some(sasl) = &settings.sasl {
        let session = async {
            let v = sasl_client::versions(|key| versions.get(&key).copied())?;
            sasl_client::authenticate(
                &mut reader,
                &mut writer,
                sasl,
                v,
                settings.client_id,
                next_correlation,
            )
            .await
        };
        let session = timeout(settings.request_timeout, session)
            .await
            .map_err(|_| timed_out(&format!("SASL authentication with {address}")))?
            .map_err(|e| {
                warn!(target: "kraftd::peer", "SASL authentication with {address} failed: {e}");
                ConnectFailure::new(
                    FailKind::Sasl,
                    format!("SASL authentication with {address} failed: {e}"),
                )
            })?;
        next_correlation = session.next_correlation;
        renew_at = session
            .lifetime
            .map(|l| Instant::now() + l.mul_f64(REAUTHENTICATE_AT));
    }
    let (tx, frames) = mpsc::unbounded_channel();
    let channel = settings.channel.clone();
    let reader_task = tokio::spawn(async move {
        loop {
            let frame = read_frame(&mut reader, &channel).await;
            let failed = frame.is_err();
            if tx.send(frame).is_err() || failed {
                return;
            }
        }
    });
    Ok(Connection {
        frames,
        reader_task,
        writer,
        versions,
        next_correlation,
        renew_at,
    })
}

/// The client side of a TLS handshake with the controller at `address` ("host:port"), whose
/// certificate must name `host` unless `ssl.endpoint.identification.algorithm` is empty.
async fn tls_handshake(
    tls: &LiveTls,
    address: &str,
    stream: TcpStream,
    settings: &PeerSettings,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, ConnectFailure> {
    let host = address
        .rsplit_once(':')
        .map_or(address, |(host, _)| host)
        .trim_start_matches('[')
        .trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| format!("TLS to {address}: {host} is not a host name TLS can check: {e}"))?;
    let connector = tokio_rustls::TlsConnector::from(tls.current().client.clone());
    timeout(settings.request_timeout, connector.connect(name, stream))
        .await
        .map_err(|_| {
            ConnectFailure::new(
                FailKind::TimedOut,
                format!("TLS handshake with {address} timed out"),
            )
        })?
        .map_err(|e| {
            ConnectFailure::new(
                FailKind::Tls,
                format!("TLS handshake with {address} failed: {e}"),
            )
        })
}

/// Writes one frame; a TLS stream holds written bytes until flushed.
async fn write_frame(
    writer: &mut WriteHalf<PeerStream>,
    frame: &[u8],
    channel: &ChannelCounters,
) -> std::io::Result<()> {
    writer.write_all(frame).await?;
    writer.flush().await?;
    channel.sent(frame.len());
    Ok(())
}

/// The highest version both sides serve.
fn negotiate(conn: &Connection, request: &OutboundRequest) -> Result<i16, String> {
    let (their_min, their_max) = *conn
        .versions
        .get(&request.api_key)
        .ok_or_else(|| format!("peer does not serve api key {}", request.api_key))?;
    let version = request.max_version.min(their_max);
    if version < request.min_version.max(their_min) {
        return Err(format!(
            "no common version of api key {}: we send {}-{}, the peer serves {their_min}-{their_max}",
            request.api_key, request.min_version, request.max_version
        ));
    }
    Ok(version)
}

async fn peer_task(
    peer: i32,
    address: String,
    settings: PeerSettings,
    mut requests: mpsc::UnboundedReceiver<OutboundRequest>,
    completions: mpsc::UnboundedSender<Completion>,
) {
    let fail = |token: u64, reason: String| {
        let _ = completions.send(Completion::Failed {
            peer,
            token,
            reason,
            kind: FailKind::Disconnected,
        });
    };
    // A request no common version can carry fails alone; the connection stays up.
    let refuse = |token: u64, reason: String| {
        let _ = completions.send(Completion::Failed {
            peer,
            token,
            reason,
            kind: FailKind::UnsupportedVersion,
        });
    };
    let mut backoff = settings.retry_backoff;
    let mut conn: Option<Connection> = None;
    // (correlation id, token, api key, version, deadline)
    let mut in_flight: VecDeque<InFlight> = VecDeque::new();
    // A request held back while its connection was replaced.
    let mut pending: Option<OutboundRequest> = None;
    loop {
        if conn.is_none() {
            // Wait for work before connecting, so idle peers hold no sockets.
            let first = match pending.take() {
                Some(r) => r,
                None => match requests.recv().await {
                    Some(r) => r,
                    None => return,
                },
            };
            match connect(&address, &settings).await {
                Ok(c) => {
                    debug!(target: "kraftd::peer", "connected to node {peer} at {address}");
                    backoff = settings.retry_backoff;
                    conn = Some(c);
                    // Put the request back at the front of our own handling below.
                    match send_one(conn.as_mut().unwrap(), &first, &settings, &mut in_flight).await
                    {
                        Ok(()) => {}
                        Err(SendError::Unsupported(reason)) => refuse(first.token, reason),
                        Err(SendError::Io(reason)) => {
                            fail(first.token, reason);
                            conn = None;
                        }
                    }
                }
                Err(ConnectFailure { reason, kind }) => {
                    debug!(target: "kraftd::peer", "node {peer} at {address}: {reason}; retrying in {backoff:?}");
                    let _ = completions.send(Completion::Failed {
                        peer,
                        token: first.token,
                        reason,
                        kind,
                    });
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(settings.max_backoff);
                }
            }
            continue;
        }
        let c = conn.as_mut().unwrap();
        let next_deadline = in_flight.front().map(|f| f.deadline);
        tokio::select! {
            request = requests.recv() => {
                let Some(request) = request else { return };
                if c.renew_at.is_some_and(|at| Instant::now() >= at) {
                    // The server would close the connection once the SASL session ends: a new
                    // connection authenticates afresh.
                    debug!(target: "kraftd::peer", "SASL session with node {peer} ends soon; reconnecting");
                    drop_connection(&mut conn, &mut in_flight, &fail, "SASL session renewal");
                    pending = Some(request);
                    continue;
                }
                match send_one(c, &request, &settings, &mut in_flight).await {
                    Ok(()) => {}
                    Err(SendError::Unsupported(reason)) => refuse(request.token, reason),
                    Err(SendError::Io(reason)) => {
                        fail(request.token, reason);
                        drop_connection(&mut conn, &mut in_flight, &fail, "write failed");
                    }
                }
            }
            frame = c.frames.recv() => {
                let frame = frame.unwrap_or_else(|| Err("reader stopped".into()));
                let Some(InFlight { correlation, token, api_key, version, sent, .. }) = in_flight.pop_front() else {
                    let why = frame.err().unwrap_or_else(|| "unsolicited response".into());
                    drop_connection(&mut conn, &mut in_flight, &fail, &why);
                    continue;
                };
                let outcome = frame.and_then(|f| split_response(&f, api_key, version));
                match outcome {
                    Ok((got, body)) if got == correlation => {
                        settings.channel.round_trip(peer, sent.elapsed());
                        let _ = completions.send(Completion::Response { peer, token, version, body });
                    }
                    Ok((got, _)) => {
                        fail(token, format!("correlation id {got} does not match the expected {correlation}"));
                        drop_connection(&mut conn, &mut in_flight, &fail, "out-of-order response");
                    }
                    Err(reason) => {
                        fail(token, reason.clone());
                        drop_connection(&mut conn, &mut in_flight, &fail, &reason);
                    }
                }
            }
            _ = tokio::time::sleep_until(next_deadline.unwrap_or_else(Instant::now)), if next_deadline.is_some() => {
                // Kafka disconnects a connection whose request timed out.
                warn!(target: "kraftd::peer", "request to node {peer} timed out after {:?}; reconnecting", settings.request_timeout);
                drop_connection(&mut conn, &mut in_flight, &fail, "request timed out");
            }
        }
    }
}

/// A request sent on a connection, awaiting its response (responses come in order).
struct InFlight {
    correlation: i32,
    token: u64,
    api_key: i16,
    version: i16,
    sent: Instant,
    /// Kafka disconnects a connection whose request is not answered by then.
    deadline: Instant,
}

/// Why `send_one` did not send.
enum SendError {
    /// No version both sides serve can carry the request (the connection is fine).
    Unsupported(String),
    /// The connection failed.
    Io(String),
}

async fn send_one(
    conn: &mut Connection,
    request: &OutboundRequest,
    settings: &PeerSettings,
    in_flight: &mut VecDeque<InFlight>,
) -> Result<(), SendError> {
    let version = negotiate(conn, request).map_err(SendError::Unsupported)?;
    let body = (request.encode_body)(version)
        .map_err(|e| SendError::Unsupported(format!("encode at v{version}: {e}")))?;
    let correlation = conn.next_correlation;
    conn.next_correlation = conn.next_correlation.wrapping_add(1);
    let frame = encode_request(
        request.api_key,
        version,
        correlation,
        Some(settings.client_id),
        &RawBody(body),
    )
    .map_err(|e| SendError::Unsupported(e.to_string()))?;
    write_frame(&mut conn.writer, &frame, &settings.channel)
        .await
        .map_err(|e| SendError::Io(format!("write: {e}")))?;
    let sent = Instant::now();
    in_flight.push_back(InFlight {
        correlation,
        token: request.token,
        api_key: request.api_key,
        version,
        sent,
        deadline: sent + settings.request_timeout,
    });
    Ok(())
}

fn drop_connection(
    conn: &mut Option<Connection>,
    in_flight: &mut VecDeque<InFlight>,
    fail: &impl Fn(u64, String),
    why: &str,
) {
    if let Some(c) = conn.take() {
        c.reader_task.abort();
    }
    for f in in_flight.drain(..) {
        fail(f.token, format!("connection dropped: {why}"));
    }
}

#[cfg(test)]
#[path = "peer_tests.rs"]
mod tests;
