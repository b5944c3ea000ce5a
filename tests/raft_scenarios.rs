//! Scenario transcripts: a small in-memory cluster with a manual clock runs a script, and its
//! event log is compared with `tests/raft_scenarios/<name>.txt`. After a deliberate behaviour
//! change, regenerate with `RAFT_REWRITE=1 cargo test --test raft_scenarios` and review the
//! diff (`git diff tests/raft_scenarios`).

use std::path::PathBuf;

use kraftd::raft::sim::wire::WireVersions;
use kraftd::raft::sim::{Cluster, SimOptions, Verbosity};

fn opts(voters: usize, observers: usize, verbosity: Verbosity) -> SimOptions {
    SimOptions {
        voters,
        observers,
        seed: 7,
        verbosity,
        ..SimOptions::default()
    }
}

/// Compares (or with RAFT_REWRITE=1 rewrites) the transcript file.
fn check_transcript(name: &str, c: &Cluster) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/raft_scenarios")
        .join(format!("{name}.txt"));
    let actual = c.transcript.join("\n") + "\n";
    if std::env::var("RAFT_REWRITE").is_ok() {
        std::fs::write(&path, &actual).expect("write transcript");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing {}; run with RAFT_REWRITE=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
        let at = e
            .iter()
            .zip(a.iter())
            .position(|(x, y)| x != y)
            .unwrap_or(e.len().min(a.len()));
        panic!(
            "transcript {name} differs at line {}:\n  expected: {}\n  actual:   {}\nrerun with RAFT_REWRITE=1 and review `git diff tests/raft_scenarios`",
            at + 1,
            e.get(at).unwrap_or(&"<end>"),
            a.get(at).unwrap_or(&"<end>")
        );
    }
}

fn run(c: &mut Cluster, ms: u64) {
    c.run_for(ms)
        .unwrap_or_else(|e| panic!("{e}\n{}", c.transcript.join("\n")));
}

fn propose(c: &mut Cluster) {
    c.propose()
        .expect("invariants hold")
        .expect("a leader takes the proposal");
}

#[test]
fn first_election_with_pre_vote() {
    // Three voters start empty; the first to time out pre-votes, wins, becomes candidate of
    // epoch 1, is elected, writes LeaderChange at offset 0 and commits it once a follower has it.
    // Unattached voters keep sending discovery Fetches to each other (Kafka 4.x); those are
    // left out of the transcript until just before the first election timeout.
    let mut c = Cluster::new(opts(3, 0, Verbosity::Roles));
    run(&mut c, 1440);
    c.note("show every message from here");
    c.opts.verbosity = Verbosity::Messages;
    run(&mut c, 160);
    c.note("propose two values");
    propose(&mut c);
    propose(&mut c);
    run(&mut c, 100);
    assert!(c.leader().is_some());
    check_transcript("first_election_with_pre_vote", &c);
}

#[test]
fn leader_crash_and_reelection() {
    let mut c = Cluster::new(opts(3, 0, Verbosity::Roles));
    run(&mut c, 2000);
    let old = c.leader().expect("leader");
    propose(&mut c);
    run(&mut c, 100);
    c.note(&format!("crash the leader n{old}"));
    c.crash(old);
    run(&mut c, 5000);
    let new = c.leader().expect("new leader");
    assert_ne!(new, old);
    propose(&mut c);
    c.note(&format!(
        "restart n{old}: it comes back Resigned in its old epoch, then follows"
    ));
    c.restart(old).unwrap();
    run(&mut c, 4000);
    assert_eq!(c.not_converged(), None);
    check_transcript("leader_crash_and_reelection", &c);
}

#[test]
fn isolated_follower_does_not_disrupt_the_leader() {
    // Pre-vote (KIP-996): a follower cut off from everyone keeps failing pre-votes in the same
    // epoch instead of bumping it; after healing it rejoins and the leader keeps its epoch.
    let mut c = Cluster::new(opts(3, 0, Verbosity::Roles));
    run(&mut c, 2000);
    let leader = c.leader().expect("leader");
    let epoch = c.raft(leader).unwrap().epoch();
    let victim = if leader == 1 { 2 } else { 1 };
    c.note(&format!("isolate n{victim} for 10 s"));
    c.net.isolate(victim, [1, 2, 3]);
    run(&mut c, 10_000);
    assert_eq!(
        c.raft(victim).unwrap().epoch(),
        epoch,
        "no epoch bump while isolated"
    );
    c.note("heal");
    c.net.heal();
    propose(&mut c);
    run(&mut c, 3000);
    assert_eq!(c.leader(), Some(leader));
    assert_eq!(c.raft(leader).unwrap().epoch(), epoch);
    assert_eq!(c.not_converged(), None);
    check_transcript("isolated_follower_does_not_disrupt_the_leader", &c);
}

#[test]
fn graceful_resignation_hands_over_at_once() {
    let mut c = Cluster::new(opts(3, 0, Verbosity::Messages));
    run(&mut c, 2000);
    propose(&mut c);
    run(&mut c, 600);
    c.note("the leader resigns: EndQuorumEpoch names its successors by fetch offset");
    c.transcript.clear();
    c.resign().unwrap();
    run(&mut c, 300);
    assert!(
        c.leader().is_some(),
        "a successor is elected without waiting for the fetch timeout"
    );
    check_transcript("graceful_resignation_hands_over_at_once", &c);
}

#[test]
fn divergent_leader_truncates_after_partition() {
    // The leader is cut off with uncommitted data; the majority elects a new leader and commits
    // other data at the same offsets; on healing the old leader learns of the new epoch and
    // truncates its divergent suffix through DivergingEpoch.
    let mut c = Cluster::new(opts(3, 0, Verbosity::Roles));
    run(&mut c, 2000);
    propose(&mut c);
    run(&mut c, 200);
    let old = c.leader().expect("leader");
    c.note(&format!(
        "isolate the leader n{old}, then it takes two proposals it cannot commit"
    ));
    c.net.isolate(old, [1, 2, 3]);
    propose(&mut c);
    propose(&mut c);
    run(&mut c, 6000);
    let new = c.leader().expect("majority leader");
    assert_ne!(new, old);
    propose(&mut c);
    run(&mut c, 200);
    c.note("heal; show the messages");
    c.opts.verbosity = Verbosity::Messages;
    c.net.heal();
    run(&mut c, 1500);
    assert_eq!(c.not_converged(), None);
    check_transcript("divergent_leader_truncates_after_partition", &c);
}

#[test]
fn observer_catches_up_through_a_snapshot() {
    // The observer (a broker) is down while the voters commit, snapshot and clean their logs;
    // when it starts it discovers the leader from a bootstrap voter and downloads the snapshot.
    let mut options = opts(3, 1, Verbosity::Roles);
    options.snapshot_every = 2;
    let mut c = Cluster::new(options);
    c.crash(4);
    run(&mut c, 2000);
    for _ in 0..6 {
        propose(&mut c);
        run(&mut c, 100);
    }
    for id in 1..=3 {
        c.clean_log(id).unwrap();
    }
    c.note("start the observer; show the messages");
    c.opts.verbosity = Verbosity::Messages;
    c.restart(4).unwrap();
    run(&mut c, 1200);
    assert_eq!(c.not_converged(), None);
    check_transcript("observer_catches_up_through_a_snapshot", &c);
}

#[test]
fn single_voter_elects_itself() {
    let mut c = Cluster::new(opts(1, 0, Verbosity::Messages));
    propose(&mut c);
    run(&mut c, 10);
    c.crash(1);
    c.restart(1).unwrap();
    propose(&mut c);
    run(&mut c, 10);
    check_transcript("single_voter_elects_itself", &c);
}

#[test]
fn first_leader_copies_the_bootstrap_voter_set_into_the_log() {
    // kraft.version 1: voters come from the bootstrap checkpoint (0, 0); the first leader writes
    // LeaderChange + KRaftVersion + VotersRecord in its start-of-epoch batch.
    let mut options = opts(3, 0, Verbosity::Roles);
    options.kraft_version = 1;
    let mut c = Cluster::new(options);
    run(&mut c, 1440);
    c.note("show every message from here");
    c.opts.verbosity = Verbosity::Messages;
    run(&mut c, 40);
    let leader = c.leader().expect("leader");
    let log = c.raft(leader).unwrap().log();
    let first = &log.batches()[0];
    c.note(&format!("leader n{leader}'s first batch: {first}"));
    check_transcript(
        "first_leader_copies_the_bootstrap_voter_set_into_the_log",
        &c,
    );
}

#[test]
fn a_quorum_speaking_vote_v1_falls_back_from_pre_vote_to_candidacy() {
    // Messages go through the wire codecs; Vote is negotiated at v1 (a Kafka 3.9 peer), so a
    // pre-vote cannot be sent: the send fails with UNSUPPORTED_VERSION and the node becomes a
    // candidate at once (KIP-996's fallback).
    let mut options = opts(3, 0, Verbosity::Roles);
    options.wire = Some(WireVersions {
        vote: 1,
        ..WireVersions::latest()
    });
    let mut c = Cluster::new(options);
    run(&mut c, 1440);
    c.note("show every message from here");
    c.opts.verbosity = Verbosity::Messages;
    run(&mut c, 30);
    assert!(c.leader().is_some());
    check_transcript(
        "a_quorum_speaking_vote_v1_falls_back_from_pre_vote_to_candidacy",
        &c,
    );
}
