use super::*;

fn dir_id() -> Uuid {
    Uuid::parse("J8aAPcfLQt2bqs1JT_rMgQ").unwrap()
}

fn leader(epoch: i32, id: i32) -> ElectionState {
    ElectionState {
        epoch,
        leader_id: Some(id),
        voted_key: None,
    }
}

fn voted(epoch: i32, key: ReplicaKey) -> ElectionState {
    ElectionState {
        epoch,
        leader_id: None,
        voted_key: Some(key),
    }
}

const JAVA_V1: &str = r#"{"leaderId":1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#;
const JAVA_V0: &str = r#"{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}"#;

#[test]
fn writes_javas_bytes() {
    // Written by Kafka 4.4.0 controllers (standalone and static quorum).
    assert_eq!(
        QuorumStateFile::new(&leader(1, 1), 1, &[1]).to_json(),
        JAVA_V1
    );
    assert_eq!(
        QuorumStateFile::new(&leader(1, 1), 0, &[1]).to_json(),
        JAVA_V0
    );
    // From the spec's examples.
    let with_dir = voted(2, ReplicaKey::new(1, Some(dir_id())));
    assert_eq!(
        QuorumStateFile::new(&with_dir, 1, &[]).to_json(),
        r#"{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}"#
    );
    // Data version 0 drops the voted directory id, as Java's v0 converter has no such field.
    assert_eq!(
        QuorumStateFile::new(&with_dir, 0, &[]).to_json(),
        r#"{"clusterId":"","leaderId":-1,"leaderEpoch":2,"votedId":1,"appliedOffset":0,"currentVoters":[],"data_version":0}"#
    );
    assert!(QuorumStateFile::new(&leader(2, 1), 0, &[3, 1, 2])
        .to_json()
        .contains(r#""currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}]"#));
}

#[test]
fn reads_back_what_it_writes() {
    for state in [
        leader(7, 3),
        voted(2, ReplicaKey::new(1, Some(dir_id()))),
        ElectionState {
            epoch: 5,
            leader_id: Some(2),
            voted_key: Some(ReplicaKey::of_id(2)),
        },
        ElectionState::unknown(0),
    ] {
        for (kraft_version, voters) in [(1, vec![]), (0, vec![1, 2])] {
            let file = QuorumStateFile::new(&state, kraft_version, &voters);
            let back = QuorumStateFile::parse(&file.to_json()).unwrap();
            assert_eq!(back, file);
            assert_eq!(back.election, state.persisted_at(kraft_version));
            assert_eq!(back.voters, voters);
        }
    }
}

#[test]
fn reader_rules() {
    // Only the first line counts; unknown keys are ignored.
    let f = QuorumStateFile::parse("{\"leaderId\":1,\"leaderEpoch\":4,\"votedId\":-1,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"extra\":[1],\"data_version\":1}\ngarbage").unwrap();
    assert_eq!(f.election.epoch, 4);
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
        let err = QuorumStateFile::parse(text).unwrap_err().to_string();
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
fn the_file_store_reads_java_files_and_writes_javas_format_atomically() {
    let dir = crate::log::tests::scratch("quorum-state");
    let mut store = FileQuorumStateStore::new(&dir, vec![3, 1, 2]);
    assert_eq!(store.read_election_state().unwrap(), None);
    for java in [JAVA_V0, JAVA_V1] {
        std::fs::write(store.path(), java).unwrap();
        let read = FileQuorumStateStore::new(&dir, vec![]);
        assert_eq!(read.read_election_state().unwrap(), Some(leader(1, 1)));
    }
    store.write_election_state(&leader(1, 1), 1).unwrap();
    assert_eq!(std::fs::read_to_string(store.path()).unwrap(), JAVA_V1);

    let vote = voted(2, ReplicaKey::new(3, Some(dir_id())));
    store.write_election_state(&vote, 1).unwrap();
    assert_eq!(store.read_election_state().unwrap(), Some(vote.clone()));
    // kraft.version 0: data version 0 with the static voters, and no directory id (as Java).
    store.write_election_state(&vote, 0).unwrap();
    assert_eq!(
        std::fs::read_to_string(store.path()).unwrap(),
        r#"{"clusterId":"","leaderId":-1,"leaderEpoch":2,"votedId":3,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}"#
    );
    assert_eq!(
        store.read_election_state().unwrap(),
        Some(voted(2, ReplicaKey::of_id(3)))
    );
    assert!(!dir.join("quorum-state.tmp").exists());

    // An unreadable file is an error naming it, never epoch 0.
    std::fs::write(store.path(), "{}").unwrap();
    let err = store.read_election_state().unwrap_err();
    assert!(matches!(err, QuorumStateError::Unreadable { .. }), "{err}");
    assert_eq!(err.file(), Some(store.path()));
    assert!(err.to_string().contains("data_version"), "{err}");

    // A failed write is returned (the core halts on it), naming the file and the OS error.
    std::fs::remove_dir_all(&dir).unwrap();
    let err = store.write_election_state(&leader(3, 1), 1).unwrap_err();
    assert!(err.file().is_some_and(|f| f.starts_with(&dir)), "{err}");
    assert!(err.os_error().is_some(), "{err}");
    assert!(err.to_string().contains("epoch=3 leader=1"), "{err}");
}
