//! `__cluster_metadata-0/quorum-state`: the persisted election state (epoch, leader, vote).
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
//! fsync, rename, fsync the directory.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::{LogError, Result};
use super::fsutil;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::quorum_state_data::{QuorumStateData, Voter};

pub const FILE_NAME: &str = "quorum-state";

/// A replica: node id and, from kraft.version 1 on, the directory id of its metadata log dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    pub id: i32,
    pub directory_id: Option<Uuid>,
}

impl ReplicaKey {
    /// Kafka's `ReplicaKey.of`: the zero Uuid means "no directory id".
    pub fn of(id: i32, directory_id: Uuid) -> ReplicaKey {
        ReplicaKey {
            id,
            directory_id: (directory_id != Uuid::ZERO).then_some(directory_id),
        }
    }
}

/// What `quorum-state` records (Kafka's `ElectionState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionState {
    pub epoch: i32,
    pub leader_id: Option<i32>,
    pub voted_key: Option<ReplicaKey>,
    /// The voter ids written by data version 0 (`currentVoters`); informational only.
    pub voters: Vec<i32>,
}

/// A `quorum-state` file as read: the state and the data version it was written with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumStateFile {
    pub data_version: i16,
    pub state: ElectionState,
}

impl ElectionState {
    /// The file's exact bytes for `data_version` 0 or 1.
    pub fn to_json(&self, data_version: i16) -> Result<String, String> {
        let voted_dir = self.voted_key.and_then(|k| k.directory_id);
        let data = match data_version {
            0 => {
                if let Some(dir) = voted_dir {
                    return Err(format!(
                        "data version 0 (kraft.version 0) cannot record the voted directory id {dir}"
                    ));
                }
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
                    ..self.common_data()
                }
            }
            1 => QuorumStateData {
                voted_directory_id: voted_dir.unwrap_or(Uuid::ZERO),
                ..self.common_data()
            },
            v => return Err(format!("unsupported quorum-state data version {v}")),
        };
        let mut json = match data.to_kafka_json(data_version) {
            Value::Object(map) => map,
            other => unreachable!("a message converts to an object, not {other}"),
        };
        json.insert("data_version".into(), Value::from(data_version));
        Ok(Value::Object(json).to_string())
    }

    fn common_data(&self) -> QuorumStateData {
        QuorumStateData {
            leader_id: self.leader_id.unwrap_or(-1),
            leader_epoch: self.epoch,
            voted_id: self.voted_key.map_or(-1, |k| k.id),
            ..Default::default()
        }
    }
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

/// Parses a `quorum-state` file's content as Java reads it: the first line, a JSON object with
/// `data_version` 0 or 1 and that version's mandatory keys; unknown keys are ignored.
pub fn parse(text: &str) -> Result<QuorumStateFile, String> {
    let line = text.lines().next().ok_or("the file is empty")?;
    let json: Value =
        serde_json::from_str(line).map_err(|e| format!("the first line is not JSON: {e}"))?;
    let obj = json
        .as_object()
        .ok_or("the first line is not a JSON object")?;
    let data_version = match obj.get("data_version") {
        None => return Err("missing key 'data_version'".into()),
        Some(v) => as_int(v)
            .filter(|v| (0..=1).contains(v))
            .ok_or_else(|| format!("unsupported data_version {v} (expected 0 or 1)"))?
            as i16,
    };
    let int = |key: &str| -> Result<i32, String> {
        let v = obj.get(key).ok_or_else(|| {
            format!("missing key '{key}' (mandatory at data_version {data_version})")
        })?;
        as_int(v)
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| format!("'{key}' is {v}, not a 32-bit integer"))
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
                        .ok_or_else(|| format!("currentVoters entry {item} has no integer voterId"))
                })
                .collect::<Result<Vec<i32>, String>>()?,
            other => return Err(format!("currentVoters is {other}, not an array")),
        };
        (Uuid::ZERO, voters)
    } else {
        let v = mandatory(obj, "votedDirectoryId")?;
        let dir = v
            .as_str()
            .ok_or_else(|| format!("votedDirectoryId is {v}, not a string"))
            .and_then(|s| Uuid::parse(s).map_err(|e| format!("votedDirectoryId: {e}")))?;
        (dir, Vec::new())
    };
    Ok(QuorumStateFile {
        data_version,
        state: ElectionState {
            epoch,
            leader_id: (leader_id != -1).then_some(leader_id),
            voted_key: (voted_id != -1).then(|| ReplicaKey::of(voted_id, voted_dir)),
            voters,
        },
    })
}

fn mandatory<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a Value, String> {
    obj.get(key).ok_or_else(|| format!("missing key '{key}'"))
}

/// Jackson's integer coercion as the generated converters use it: numbers, or numeric text.
fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Where the election state is persisted. The raft layer writes through this before acting on
/// a state change.
pub trait QuorumStateStore {
    /// The persisted state; `None` when nothing was ever written.
    fn read(&self) -> Result<Option<QuorumStateFile>>;
    /// Persists `state` durably, at the data version of `kraft_version` (0 or 1).
    fn write(&mut self, state: &ElectionState, kraft_version: i16) -> Result<()>;
}

/// `quorum-state` in a partition directory.
#[derive(Debug, Clone)]
pub struct FileQuorumStateStore {
    path: PathBuf,
}

impl FileQuorumStateStore {
    /// The store of `<partition_dir>/quorum-state`.
    pub fn new(partition_dir: &Path) -> FileQuorumStateStore {
        FileQuorumStateStore {
            path: partition_dir.join(FILE_NAME),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl QuorumStateStore for FileQuorumStateStore {
    fn read(&self) -> Result<Option<QuorumStateFile>> {
        let Some(bytes) = fsutil::read_if_exists(&self.path)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        parse(&text)
            .map(Some)
            .map_err(|reason| LogError::corrupt(&self.path, None, reason))
    }

    fn write(&mut self, state: &ElectionState, kraft_version: i16) -> Result<()> {
        let json = state.to_json(kraft_version).map_err(|why| {
            LogError::InvalidState(format!("cannot write {}: {why}", self.path.display()))
        })?;
        fsutil::atomic_write(&self.path, json.as_bytes())
    }
}

/// An in-memory store for tests: writes are durable as soon as they return.
#[derive(Debug, Clone, Default)]
pub struct MemoryQuorumStateStore {
    current: Option<QuorumStateFile>,
}

impl QuorumStateStore for MemoryQuorumStateStore {
    fn read(&self) -> Result<Option<QuorumStateFile>> {
        Ok(self.current.clone())
    }

    fn write(&mut self, state: &ElectionState, kraft_version: i16) -> Result<()> {
        // Round-trip through the file format so tests see exactly what a restart would.
        let json = state
            .to_json(kraft_version)
            .map_err(LogError::InvalidState)?;
        self.current = Some(parse(&json).map_err(LogError::InvalidState)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_id() -> Uuid {
        Uuid::parse("J8aAPcfLQt2bqs1JT_rMgQ").unwrap()
    }

    #[test]
    fn writes_javas_bytes() {
        // Written by Kafka 4.4.0 controllers (standalone and static quorum).
        let leader = ElectionState {
            epoch: 1,
            leader_id: Some(1),
            voted_key: None,
            voters: vec![1],
        };
        assert_eq!(
            leader.to_json(1).unwrap(),
            r#"{"leaderId":1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#
        );
        assert_eq!(
            leader.to_json(0).unwrap(),
            r#"{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}"#
        );
        // From the spec's examples.
        let voted = ElectionState {
            epoch: 2,
            leader_id: None,
            voted_key: Some(ReplicaKey::of(1, dir_id())),
            voters: vec![],
        };
        assert_eq!(
            voted.to_json(1).unwrap(),
            r#"{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}"#
        );
        assert!(voted.to_json(0).is_err(), "v0 cannot hold a directory id");
        let three = ElectionState {
            epoch: 2,
            leader_id: Some(1),
            voted_key: None,
            voters: vec![3, 1, 2],
        };
        assert!(three
            .to_json(0)
            .unwrap()
            .contains(r#""currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}]"#));
    }

    #[test]
    fn reads_back_what_it_writes() {
        for state in [
            ElectionState {
                epoch: 7,
                leader_id: Some(3),
                voted_key: None,
                voters: vec![],
            },
            ElectionState {
                epoch: 2,
                leader_id: None,
                voted_key: Some(ReplicaKey::of(1, dir_id())),
                voters: vec![],
            },
            ElectionState {
                epoch: 5,
                leader_id: Some(2),
                voted_key: Some(ReplicaKey::of(2, Uuid::ZERO)),
                voters: vec![],
            },
            ElectionState {
                epoch: 0,
                leader_id: None,
                voted_key: None,
                voters: vec![],
            },
        ] {
            let f = parse(&state.to_json(1).unwrap()).unwrap();
            assert_eq!((f.data_version, &f.state), (1, &state));
            let v0 = ElectionState {
                voted_key: state.voted_key.map(|k| ReplicaKey {
                    directory_id: None,
                    ..k
                }),
                voters: vec![1, 2],
                ..state
            };
            let f = parse(&v0.to_json(0).unwrap()).unwrap();
            assert_eq!((f.data_version, f.state), (0, v0));
        }
    }

    #[test]
    fn reader_rules() {
        // Only the first line counts; unknown keys are ignored.
        let f = parse("{\"leaderId\":1,\"leaderEpoch\":4,\"votedId\":-1,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"extra\":[1],\"data_version\":1}\ngarbage").unwrap();
        assert_eq!(f.state.epoch, 4);
        for (text, needle) in [
            ("", "empty"),
            ("not json", "not JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"leaderId":1}"#, "data_version"),
            (
                r#"{"leaderId":1,"leaderEpoch":1,"votedId":-1,"data_version":2}"#,
                "data_version",
            ),
            (
                r#"{"leaderId":1,"leaderEpoch":1,"votedId":-1,"data_version":1}"#,
                "votedDirectoryId",
            ),
            (
                r#"{"leaderId":1,"leaderEpoch":1,"votedId":-1,"data_version":0}"#,
                "clusterId",
            ),
            (
                r#"{"leaderId":"x","leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
                "leaderId",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn java_hash_set_order_matches_bucket_order() {
        assert_eq!(java_hash_set_order(&[3, 2, 1, 2]), vec![1, 2, 3]);
        // 16 shares bucket 0 of a 16-slot table; 17 shares bucket 1.
        assert_eq!(java_hash_set_order(&[3, 17, 16, 1]), vec![16, 1, 17, 3]);
    }

    #[test]
    fn file_store_round_trips_and_reports_corruption() {
        let dir = std::env::temp_dir().join(format!("kraftd-qs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = FileQuorumStateStore::new(&dir);
        assert_eq!(store.read().unwrap(), None);
        let state = ElectionState {
            epoch: 3,
            leader_id: Some(1),
            voted_key: None,
            voters: vec![],
        };
        store.write(&state, 1).unwrap();
        assert_eq!(store.read().unwrap().unwrap().state, state);
        assert!(!dir.join("quorum-state.tmp").exists());
        std::fs::write(store.path(), "{}").unwrap();
        let err = store.read().unwrap_err().to_string();
        assert!(
            err.contains("quorum-state") && err.contains("data_version"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
