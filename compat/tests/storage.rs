//! kraftd's on-disk formats against Kafka 4.4.0: Java's `meta.properties`, `quorum-state`,
//! `leader-epoch-checkpoint`, segments and snapshots are read by kraftd (and re-rendered byte for
//! byte); kraftd's are accepted by `kafka-storage info`, `kafka-dump-log` and a Java controller
//! started on them; and the `.lock` excludes a Java process and kraftd both ways.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kraftd::log::epoch_cache;
use kraftd::log::meta_properties::MetaProperties;
use kraftd::log::{
    DirLock, ElectionState, FileLog, FileQuorumStateStore, LockError, LogConfig, OffsetAndEpoch,
    QuorumStateFile, QuorumStateStore, ReplicaKey, RollConfig,
};
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::leader_change_message::{LeaderChangeMessage, Voter};
use kraftd::protocol::messages::NoOpRecord;
use kraftd::protocol::records::{BatchBuilder, ControlRecord, MetadataRecordAndVersion};
use kraftd::raft::RaftLog;

use crate::harness::{voters, JavaController, Kafka, Quorum, TestDir};

const START_TIMEOUT: Duration = Duration::from_secs(90);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// Every file of a directory tree (relative path -> bytes), for "nothing changed" checks.
fn snapshot_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            for (k, v) in snapshot_tree(&path) {
                out.insert(format!("{name}/{k}"), v);
            }
        } else {
            out.insert(name, fs::read(&path).unwrap());
        }
    }
    out
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Lines of a Java properties file without the date comment.
fn without_date(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with("#") || *l == "#")
        .collect()
}

#[test]
fn kraftd_reads_a_java_directory_and_renders_its_files_byte_for_byte() {
    let dir = TestDir::new();
    let mut java = JavaController::builder(1).start(&dir);
    java.wait_until_leader(START_TIMEOUT);
    java.stop(STOP_TIMEOUT);
    let data = java.data_dir().to_path_buf();
    let part = java.metadata_log_dir();

    // meta.properties: same values, same lines (Java's date line aside).
    let meta = MetaProperties::read_from_dir(&data).expect("kraftd reads Java's meta.properties");
    let dir_id = Uuid::parse(&java.directory_id()).unwrap();
    assert_eq!(meta, MetaProperties::v1(java.cluster_id(), 1, Some(dir_id)));
    let java_text = fs::read_to_string(data.join("meta.properties")).unwrap();
    let ours = meta.to_file_text(SystemTime::now()).unwrap();
    assert_eq!(
        without_date(&ours),
        without_date(&java_text),
        "ours:\n{ours}\nJava's:\n{java_text}"
    );

    // quorum-state: read by the store, and rewritten by it to the very same bytes.
    let mut store = FileQuorumStateStore::new(&part, vec![]);
    let java_bytes = fs::read_to_string(store.path()).unwrap();
    let file = QuorumStateFile::parse(&java_bytes).unwrap();
    assert_eq!(
        file.data_version, 1,
        "a --standalone quorum runs kraft.version 1"
    );
    let state = store
        .read_election_state()
        .unwrap()
        .expect("Java wrote quorum-state");
    assert_eq!((&state, file.election.leader_id), (&file.election, Some(1)));
    assert_eq!(file.to_json(), java_bytes);
    store.write_election_state(&state, 1).unwrap();
    assert_eq!(fs::read_to_string(store.path()).unwrap(), java_bytes);

    // The segments, checkpoint and snapshots open cleanly, and opening changes nothing.
    let before = snapshot_tree(&data);
    let log = FileLog::open(&part, LogConfig::default()).expect("kraftd opens Java's log");
    assert!(log.open_report().cuts.is_empty(), "{:?}", log.open_report());
    assert!(
        log.end_offset() > 3,
        "Java wrote records: {}",
        log.end_offset()
    );
    assert_eq!(
        log.earliest_snapshot_id(),
        Some(OffsetAndEpoch::new(0, 0)),
        "the bootstrap checkpoint validates"
    );
    let java_epochs = epoch_cache::read_checkpoint(&part)
        .unwrap()
        .expect("Java wrote leader-epoch-checkpoint");
    assert_eq!(log.epoch_entries(), &java_epochs[..]);
    assert_eq!(
        epoch_cache::to_checkpoint_text(&java_epochs),
        fs::read_to_string(part.join("leader-epoch-checkpoint")).unwrap()
    );
    drop(log);
    let after = snapshot_tree(&data);
    let changed: Vec<&String> = before
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(
        changed.is_empty() && before.len() == after.len(),
        "kraftd changed Java's files: {changed:?}"
    );
}

#[test]
fn a_java_controller_starts_on_state_and_segments_written_by_kraftd() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut java = JavaController::builder(1).start(&dir);
    let first = java.wait_until_leader(START_TIMEOUT);
    java.stop(STOP_TIMEOUT);
    let data = java.data_dir().to_path_buf();
    let part = java.metadata_log_dir();
    let dir_id = Uuid::parse(&java.directory_id()).unwrap();

    // kraftd rewrites meta.properties and takes over as leader of a later epoch.
    MetaProperties::v1(java.cluster_id(), 1, Some(dir_id))
        .write_to_dir(&data)
        .unwrap();
    let epoch = first.leader_epoch + 5;
    let config = LogConfig {
        roll: RollConfig {
            segment_bytes: 2_000,
            segment_ms: i64::MAX,
        },
        ..LogConfig::default()
    };
    let mut log = FileLog::open(&part, config).unwrap();
    log.initialize_leader_epoch(epoch).unwrap();
    let voter = Voter {
        voter_id: 1,
        voter_directory_id: Uuid::ZERO,
        ..Default::default()
    };
    let change = LeaderChangeMessage {
        version: 0,
        leader_id: 1,
        voters: vec![voter.clone()],
        granting_voters: vec![voter],
        ..Default::default()
    };
    let mut b = BatchBuilder::new_control(log.end_offset()).partition_leader_epoch(epoch);
    b.append_control(now_ms(), &ControlRecord::LeaderChange(change))
        .unwrap();
    log.append_bytes_as_leader(&b.build().unwrap(), epoch)
        .unwrap();
    for _ in 0..60 {
        let mut b = BatchBuilder::new(log.end_offset()).partition_leader_epoch(epoch);
        // One timestamp per batch: Java's KRaft reader refuses a non-zero timestamp delta.
        let ts = now_ms();
        for _ in 0..3 {
            let noop = MetadataRecordAndVersion::new(NoOpRecord::default(), 0);
            b.append_metadata(ts, &noop).unwrap();
        }
        log.append_bytes_as_leader(&b.build().unwrap(), epoch)
            .unwrap();
    }
    log.flush().unwrap();
    // A tail that is truncated away again (the segment's Java index files go with it).
    let end = log.end_offset();
    let mut b = BatchBuilder::new(end).partition_leader_epoch(epoch);
    b.append_metadata(
        now_ms(),
        &MetadataRecordAndVersion::new(NoOpRecord::default(), 0),
    )
    .unwrap();
    log.append_bytes_as_leader(&b.build().unwrap(), epoch)
        .unwrap();
    log.flush().unwrap();
    log.truncate_to(end).unwrap();
    let segments = log.segment_paths();
    assert!(segments.len() > 2, "2000-byte segments roll: {segments:?}");
    drop(log);
    let mut store = FileQuorumStateStore::new(&part, vec![]);
    let vote = ElectionState {
        epoch,
        leader_id: Some(1),
        voted_key: Some(ReplicaKey::new(1, Some(dir_id))),
    };
    store.write_election_state(&vote, 1).unwrap();

    // Java's tools read it all.
    let config_path = java.config_path().to_str().unwrap().to_string();
    let info = kafka.run(
        crate::harness::Tool::Storage,
        &["info", "--config", &config_path],
    );
    info.assert_success();
    let expected = format!(
        "Found metadata: {{cluster.id={}, directory.id={dir_id}, node.id=1, version=1}}",
        java.cluster_id()
    );
    assert!(info.stdout.contains(&expected), "{info}");
    let ours: Vec<&Path> = segments[1..].iter().map(|p| p.as_path()).collect();
    let dump = kafka.dump_log(&ours, &["--cluster-metadata-decoder"]);
    dump.assert_success();
    assert!(dump.stdout.contains("NO_OP_RECORD"), "{dump}");
    assert!(
        !dump.stdout.contains("isvalid: false") && !dump.stdout.contains("Exception"),
        "{dump}"
    );
    let first_dump = kafka.dump_log(&[segments[0].as_path()], &["--cluster-metadata-decoder"]);
    assert!(
        first_dump
            .stdout
            .contains("LeaderChange: {\"version\":0,\"leaderId\":1"),
        "{first_dump}"
    );

    // Index files: none of kraftd's segments has one; plant stale and garbage ones for two of
    // them. Java recovers every segment at start-up and rebuilds them all.
    let stale_index = segments[1].with_extension("index");
    fs::write(&stale_index, [0u8, 0, 0, 5, 0, 1, 0, 0].repeat(3)).unwrap();
    fs::write(segments[2].with_extension("timeindex"), [0xffu8; 17]).unwrap();
    // A Java controller starts on it, keeps every record and moves past our epoch.
    java.restart(&dir);
    let status = java.wait_until_leader(START_TIMEOUT);
    assert!(
        status.leader_epoch > epoch,
        "{status:?} (kraftd's epoch was {epoch})"
    );
    assert!(
        status.high_watermark > end,
        "{status:?} (kraftd's log ended at {end})"
    );
    let log_text = fs::read_to_string(java.log_path()).unwrap();
    assert!(
        !log_text.contains("Corruption found"),
        "Java cut kraftd's segments"
    );
    assert!(
        log_text.contains("Recovering unflushed segment"),
        "Java recovers every segment at start-up"
    );
    for seg in &segments {
        let index = fs::metadata(seg.with_extension("index")).expect("Java rebuilt the index");
        assert_eq!(
            index.len() % 8,
            0,
            "{}: a fresh offset index",
            seg.display()
        );
        assert_ne!(
            index.len(),
            24,
            "{}: the stale index was replaced",
            seg.display()
        );
    }
    // Java crashes; kraftd reads back what Java made of it.
    java.kill9();
    let log = FileLog::open(&part, LogConfig::default()).unwrap();
    assert!(log.open_report().cuts.is_empty(), "{:?}", log.open_report());
    assert!(log.end_offset() > end);
}

#[test]
fn quorum_state_version_0_of_a_static_quorum_round_trips() {
    let dir = TestDir::new();
    let mut java = JavaController::builder(1)
        .quorum(Quorum::StaticVoters(voters([1])))
        .start(&dir);
    let first = java.wait_until_leader(START_TIMEOUT);
    java.stop(STOP_TIMEOUT);
    let part = java.metadata_log_dir();
    let mut store = FileQuorumStateStore::new(&part, vec![1]);
    let java_bytes = fs::read_to_string(store.path()).unwrap();
    let found = QuorumStateFile::parse(&java_bytes).unwrap();
    assert_eq!(
        found.data_version, 0,
        "kraft.version 0 writes data_version 0"
    );
    assert_eq!(found.voters, vec![1]);
    assert_eq!(found.to_json(), java_bytes);
    // The store writes Java's bytes back for what it reads, at kraft.version 0.
    let read = store.read_election_state().unwrap().unwrap();
    store.write_election_state(&read, 0).unwrap();
    assert_eq!(fs::read_to_string(store.path()).unwrap(), java_bytes);
    let epoch = first.leader_epoch + 3;
    let state = ElectionState {
        epoch,
        leader_id: None,
        voted_key: Some(ReplicaKey::of_id(1)),
    };
    store.write_election_state(&state, 0).unwrap();
    java.restart(&dir);
    let status = java.wait_until_leader(START_TIMEOUT);
    // Having voted for itself in `epoch`, Java resumes as the candidate of that epoch (without
    // our file it would lead epoch first + 1).
    assert!(
        status.leader_epoch >= epoch,
        "{status:?} (kraftd wrote epoch {epoch})"
    );
    java.stop(STOP_TIMEOUT);
    let again_bytes = fs::read_to_string(store.path()).unwrap();
    let again = QuorumStateFile::parse(&again_bytes).unwrap();
    assert_eq!((again.data_version, again.election.leader_id), (0, Some(1)));
    assert_eq!(again.to_json(), again_bytes);
}

#[test]
fn kafka_storage_info_reads_kraftd_meta_properties_v0_and_v1() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let data = dir.subdir("data");
    let config = dir.join("server.properties");
    fs::write(&config, format!("process.roles=controller\nnode.id=4\ncontroller.quorum.voters=4@127.0.0.1:9\nlisteners=CONTROLLER://127.0.0.1:9\ncontroller.listener.names=CONTROLLER\nlog.dirs={}\n", data.display())).unwrap();
    let config = config.to_str().unwrap();
    let dir_id = Uuid::parse(&crate::harness::random_kafka_uuid()).unwrap();
    MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 4, Some(dir_id))
        .write_to_dir(&data)
        .unwrap();
    let info = kafka.run(crate::harness::Tool::Storage, &["info", "--config", config]);
    info.assert_success();
    assert!(info.stdout.contains(&format!("Found metadata: {{cluster.id=MkU3OEVBNTcwNTJENDM2Qg, directory.id={dir_id}, node.id=4, version=1}}")), "{info}");
    let v0 = MetaProperties {
        version: 0,
        cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qg".into()),
        node_id: Some(4),
        directory_id: None,
    };
    v0.write_to_dir(&data).unwrap();
    let info = kafka.run(crate::harness::Tool::Storage, &["info", "--config", config]);
    // Java parses it, then (rightly) says a KRaft config cannot use a legacy-formatted dir.
    assert!(
        info.stdout.contains(
            "Found metadata: {broker.id=4, cluster.id=MkU3OEVBNTcwNTJENDM2Qg, version=0}"
        ),
        "{info}"
    );
    assert!(!info.stdout.contains("Error loading"), "{info}");
}

#[test]
fn the_directory_lock_excludes_java_and_kraftd_both_ways() {
    let dir = TestDir::new();
    let mut java = JavaController::builder(1).start(&dir);
    java.wait_until_started(START_TIMEOUT);
    let data = java.data_dir().to_path_buf();
    match DirLock::try_lock(&data) {
        Err(LockError::Held { holder_pid, .. }) => {
            assert_eq!(holder_pid, Some(java.pid() as i32), "the holder is the JVM")
        }
        Ok(_) => panic!("kraftd locked a directory a running Java controller holds"),
        Err(e) => panic!("{e}"),
    }
    java.stop(STOP_TIMEOUT);

    let lock = DirLock::try_lock(&data).expect("free once Java stopped");
    java.restart(&dir);
    let exit = java.wait_exit(START_TIMEOUT);
    assert!(!exit.success(), "Java started on a directory kraftd holds");
    let log_text = fs::read_to_string(java.log_path()).unwrap();
    assert!(
        log_text.contains("Failed to acquire lock on file .lock"),
        "{log_text}"
    );
    drop(lock);
    java.restart(&dir);
    java.wait_until_started(START_TIMEOUT);
}
