//! Mixed static quorums of Java 4.4 and kraftd controllers, each node's directory formatted by
//! its own tool with one cluster id. Leadership is moved around with `kill -9` and SIGTERM until
//! every node has led and it has passed both from kraftd to Java and from Java to kraftd;
//! after each move the high watermark advances, every node holds the committed prefix byte for
//! byte, and no Java controller has logged an error or exited.

use std::thread;
use std::time::{Duration, Instant};

use crate::harness::mixed_quorum::{Member, Mixed, TIMEOUT};
use crate::harness::quorum_probe::{
    first_segment_offset, leader_view, parse_replication, read_log_batches, snapshot_offsets,
};
use crate::harness::{Kafka, KraftdProcess, Tool, KRAFTD_COMMAND_TIMEOUT};

/// Moves attempted before giving up on covering every node and both directions.
const MAX_MOVES: usize = 24;
/// At least this many leadership moves per quorum.
const MIN_MOVES: usize = 6;

/// One leadership move: what ran, who led before and after, and how long it took.
#[derive(Debug)]
struct Move {
    how: &'static str,
    from: (i32, &'static str),
    to: (i32, &'static str),
    took: Duration,
    /// From thawing the frozen rival to the new leader being visible.
    after_thaw: Duration,
}

fn run_mixed_quorum(kraftd: &[i32]) {
    let kafka = Kafka::get();
    let mut q = Mixed::start(kraftd);
    let first = q.wait_caught_up(0);
    // Kafka's tool agrees: one leader, three caught-up voters.
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let admin = kafka.fast_admin_config();
        let out = kafka.tool(
            kafka.main_class(Tool::MetadataQuorum),
            &[
                "--bootstrap-controller",
                &q.bootstrap(),
                "--command-config",
                admin.to_str().unwrap(),
                "describe",
                "--replication",
            ],
        );
        let rows = out
            .success()
            .then(|| parse_replication(&out.stdout))
            .flatten();
        if let Some(rows) = rows.filter(|r| r.len() == 3 && r.iter().all(|r| r.lag == 0)) {
            assert_eq!(
                rows.iter().filter(|r| r.status == "Leader").count(),
                1,
                "{rows:?}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "describe --replication never showed 3 caught-up voters:\n{out}"
        );
        thread::sleep(Duration::from_millis(500));
    }
    let mut led: Vec<i32> = vec![first.leader_id];
    let mut moves: Vec<Move> = Vec::new();
    let mut view = first;
    let kind_of = |q: &Mixed, id: i32| q.members[(id - 1) as usize].kind();
    while moves.len() < MAX_MOVES {
        let covered = (1..=3).all(|id| led.contains(&id))
            && moves
                .iter()
                .any(|m| m.from.1 == "kraftd" && m.to.1 == "java")
            && moves
                .iter()
                .any(|m| m.from.1 == "java" && m.to.1 == "kraftd");
        if covered && moves.len() >= MIN_MOVES {
            break;
        }
        let leader = view.leader_id;
        // Steer towards a node that has not led yet: freeze the other follower while the old
        // leader goes away, so that the target's election has no rival.
        let followers: Vec<i32> = (1..=3).filter(|&id| id != leader).collect();
        let target = followers
            .iter()
            .copied()
            .find(|id| !led.contains(id))
            .unwrap_or(followers[moves.len() % 2]);
        let rival = followers.iter().copied().find(|&id| id != target).unwrap();
        let how = if moves.len() % 2 == 0 {
            "kill -9"
        } else {
            "SIGTERM"
        };
        q.member(rival).signal(libc::SIGSTOP);
        let started = Instant::now();
        if how == "kill -9" {
            q.member(leader).kill9();
        } else {
            q.member(leader).sigterm();
        }
        thread::sleep(Duration::from_millis(2500));
        q.member(rival).signal(libc::SIGCONT);
        let thawed = Instant::now();
        let others: Vec<u16> = followers
            .iter()
            .map(|&id| q.voters[(id - 1) as usize].port)
            .collect();
        let deadline = Instant::now() + TIMEOUT;
        let next = loop {
            if let Some(d) = leader_view(&others).filter(|d| {
                d.leader_epoch > view.leader_epoch && d.high_watermark > view.high_watermark
            }) {
                break d;
            }
            assert!(
                Instant::now() < deadline,
                "no new leader after {how} of node {leader}"
            );
            thread::sleep(Duration::from_millis(20));
        };
        if how == "SIGTERM" {
            q.member(leader)
                .assert_clean_exit(&format!("node {leader}"));
        }
        let m = Move {
            how,
            from: (leader, kind_of(&q, leader)),
            to: (next.leader_id, kind_of(&q, next.leader_id)),
            took: started.elapsed(),
            after_thaw: thawed.elapsed(),
        };
        eprintln!("move {}: {m:?}", moves.len() + 1);
        moves.push(m);
        if !led.contains(&next.leader_id) {
            led.push(next.leader_id);
        }
        let Mixed { dir, members, .. } = &mut q;
        members[(leader - 1) as usize].restart(dir);
        view = q.wait_caught_up(next.high_watermark);
        let compared = q.assert_logs_identical(view.high_watermark);
        eprintln!(
            "  {compared} batches below offset {} identical on all 3 nodes",
            view.high_watermark
        );
        q.assert_java_healthy();
    }
    for (i, m) in moves.iter().enumerate() {
        eprintln!(
            "move {:>2}: {:<7} of {} {} -> {} {} in {:?} ({:?} after the rival thawed)",
            i + 1,
            m.how,
            m.from.1,
            m.from.0,
            m.to.1,
            m.to.0,
            m.took,
            m.after_thaw
        );
    }
    // Every controller registered with whichever node was active (Java or kraftd), and the
    // registrations are in every node's log.
    for (i, m) in q.members.iter().enumerate() {
        let registered = registered_controllers(&m.metadata_dir());
        assert_eq!(
            registered,
            [1, 2, 3].into_iter().collect(),
            "the log of node {} registers controllers {registered:?}",
            i + 1
        );
    }
    // kraftd replays every node's log, Java's included, without an undecodable record, and
    // says what it holds at the end and half-way.
    for (i, m) in q.members.iter().enumerate() {
        let dir = m.metadata_dir().display().to_string();
        let full = KraftdProcess::run(&["metadata-state", &dir], &[], KRAFTD_COMMAND_TIMEOUT);
        full.assert_success();
        assert!(
            full.stdout.contains("metadata.version=33"),
            "node {}:\n{full}",
            i + 1
        );
        assert!(
            full.stdout.contains("Registered controllers: 1, 2, 3"),
            "node {}:\n{full}",
            i + 1
        );
        let half = (view.high_watermark / 2).to_string();
        let part = KraftdProcess::run(
            &["metadata-state", &dir, "--at", &half],
            &[],
            KRAFTD_COMMAND_TIMEOUT,
        );
        part.assert_success();
        // Up to `half`, or to the last data record below it when `half` falls on a control
        // record (a leader change, a voter set) or inside a batch.
        let replayed: Option<i64> = part
            .stdout
            .strip_prefix("Replayed up to offset ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok());
        assert!(
            replayed.is_some_and(|r| r > 0 && r <= view.high_watermark / 2),
            "node {}: replayed up to {replayed:?}, not a data offset at or below {half}:\n{part}",
            i + 1
        );
    }
    let status = kafka
        .quorum_status(&q.bootstrap())
        .unwrap_or_else(|out| panic!("describe --status failed:\n{out}"));
    assert!(status.leader_id >= 1, "{status:?}");
    assert_eq!(
        status
            .fields
            .get("CurrentVoters")
            .map(|v| v.matches("\"id\"").count()),
        Some(3),
        "{status:?}"
    );
    assert!(
        (1..=3).all(|id| led.contains(&id)),
        "not every node led in {} moves: {moves:?}",
        moves.len()
    );
    assert!(
        moves
            .iter()
            .any(|m| m.from.1 == "kraftd" && m.to.1 == "java"),
        "{moves:?}"
    );
    assert!(
        moves
            .iter()
            .any(|m| m.from.1 == "java" && m.to.1 == "kraftd"),
        "{moves:?}"
    );
}

#[test]
fn two_java_and_one_kraftd_controllers_pass_leadership_around() {
    run_mixed_quorum(&[3]);
}

#[test]
fn one_java_and_two_kraftd_controllers_pass_leadership_around() {
    run_mixed_quorum(&[1, 3]);
}

/// Snapshot and clean every few kilobytes; a NoOpRecord every 10 ms keeps the log growing.
const SMALL_LOG: &[(&str, &str)] = &[
    ("metadata.max.idle.interval.ms", "10"),
    ("metadata.log.max.record.bytes.between.snapshots", "4096"),
    ("internal.metadata.log.segment.bytes", "8192"),
    ("metadata.max.retention.bytes", "0"),
];

/// Stops `lagging`, waits until the leader (of the kind wanted) has cleaned its log past the
/// stopped node's end, restarts it, and waits until it has caught up through a snapshot.
fn catch_up_from_snapshot(q: &mut Mixed, lagging: i32, leader_kind: &str) {
    let first = q.wait_caught_up(20);
    let ports = q.ports();
    q.member(lagging).kill9();
    if first.leader_id == lagging {
        let others: Vec<u16> = ports
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as i32 + 1 != lagging)
            .map(|(_, p)| *p)
            .collect();
        let deadline = Instant::now() + TIMEOUT;
        while leader_view(&others)
            .filter(|d| d.leader_epoch > first.leader_epoch)
            .is_none()
        {
            assert!(
                Instant::now() < deadline,
                "no leader after killing node {lagging}"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
    let view = leader_view(&ports).expect("a leader");
    let leader = view.leader_id;
    assert_eq!(
        q.members[(leader - 1) as usize].kind(),
        leader_kind,
        "this scenario needs a {leader_kind} leader"
    );
    let left_at = read_log_batches(&q.members[(lagging - 1) as usize].metadata_dir())
        .last()
        .map_or(0, |b| b.1 + 1);
    let leader_dir = q.members[(leader - 1) as usize].metadata_dir();
    let deadline = Instant::now() + TIMEOUT;
    while first_segment_offset(&leader_dir) <= left_at {
        assert!(
            Instant::now() < deadline,
            "the leader's log never started past offset {left_at}"
        );
        thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "node {lagging} stopped at offset {left_at}; the {leader_kind} leader {leader}'s log starts at {}",
        first_segment_offset(&leader_dir)
    );
    let Mixed { dir, members, .. } = q;
    members[(lagging - 1) as usize].restart(dir);
    let caught_up = q.wait_caught_up(view.high_watermark);
    let snapshots = snapshot_offsets(&q.members[(lagging - 1) as usize].metadata_dir());
    assert!(
        snapshots.iter().any(|&o| o > left_at),
        "node {lagging} holds no snapshot past offset {left_at}: {snapshots:?}"
    );
    eprintln!(
        "node {lagging} caught up (high watermark {}) holding {snapshots:?}",
        caught_up.high_watermark
    );
    // The lagging node took the snapshot from the leader rather than replaying a log it had.
    let fetched = match q.member(lagging) {
        Member::Java(j) => j.wait_for_log("Fetching snapshot", Duration::from_secs(1)),
        Member::Kraftd(k, _) => {
            k.wait_for_log("the log now starts at snapshot", Duration::from_secs(1))
        }
    };
    assert!(
        fetched,
        "node {lagging} did not fetch a snapshot from the leader"
    );
    let compared = q.assert_logs_identical(caught_up.high_watermark);
    eprintln!(
        "{compared} batches below {} identical where all nodes hold them",
        caught_up.high_watermark
    );
    q.assert_java_healthy();
}

#[test]
fn a_lagging_kraftd_catches_up_from_a_java_leaders_snapshot() {
    let mut q = Mixed::start_with(&[3], SMALL_LOG);
    catch_up_from_snapshot(&mut q, 3, "java");
    let Member::Kraftd(k, _) = q.member(3) else {
        unreachable!()
    };
    assert!(k.wait_for_log("the log now starts at snapshot", Duration::from_secs(1)));
}

#[test]
fn a_lagging_java_controller_catches_up_from_a_kraftd_leaders_snapshot() {
    let mut q = Mixed::start_with(&[2, 3], SMALL_LOG);
    catch_up_from_snapshot(&mut q, 1, "kraftd");
}

/// The controller ids of the `RegisterControllerRecord`s in a node's log segments.
fn registered_controllers(metadata_dir: &std::path::Path) -> std::collections::BTreeSet<i32> {
    use kraftd::protocol::records::{split_batches, MetadataRecord, MetadataRecordAndVersion};
    let mut ids = std::collections::BTreeSet::new();
    for (_, _, bytes) in read_log_batches(metadata_dir) {
        for view in split_batches(&bytes).batches {
            if view.is_control() {
                continue;
            }
            let records = view.records().expect("a readable batch");
            for r in records.iter() {
                let value = r.expect("a readable record").value.expect("a value");
                let record = MetadataRecordAndVersion::decode(value).expect("a metadata record");
                if let MetadataRecord::RegisterController(c) = record.record {
                    ids.insert(c.controller_id);
                }
            }
        }
    }
    ids
}
