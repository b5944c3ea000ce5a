//! Auto-join (`controller.quorum.auto.join.enable=true`): a controller formatted
//! `--no-initial-controllers` starts as an observer and, without any tool, asks the leader to
//! add it (Kafka 4.4's observers send AddRaftVoter with `ack_when_committed=false` every fetch
//! timeout while they are not voters). Node 1, formatted `--standalone`, leads; node 2 joins.
//! [`DynamicQuorum::check_step`] runs before and after the join.

use crate::harness::dynamic_quorum::{ids, voter_ids, DynamicQuorum, Kind};
use std::time::Duration;

use crate::harness::{free_port, Quorum};

/// How long the observer may take to become a voter by itself.
const JOIN_TIMEOUT: Duration = Duration::from_secs(30);

pub fn run(leader: Kind, joiner: Kind) {
    let mut q = DynamicQuorum::new();
    let ports = [free_port(), free_port()];
    let bootstrap = ports
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",");
    let servers = ("controller.quorum.bootstrap.servers", bootstrap.clone());
    q.start(
        leader,
        1,
        ports[0],
        Quorum::Standalone,
        std::slice::from_ref(&servers),
    );
    q.wait_for("node 1 to lead", |d| d.leader_id == 1);
    q.check_step(&format!("standalone {leader} node 1"));
    q.start(
        joiner,
        2,
        ports[1],
        Quorum::Bootstrap(vec![bootstrap]),
        &[
            servers,
            ("controller.quorum.auto.join.enable", "true".to_string()),
        ],
    );
    // Java's observer asks every fetch timeout (2 s); 30 s leave room for a slow machine.
    let what = format!("{joiner} node 2 to join {leader} leader 1 by itself (auto-join)");
    let d = q.wait_for_within(JOIN_TIMEOUT, &what, |d| voter_ids(d) == [1, 2]);
    assert_eq!(d.leader_id, 1, "{d:?}");
    let h = q.check_step(&format!("{joiner} node 2 auto-joined"));
    let (_, voters) = h.last().expect("a VotersRecord");
    assert_eq!(ids(voters), [1, 2], "{h:?}");
    assert_eq!(voters[1].directory_id, q.node(2).directory_id());
    assert_eq!(
        voters[1].endpoints,
        [format!("CONTROLLER://{}", q.node(2).endpoint())]
    );
    eprintln!(
        "auto-join of {joiner} to {leader}: {:.1}s",
        q.elapsed().as_secs_f64()
    );
}
