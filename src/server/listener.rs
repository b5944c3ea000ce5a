//! The socket side of the wire front end: one tokio listener per controller listener, one task
//! per connection. A connection handles its requests one at a time, in order, as Kafka does
//! (it stops reading a connection while a request is in flight), so pipelined requests are
//! answered in the order they were sent.
//!
//! A SASL listener's connections authenticate first (`sasl::server::Session`, driven here);
//! the listeners share the connection limits of `limits`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, WriteHalf};
use tokio::net::TcpListener;
use tracing::{debug, info, warn, Instrument};

use super::api::{self, Outcome};
use super::context::ServerContext;
use super::node::{NodeHandle, NodeStopped};
use super::sasl::scram::{java_nonce, ScramServer};
use super::sasl::server::{Action, ApiVersionsAnswer, Exchange, Services, Session};
use super::sasl::settings::ListenerSasl;
use super::sasl::Mechanism;
use super::tls::{self, AcceptError, LiveTls, TimeoutLog};
use crate::controller::principal::RequestPrincipal;

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

/// A listener's security: TLS for SSL and SASL_SSL, SASL for SASL_PLAINTEXT and SASL_SSL.
#[derive(Clone, Default)]
pub struct Security {
    pub tls: Option<Arc<LiveTls>>,
    pub sasl: Option<Arc<ListenerSasl>>,
}

/// Accepts connections forever, serving each on its own task. Raft and controller requests go
/// to `node` (a process without one closes their connections).
pub async fn serve(
    listener: TcpListener,
    name: String,
    ctx: Arc<ServerContext>,
    node: Option<NodeHandle>,
    security: Security,
) {
    // Kafka's prefix for its socket server, so that existing greps find these lines.
    let prefix = format!(
        "SocketServer listenerType=CONTROLLER, nodeId={}",
        ctx.node_id
    );
    let span = tracing::error_span!("component", component = prefix.as_str());
    serve_on(listener, name, ctx, node, security)
        .instrument(span)
        .await
}

async fn serve_on(
    listener: TcpListener,
    name: String,
    ctx: Arc<ServerContext>,
    node: Option<NodeHandle>,
    security: Security,
) {
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    info!(target: "kraftd::socket", "Listening for {name} on {local}");
    let limits = ctx.connections.clone();
    let timeouts = TimeoutLog::new(&name);
    loop {
        // At max.connections the listener stops accepting, as Java's acceptor blocks.
        limits.wait_for_slot(&name).await;
        match listener.accept().await {
            Ok((stream, peer)) => {
                let counted = match limits.register(&name, peer.ip()) {
                    Ok(guard) => guard,
                    Err(too_many) => {
                        info!(target: "kraftd::socket", "{too_many}");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let ctx = ctx.clone();
                let node = node.clone();
                let name = name.clone();
                let security = security.clone();
                let timeouts = timeouts.clone();
                tokio::spawn(
                    async move {
                        let _counted = counted;
                        debug!(target: "kraftd::socket", "Accepted connection from {peer} on {name}");
                        let conn = Conn { peer, listener: &name, ctx, node, sasl: security.sasl };
                        match security.tls {
                            // PLAINTEXT: the connection is anonymous, from the peer's address.
                            None => {
                                let principal = RequestPrincipal::anonymous(peer.ip());
                                conn.serve(stream, principal).await
                            }
                            Some(tls) => match tls::accept(&tls, stream, peer).await {
                                Ok((stream, principal)) => conn.serve(stream, principal).await,
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
    /// A size prefix over the limit, or negative.
    TooLarge(i64),
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
    let Some(size) = usize::try_from(size).ok().filter(|s| *s <= max) else {
        return Read::TooLarge(size.into());
    };
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

/// One accepted connection.
struct Conn<'a> {
    peer: SocketAddr,
    listener: &'a str,
    ctx: Arc<ServerContext>,
    node: Option<NodeHandle>,
    sasl: Option<Arc<ListenerSasl>>,
}

/// What a SASL session asks of the server.
struct SessionServices<'a> {
    ctx: &'a ServerContext,
    listener: &'a str,
    anonymous: &'a RequestPrincipal,
    sasl: &'a ListenerSasl,
}

impl Services for SessionServices<'_> {
    fn api_versions(&self, frame: &[u8]) -> ApiVersionsAnswer {
        match api::handle(self.ctx, self.listener, self.anonymous, frame) {
            // An ApiVersions answer's body starts with its error code, after the size and
            // the (v0) response header's correlation id.
            Outcome::Respond(bytes) => match bytes.get(8..10) {
                Some([0, 0]) => ApiVersionsAnswer::Accepted(bytes),
                _ => ApiVersionsAnswer::Refused(bytes),
            },
            Outcome::Close(reason) => ApiVersionsAnswer::Close(reason.to_string()),
            Outcome::Raft(_) | Outcome::Node(_) => {
                ApiVersionsAnswer::Close("ApiVersions was not answered in place".into())
            }
        }
    }

    fn exchange(&self, mechanism: Mechanism) -> Option<Exchange> {
        let enabled = self
            .sasl
            .mechanisms
            .iter()
            .find(|m| m.mechanism == mechanism)?;
        match mechanism {
            Mechanism::Plain => enabled.plain_users.clone().map(Exchange::Plain),
            Mechanism::ScramSha256 | Mechanism::ScramSha512 => {
                let scram = mechanism.scram()?;
                Some(Exchange::Scram(Box::new(ScramServer::new(
                    scram,
                    self.ctx.scram_credentials(),
                    java_nonce(rand::random()),
                ))))
            }
        }
    }
}

/// The wall clock in ms, as sessions and credentials count time.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Conn<'_> {
    /// Serves requests on an accepted connection (plain or TLS); `principal` is its identity
    /// unless SASL gives it another.
    async fn serve<S: AsyncRead + AsyncWrite + Send + Unpin>(
        self,
        stream: S,
        mut principal: RequestPrincipal,
    ) {
        let peer = self.peer;
        let (rd, mut wr) = tokio::io::split(stream);
        let mut rd = BufReader::new(rd);
        let settings = &self.ctx.connections.settings;
        let mut session = self.sasl.clone().map(Session::new);
        let anonymous = RequestPrincipal::anonymous(peer.ip());
        loop {
            let max = session.as_ref().map_or(self.ctx.max_request_bytes, |s| {
                s.max_frame(self.ctx.max_request_bytes)
            });
            let read = read_frame(&mut rd, max);
            let read = match settings.max_idle {
                None => read.await,
                Some(idle) => match tokio::time::timeout(idle, read).await {
                    Ok(r) => r,
                    Err(_) => {
                        debug!(target: "kraftd::socket", "Closing idle connection from {peer}");
                        return;
                    }
                },
            };
            let frame = match read {
                Read::Frame(f) => f,
                Read::TooLarge(size) => match session.as_mut().filter(|s| s.authenticating()) {
                    Some(s) => {
                        let action = s.oversized(size);
                        self.act(action, &mut wr).await;
                        return;
                    }
                    None => {
                        if size < 0 {
                            warn!(target: "kraftd::socket", "Closing connection from {peer}: invalid request size {size}");
                        } else {
                            warn!(target: "kraftd::socket", "Closing connection from {peer}: request size {size} is larger than the maximum {max} (socket.request.max.bytes)");
                        }
                        return;
                    }
                },
                Read::Eof => {
                    debug!(target: "kraftd::socket", "Connection from {peer} closed");
                    return;
                }
                Read::Fail(reason) => {
                    warn!(target: "kraftd::socket", "Closing connection from {peer}: {reason}");
                    return;
                }
            };
            if let (Some(s), Some(sasl)) = (session.as_mut(), self.sasl.as_deref()) {
                let services = SessionServices {
                    ctx: &self.ctx,
                    listener: self.listener,
                    anonymous: &anonymous,
                    sasl,
                };
                let action = s.receive(&frame, now_ms(), &services);
                if let Some(who) = s.authenticated() {
                    if principal.name != who.user || principal.principal_type != "User" {
                        principal = RequestPrincipal::user(who.user.clone(), peer.ip());
                    }
                }
                if action != Action::Serve {
                    if self.act(action, &mut wr).await {
                        continue;
                    }
                    return;
                }
            }
            if !self.request(&frame, &principal, &mut wr).await {
                return;
            }
        }
    }

    /// Carries out a SASL action; false when the connection is to close.
    async fn act<W: AsyncWrite + Unpin>(&self, action: Action, wr: &mut WriteHalf<W>) -> bool {
        let peer = self.peer;
        match action {
            Action::Serve => true,
            Action::Reply(bytes) => write(wr, &bytes, peer).await,
            Action::Fail { reply, why } => {
                info!(target: "kraftd::socket", "Failed authentication with {peer} on {}: {why}", self.listener);
                tokio::time::sleep(self.ctx.connections.settings.failed_authentication_delay).await;
                if let Some(reply) = reply {
                    write(wr, &reply, peer).await;
                }
                false
            }
            Action::Close(why) => {
                info!(target: "kraftd::socket", "Closing connection from {peer} on {}: {why}", self.listener);
                false
            }
        }
    }

    /// Serves one request as `principal`; false when the connection is to close.
    async fn request<W: AsyncWrite + Unpin>(
        &self,
        frame: &[u8],
        principal: &RequestPrincipal,
        wr: &mut WriteHalf<W>,
    ) -> bool {
        let (ctx, listener, node) = (&self.ctx, self.listener, self.node.as_ref());
        let outcome = match api::handle(ctx, listener, principal, frame) {
            Outcome::Raft(call) => raft_answer(node, listener, call).await,
            Outcome::Node(call) => node_answer(node, listener, principal, call).await,
            other => other,
        };
        match outcome {
            Outcome::Raft(_) | Outcome::Node(_) => {
                unreachable!("node calls are answered above")
            }
            Outcome::Respond(bytes) => write(wr, &bytes, self.peer).await,
            Outcome::Close(reason) => {
                warn!(target: "kraftd::socket", "Closing connection from {}: {reason}", self.peer);
                false
            }
        }
    }
}

/// Writes a frame; a TLS stream holds written bytes until flushed. False if it failed.
async fn write<W: AsyncWrite + Unpin>(
    wr: &mut WriteHalf<W>,
    bytes: &[u8],
    peer: SocketAddr,
) -> bool {
    match async {
        wr.write_all(bytes).await?;
        wr.flush().await
    }
    .await
    {
        Ok(()) => true,
        Err(e) => {
            debug!(target: "kraftd::socket", "Write to {peer} failed: {e}");
            false
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
