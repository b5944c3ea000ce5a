//! The raft configuration: Kafka's `QuorumConfig` keys and defaults, plus the local identity.

use std::time::Duration;

use super::time::Randomness;
use super::types::{Endpoints, HostPort, NodeId};
use crate::protocol::codec::Uuid;

/// `controller.quorum.*` settings with Kafka's defaults (`QuorumConfig.java`), the local
/// replica's identity and the source of the core's random choices.
#[derive(Debug, Clone)]
pub struct RaftConfig {
    /// `node.id`; `None` for a replica without id (a tool): it can only observe.
    pub node_id: Option<NodeId>,
    /// `directory.id` of the metadata log dir (`meta.properties`); never the zero Uuid.
    pub directory_id: Uuid,
    /// `cluster.id` from `meta.properties`.
    pub cluster_id: String,
    /// All advertised controller listeners of this node (name -> address).
    pub listeners: Endpoints,
    /// The default listener: first of `controller.listener.names`. Outbound raft traffic uses it.
    pub default_listener: String,
    /// `controller.quorum.voters` (static voters, kraft.version 0).
    pub static_voters: Vec<(NodeId, HostPort)>,
    /// `controller.quorum.bootstrap.servers` (discovery only; synthetic ids −2, −3, …).
    pub bootstrap_servers: Vec<HostPort>,
    /// `controller.quorum.election.timeout.ms` (1000): base T of the `[T, 2T)` election timeout.
    pub election_timeout: Duration,
    /// `controller.quorum.fetch.timeout.ms` (2000): follower leader-liveness timeout; the
    /// leader's check-quorum timeout is 1.5x this, its BeginQuorumEpoch period half of it.
    pub fetch_timeout: Duration,
    /// `controller.quorum.election.backoff.max.ms` (1000): cap of the EndQuorumEpoch backoff.
    pub election_backoff_max: Duration,
    /// `controller.quorum.request.timeout.ms` (2000): an unanswered request is forgotten after it.
    pub request_timeout: Duration,
    /// `controller.quorum.retry.backoff.ms` (20): wait after a failed response.
    pub retry_backoff: Duration,
    /// `controller.quorum.append.linger.ms` (25): how long the leader's accumulator holds a
    /// batch open for more proposals (0: appended at once).
    pub append_linger: Duration,
    /// `controller.quorum.fetch.max.bytes` (1 MiB, Kafka 4.3+): Fetch `MaxBytes` we send.
    pub fetch_max_bytes: u32,
    /// `controller.quorum.fetch.snapshot.max.bytes` (1 MiB, Kafka 4.3+): FetchSnapshot `MaxBytes`.
    pub fetch_snapshot_max_bytes: u32,
    /// Fetch `MaxWaitMs` sent by followers (Kafka's constant 500 ms).
    pub fetch_max_wait: Duration,
    /// Flush appended follower data even when an observer. Java controllers always flush;
    /// brokers (observers) do not. Voters always flush regardless.
    pub always_flush: bool,
    /// Where election-timeout jitter and the bootstrap-server choice come from.
    pub randomness: Randomness,
    /// `controller.quorum.auto.join.enable` (false): an observer controller whose key is not a
    /// voter asks the leader to add it (kraft.version 1).
    pub auto_join: bool,
    /// Not a Kafka setting. A voter whose leader refuses its connection (nothing listens at the
    /// leader's address: its process is gone) pre-votes after `rank x this` instead of waiting
    /// out the fetch timeout; `rank` orders the surviving voters by id, so that two followers
    /// of the same dead leader do not pre-vote at the same moment. Pre-vote keeps it harmless:
    /// a voter that still fetches from a live leader refuses the pre-vote.
    pub early_election_step: Duration,
    /// Not a Kafka setting: kraftd's election rules, or Kafka's exactly (the simulation's
    /// stand-in for a Java voter).
    pub election_rules: ElectionRules,
}

/// The election rules a voter follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ElectionRules {
    /// Kafka 4.4's rules with kraftd's departures (`early_election.rs`): the early election,
    /// the coin, and a gone leader's prospective that renews its round, letting refusals
    /// expire.
    #[default]
    Kraftd,
    /// Kafka 4.4's rules exactly, none of kraftd's departures. The simulation and the scenario
    /// scripts give it to stand-ins for Java voters, so that every departure is checked with
    /// Kafka's behaviour as its peer (issue #36: the stall hid at that seam).
    Kafka,
    /// kraftd's rules before issue #36: a gone leader's prospective keeps every refusal for
    /// good, so a voter that refused while it still followed the dead leader is never asked
    /// again. A planted bug, kept so that tests show the transcript and the simulation catch
    /// it; nothing else chooses it.
    KraftdKeepingStaleRefusals,
}

impl ElectionRules {
    /// Whether kraftd's departures from Kafka's election timing apply.
    pub fn departs_from_kafka(self) -> bool {
        self != ElectionRules::Kafka
    }

    /// Whether a prospective's refusals expire (`early_election.rs`).
    pub fn refusals_expire(self) -> bool {
        self == ElectionRules::Kraftd
    }
}

pub use crate::protocol::records::MAX_BATCH_SIZE_BYTES;
/// Kafka's `BatchAccumulator` limit (`MAX_NUMBER_OF_BATCHES`): batches held before proposals
/// are refused.
pub const MAX_PENDING_BATCHES: usize = 10;
pub use crate::protocol::features::SUPPORTED_KRAFT_VERSIONS;
/// Kafka's `LeaderState.OBSERVER_SESSION_TIMEOUT_MS`.
pub const OBSERVER_SESSION_TIMEOUT: Duration = Duration::from_millis(300_000);
/// The metadata partition's topic name and id (`Uuid.METADATA_TOPIC_ID`).
pub const METADATA_TOPIC: &str = "__cluster_metadata";
pub const METADATA_TOPIC_ID: Uuid = Uuid::ONE;

impl RaftConfig {
    /// The leader accumulator's limits.
    pub fn append_limits(&self) -> super::accumulator::AppendLimits {
        super::accumulator::AppendLimits {
            linger: self.append_linger,
            max_batch_bytes: MAX_BATCH_SIZE_BYTES,
            max_pending_batches: MAX_PENDING_BATCHES,
        }
    }

    /// A config with Kafka's defaults for the given identity.
    pub fn new(node_id: Option<NodeId>, directory_id: Uuid, cluster_id: &str) -> Self {
        RaftConfig {
            node_id,
            directory_id,
            cluster_id: cluster_id.to_string(),
            listeners: Endpoints::empty(),
            default_listener: "CONTROLLER".to_string(),
            static_voters: Vec::new(),
            bootstrap_servers: Vec::new(),
            election_timeout: Duration::from_millis(1000),
            fetch_timeout: Duration::from_millis(2000),
            election_backoff_max: Duration::from_millis(1000),
            request_timeout: Duration::from_millis(2000),
            retry_backoff: Duration::from_millis(20),
            append_linger: Duration::from_millis(25),
            fetch_max_bytes: 1024 * 1024,
            fetch_snapshot_max_bytes: 1024 * 1024,
            fetch_max_wait: Duration::from_millis(500),
            always_flush: true,
            randomness: Randomness::Seeded(0),
            auto_join: false,
            early_election_step: Duration::from_millis(50),
            election_rules: ElectionRules::Kraftd,
        }
    }

    /// Check-quorum timeout: `1.5 x fetch timeout` (`LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR`).
    pub fn check_quorum_timeout(&self) -> Duration {
        self.fetch_timeout * 3 / 2
    }

    /// BeginQuorumEpoch resend period: `fetch timeout / 2`.
    pub fn begin_quorum_epoch_period(&self) -> Duration {
        self.fetch_timeout / 2
    }

    /// Applies one `controller.quorum.*` property by its Kafka name. `Ok(false)` for a key this
    /// config does not hold; `Err` names the key for a bad value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, QuorumConfigError> {
        let ms = |v: &str| -> Result<Duration, QuorumConfigError> {
            v.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| QuorumConfigError::NotMillis {
                    key: key.to_owned(),
                    value: v.to_owned(),
                })
        };
        let bytes = |v: &str| -> Result<u32, QuorumConfigError> {
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|b| *b > 0)
                .ok_or_else(|| QuorumConfigError::NotBytes {
                    key: key.to_owned(),
                    value: v.to_owned(),
                })
        };
        match key {
            "controller.quorum.voters" => self.static_voters = Self::parse_voters(value)?,
            "controller.quorum.bootstrap.servers" => {
                self.bootstrap_servers = Self::parse_bootstrap_servers(value)?
            }
            "controller.quorum.election.timeout.ms" => self.election_timeout = ms(value)?,
            "controller.quorum.fetch.timeout.ms" => self.fetch_timeout = ms(value)?,
            "controller.quorum.election.backoff.max.ms" => self.election_backoff_max = ms(value)?,
            "controller.quorum.request.timeout.ms" => self.request_timeout = ms(value)?,
            "controller.quorum.retry.backoff.ms" => self.retry_backoff = ms(value)?,
            "controller.quorum.append.linger.ms" => self.append_linger = ms(value)?,
            "controller.quorum.fetch.max.bytes" => self.fetch_max_bytes = bytes(value)?,
            "controller.quorum.fetch.snapshot.max.bytes" => {
                self.fetch_snapshot_max_bytes = bytes(value)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Parses `controller.quorum.voters`: comma-separated `id@host:port` (IPv6 in brackets).
    pub fn parse_voters(value: &str) -> Result<Vec<(NodeId, HostPort)>, QuorumConfigError> {
        let mut out = Vec::new();
        for entry in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad = |problem| QuorumConfigError::BadVoter {
                entry: entry.to_owned(),
                problem,
            };
            let (id, addr) = entry
                .split_once('@')
                .ok_or_else(|| bad(VoterProblem::NotIdAtHostPort))?;
            let id: NodeId = id.parse().map_err(|_| bad(VoterProblem::BadId))?;
            if id < 0 {
                return Err(bad(VoterProblem::NegativeId));
            }
            out.push((id, parse_host_port(addr)?));
        }
        Ok(out)
    }

    /// Parses `controller.quorum.bootstrap.servers`: comma-separated `host:port`.
    pub fn parse_bootstrap_servers(value: &str) -> Result<Vec<HostPort>, QuorumConfigError> {
        value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(parse_host_port)
            .collect()
    }
}

/// Why a `controller.quorum.*` value cannot be used. These values are addresses, ids, times
/// and sizes, never secrets, so they are shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuorumConfigError {
    #[error("{key}: '{value}' is not a non-negative number of milliseconds")]
    NotMillis { key: String, value: String },
    #[error("{key}: '{value}' is not a positive number of bytes")]
    NotBytes { key: String, value: String },
    #[error("controller.quorum.voters entry '{entry}' {problem}")]
    BadVoter {
        entry: String,
        problem: VoterProblem,
    },
    #[error("'{address}' {problem}")]
    BadAddress {
        address: String,
        problem: AddressProblem,
    },
}

/// What is wrong with a `controller.quorum.voters` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VoterProblem {
    #[error("is not id@host:port")]
    NotIdAtHostPort,
    #[error("has a bad id")]
    BadId,
    #[error("has a negative id")]
    NegativeId,
}

/// What is wrong with a `host:port` (or `[host]:port`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AddressProblem {
    #[error("is not [host]:port")]
    NotBracketedHostPort,
    #[error("is not host:port")]
    NotHostPort,
    #[error("has a bad port")]
    BadPort,
    #[error("has an empty host")]
    EmptyHost,
}

fn parse_host_port(s: &str) -> Result<HostPort, QuorumConfigError> {
    let bad = |problem| QuorumConfigError::BadAddress {
        address: s.to_owned(),
        problem,
    };
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        rest.split_once("]:")
            .ok_or_else(|| bad(AddressProblem::NotBracketedHostPort))?
    } else {
        s.rsplit_once(':')
            .ok_or_else(|| bad(AddressProblem::NotHostPort))?
    };
    let port: u16 = port.parse().map_err(|_| bad(AddressProblem::BadPort))?;
    if host.is_empty() {
        return Err(bad(AddressProblem::EmptyHost));
    }
    Ok(HostPort::new(host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_static_voters_like_kafka() {
        let v = RaftConfig::parse_voters("1@localhost:9093, 2@[::1]:9094").unwrap();
        assert_eq!(v[0], (1, HostPort::new("localhost", 9093)));
        assert_eq!(v[1], (2, HostPort::new("::1", 9094)));
        assert!(RaftConfig::parse_voters("x@h:1").is_err());
        assert!(RaftConfig::parse_voters("1@h").is_err());
    }

    #[test]
    fn kafka_property_names_set_the_config() {
        let mut c = RaftConfig::new(Some(1), Uuid::ONE, "c");
        assert_eq!(
            c.set("controller.quorum.election.timeout.ms", "1500"),
            Ok(true)
        );
        assert_eq!(c.election_timeout, Duration::from_millis(1500));
        assert_eq!(c.set("controller.quorum.voters", "1@h:9093"), Ok(true));
        assert_eq!(c.static_voters, vec![(1, HostPort::new("h", 9093))]);
        assert_eq!(c.set("node.id", "1"), Ok(false));
        let err = c
            .set("controller.quorum.fetch.timeout.ms", "soon")
            .unwrap_err();
        assert_eq!(
            err,
            QuorumConfigError::NotMillis {
                key: "controller.quorum.fetch.timeout.ms".into(),
                value: "soon".into()
            }
        );
        assert!(
            err.to_string()
                .starts_with("controller.quorum.fetch.timeout.ms"),
            "{err}"
        );
    }

    #[test]
    fn derived_timeouts() {
        let c = RaftConfig::new(Some(1), Uuid::ONE, "c");
        assert_eq!(c.check_quorum_timeout(), Duration::from_millis(3000));
        assert_eq!(c.begin_quorum_epoch_period(), Duration::from_millis(1000));
    }
}
