//! The HTTP listener (`kraftd.http.listener=HOST:PORT`; off when unset): `GET /metrics`
//! (Prometheus text format 0.0.4, or OpenMetrics when the Accept header asks for it),
//! `GET /healthz` and `GET /readyz` (`probes`).
//!
//! hyper's HTTP/1.1 server on kraftd's tokio runtime. Hostile or broken clients are bounded:
//! request heads of at most [`MAX_HEAD_BYTES`] and [`MAX_HEADERS`] headers, read within
//! [`HEAD_READ_TIMEOUT`]; at most [`MAX_CONNECTIONS`] connections (more are closed at once);
//! a malformed request gets hyper's 400 (431 for an oversized head) or a close, and one log
//! line; the listener goes on serving.

pub mod probes;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tracing::{debug, warn};

use super::metrics::health::LoopHealth;
use super::metrics::raft::ChannelCounters;
use super::metrics::render;
use super::metrics::text::Format;
use super::node::NodeHandle;

/// The key that turns the listener on.
pub const HTTP_LISTENER_KEY: &str = "kraftd.http.listener";
/// The keys of this module (kraftd's own, not Kafka's).
pub const HTTP_KEYS: &[&str] = &[HTTP_LISTENER_KEY];

/// At most this many connections at once; more are closed as they come.
pub const MAX_CONNECTIONS: usize = 64;
/// The largest request head (request line and headers) read; larger ones get 431.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
pub const MAX_HEADERS: usize = 64;
/// A request head must arrive within this (on a kept-alive connection, from the previous
/// answer on: an idle connection is closed then).
pub const HEAD_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection lives at most this long (Prometheus reconnects).
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);
/// How long a scrape waits for the node loop's sample.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// `/healthz` fails once one turn of the node loop has been busy this long. Turns are short:
/// replay and snapshot loading are split across turns, fsyncs are one batch's.
pub const STUCK_AFTER_MS: u64 = 30_000;

/// `kraftd.http.listener` from the configuration: `None` when unset or empty.
pub fn listener_address(
    originals: &BTreeMap<String, String>,
) -> Result<Option<SocketAddr>, String> {
    let Some(value) = originals.get(HTTP_LISTENER_KEY).map(|v| v.trim()) else {
        return Ok(None);
    };
    if value.is_empty() {
        return Ok(None);
    }
    // ":9404" listens on every interface, as a Kafka listener without a host does.
    let spec = match value.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => value.to_string(),
    };
    let bad = |why: String| format!("{HTTP_LISTENER_KEY}: '{value}' is not HOST:PORT: {why}");
    spec.to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .map(Some)
        .ok_or_else(|| bad("the host resolves to no address".into()))
}

/// What the handlers read.
pub struct HttpState {
    /// The node loop (`None`: a listener without one, in tests): `/metrics` asks it for a sample.
    pub node: Option<NodeHandle>,
    pub health: Arc<LoopHealth>,
    pub channel: Arc<ChannelCounters>,
    /// The metadata log directory, which `/readyz` writes to and whose filesystem's space the
    /// node loop reads for `/metrics`.
    pub metadata_dir: PathBuf,
    pub process: Option<crate::server::metrics::process::ProcessMetrics>,
    /// The last exposition's size: the next one reserves as much up front.
    pub last_exposition_bytes: std::sync::atomic::AtomicUsize,
}

pub async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("{HTTP_LISTENER_KEY}: cannot listen on {addr}: {e}"))
}

/// Accepts connections until the runtime stops.
pub async fn serve(listener: TcpListener, state: Arc<HttpState>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // E.g. EMFILE: back off instead of spinning.
                warn!(target: "kraftd::http", "accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            warn!(target: "kraftd::http", "closing a connection from {peer}: {MAX_CONNECTIONS} already open");
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            // Requests answered on this connection: a timeout after one is a kept-alive
            // connection left idle (Prometheus keeps one per target between scrapes), not a
            // bad client.
            let answered = Arc::new(AtomicUsize::new(0));
            let counted = answered.clone();
            let service = service_fn(move |req| {
                let state = state.clone();
                let counted = counted.clone();
                async move {
                    let answer = route(&state, req).await;
                    counted.fetch_add(1, Ordering::Relaxed);
                    Ok::<_, Infallible>(answer)
                }
            });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_READ_TIMEOUT)
                // A client that shuts its write side down after a request still gets the
                // answer (else hyper drops an answer not ready at the EOF, e.g. /readyz's).
                .half_close(true)
                .max_buf_size(MAX_HEAD_BYTES)
                .max_headers(MAX_HEADERS);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            match tokio::time::timeout(CONNECTION_LIFETIME, conn).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) if bad_http(e.is_timeout(), answered.load(Ordering::Relaxed)) => {
                    warn!(target: "kraftd::http", "bad HTTP from {peer}: {e}")
                }
                Ok(Err(_)) => {
                    debug!(target: "kraftd::http", "closing the connection from {peer}: idle for {HEAD_READ_TIMEOUT:?} after a request")
                }
                Err(_) => {
                    debug!(target: "kraftd::http", "closing the connection from {peer} after {CONNECTION_LIFETIME:?}")
                }
            }
            drop(slot);
        });
    }
}

/// Whether a connection that ended in an error (`timed_out`: no request head in time) after
/// `answered` requests had a bad client, worth a warning. A timeout after an answer is a
/// kept-alive connection left idle, as Prometheus leaves one between scrapes.
fn bad_http(timed_out: bool, answered: usize) -> bool {
    !(timed_out && answered > 0)
}

type Answer = Response<Full<Bytes>>;

fn answer(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Answer {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn text(status: StatusCode, line: String) -> Answer {
    answer(status, "text/plain; charset=utf-8", format!("{line}\n"))
}

fn verdict(v: probes::Verdict) -> Answer {
    let status = if v.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    text(status, v.reason)
}

async fn route(state: &HttpState, req: Request<Incoming>) -> Answer {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method {} not allowed: GET only", req.method()),
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match req.uri().path() {
        "/metrics" => {
            let accept = req.headers().get(ACCEPT).and_then(|a| a.to_str().ok());
            metrics(state, Format::negotiate(accept)).await
        }
        "/healthz" => verdict(probes::healthz(state.health.state(), STUCK_AFTER_MS)),
        "/readyz" => {
            let dir = state.metadata_dir.clone();
            let written = tokio::task::spawn_blocking(move || probes::write_test(&dir))
                .await
                .unwrap_or_else(|e| Err(format!("the write test failed: {e}")));
            verdict(probes::readyz(state.health.state(), written))
        }
        path => text(
            StatusCode::NOT_FOUND,
            format!("no {path} here: kraftd serves /metrics, /healthz and /readyz"),
        ),
    }
}

async fn metrics(state: &HttpState, format: Format) -> Answer {
    let Some(node) = &state.node else {
        return text(StatusCode::SERVICE_UNAVAILABLE, "no node loop".into());
    };
    let asked = match node.metrics(state.metadata_dir.clone()) {
        Ok(rx) => rx,
        Err(e) => return text(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    };
    let sample = match tokio::time::timeout(SCRAPE_TIMEOUT, asked).await {
        Ok(Ok(sample)) => sample,
        Ok(Err(_)) => {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the node loop stopped before answering".into(),
            )
        }
        Err(_) => {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the node loop did not answer within {SCRAPE_TIMEOUT:?}"),
            )
        }
    };
    let mut sample = *sample;
    sample.kraftd.peer_rtt_seconds = state.channel.round_trips();
    let last = &state.last_exposition_bytes;
    let capacity = last.load(Ordering::Relaxed) + 1024;
    let body = render(
        &sample,
        &state.channel,
        state.process.as_ref(),
        format,
        capacity,
    );
    last.store(body.len(), Ordering::Relaxed);
    answer(StatusCode::OK, format.content_type(), body)
}

#[cfg(test)]
mod tests;
