//! kraftd-only quorums over TCP, checked with Kafka's own `kafka-metadata-quorum.sh` and with
//! raw DescribeQuorum and Vote requests: election, replication, failover on `kill -9`, graceful
//! handover on SIGTERM, and the election state surviving a restart.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::Message;
use kraftd::protocol::messages::VoteResponse as WireVoteResponse;
use kraftd::raft::convert::vote;
use kraftd::raft::msg::{VoteRequest, VoteResponse};
use kraftd::raft::ReplicaKey;

use crate::harness::quorum_probe::{
    all_caught_up, assert_same_batches, describe_quorum, first_segment_offset, leader_view,
    parse_replication, read_log_batches, round_trip, snapshot_offsets, voter_end,
};
use crate::harness::{
    free_port, Kafka, KraftdProcess, Properties, TestDir, Tool, KRAFTD_COMMAND_TIMEOUT,
};

/// The ports of `config/quorum/controller-{1,2,3}.properties`.
const CONFIG_PORTS: [u16; 3] = [19093, 19094, 19095];
const CONFIG_BOOTSTRAP: &str = "127.0.0.1:19093,127.0.0.1:19094,127.0.0.1:19095";
/// Kafka's default `controller.quorum.fetch.timeout.ms`, which the config files keep.
const FETCH_TIMEOUT: Duration = Duration::from_millis(2000);
const QUORUM_TIMEOUT: Duration = Duration::from_secs(60);

fn repo_config(node: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("config/quorum/controller-{node}.properties"))
}

/// Polls `probe` every 10 ms until it returns `Some`, panicking with `what` on timeout.
#[track_caller]
fn wait_for<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn new_cluster_id() -> String {
    let out = KraftdProcess::run(&["random-uuid"], &[], KRAFTD_COMMAND_TIMEOUT);
    out.assert_success();
    out.stdout.trim().to_string()
}

/// `kafka-metadata-quorum --bootstrap-controller <b> describe --replication`, parsed.
fn replication(
    kafka: &Kafka,
    bootstrap: &str,
) -> Option<Vec<crate::harness::quorum_probe::ReplicationRow>> {
    let admin = kafka.fast_admin_config();
    let out = kafka.tool(
        kafka.main_class(Tool::MetadataQuorum),
        &[
            "--bootstrap-controller",
            bootstrap,
            "--command-config",
            admin.to_str().unwrap(),
            "describe",
            "--replication",
        ],
    );
    if !out.success() {
        return None;
    }
    parse_replication(&out.stdout)
}

#[test]
fn three_kraftd_controllers_from_the_config_files_elect_replicate_and_survive_losing_the_leader() {
    let dir = TestDir::new();
    let kafka = Kafka::get();
    let cluster_id = new_cluster_id();
    // The shipped files, unchanged; their relative log.dirs land in the test directory.
    let configs: Vec<String> = (1..=3)
        .map(|i| repo_config(i).display().to_string())
        .collect();
    for c in &configs {
        KraftdProcess::run_in(
            &["format", "-t", &cluster_id, "-c", c],
            dir.path(),
            KRAFTD_COMMAND_TIMEOUT,
        )
        .assert_success();
    }
    let data = |i: usize| dir.join(format!("data/quorum/controller-{i}"));
    let mut nodes: Vec<KraftdProcess> = (1..=3)
        .map(|i| {
            KraftdProcess::start_in(
                &dir,
                &format!("kraftd-{i}"),
                &["start", &configs[i - 1]],
                &[],
                Some(dir.path()),
            )
        })
        .collect();

    // Kafka's tool sees one leader, three voters, all caught up, and a moving high watermark.
    let status = wait_for(
        "describe --status to show a leader and 3 voters",
        QUORUM_TIMEOUT,
        || {
            kafka.quorum_status(CONFIG_BOOTSTRAP).ok().filter(|s| {
                s.leader_id >= 1
                    && s.fields
                        .get("CurrentVoters")
                        .is_some_and(|v| v.matches("\"id\"").count() == 3)
            })
        },
    );
    assert_eq!(status.cluster_id, cluster_id);
    eprintln!("describe --status: {status:?}");
    let rows = wait_for(
        "describe --replication to show 3 caught-up voters",
        QUORUM_TIMEOUT,
        || {
            replication(kafka, CONFIG_BOOTSTRAP)
                .filter(|rows| rows.len() == 3 && rows.iter().all(|r| r.lag == 0))
        },
    );
    let mut statuses: Vec<&str> = rows.iter().map(|r| r.status.as_str()).collect();
    statuses.sort();
    assert_eq!(statuses, ["Follower", "Follower", "Leader"], "{rows:?}");
    let later = wait_for("the high watermark to advance", QUORUM_TIMEOUT, || {
        kafka
            .quorum_status(CONFIG_BOOTSTRAP)
            .ok()
            .filter(|s| s.high_watermark > status.high_watermark)
    });
    eprintln!(
        "high watermark {} -> {}",
        status.high_watermark, later.high_watermark
    );

    // kill -9 of the leader: another node leads in a later epoch and the HW moves past what
    // was committed before the kill.
    let before = leader_view(&CONFIG_PORTS).expect("a leader");
    let old = before.leader_id as usize;
    nodes[old - 1].kill9();
    let others: Vec<u16> = (1..=3)
        .filter(|&i| i != old)
        .map(|i| CONFIG_PORTS[i - 1])
        .collect();
    let killed_at = Instant::now();
    let after = wait_for("a new leader after kill -9", QUORUM_TIMEOUT, || {
        leader_view(&others).filter(|d| {
            d.leader_id as usize != old
                && d.leader_epoch > before.leader_epoch
                && d.high_watermark > before.high_watermark
        })
    });
    eprintln!(
        "kill -9 of leader {old} (epoch {}): node {} leads epoch {} after {:?}",
        before.leader_epoch,
        after.leader_id,
        after.leader_epoch,
        killed_at.elapsed()
    );
    nodes[old - 1].restart(&dir);
    let caught_up = wait_for("the restarted node to catch up", QUORUM_TIMEOUT, || {
        leader_view(&CONFIG_PORTS)
            .filter(|d| all_caught_up(d) && d.high_watermark > after.high_watermark)
    });
    // Every committed batch is on every node, byte for byte (the old leader's included).
    let logs: Vec<(String, Vec<_>)> = (1..=3)
        .map(|i| (format!("kraftd-{i}"), read_log_batches(&data(i))))
        .collect();
    let compared = assert_same_batches(&logs, 0, caught_up.high_watermark);
    assert!(logs
        .iter()
        .all(|(_, l)| l.iter().any(|b| b.1 >= before.high_watermark - 1)));
    eprintln!(
        "{compared} batches below offset {} identical on all 3 nodes",
        caught_up.high_watermark
    );

    // SIGTERM of the leader: it resigns with EndQuorumEpoch, a successor takes over well inside
    // the fetch timeout the followers would otherwise wait out, and the process exits 0.
    let leader = caught_up.leader_id as usize;
    let others: Vec<u16> = (1..=3)
        .filter(|&i| i != leader)
        .map(|i| CONFIG_PORTS[i - 1])
        .collect();
    let sent = Instant::now();
    nodes[leader - 1].sigterm();
    let next = wait_for("a successor after SIGTERM", QUORUM_TIMEOUT, || {
        leader_view(&others)
            .filter(|d| d.leader_id as usize != leader && d.leader_epoch > caught_up.leader_epoch)
    });
    let handover = sent.elapsed();
    eprintln!(
        "SIGTERM of leader {leader}: node {} leads epoch {} after {handover:?} (fetch timeout {FETCH_TIMEOUT:?})",
        next.leader_id, next.leader_epoch
    );
    assert!(
        handover < FETCH_TIMEOUT,
        "handover took {handover:?}, not faster than the fetch timeout"
    );
    let exit = nodes[leader - 1].wait_exit(Duration::from_secs(15));
    assert!(
        exit.success(),
        "kraftd-{leader} exited with {exit:?} after SIGTERM"
    );
    assert!(nodes[leader - 1].wait_for_log("resigns", Duration::from_secs(1)));
    nodes[leader - 1].restart(&dir);
    wait_for("all three voters caught up again", QUORUM_TIMEOUT, || {
        replication(kafka, CONFIG_BOOTSTRAP)
            .filter(|rows| rows.len() == 3 && rows.iter().all(|r| r.lag == 0))
    });
}

/// A Vote v2 request (not a pre-vote) from `candidate` for `epoch`, with a log that is ahead of
/// anyone's, sent straight to `port`.
fn request_vote(
    port: u16,
    cluster_id: &str,
    voter: i32,
    candidate: i32,
    epoch: i32,
) -> VoteResponse {
    let request = VoteRequest {
        cluster_id: Some(cluster_id.to_string()),
        voter_id: voter,
        voter_directory_id: None,
        partition_ok: true,
        candidate_epoch: epoch,
        candidate_key: ReplicaKey::of_id(candidate),
        last_offset_epoch: epoch - 1,
        last_offset: 1_000_000,
        pre_vote: false,
    };
    let body = vote::request_to_wire(&request, 2).expect("vote v2");
    let answer = round_trip(port, 52, 2, &body).expect("a Vote answer");
    vote::response_from_wire(&WireVoteResponse::decode_exact(&answer, 2).unwrap())
}

#[test]
fn a_restarted_voter_keeps_its_epoch_and_vote_and_never_votes_twice_in_one_epoch() {
    let dir = TestDir::new();
    let cluster_id = new_cluster_id();
    let ports = [free_port(), free_port(), free_port()];
    let voters = format!(
        "1@127.0.0.1:{},2@127.0.0.1:{},3@127.0.0.1:{}",
        ports[0], ports[1], ports[2]
    );
    // Only node 2 runs, so no election can change its epoch; the test plays the candidates.
    let mut props = Properties::read(&repo_config(2));
    props
        .set("listeners", format!("CONTROLLER://127.0.0.1:{}", ports[1]))
        .set("controller.quorum.voters", voters)
        .set("log.dirs", dir.subdir("node-2").display().to_string());
    let config = KraftdProcess::write_config(&dir, "kraftd-2", &props);
    let config = config.display().to_string();
    KraftdProcess::run(
        &["format", "-t", &cluster_id, "-c", &config],
        &[],
        KRAFTD_COMMAND_TIMEOUT,
    )
    .assert_success();
    let mut node = KraftdProcess::start(&dir, "kraftd-2", &["start", &config], &[]);
    wait_for("node 2 to answer DescribeQuorum", QUORUM_TIMEOUT, || {
        describe_quorum(ports[1])
    });

    let granted = request_vote(ports[1], &cluster_id, 2, 1, 7);
    assert!(
        granted.vote_granted,
        "node 2 should vote for 1 in epoch 7: {granted:?}"
    );
    let state_file = dir
        .subdir("node-2")
        .join("__cluster_metadata-0/quorum-state");
    let written = std::fs::read_to_string(&state_file).unwrap();
    assert!(
        written.contains("\"leaderEpoch\":7") && written.contains("\"votedId\":1"),
        "{written}"
    );

    // A crash right after voting: the vote is on disk, so after the restart node 2 still
    // refuses anyone else in epoch 7, while the same candidate still gets its vote.
    node.kill9();
    node.restart(&dir);
    assert!(
        node.wait_for_log("started at epoch 7", Duration::from_secs(30)),
        "node 2 did not restart in epoch 7"
    );
    let other = request_vote(ports[1], &cluster_id, 2, 3, 7);
    assert!(
        !other.vote_granted,
        "node 2 voted twice in epoch 7: {other:?}"
    );
    assert_eq!(other.leader_epoch, 7);
    let again = request_vote(ports[1], &cluster_id, 2, 1, 7);
    assert!(
        again.vote_granted,
        "the vote for node 1 in epoch 7 should stand: {again:?}"
    );
    let after = std::fs::read_to_string(&state_file).unwrap();
    assert!(
        after.contains("\"leaderEpoch\":7") && after.contains("\"votedId\":1"),
        "{after}"
    );
}

#[test]
fn a_follower_left_behind_the_log_start_catches_up_through_fetch_snapshot() {
    let dir = TestDir::new();
    let cluster_id = new_cluster_id();
    let ports = [free_port(), free_port(), free_port()];
    let voters = format!(
        "1@127.0.0.1:{},2@127.0.0.1:{},3@127.0.0.1:{}",
        ports[0], ports[1], ports[2]
    );
    let data = |i: usize| dir.subdir(format!("node-{i}"));
    let mut nodes: Vec<KraftdProcess> = (1..=3)
        .map(|i| {
            // The shipped file, with free ports and a log that snapshots and cleans itself
            // every few kilobytes (a NoOpRecord every 5 ms keeps it growing).
            let mut props = Properties::read(&repo_config(i));
            props
                .set(
                    "listeners",
                    format!("CONTROLLER://127.0.0.1:{}", ports[i - 1]),
                )
                .set("controller.quorum.voters", voters.clone())
                .set("log.dirs", data(i).display().to_string())
                .set("metadata.max.idle.interval.ms", "5")
                .set("metadata.log.max.record.bytes.between.snapshots", "4096")
                .set("internal.metadata.log.segment.bytes", "8192")
                .set("metadata.max.retention.bytes", "0");
            let config = KraftdProcess::write_config(&dir, &format!("kraftd-{i}"), &props);
            let config = config.display().to_string();
            KraftdProcess::run(
                &["format", "-t", &cluster_id, "-c", &config],
                &[],
                KRAFTD_COMMAND_TIMEOUT,
            )
            .assert_success();
            KraftdProcess::start(&dir, &format!("kraftd-{i}"), &["start", &config], &[])
        })
        .collect();
    let first = wait_for(
        "a leader with some committed batches",
        QUORUM_TIMEOUT,
        || leader_view(&ports).filter(|d| d.high_watermark >= 20),
    );
    let follower = (1..=3).find(|&i| i as i32 != first.leader_id).unwrap();
    nodes[follower - 1].kill9();
    let left_at = read_log_batches(&data(follower))
        .last()
        .map_or(0, |b| b.1 + 1);
    // The other two snapshot and delete every segment the stopped follower would need.
    let others: Vec<usize> = (1..=3).filter(|&i| i != follower).collect();
    wait_for(
        "the others' logs to start past the follower's end",
        QUORUM_TIMEOUT,
        || {
            others
                .iter()
                .all(|&i| first_segment_offset(&data(i)) > left_at)
                .then_some(())
        },
    );
    eprintln!(
        "node {follower} stopped at offset {left_at}; the others' logs now start at {:?}",
        others
            .iter()
            .map(|&i| first_segment_offset(&data(i)))
            .collect::<Vec<_>>()
    );
    nodes[follower - 1].restart(&dir);
    assert!(
        nodes[follower - 1].wait_for_log("the log now starts at snapshot", QUORUM_TIMEOUT),
        "node {follower} did not load a snapshot from the leader"
    );
    let caught_up = wait_for("the follower to catch up", QUORUM_TIMEOUT, || {
        leader_view(&ports).filter(|d| {
            let mine = voter_end(d, follower as i32);
            mine.is_some() && mine == voter_end(d, d.leader_id)
        })
    });
    let fetched = snapshot_offsets(&data(follower));
    assert!(
        fetched.iter().any(|&o| o > left_at),
        "node {follower} holds no snapshot past its old end {left_at}: {fetched:?}"
    );
    eprintln!(
        "node {follower} caught up through snapshot(s) {fetched:?}; high watermark {}",
        caught_up.high_watermark
    );
}
