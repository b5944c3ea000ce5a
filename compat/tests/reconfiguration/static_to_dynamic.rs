//! A static quorum (`controller.quorum.voters`, kraft.version 0) becomes dynamic:
//!
//! 1. voters 1..=3 start from `controller.quorum.voters`; the features say kraft.version 0 and
//!    the logs hold no VotersRecord;
//! 2. `kafka-features --bootstrap-controller … upgrade --feature kraft.version=1`. Java's leader
//!    accepts it only once it knows every voter's directory id and supported kraft.version
//!    range, which followers send in UpdateRaftVoter at kraft.version 0 (once per leader, within
//!    a fetch timeout), so the upgrade is retried (for at most [`UPGRADE_TIMEOUT`]) while the
//!    leader says "not all of the voters support it" or "Directory id must be known"; afterwards
//!    the features say 1 and every log holds one VotersRecord of the three voters, with the
//!    directory ids of their meta.properties and their endpoints;
//! 3. a voter is replaced by a new node with its id on a fresh disk (a new directory id): the
//!    old one is stopped and removed (`remove-controller` of its old key), the new one, formatted
//!    `--no-initial-controllers`, starts as an observer and is added (`add-controller`);
//! 4. the quorum keeps committing: the high watermark passes the last VotersRecord.
//!
//! [`DynamicQuorum::check_step`] runs after every step.

use std::thread;
use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::{
    assert_tool_ok, ids, voter_ids, DynamicQuorum, Kind, STEP_TIMEOUT,
};
use crate::harness::mixed_quorum::Mixed;
use crate::harness::{Kafka, Quorum, Tool};

/// How long the leader may take to learn every voter's directory id.
const UPGRADE_TIMEOUT: Duration = Duration::from_secs(30);

/// Voters 1..=3 of the given kinds; `upgrade_leader`, if given, is the kind that leads the
/// upgrade and the replacement (moved there with [`DynamicQuorum::move_leadership_to`]); voter
/// `replaced` is replaced by a new node of `replacement` kind.
pub fn run(kinds: [Kind; 3], upgrade_leader: Option<Kind>, replaced: i32, replacement: Kind) {
    let kraftd: Vec<i32> = (1..=3)
        .filter(|&id| kinds[(id - 1) as usize] == Kind::Kraftd)
        .collect();
    let mut q = DynamicQuorum::from_mixed(Mixed::start(&kraftd));

    // 1. The static quorum.
    let h = q.check_step("1: static quorum");
    assert!(
        h.is_empty(),
        "a static quorum's log has VotersRecords: {h:?}"
    );
    let features = q.finalized_features();
    assert_eq!(
        features.get("kraft.version").map(String::as_str),
        Some("0"),
        "{features:?}"
    );

    // 2. kraft.version 0 -> 1.
    if let Some(kind) = upgrade_leader {
        q.move_leadership_to(kind, &[1, 2, 3]);
        q.check_step(&format!("1b: a {kind} node leads"));
    }
    let leader = q.wait_for("a leader", |d| d.leader_id >= 0).leader_id;
    let leader_kind = q.kind_of(leader);
    let deadline = Instant::now() + UPGRADE_TIMEOUT;
    let mut tries = 0;
    let out = loop {
        tries += 1;
        let out = Kafka::get().run(
            Tool::Features,
            &[
                "--bootstrap-controller",
                &q.bootstrap(),
                "upgrade",
                "--feature",
                "kraft.version=1",
            ],
        );
        let text = format!("{}{}", out.stdout, out.stderr);
        let not_yet = text.contains("not all of the voters support it")
            || text.contains("Directory id must be known");
        if out.success() || Instant::now() >= deadline || !not_yet {
            break out;
        }
        thread::sleep(Duration::from_secs(1));
    };
    eprintln!(
        "  kafka-features upgrade kraft.version=1 through leader {leader} ({leader_kind}), {tries} runs:\n{}",
        out.stdout.trim()
    );
    assert_tool_ok(
        &out,
        &format!(
            "kafka-features upgrade --feature kraft.version=1 (leader {leader}, {leader_kind}; \
             {tries} runs over {UPGRADE_TIMEOUT:?}: the leader must learn every voter's directory \
             id and kraft.version range from the UpdateRaftVoter its followers send at kraft.version 0)"
        ),
    );
    let deadline = Instant::now() + STEP_TIMEOUT;
    while q
        .finalized_features()
        .get("kraft.version")
        .map(String::as_str)
        != Some("1")
    {
        assert!(
            Instant::now() < deadline,
            "kraft.version is not 1 after the upgrade"
        );
        thread::sleep(Duration::from_millis(500));
    }
    let h = q.check_step(&format!(
        "2: kraft.version upgraded through {leader_kind} leader {leader}"
    ));
    let (_, voters) = h.last().expect("the upgrade writes a VotersRecord");
    assert_eq!(ids(voters), [1, 2, 3], "{h:?}");
    for v in voters {
        let node = q.node(v.id);
        assert_eq!(
            v.directory_id,
            node.directory_id(),
            "voter {} in {h:?}",
            v.id
        );
        assert_eq!(
            v.endpoints,
            [format!("CONTROLLER://{}", node.endpoint())],
            "voter {}",
            v.id
        );
    }

    // 3. Replace a voter: stop it, remove its old key, add a new node with its id and a new disk.
    let r = replaced;
    let rest: Vec<i32> = [1, 2, 3].into_iter().filter(|&i| i != r).collect();
    let old = q.retire(r);
    let old_dir = old.directory_id();
    q.wait_for(&format!("a leader among {rest:?}"), |d| {
        rest.contains(&d.leader_id)
    });
    let out = q.remove_controller(&q.bootstrap(), r, &old_dir);
    assert_tool_ok(&out, &format!("remove-controller of the stopped voter {r}"));
    q.wait_for(&format!("voters {rest:?}"), |d| voter_ids(d) == rest);
    let h = q.check_step(&format!("3a: stopped voter {r} removed"));
    assert_eq!(ids(&h.last().unwrap().1), rest, "{h:?}");
    let bootstrap = Quorum::Bootstrap(vec![q.bootstrap()]);
    q.start(replacement, r, old.port, bootstrap, &[]);
    let new_dir = q.node(r).directory_id();
    assert_ne!(new_dir, old_dir, "the new disk has a new directory id");
    q.wait_caught_up(r, &format!("the new node {r} to catch up as an observer"));
    let leader = q.wait_for("a leader", |d| d.leader_id >= 0).leader_id;
    let out = q.add_controller(&q.node(leader).endpoint(), r);
    assert_tool_ok(
        &out,
        &format!(
            "add-controller of the new node {r} through leader {leader} ({})",
            q.kind_of(leader)
        ),
    );
    q.wait_for("voters [1, 2, 3]", |d| voter_ids(d) == [1, 2, 3]);
    let h = q.check_step(&format!("3b: new {replacement} node {r} added"));
    let (at, voters) = h.last().unwrap().clone();
    assert_eq!(ids(&voters), [1, 2, 3], "{h:?}");
    assert_eq!(voters[(r - 1) as usize].directory_id, new_dir);

    // 4. The quorum keeps committing past the last change.
    q.wait_for("the high watermark to pass the last VotersRecord", |d| {
        d.high_watermark > at + 5
    });
    q.check_step("4: committing after the replacement");
    eprintln!(
        "static -> dynamic {kinds:?} (+ {replacement} {r}'): {:.1}s",
        q.elapsed().as_secs_f64()
    );
}
