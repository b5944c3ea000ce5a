//! A kraftd voter registers with a Java leader without holding up the quorum's commits.
//!
//! A Java controller answers one connection's requests in order, and answers a
//! ControllerRegistration only once its record commits. kraftd used to send its registration on
//! the connection its raft Fetches use: with the third voter down, that commit needs kraftd's
//! next Fetch, which waited behind the registration until kraftd's request timeout (2 s), so
//! the quorum committed nothing for 2 s after each start of kraftd (found by the election-stall
//! test of issue #36). kraftd now sends it on a connection of its own, as Java's controllers
//! keep a channel of their own for it.
//!
//! Java voters 1 and 2 and kraftd voter 3; the Java voter that does not lead is killed, then
//! kraftd restarts (and registers again, with a new incarnation). The leader writes a
//! NoOpRecord every 500 ms (`metadata.max.idle.interval.ms`), so its high watermark, polled
//! through DescribeQuorum, moves at least that often while kraftd fetches. The longest stretch
//! without a move, from kraftd's first commit after its restart, must stay under the request
//! timeout.

use std::thread;
use std::time::{Duration, Instant};

use crate::harness::elections::hand_leadership_to_java;
use crate::harness::mixed_quorum::Mixed;
use crate::harness::quorum_probe::describe_quorum_at;

const KRAFTD: i32 = 3;
/// `controller.quorum.request.timeout.ms` (Kafka's default): what a registration blocking
/// the fetches would stall the commits for.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(2_000);
/// How long the high watermark is watched after kraftd's restart.
const WATCH: Duration = Duration::from_secs(8);
const POLL: Duration = Duration::from_millis(20);

#[test]
fn a_kraftd_registering_with_a_java_leader_does_not_stall_the_commits() {
    let mut q = Mixed::start(&[KRAFTD]);
    let d = hand_leadership_to_java(&mut q, KRAFTD);
    let leader = d.leader_id;
    let other_java = 3 - leader;
    let leader_addr = q.addrs()[(leader - 1) as usize];
    q.member(other_java).kill9();

    let log_before = q.member(KRAFTD).log_text().len();
    q.member(KRAFTD).kill9();
    q.restart_member(KRAFTD);
    let restarted = Instant::now();

    // From the restart: kraftd starts, fetches, registers; the leader's NoOps must keep
    // committing all along.
    let hw_at_restart = leader_hw(leader_addr);
    let (mut hw, mut moved_at) = (hw_at_restart, restarted);
    let mut longest = Duration::ZERO;
    while restarted.elapsed() < WATCH {
        thread::sleep(POLL);
        let now_hw = leader_hw(leader_addr);
        if now_hw > hw {
            longest = longest.max(moved_at.elapsed());
            (hw, moved_at) = (now_hw, Instant::now());
        }
    }
    longest = longest.max(moved_at.elapsed());

    let registered = q.member(KRAFTD).log_text()[log_before..]
        .lines()
        .any(|l| l.contains("registered with the active controller"));
    eprintln!(
        "registration_channel: java {leader} leads, java {other_java} down; after kraftd's \
         restart the high watermark reached {hw}, never still for more than {} ms; kraftd \
         registered: {registered}",
        longest.as_millis()
    );
    assert!(
        registered,
        "kraftd {KRAFTD} did not register with java {leader} within {WATCH:?} of its restart"
    );
    assert!(
        longest < REQUEST_TIMEOUT * 3 / 4,
        "java {leader}'s high watermark stood still for {} ms after kraftd's restart: a \
         registration blocking kraftd's fetches stalls the commits until the request timeout \
         ({REQUEST_TIMEOUT:?})",
        longest.as_millis()
    );

    q.restart_member(other_java);
    q.wait_caught_up(hw);
    q.stop();
}

/// The leader's high watermark, as DescribeQuorum reports it (-1 while unreachable).
fn leader_hw(addr: std::net::SocketAddr) -> i64 {
    describe_quorum_at(addr).map_or(-1, |d| d.high_watermark)
}
