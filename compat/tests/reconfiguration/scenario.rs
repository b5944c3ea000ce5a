//! Kafka's quorum-reconfiguration walk-through (KIP-853's "add a controller / remove a
//! controller"), on a quorum that mixes Java and kraftd controllers:
//!
//! 1. node 1 starts alone, formatted `--standalone`;
//! 2. nodes 2 and 3, formatted `--no-initial-controllers`, start as observers and are added with
//!    `kafka-metadata-quorum add-controller --command-config <their server.properties>`, through
//!    node 1 (the only voter, so the tool talks to node 1's kind of leader);
//! 3. `describe --replication` and `describe --status` show the three voters and their
//!    directory ids;
//! 4. the leader (node 1) is removed with `remove-controller`; nodes 2 and 3 elect a new leader.
//!    If the new leader is of node 1's kind and the other kind is among nodes 2 and 3, the
//!    leader is restarted until the other kind leads ([`DynamicQuorum::move_leadership_to`]:
//!    with two voters left, the one that stayed up is the candidate the restarted node votes
//!    for), so that the tool runs against a Java and a kraftd leader in each mixed run;
//! 5. node 1, still running as an observer, is added back through the new leader; the doctor
//!    finds the quorum healthy;
//! 6. one follower paused (SIGSTOP): the doctor finds the quorum degraded and names it stalled;
//!    then a stuck scale-in (`stuck_scale_in`): the other follower removed; the doctor finds the
//!    quorum down until the paused node resumes and the change commits.
//!
//! After every step [`DynamicQuorum::check_step`] checks the committed log byte for byte, the
//! VotersRecord history on every node, and the Java logs.

use crate::harness::doctor::{assert_voter_lost, doctor};
use crate::harness::dynamic_quorum::{
    assert_tool_ok, ids, voter_ids, voter_rows, DynamicQuorum, Kind, VotersAt,
};
use crate::harness::transport::{Role, Transport};
use crate::harness::{free_port, Kafka, Quorum};
use std::collections::BTreeSet;

/// Runs the walk-through with nodes 1, 2, 3 of the given kinds; node 1 is the standalone one.
pub fn run(kinds: [Kind; 3]) {
    run_on(kinds, Transport::Plaintext);
}

/// [`run`] with the controller listeners secured as `transport` says (the tools then take the
/// harness's client settings in `--command-config` too).
/// `props` as `DynamicQuorum::start` takes them.
fn borrowed(props: &[(String, String)]) -> Vec<(&str, String)> {
    props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
}

pub fn run_on(kinds: [Kind; 3], transport: Transport) {
    let mut q = DynamicQuorum::new();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    transport.register(ports.iter().copied());
    // Node `id`'s properties: the bootstrap servers and its security settings.
    let props = |id: i32, kind: Kind, base: &[(&'static str, String)]| -> Vec<(String, String)> {
        let role = Role::Controller {
            kraftd: kind == Kind::Kraftd,
        };
        base.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .chain(transport.node_props(id, role, None))
            .collect()
    };

    let bootstrap: String = ports
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",");
    let extra = [("controller.quorum.bootstrap.servers", bootstrap.clone())];
    // The kinds of leader the tool's add/remove requests went to.
    let mut tool_leaders: BTreeSet<String> = BTreeSet::new();

    // 1. The standalone controller.
    let node_1 = props(1, kinds[0], &extra);
    q.start(
        kinds[0],
        1,
        ports[0],
        Quorum::Standalone,
        &borrowed(&node_1),
    );
    q.wait_for("node 1 to lead its standalone quorum", |d| {
        d.leader_id == 1 && voter_ids(d) == [1]
    });
    let h = q.check_step("1: standalone start");
    let last = h
        .last()
        .expect("the standalone leader's log holds its VotersRecord");
    assert_eq!(ids(&last.1), [1], "{h:?}");
    assert_eq!(last.1[0].directory_id, q.node(1).directory_id());

    // 2. Two observers, then add-controller for each, through the one voter.
    let joiners = Quorum::Bootstrap(vec![bootstrap.clone()]);
    let (node_2, node_3) = (props(2, kinds[1], &extra), props(3, kinds[2], &extra));
    q.start(kinds[1], 2, ports[1], joiners.clone(), &borrowed(&node_2));
    q.start(kinds[2], 3, ports[2], joiners, &borrowed(&node_3));
    for id in [2, 3] {
        let d = q.wait_caught_up(id, &format!("observer {id} to catch up"));
        assert!(
            !voter_ids(&d).contains(&id),
            "node {id} formatted --no-initial-controllers must start as an observer: {d:?}"
        );
    }
    q.check_step("2a: two observers caught up");
    for (id, expected) in [(2, vec![1, 2]), (3, vec![1, 2, 3])] {
        let leader = q.wait_for("a leader", |d| d.leader_id >= 0).leader_id;
        let kind = q.kind_of(leader);
        let out = q.add_controller(&q.node(leader).endpoint(), id);
        assert_tool_ok(
            &out,
            &format!(
                "add-controller of node {id} ({}) through leader {leader} ({kind})",
                q.kind_of(id)
            ),
        );
        tool_leaders.insert(kind.to_string());
        q.wait_for(&format!("voters {expected:?}"), |d| {
            voter_ids(d) == expected
        });
        let h = q.check_step(&format!(
            "2b: node {id} added through {kind} leader {leader}"
        ));
        assert_eq!(ids(&h.last().unwrap().1), expected, "{h:?}");
    }

    // 3. The tool describes three voters with the directory ids of their meta.properties.
    assert_described(&q, &[1, 2, 3]);

    // 4. Remove the leader; the other two elect one of them.
    let leader = q.wait_for("a leader", |d| d.leader_id >= 0).leader_id;
    let leader_kind = q.kind_of(leader);
    let dir_id = q.node(leader).directory_id();
    let out = q.remove_controller(&q.node(leader).endpoint(), leader, &dir_id);
    assert_tool_ok(
        &out,
        &format!("remove-controller of leader {leader} ({leader_kind}) through itself"),
    );
    tool_leaders.insert(leader_kind.to_string());
    let rest: Vec<i32> = [1, 2, 3].into_iter().filter(|&i| i != leader).collect();
    q.wait_for(&format!("a new leader among {rest:?}"), |d| {
        rest.contains(&d.leader_id) && voter_ids(d) == rest
    });
    let h = q.check_step(&format!("4a: leader {leader} ({leader_kind}) removed"));
    assert_eq!(ids(&h.last().unwrap().1), rest, "{h:?}");
    let other_kind = if leader_kind == Kind::Java {
        Kind::Kraftd
    } else {
        Kind::Java
    };
    if rest.iter().any(|&id| q.kind_of(id) == other_kind) {
        q.move_leadership_to(other_kind, &rest);
        q.check_step(&format!("4b: a {other_kind} node leads"));
    }

    // 5. The removed node, an observer now, is added back through the new leader.
    let d = q.wait_caught_up(
        leader,
        &format!("removed node {leader} to fetch as an observer"),
    );
    assert!(
        d.observers.iter().any(|o| o.replica_key.id == leader),
        "removed node {leader} is no observer: {d:?}"
    );
    let new_leader = d.leader_id;
    let new_kind = q.kind_of(new_leader);
    let out = q.add_controller(&q.node(new_leader).endpoint(), leader);
    assert_tool_ok(
        &out,
        &format!(
            "add-controller of removed node {leader} through new leader {new_leader} ({new_kind})"
        ),
    );
    tool_leaders.insert(new_kind.to_string());
    q.wait_for("voters [1, 2, 3] again", |d| voter_ids(d) == [1, 2, 3]);
    let h = q.check_step(&format!(
        "5: node {leader} added back through {new_kind} leader {new_leader}"
    ));
    assert_history_shape(&h, leader);
    assert_described(&q, &[1, 2, 3]);

    // `kraftd doctor` finds the mixed quorum healthy on every check, whichever kind leads.
    let endpoints: Vec<String> = [1, 2, 3].iter().map(|&id| q.node(id).endpoint()).collect();
    let diagnosis = doctor(&endpoints, 1, &[]);
    assert_eq!(diagnosis.exit, 0, "{:#}", diagnosis.report);

    stuck_scale_in(&mut q, &endpoints);

    let kinds_present: BTreeSet<String> = kinds.iter().map(Kind::to_string).collect();
    assert_eq!(
        tool_leaders, kinds_present,
        "the tool should have run against a leader of every kind in the quorum"
    );
    eprintln!(
        "reconfiguration {kinds:?}: {} steps checked in {:.1}s",
        q.reports.len(),
        q.elapsed().as_secs_f64()
    );
}

/// A paused voter (SIGSTOP), which the doctor names as stalled while the quorum holds; then a
/// scale-in that loses its majority, the runbook's "a scale-out or scale-in stuck": with that
/// follower still paused, the other is removed; the new voter set (the leader and the paused node)
/// has no majority, so the change cannot commit, the leader resigns within 1.5 fetch timeouts,
/// and the doctor finds the quorum down, naming the paused voter (or no leader). Once the paused
/// node resumes, the change commits: the voters are the two.
fn stuck_scale_in(q: &mut DynamicQuorum, endpoints: &[String]) {
    let d = q.wait_for("a leader before the scale-in", |d| d.leader_id > 0);
    let leader = d.leader_id;
    let mut followers = voter_ids(&d).into_iter().filter(|&v| v != leader);
    let (paused, removed) = (
        followers.next().expect("two followers"),
        followers.next().expect("two followers"),
    );
    let removed_dir = q.node(removed).directory_id();
    q.freeze(paused);
    // Paused past the fetch timeout: the quorum holds, degraded, and the doctor names the
    // paused voter as stalled (it accepts connections, answers nothing).
    std::thread::sleep(std::time::Duration::from_secs(3));
    let lagging = assert_voter_lost(&doctor(endpoints, 1, &[]), paused, "stalled");
    eprintln!("voter {paused} paused: the doctor says {lagging}");
    let via = q.node(leader).endpoint();
    let tool = std::thread::spawn(move || {
        Kafka::get().metadata_quorum(
            &via,
            &[
                "remove-controller",
                "--controller-id",
                &removed.to_string(),
                "--controller-directory-id",
                &removed_dir,
            ],
        )
    });
    // The leader took the change (its voter set lost `removed`), or already resigned.
    let kept = [leader.min(paused), leader.max(paused)];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while q.leader_view().is_some_and(|d| voter_ids(&d) != kept) {
        assert!(
            std::time::Instant::now() < deadline,
            "the leader never took the scale-in"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let stuck = doctor(endpoints, 1, &[]);
    let voters = stuck.check("voters");
    let named = stuck
        .findings("voters")
        .iter()
        .any(|f| f.starts_with(&format!("voter {paused} at ")) && f.contains("stalled"));
    assert!(
        stuck.exit == 2
            && ((voters["verdict"] == "down" && named)
                || stuck.check("leader")["verdict"] == "down"),
        "the doctor does not find the stuck scale-in down (voter {paused} paused):\n{:#}",
        stuck.report
    );
    eprintln!(
        "scale-in of {removed} with {paused} paused: the doctor says {}: {}",
        stuck.check("leader")["summary"],
        voters["summary"]
    );
    q.thaw(paused);
    let out = tool.join().expect("the tool thread");
    q.wait_for(&format!("voters {kept:?} once {paused} resumed"), |d| {
        voter_ids(d) == kept
    });
    eprintln!(
        "the scale-in committed once {paused} resumed; remove-controller {}",
        if out.success() {
            "succeeded"
        } else {
            "timed out, as the change waited"
        }
    );
}

/// The history ends with the voter sets the walk-through made, in order: {1}, {1,2}, {1,2,3},
/// without the removed node, {1,2,3}; the re-added node has the same directory id as before.
fn assert_history_shape(h: &[VotersAt], removed: i32) {
    let sets: Vec<Vec<i32>> = h.iter().map(|(_, v)| ids(v)).collect();
    let without: Vec<i32> = [1, 2, 3].into_iter().filter(|&i| i != removed).collect();
    let expected = vec![vec![1], vec![1, 2], vec![1, 2, 3], without, vec![1, 2, 3]];
    // Leader elections may repeat the current set (Kafka's leader writes a VotersRecord at the
    // start of an epoch only when the set came from a checkpoint); drop consecutive repeats.
    let mut dedup = sets.clone();
    dedup.dedup();
    assert!(
        dedup.ends_with(&expected),
        "VotersRecord history {sets:?} does not end with {expected:?}"
    );
    let last = &h.last().unwrap().1;
    let before = &h
        .iter()
        .find(|(_, v)| ids(v) == [1, 2, 3])
        .expect("a 3-voter set before the removal")
        .1;
    assert_eq!(
        last, before,
        "node {removed} came back with the same key and endpoints"
    );
}

/// `describe --replication` lists exactly `voters` as Leader/Follower, each with the directory
/// id of its meta.properties; `describe --status` lists them in CurrentVoters.
#[track_caller]
fn assert_described(q: &DynamicQuorum, voters: &[i32]) {
    let via = q.bootstrap();
    let rows = q
        .describe_replication(&via)
        .unwrap_or_else(|out| panic!("describe --replication failed:\n{out}"));
    let mut described: Vec<(i32, String)> = voter_rows(&rows)
        .iter()
        .map(|r| {
            (
                r.node_id,
                r.columns.get("DirectoryId").cloned().unwrap_or_default(),
            )
        })
        .collect();
    described.sort();
    let expected: Vec<(i32, String)> = voters
        .iter()
        .map(|&id| (id, q.node(id).directory_id()))
        .collect();
    assert_eq!(described, expected, "describe --replication:\n{rows:#?}");
    let status = Kafka::get()
        .quorum_status(&via)
        .unwrap_or_else(|out| panic!("describe --status failed:\n{out}"));
    let current = &status.fields["CurrentVoters"];
    for (id, dir) in &expected {
        assert!(
            current.contains(&format!("\"id\": {id}")) && current.contains(dir.as_str()),
            "CurrentVoters lacks voter {id} with directory id {dir}: {current}"
        );
    }
    assert_eq!(
        current.matches("\"id\"").count(),
        voters.len(),
        "CurrentVoters: {current}"
    );
}
