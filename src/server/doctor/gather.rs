//! What `kraftd doctor` asks a live quorum: every controller endpoint it knows of is asked
//! DescribeQuorum (the leader answers with its view of every replica), and each voter is asked
//! its own `controller.quorum.*` settings (DescribeConfigs on its broker resource, as
//! `kafka-configs --bootstrap-controller` does). Connections go through the raft client's own
//! dialler (`server::peer`): TLS, SASL and the ApiVersions handshake as kraftd dials its peers,
//! and a failure says whether the name did not resolve, nothing listened, nothing answered, or
//! TLS or SASL refused.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::protocol::codec::{ApiMessage, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::describe_configs_request::DescribeConfigsResource;
use crate::protocol::messages::describe_quorum_response::ReplicaState;
use crate::protocol::messages::{
    DescribeConfigsRequest, DescribeConfigsResponse, DescribeQuorumResponse,
};
use crate::raft;
use crate::raft::convert::describe;
use crate::server::peer::{Completion, FailKind, OutboundRequest, PeerSettings, Peers};

/// Kafka's resource type BROKER, whose configs a controller describes for its own node id.
const BROKER_RESOURCE: i8 = 4;
/// The settings compared between voters.
pub const QUORUM_KEYS: [&str; 2] = [
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
];

/// One look at the quorum: what each endpoint answered, at `at` (ms since the first look).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub at_ms: u64,
    /// By address ("host:port"), every endpoint asked.
    pub endpoints: BTreeMap<String, Endpoint>,
}

impl Sample {
    /// The answer of the leader with the highest epoch, if any endpoint leads.
    pub fn leader(&self) -> Option<&LeaderView> {
        self.endpoints
            .values()
            .filter_map(|e| match e {
                Endpoint::Leads(v) => Some(v),
                _ => None,
            })
            .max_by_key(|v| v.epoch)
    }
}

/// What one controller endpoint did.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// It answered DescribeQuorum as the leader.
    Leads(LeaderView),
    /// It answered, but does not lead (NOT_LEADER_OR_FOLLOWER).
    Follows,
    /// It answered with another error.
    Refused { error: String },
    /// No answer.
    Unreachable { kind: FailKind, reason: String },
}

/// The leader's DescribeQuorum answer.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderView {
    pub leader_id: i32,
    pub epoch: i32,
    pub high_watermark: i64,
    pub voters: Vec<Replica>,
    pub observers: Vec<Replica>,
    /// The voters' endpoints (DescribeQuorum v2), one per voter: the first listener's.
    pub endpoints: BTreeMap<i32, String>,
    /// The doctor's wall clock (ms since the Unix epoch) when it asked and when the answer
    /// came: the round trip around the leader's own row, whose times are its clock's.
    pub asked_ms: (i64, i64),
}

/// One replica as the leader sees it; timestamps are the leader's wall clock in ms, -1 unknown.
#[derive(Debug, Clone, PartialEq)]
pub struct Replica {
    pub id: i32,
    pub log_end_offset: i64,
    pub last_fetch_ms: i64,
    pub last_caught_up_ms: i64,
}

/// A voter's own quorum settings, as it described them; `None` where it could not be asked.
#[derive(Debug, Clone, PartialEq)]
pub struct VoterSettings {
    pub voter: i32,
    pub address: String,
    /// Each of [`QUORUM_KEYS`] it has set, with its value; or why it could not be asked.
    pub settings: Result<BTreeMap<String, String>, String>,
}

/// Asks the quorum, through connections dialled with `settings`.
pub struct Gatherer {
    settings: PeerSettings,
    peers: Peers,
    /// Our peer id for each address (the dialler keys connections by id).
    ids: BTreeMap<String, i32>,
    completions: mpsc::UnboundedSender<Completion>,
    answers: mpsc::UnboundedReceiver<Completion>,
    next_token: u64,
    started: Instant,
}

impl Gatherer {
    pub fn new(settings: PeerSettings) -> Gatherer {
        let (completions, answers) = mpsc::unbounded_channel();
        Gatherer {
            peers: Peers::start(Vec::new(), settings.clone(), completions.clone()),
            settings,
            ids: BTreeMap::new(),
            completions,
            answers,
            next_token: 0,
            started: Instant::now(),
        }
    }

    /// One sample: DescribeQuorum to each of `addresses` and to every voter endpoint a
    /// leader's answer names.
    pub async fn sample(&mut self, addresses: &BTreeSet<String>) -> Sample {
        let at_ms = self.started.elapsed().as_millis() as u64;
        let mut endpoints = BTreeMap::new();
        let mut ask: BTreeSet<String> = addresses.clone();
        while !ask.is_empty() {
            let answers = self
                .ask_all(&ask, |_| describe_quorum_request(), describe_quorum_answer)
                .await;
            endpoints.extend(answers.into_iter().map(|(address, (mut e, asked_ms))| {
                if let Endpoint::Leads(view) = &mut e {
                    view.asked_ms = asked_ms;
                }
                (address, e)
            }));
            let named: BTreeSet<String> = endpoints
                .values()
                .filter_map(|e| match e {
                    Endpoint::Leads(view) => Some(view.endpoints.values().cloned()),
                    _ => None,
                })
                .flatten()
                .collect();
            ask = named
                .into_iter()
                .filter(|a| !endpoints.contains_key(a))
                .collect();
        }
        Sample { at_ms, endpoints }
    }

    /// Each voter's [`QUORUM_KEYS`], asked at its endpoint.
    pub async fn voter_settings(&mut self, voters: &BTreeMap<i32, String>) -> Vec<VoterSettings> {
        let by_address: BTreeMap<String, i32> =
            voters.iter().map(|(id, a)| (a.clone(), *id)).collect();
        let addresses: BTreeSet<String> = by_address.keys().cloned().collect();
        let answers = self
            .ask_all(
                &addresses,
                |address| describe_configs_request(by_address[address]),
                describe_configs_answer,
            )
            .await;
        answers
            .into_iter()
            .map(|(address, (settings, _))| VoterSettings {
                voter: by_address[&address],
                address,
                settings,
            })
            .collect()
    }

    /// Sends one request to each address and waits for every answer (or its failure: the
    /// dialler times each out). Each answer comes with the doctor's wall clock when its request
    /// was handed to the dialler and when the answer came.
    async fn ask_all<T>(
        &mut self,
        addresses: &BTreeSet<String>,
        request: impl Fn(&str) -> OutboundRequest,
        answer: impl Fn(Result<(i16, Vec<u8>), (FailKind, String)>) -> T,
    ) -> BTreeMap<String, (T, (i64, i64))> {
        let mut waiting: BTreeMap<u64, (String, i64)> = BTreeMap::new();
        for address in addresses {
            let id = self.peer_id(address);
            let mut r = request(address);
            self.next_token += 1;
            r.token = self.next_token;
            waiting.insert(r.token, (address.clone(), wall_ms()));
            self.peers.send(id, r, &self.completions);
        }
        let mut out = BTreeMap::new();
        // The dialler fails every request within its connect and request timeouts; this bound
        // only guards against a completion that never comes.
        let deadline = Instant::now() + self.settings.request_timeout * 4;
        while !waiting.is_empty() {
            let got = tokio::time::timeout_at(deadline, self.answers.recv()).await;
            let Ok(Some(completion)) = got else {
                for (_, (address, sent)) in std::mem::take(&mut waiting) {
                    let reason = "no answer and no failure from the connection".to_string();
                    let failed = answer(Err((FailKind::TimedOut, reason)));
                    out.insert(address, (failed, (sent, wall_ms())));
                }
                break;
            };
            let (token, result) = match completion {
                Completion::Response {
                    token,
                    version,
                    body,
                    ..
                } => (token, Ok((version, body))),
                Completion::Failed {
                    token,
                    reason,
                    kind,
                    ..
                } => (token, Err((kind, reason))),
            };
            if let Some((address, sent)) = waiting.remove(&token) {
                out.insert(address, (answer(result), (sent, wall_ms())));
            }
        }
        out
    }

    fn peer_id(&mut self, address: &str) -> i32 {
        if let Some(id) = self.ids.get(address) {
            return *id;
        }
        let id = self.ids.len() as i32;
        self.ids.insert(address.to_string(), id);
        self.peers
            .ensure(id, address, self.settings.clone(), &self.completions);
        id
    }
}

/// The doctor's wall clock, in ms since the Unix epoch.
pub fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The raft client's own DescribeQuorum of the metadata partition.
fn describe_quorum_request() -> OutboundRequest {
    outbound(describe::request_to_wire(
        &raft::msg::DescribeQuorumRequest { partition_ok: true },
    ))
}

/// `request` at any version both sides serve (the token is set when it is sent).
fn outbound<R: ApiMessage + Send + Sync + 'static>(request: R) -> OutboundRequest {
    OutboundRequest {
        token: 0,
        api_key: R::API_KEY,
        min_version: R::LOWEST_VERSION,
        max_version: R::HIGHEST_VERSION,
        encode_body: Box::new(move |v| request.encode_to_vec(v)),
    }
}

fn describe_quorum_answer(result: Result<(i16, Vec<u8>), (FailKind, String)>) -> Endpoint {
    let (version, body) = match result {
        Ok(answer) => answer,
        Err((kind, reason)) => return Endpoint::Unreachable { kind, reason },
    };
    let answer = match DescribeQuorumResponse::decode_exact(&body, version) {
        Ok(a) => a,
        Err(e) => {
            return Endpoint::Refused {
                error: format!("an undecodable DescribeQuorum answer: {e}"),
            }
        }
    };
    let partition = answer
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .next();
    let code = match partition {
        Some(p) if answer.error_code == 0 => ErrorCode(p.error_code),
        _ => ErrorCode(answer.error_code),
    };
    if code == ErrorCode::NOT_LEADER_OR_FOLLOWER {
        return Endpoint::Follows;
    }
    let Some(p) = partition.filter(|_| code == ErrorCode::NONE) else {
        return Endpoint::Refused {
            error: code.name().to_string(),
        };
    };
    let replica = |r: &ReplicaState| Replica {
        id: r.replica_id,
        log_end_offset: r.log_end_offset,
        last_fetch_ms: r.last_fetch_timestamp,
        last_caught_up_ms: r.last_caught_up_timestamp,
    };
    let endpoints = answer
        .nodes
        .iter()
        .filter_map(|n| {
            let l = n.listeners.first()?;
            Some((n.node_id, format!("{}:{}", l.host, l.port)))
        })
        .collect();
    Endpoint::Leads(LeaderView {
        leader_id: p.leader_id,
        epoch: p.leader_epoch,
        high_watermark: p.high_watermark,
        voters: p.current_voters.iter().map(replica).collect(),
        observers: p.observers.iter().map(replica).collect(),
        endpoints,
        asked_ms: (0, 0),
    })
}

fn describe_configs_request(node: i32) -> OutboundRequest {
    let request = DescribeConfigsRequest {
        resources: vec![DescribeConfigsResource {
            resource_type: BROKER_RESOURCE,
            resource_name: node.to_string(),
            configuration_keys: Some(QUORUM_KEYS.iter().map(|k| k.to_string()).collect()),
            ..Default::default()
        }],
        ..Default::default()
    };
    outbound(request)
}

fn describe_configs_answer(
    result: Result<(i16, Vec<u8>), (FailKind, String)>,
) -> Result<BTreeMap<String, String>, String> {
    let (version, body) = result.map_err(|(_, reason)| reason)?;
    let answer = DescribeConfigsResponse::decode_exact(&body, version)
        .map_err(|e| format!("an undecodable DescribeConfigs answer: {e}"))?;
    let result = answer
        .results
        .first()
        .ok_or("a DescribeConfigs answer with no result")?;
    if result.error_code != 0 {
        return Err(format!(
            "DescribeConfigs refused: {}",
            result
                .error_message
                .clone()
                .unwrap_or_else(|| ErrorCode(result.error_code).name().to_string())
        ));
    }
    Ok(result
        .configs
        .iter()
        .filter_map(|c| Some((c.name.clone(), c.value.clone()?)))
        .filter(|(_, v)| !v.is_empty())
        .collect())
}

/// How long the dialler waits for each step, for `--timeout-ms`.
pub fn peer_settings_with_timeout(mut settings: PeerSettings, timeout: Duration) -> PeerSettings {
    settings.request_timeout = timeout;
    settings.client_id = "kraftd-doctor";
    settings
}
