//! `__cluster_metadata-0/quorum-state`: the persisted election state (epoch, leader, vote), and
//! the one store trait the raft core writes it through (Kafka's `QuorumStateStore`).
//!
//! The file is one line of compact JSON as Java's `FileQuorumStateStore` writes it (Jackson
//! `ObjectNode.toString()` of the generated `QuorumStateDataJsonConverter` output plus a final
//! `data_version` key, no trailing newline). Checked against Kafka 4.4.0:
//!
//! ```text
//! {"leaderId":1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}
//! {"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}
//! ```
//!
//! The data version follows kraft.version (0 → 0, 1 → 1). Written atomically: `quorum-state.tmp`,
//! fsync, rename, fsync the directory. The file store is [`FileQuorumStateStore`]; tests and the
//! simulation use `raft::MemQuorumStateStore`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::LogError;
use super::fsutil;
use crate::protocol::codec::{Uuid, UuidParseError};
use crate::protocol::messages::quorum_state_data::{QuorumStateData, Voter};

pub const FILE_NAME: &str = "quorum-state";

/// Kafka's `ReplicaKey`: a node id plus, from kraft.version 1 on, the directory id of its
/// metadata log dir. The all-zero Uuid on the wire means "absent" (`ReplicaKey.of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    pub id: i32,
    pub directory_id: Option<Uuid>,
}

impl ReplicaKey {
    pub fn new(id: i32, directory_id: Option<Uuid>) -> Self {
        ReplicaKey { id, directory_id }
    }
    /// From wire fields: the zero Uuid becomes `None`.
    pub fn from_wire(id: i32, directory_id: Uuid) -> Self {
        ReplicaKey {
            id,
            directory_id: (directory_id != Uuid::ZERO).then_some(directory_id),
        }
    }
    pub fn of_id(id: i32) -> Self {
        ReplicaKey {
            id,
            directory_id: None,
        }
    }
    /// The directory id as sent on the wire (zero when absent).
    pub fn wire_directory_id(&self) -> Uuid {
        self.directory_id.unwrap_or(Uuid::ZERO)
    }
    /// Kafka's voter-entry match (`VoterSet.VoterNode.isVoter`): an entry without directory id
    /// matches any replica with the same id; an entry with one matches only that exact key.
    pub fn entry_matches(&self, replica: &ReplicaKey) -> bool {
        self.id == replica.id
            && (self.directory_id.is_none() || self.directory_id == replica.directory_id)
    }
}

impl fmt::Display for ReplicaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.directory_id {
            None => write!(f, "{}", self.id),
            Some(d) => write!(f, "{}/{}", self.id, d),
        }
    }
}

/// Kafka's `ElectionState`: the epoch, the leader if known, the vote cast in this epoch.
/// Kafka 4.x may hold both a leader and a vote of the same epoch (the vote is kept when the
/// node learns the leader, which prevents voting twice in an epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionState {
    pub epoch: i32,
    pub leader_id: Option<i32>,
    pub voted_key: Option<ReplicaKey>,
}

impl ElectionState {
    pub fn unknown(epoch: i32) -> Self {
        ElectionState {
            epoch,
            leader_id: None,
            voted_key: None,
        }
    }

    /// What a store keeps of this state at `kraft_version`: data version 0 has no voted
    /// directory id (Java drops it there).
    pub fn persisted_at(&self, kraft_version: i16) -> ElectionState {
        let keep_directory = data_version_of(kraft_version) == 1;
        ElectionState {
            voted_key: self.voted_key.map(|k| ReplicaKey {
                directory_id: k.directory_id.filter(|_| keep_directory),
                ..k
            }),
            ..self.clone()
        }
    }
}

impl fmt::Display for ElectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "epoch={}", self.epoch)?;
        if let Some(l) = self.leader_id {
            write!(f, " leader={l}")?;
        }
        if let Some(v) = self.voted_key {
            write!(f, " voted={v}")?;
        }
        Ok(())
    }
}

/// The `data_version` Kafka writes at `kraft_version` (`KRaftVersion.quorumStateVersion`).
pub fn data_version_of(kraft_version: i16) -> i16 {
    if kraft_version >= 1 {
        1
    } else {
        0
    }
}

/// A `quorum-state` file's content (`QuorumStateData` at data version 0 or 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumStateFile {
    pub data_version: i16,
    pub election: ElectionState,
    /// The voter ids of data version 0 (`currentVoters`); informational only, empty at 1.
    pub voters: Vec<i32>,
}

impl QuorumStateFile {
    /// The file Kafka writes for `election` at `kraft_version`, with `voters` as the
    /// informational voter ids of data version 0.
    pub fn new(election: &ElectionState, kraft_version: i16, voters: &[i32]) -> QuorumStateFile {
        let data_version = data_version_of(kraft_version);
        QuorumStateFile {
            data_version,
            election: election.persisted_at(kraft_version),
            voters: if data_version == 0 {
                voters.to_vec()
            } else {
                Vec::new()
            },
        }
    }

    /// The file's exact bytes.
    pub fn to_json(&self) -> String {
        let e = &self.election;
        let common = QuorumStateData {
            leader_id: e.leader_id.unwrap_or(-1),
            leader_epoch: e.epoch,
            voted_id: e.voted_key.map_or(-1, |k| k.id),
            ..Default::default()
        };
        let data = if self.data_version == 0 {
            QuorumStateData {
                current_voters: Some(
                    java_hash_set_order(&self.voters)
                        .into_iter()
                        .map(|voter_id| Voter {
                            voter_id,
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..common
            }
        } else {
            QuorumStateData {
                voted_directory_id: e.voted_key.map_or(Uuid::ZERO, |k| k.wire_directory_id()),
                ..common
            }
        };
        let mut json = match data.to_kafka_json(self.data_version) {
            Value::Object(map) => map,
            other => unreachable!("a message converts to an object, not {other}"),
        };
        json.insert("data_version".into(), Value::from(self.data_version));
        Value::Object(json).to_string()
    }

    /// Parses a file's content as Java reads it: the first line, a JSON object with
    /// `data_version` 0 or 1 and that version's mandatory keys; unknown keys are ignored.
    pub fn parse(text: &str) -> Result<QuorumStateFile, QuorumStateFileError> {
        use QuorumStateFileError as E;
        let line = text.lines().next().ok_or(E::Empty)?;
        let json: Value = serde_json::from_str(line).map_err(E::NotJson)?;
        let obj = json.as_object().ok_or(E::NotAnObject)?;
        let data_version = match obj.get("data_version") {
            None => {
                return Err(E::MissingKey {
                    key: "data_version",
                })
            }
            Some(v) => as_int(v)
                .filter(|v| (0..=1).contains(v))
                .ok_or_else(|| E::UnsupportedDataVersion { value: v.clone() })?
                as i16,
        };
        let int = |key: &'static str| -> Result<i32, QuorumStateFileError> {
            let v = obj
                .get(key)
                .ok_or(E::MissingVersionedKey { key, data_version })?;
            as_int(v)
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| E::NotAnInt {
                    key,
                    value: v.clone(),
                })
        };
        let leader_id = int("leaderId")?;
        let epoch = int("leaderEpoch")?;
        let voted_id = int("votedId")?;
        let (voted_dir, voters) = if data_version == 0 {
            mandatory(obj, "clusterId")?;
            mandatory(obj, "appliedOffset")?;
            let voters = match mandatory(obj, "currentVoters")? {
                Value::Null => Vec::new(),
                Value::Array(items) => items
                    .iter()
                    .map(|item| {
                        item.get("voterId")
                            .and_then(as_int)
                            .and_then(|n| i32::try_from(n).ok())
                            .ok_or_else(|| E::BadVoter {
                                entry: item.clone(),
                            })
                    })
                    .collect::<Result<Vec<i32>, _>>()?,
                other => {
                    return Err(E::VotersNotAnArray {
                        value: other.clone(),
                    })
                }
            };
            (Uuid::ZERO, voters)
        } else {
            let v = mandatory(obj, "votedDirectoryId")?;
            let dir = v
                .as_str()
                .ok_or_else(|| E::DirectoryIdNotAString { value: v.clone() })
                .and_then(|s| Uuid::parse(s).map_err(E::BadDirectoryId))?;
            (dir, Vec::new())
        };
        Ok(QuorumStateFile {
            data_version,
            election: ElectionState {
                epoch,
                leader_id: (leader_id != -1).then_some(leader_id),
                voted_key: (voted_id != -1).then(|| ReplicaKey::from_wire(voted_id, voted_dir)),
            },
            voters,
        })
    }
}

/// Why a `quorum-state`'s text is not what Java writes. The store names the file.
#[derive(Debug, thiserror::Error)]
pub enum QuorumStateFileError {
    #[error("the file is empty")]
    Empty,
    #[error("the first line is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("the first line is not a JSON object")]
    NotAnObject,
    #[error("missing key '{key}'")]
    MissingKey { key: &'static str },
    #[error("missing key '{key}' (mandatory at data_version {data_version})")]
    MissingVersionedKey {
        key: &'static str,
        data_version: i16,
    },
    #[error("unsupported data_version {value} (expected 0 or 1)")]
    UnsupportedDataVersion { value: Value },
    #[error("'{key}' is {value}, not a 32-bit integer")]
    NotAnInt { key: &'static str, value: Value },
    #[error("currentVoters entry {entry} has no integer voterId")]
    BadVoter { entry: Value },
    #[error("currentVoters is {value}, not an array")]
    VotersNotAnArray { value: Value },
    #[error("votedDirectoryId is {value}, not a string")]
    DirectoryIdNotAString { value: Value },
    #[error("votedDirectoryId: {0}")]
    BadDirectoryId(#[source] UuidParseError),
}

/// The order a Java `HashSet<Integer>` of default capacity iterates `ids` in (bucket order of
/// the spread hash; ascending for ids below the table size).
fn java_hash_set_order(ids: &[i32]) -> Vec<i32> {
    let mut unique: Vec<i32> = Vec::new();
    for id in ids {
        if !unique.contains(id) {
            unique.push(*id);
        }
    }
    let mut table = 16usize;
    while unique.len() * 4 > table * 3 {
        table *= 2;
    }
    let bucket = |id: i32| {
        let h = id as u32;
        ((h ^ (h >> 16)) as usize) & (table - 1)
    };
    unique.sort_by_key(|id| (bucket(*id), *id));
    unique
}

fn mandatory<'a>(
    obj: &'a Map<String, Value>,
    key: &'static str,
) -> Result<&'a Value, QuorumStateFileError> {
    obj.get(key).ok_or(QuorumStateFileError::MissingKey { key })
}

/// Jackson's integer coercion as the generated converters use it: numbers, or numeric text.
fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Why the election state could not be read or made durable. The core halts on either (Kafka's
/// raft thread dies): starting from a state the file does not hold, or acting on a state that
/// a restart would not find, could vote twice in an epoch.
#[derive(Debug, thiserror::Error)]
pub enum QuorumStateError {
    #[error("cannot read the election state: {source}; without it the node could vote twice in an epoch: restore the file, or replace this node's data and let it catch up from the leader")]
    Unreadable {
        #[source]
        source: LogError,
    },
    #[error("could not write the election state {state}: {source}")]
    Unwritable {
        state: ElectionState,
        #[source]
        source: LogError,
    },
}

impl QuorumStateError {
    fn source_error(&self) -> &LogError {
        match self {
            QuorumStateError::Unreadable { source }
            | QuorumStateError::Unwritable { source, .. } => source,
        }
    }

    /// The file concerned, when known.
    pub fn file(&self) -> Option<&Path> {
        self.source_error().path()
    }

    /// The OS error of an I/O failure.
    pub fn os_error(&self) -> Option<&std::io::Error> {
        match self.source_error() {
            LogError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Where the election state lives (Kafka's `QuorumStateStore`). The raft core writes it inside
/// every durable transition *before* it changes its role or emits anything, so that a vote or
/// a candidacy is durable before any message that depends on it leaves.
pub trait QuorumStateStore {
    /// The last state written; `None` if there is none (a missing file: epoch 0, no leader).
    fn read_election_state(&self) -> Result<Option<ElectionState>, QuorumStateError>;
    /// Replaces the state durably before returning, at the data version of `kraft_version`
    /// (0 → v0, 1 → v1). On an error nothing may be assumed durable; the core halts.
    fn write_election_state(
        &mut self,
        state: &ElectionState,
        kraft_version: i16,
    ) -> Result<(), QuorumStateError>;
}

/// `quorum-state` in a partition directory, in Java's format. Data version 0 records the
/// static voter ids as `currentVoters` (at kraft.version 0 the voter set is the static one, the
/// ids Java writes there).
#[derive(Debug, Clone)]
pub struct FileQuorumStateStore {
    path: PathBuf,
    static_voter_ids: Vec<i32>,
}

impl FileQuorumStateStore {
    /// The store of `<partition_dir>/quorum-state`.
    pub fn new(partition_dir: &Path, static_voter_ids: Vec<i32>) -> FileQuorumStateStore {
        FileQuorumStateStore {
            path: partition_dir.join(FILE_NAME),
            static_voter_ids,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl QuorumStateStore for FileQuorumStateStore {
    fn read_election_state(&self) -> Result<Option<ElectionState>, QuorumStateError> {
        let unreadable = |source| QuorumStateError::Unreadable { source };
        let Some(bytes) = fsutil::read_if_exists(&self.path).map_err(unreadable)? else {
            return Ok(None);
        };
        let file = QuorumStateFile::parse(&String::from_utf8_lossy(&bytes)).map_err(|reason| {
            unreadable(LogError::corrupt(&self.path, None, reason.to_string()))
        })?;
        Ok(Some(file.election))
    }

    fn write_election_state(
        &mut self,
        state: &ElectionState,
        kraft_version: i16,
    ) -> Result<(), QuorumStateError> {
        let json = QuorumStateFile::new(state, kraft_version, &self.static_voter_ids).to_json();
        fsutil::atomic_write(&self.path, json.as_bytes()).map_err(|source| {
            QuorumStateError::Unwritable {
                state: state.clone(),
                source,
            }
        })
    }
}

#[cfg(test)]
#[path = "quorum_state_tests.rs"]
mod tests;
