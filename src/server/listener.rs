//! The socket side of the wire front end: one tokio listener per controller listener, one task
//! per connection. A connection handles its requests one at a time, in order, as Kafka does
//! (it stops reading a connection while a request is in flight), so pipelined requests are
//! answered in the order they were sent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tracing::{debug, info, warn, Instrument};

use super::api::{self, Outcome};
use super::context::ServerContext;
use super::node::{NodeHandle, NodeStopped};
use super::tls::{self, AcceptError, LiveTls, TimeoutLog};
use crate::controller::principal::RequestPrincipal;

/// Kafka's `connections.max.idle.ms` default: an idle connection is closed after this long.
pub const CONNECTION_MAX_IDLE: Duration = Duration::from_secs(600);

/// Bytes read into a frame buffer before more is known to be coming; a frame's claimed size
/// never sizes an allocation by itself.
const FRAME_READ_CHUNK: usize = 64 * 1024;

/// Binds a controller listener. Errors name the listener and address.
pub async fn bind(name: &str, addr: &str) -> Result<TcpListener, String> {
    TcpListener::bind(addr).await.map_err(|e| {
        format!(
            "could not bind listener {name} to {addr}: {e}; check that the port is free and the \
             address is local"
        )
    })
}

/// Accepts connections forever, serving each on its own task. Raft and controller requests go
/// to `node` (a process without one closes their connections). With `tls` (an SSL listener)
/// each connection begins with a TLS handshake.
pub async fn serve(
    listener: TcpListener,
    name: String,
    ctx: Arc<ServerContext>,
    node: Option<NodeHandle>,
    tls: Option<Arc<LiveTls>>,
) {
    // Kafka's prefix for its socket server, so that existing greps find these lines.
    let prefix = format!(
        "SocketServer listenerType=CONTROLLER, nodeId={}",
        ctx.node_id
    );
    let span = tracing::error_span!("component", component = prefix.as_str());
    serve_on(listener, name, ctx, node, tls)
        .instrument(span)
        .await
}

async fn serve_on(
    listener: TcpListener,
    name: String,
    ctx: Arc<ServerContext>,
    node: Option<NodeHandle>,
    tls: Option<Arc<LiveTls>>,
) {
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    info!(target: "kraftd::socket", "Listening for {name} on {local}");
    let timeouts = TimeoutLog::new(&name);
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let _ = stream.set_nodelay(true);
                let ctx = ctx.clone();
                let node = node.clone();
                let name = name.clone();
                let tls = tls.clone();
                let timeouts = timeouts.clone();
                tokio::spawn(
                    async move {
                        debug!(target: "kraftd::socket", "Accepted connection from {peer} on {name}");
                        match tls {
                            // PLAINTEXT: the connection is anonymous, from the peer's address.
                            None => {
                                let principal = RequestPrincipal::anonymous(peer.ip());
                                serve_connection(stream, peer, &name, principal, ctx, node).await
                            }
                            Some(tls) => match tls::accept(&tls, stream, peer).await {
                                Ok((stream, principal)) => {
                                    serve_connection(stream, peer, &name, principal, ctx, node)
                                        .await
                                }
                                Err(AcceptError::TimedOut) => timeouts.closed(peer),
                                // Java's words and level for a refused handshake (its
                                // Selector logs "Failed authentication with ..." at INFO).
                                Err(e) => info!(
                                    target: "kraftd::socket",
                                    "Failed authentication with {peer} on {name} ({e})"
                                ),
                            },
                        }
                    }
                    .in_current_span(),
                );
            }
            Err(e) => {
                // Usually fd exhaustion: back off rather than spin.
                warn!(target: "kraftd::socket", "accept on {name} failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// How reading one frame ended.
#[derive(Debug)]
enum Read {
    Frame(Vec<u8>),
    /// Clean close between frames.
    Eof,
    /// Anything else that ends the connection, with the log line's reason.
    Fail(String),
}

async fn read_frame<R: AsyncRead + Unpin>(rd: &mut R, max: usize) -> Read {
    let mut size_buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match rd.read(&mut size_buf[got..]).await {
            Ok(0) if got == 0 => return Read::Eof,
            // A TLS client that closes without close_notify, between requests: a close like
            // any other (Java logs a disconnect at DEBUG).
            Err(e) if got == 0 && e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Read::Eof
            }
            Ok(0) => {
                return Read::Fail(format!(
                    "connection closed inside a size prefix ({got} of 4 bytes)"
                ))
            }
            Ok(n) => got += n,
            Err(e) => return Read::Fail(format!("read failed: {e}")),
        }
    }
    let size = i32::from_be_bytes(size_buf);
    if size < 0 {
        return Read::Fail(format!("invalid request size {size}"));
    }
    let size = size as usize;
    if size > max {
        return Read::Fail(format!(
            "request size {size} is larger than the maximum {max} (socket.request.max.bytes)"
        ));
    }
    let mut frame = Vec::with_capacity(size.min(FRAME_READ_CHUNK));
    match rd.take(size as u64).read_to_end(&mut frame).await {
        Ok(n) if n == size => Read::Frame(frame),
        Ok(n) => Read::Fail(format!(
            "connection closed after {n} of a {size}-byte request"
        )),
        Err(e) => Read::Fail(format!(
            "read failed after {} of a {size}-byte request: {e}",
            frame.len()
        )),
    }
}

/// Serves requests on an accepted connection (plain or TLS) as `connection`, its principal.
async fn serve_connection<S: AsyncRead + AsyncWrite + Send + Unpin>(
    stream: S,
    peer: SocketAddr,
    listener: &str,
    connection: RequestPrincipal,
    ctx: Arc<ServerContext>,
    node: Option<NodeHandle>,
) {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut rd = BufReader::new(rd);
    loop {
        let read = match tokio::time::timeout(
            CONNECTION_MAX_IDLE,
            read_frame(&mut rd, ctx.max_request_bytes),
        )
        .await
        {
            Ok(r) => r,
            Err(_) => {
                debug!(target: "kraftd::socket", "Closing idle connection from {peer}");
                return;
            }
        };
        let frame = match read {
            Read::Frame(f) => f,
            Read::Eof => {
                debug!(target: "kraftd::socket", "Connection from {peer} closed");
                return;
            }
            Read::Fail(reason) => {
                warn!(target: "kraftd::socket", "Closing connection from {peer}: {reason}");
                return;
            }
        };
        let outcome = match api::handle(&ctx, listener, &connection, &frame) {
            Outcome::Raft(call) => raft_answer(node.as_ref(), listener, call).await,
            Outcome::Node(call) => node_answer(node.as_ref(), listener, &connection, call).await,
            other => other,
        };
        match outcome {
            Outcome::Raft(_) | Outcome::Node(_) => {
                unreachable!("node calls are answered above")
            }
            Outcome::Respond(bytes) => {
                // A TLS stream holds written bytes until flushed.
                if let Err(e) = async {
                    wr.write_all(&bytes).await?;
                    wr.flush().await
                }
                .await
                {
                    debug!(target: "kraftd::socket", "Write to {peer} failed: {e}");
                    return;
                }
            }
            Outcome::Close(reason) => {
                warn!(target: "kraftd::socket", "Closing connection from {peer}: {reason}");
                return;
            }
        }
    }
}

/// Waits for the node loop's answer to a raft request. The connection reads nothing else
/// meanwhile, so a long-polling Fetch holds its connection as in Kafka.
async fn raft_answer(node: Option<&NodeHandle>, listener: &str, call: api::RaftCall) -> Outcome {
    let api::RaftCall {
        api_key,
        api_version,
        correlation_id,
        request,
        enveloped,
    } = call;
    node_reply(
        node,
        api_key,
        |node| node.submit(listener, request),
        |response| api::answer_frame(api_key, api_version, correlation_id, enveloped, &response),
    )
    .await
}

/// Waits for the node loop's answer to a controller request: sent once the records it decided
/// commit, or at once when it is refused or needs no records.
async fn node_answer(
    node: Option<&NodeHandle>,
    listener: &str,
    connection: &RequestPrincipal,
    call: api::NodeCall,
) -> Outcome {
    let api::NodeCall {
        api_key,
        api_version,
        correlation_id,
        request,
        enveloped,
        principal,
    } = call;
    // A direct request is the connection's.
    let principal = principal.unwrap_or_else(|| connection.clone());
    node_reply(
        node,
        api_key,
        |node| node.call(listener, principal, request),
        |response| api::answer_reply(&response, api_key, api_version, correlation_id, enveloped),
    )
    .await
}

/// Hands a request to the node loop with `submit` and frames its answer; a process without a
/// node loop, or a loop that stopped, closes the connection.
async fn node_reply<T>(
    node: Option<&NodeHandle>,
    api_key: i16,
    submit: impl FnOnce(&NodeHandle) -> Result<tokio::sync::oneshot::Receiver<T>, NodeStopped>,
    frame: impl FnOnce(T) -> Outcome,
) -> Outcome {
    let closed = |why: &str| {
        Outcome::Close(api::CloseReason::NodeUnavailable {
            api_key,
            why: why.to_string(),
        })
    };
    let Some(node) = node else {
        return closed("this process runs no raft node");
    };
    let reply = match submit(node) {
        Ok(r) => r,
        Err(e) => return closed(&e.to_string()),
    };
    match reply.await {
        Ok(response) => frame(response),
        Err(_) => closed(&NodeStopped::BeforeAnswering.to_string()),
    }
}
