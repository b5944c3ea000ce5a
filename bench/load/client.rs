//! A client of the controller quorum as a broker's or an admin client's channel to the active
//! controller: requests go to the node believed to lead; a disconnect or a NOT_CONTROLLER answer
//! moves that belief to the next node and the request is sent again, until a deadline.
//!
//! The connection handling (ApiVersions handshake, version negotiation, correlation ids,
//! timeouts, reconnection) is kraftd's own outbound client, `kraftd::server::peer`, and so is
//! its TLS on SSL controller listeners (`PeerSettings::tls`, a client certificate for mutual TLS).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::{
    AlterPartitionResponse, BrokerHeartbeatResponse, BrokerRegistrationResponse,
    CreateTopicsResponse, DescribeQuorumResponse,
};
use kraftd::raft::convert::describe;
use kraftd::server::peer::{Completion, FailKind, OutboundRequest, PeerSettings, Peers};
use kraftd::server::tls::LiveTls;

use super::error::LoadError;

/// Pause before a request is sent again to the next controller.
const RETRY_BACKOFF: Duration = Duration::from_millis(20);

/// The controllers of a quorum and which of them the clients believe leads; shared by every
/// client of one run, so that one client's discovery serves all.
pub struct Controllers {
    nodes: Vec<(i32, String)>,
    leader: AtomicUsize,
    /// The TLS every client dials with (SSL controller listeners); `None`: PLAINTEXT.
    tls: Option<Arc<LiveTls>>,
}

impl Controllers {
    /// Controllers reached with `tls` (kraftd's own client TLS: its key store is the client's
    /// certificate, its trust store the servers' CA), or on PLAINTEXT with `None`.
    pub fn secured(nodes: &[(i32, SocketAddr)], tls: Option<Arc<LiveTls>>) -> Arc<Controllers> {
        assert!(!nodes.is_empty(), "a quorum has at least one controller");
        Arc::new(Controllers {
            nodes: nodes.iter().map(|(id, a)| (*id, a.to_string())).collect(),
            leader: AtomicUsize::new(0),
            tls,
        })
    }

    /// The node id the clients send to now.
    pub fn leader_id(&self) -> i32 {
        self.nodes[self.leader.load(Ordering::Relaxed)].0
    }

    /// Points every client at `id` (e.g. after DescribeQuorum named it).
    pub fn set_leader(&self, id: i32) {
        if let Some(i) = self.nodes.iter().position(|(n, _)| *n == id) {
            self.leader.store(i, Ordering::Relaxed);
        }
    }

    /// Moves the belief past node `failed`, unless another client already moved it.
    fn skip(&self, failed: usize) {
        let next = (failed + 1) % self.nodes.len();
        let _ = self
            .leader
            .compare_exchange(failed, next, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// An answer that may say "I am not the active controller".
pub trait ControllerReply: Message {
    fn not_controller(&self) -> bool;
}

impl ControllerReply for BrokerRegistrationResponse {
    fn not_controller(&self) -> bool {
        ErrorCode(self.error_code) == ErrorCode::NOT_CONTROLLER
    }
}

impl ControllerReply for BrokerHeartbeatResponse {
    fn not_controller(&self) -> bool {
        ErrorCode(self.error_code) == ErrorCode::NOT_CONTROLLER
    }
}

impl ControllerReply for AlterPartitionResponse {
    fn not_controller(&self) -> bool {
        ErrorCode(self.error_code) == ErrorCode::NOT_CONTROLLER
    }
}

impl ControllerReply for CreateTopicsResponse {
    fn not_controller(&self) -> bool {
        self.topics
            .iter()
            .any(|t| ErrorCode(t.error_code) == ErrorCode::NOT_CONTROLLER)
    }
}

/// DescribeQuorum is raft's: only the leader describes the quorum.
impl ControllerReply for DescribeQuorumResponse {
    fn not_controller(&self) -> bool {
        describe::response_from_wire(self).partition_error == ErrorCode::NOT_LEADER_OR_FOLLOWER
    }
}

/// One connection per controller, one request at a time: a broker's heartbeat channel, or
/// one admin client.
pub struct ControllerClient {
    controllers: Arc<Controllers>,
    peers: Peers,
    completions: mpsc::UnboundedReceiver<Completion>,
    completions_tx: mpsc::UnboundedSender<Completion>,
    next_token: u64,
    /// How long one call may go on trying.
    pub deadline: Duration,
}

impl ControllerClient {
    /// A client; its connections open on first use. Call within a tokio runtime.
    pub fn new(controllers: Arc<Controllers>, client_id: &'static str) -> ControllerClient {
        let (completions_tx, completions) = mpsc::unbounded_channel();
        let settings = PeerSettings {
            // A loaded Java controller may take seconds to answer a large CreateTopics.
            request_timeout: Duration::from_secs(30),
            client_id,
            tls: controllers.tls.clone(),
            ..PeerSettings::default()
        };
        let peers = Peers::start(controllers.nodes.clone(), settings, completions_tx.clone());
        ControllerClient {
            controllers,
            peers,
            completions,
            completions_tx,
            next_token: 0,
            deadline: Duration::from_secs(60),
        }
    }

    /// Sends `request` at the highest version both sides serve.
    pub async fn call<Req, Resp>(&mut self, request: &Req) -> Result<Resp, LoadError>
    where
        Req: ApiMessage + Send + Sync + 'static,
        Resp: ControllerReply,
    {
        self.call_versions(request, Req::LOWEST_VERSION, Req::HIGHEST_VERSION)
            .await
    }

    /// Sends `request` at the highest version in `min..=max` the controller serves.
    pub async fn call_versions<Req, Resp>(
        &mut self,
        request: &Req,
        min: i16,
        max: i16,
    ) -> Result<Resp, LoadError>
    where
        Req: ApiMessage + Send + Sync + 'static,
        Resp: ControllerReply,
    {
        let started = Instant::now();
        let until = started + self.deadline;
        loop {
            let index = self.controllers.leader.load(Ordering::Relaxed);
            let node = self.controllers.nodes[index].0;
            let token = self.next_token;
            self.next_token += 1;
            let body = request.clone();
            let outbound = OutboundRequest {
                token,
                api_key: Req::API_KEY,
                min_version: min,
                max_version: max,
                encode_body: Box::new(move |v| body.encode_to_vec(v)),
            };
            self.peers.send(node, outbound, &self.completions_tx);
            let last = match self.completion(token, until).await {
                Some(Completion::Response { version, body, .. }) => {
                    let answer =
                        Resp::decode_exact(&body, version).map_err(|source| LoadError::Decode {
                            api: Req::NAME,
                            version,
                            source,
                        })?;
                    if !answer.not_controller() {
                        return Ok(answer);
                    }
                    self.controllers.skip(index);
                    format!("node {node} is not the active controller")
                }
                Some(Completion::Failed {
                    reason,
                    kind: FailKind::UnsupportedVersion,
                    ..
                }) => {
                    return Err(LoadError::Unexpected(format!(
                        "{}: node {node}: {reason}",
                        Req::NAME
                    )))
                }
                Some(Completion::Failed { reason, .. }) => {
                    self.controllers.skip(index);
                    format!("node {node}: {reason}")
                }
                None => format!("node {node}: no answer"),
            };
            if Instant::now() + RETRY_BACKOFF >= until {
                return Err(LoadError::NoAnswer {
                    api: Req::NAME,
                    waited: started.elapsed(),
                    last,
                });
            }
            tokio::time::sleep(RETRY_BACKOFF).await;
        }
    }

    /// The completion of request `token`, skipping late ones of requests given up on.
    async fn completion(&mut self, token: u64, until: Instant) -> Option<Completion> {
        loop {
            let c = tokio::time::timeout_at(until, self.completions.recv())
                .await
                .ok()??;
            let got = match &c {
                Completion::Response { token, .. } | Completion::Failed { token, .. } => *token,
            };
            if got == token {
                return Some(c);
            }
        }
    }
}
