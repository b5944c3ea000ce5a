//! Issue 13, "a long Java-follower run": kraftd leads a mixed quorum for the whole workload
//! (`compat/harness/workload`: topics, configs, reassignment, ACLs, quotas, SCRAM, delegation
//! tokens, producers, a feature upgrade, broker failures, elections, unregistrations) while
//! Java voters 1 and 2 follow it and replay every record it decides. Neither Java controller
//! logs a replay, metadata-loading or fatal fault, and no broker logs a metadata loading or
//! publishing fault (the lines behind `metadata-load-error-count` and the publisher's fault
//! metric; the workload checks both before it stops). kraftd leads in one epoch from the first
//! phase to the last (the end of the workload, before its processes stop), and Java's image of
//! each Java follower's log equals kraftd's image of it. The controller listeners are SASL_SSL
//! over mutual TLS, the brokers authenticating with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.
//! Java voter 2's clock runs 2 s ahead of the others' (libfaketime) throughout; while it leads,
//! before kraftd takes over, `kraftd doctor` names it with its offset. kraftd runs in a network
//! namespace of its own (`harness/netns.rs`): cut off from the leader for a while before it
//! takes over, its `/readyz` answers 503 and its `/healthz` 200 (asked from inside its
//! namespace), the doctor names it as cut off, and `/readyz` is 200 again once the link is back.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::doctor::{
    assert_clock_named, assert_voter_lost, doctor, wait_for_controller_metrics,
};
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::metrics::http_get;
use crate::harness::mixed_quorum::Mixed;
use crate::harness::netns::{run_inside, Netns};
use crate::harness::pki::StoreFormat;
use crate::harness::quorum_probe::read_log_batches;
use crate::harness::transport::{PerNode, SaslMechanism, Transport};
use crate::harness::workload;
use kraftd::protocol::records::split_batches;

/// The Java voter whose clock runs ahead, and by how much; the kraftd voter.
const SKEWED: i32 = 2;
const KRAFTD: i32 = 3;
const CLOCK_AHEAD: Duration = Duration::from_secs(2);
/// How long a probe may take to change its answer (the fetch timeout is 2 s).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The highest leader epoch of the batches below `below` in the log of `metadata_dir`.
fn last_epoch_below(metadata_dir: &Path, below: i64) -> i32 {
    read_log_batches(metadata_dir)
        .iter()
        .filter(|(base, _, _)| *base < below)
        .flat_map(|(_, _, bytes)| split_batches(bytes).batches)
        .map(|b| b.partition_leader_epoch())
        .max()
        .expect("a log with batches")
}

#[test]
fn java_followers_replay_a_kraftd_leaders_whole_workload() {
    // On SASL_SSL over mutual TLS: the controllers authenticate to each other with PLAIN, the
    // three brokers with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (one each), SCRAM against the
    // credentials every controller was formatted with (`--add-scram`), which kraftd, the
    // leader, checks; kraftd's stores are PEM.
    // Java voter 2 runs on a machine whose clock is 2 s ahead (libfaketime). While it leads,
    // before kraftd takes over, the doctor reads its clock in its DescribeQuorum answer and
    // kraftd's from kraftd's metrics, and names it and its offset. (A Java follower's clock is
    // read through its JMX exporter only, whose two gauges a loaded JVM reads far apart: see
    // docs/monitoring.md.)
    let transport = Transport::SaslSsl {
        kraftd: PerNode::Every(StoreFormat::Pem),
        brokers: PerNode::InTurn(&SaslMechanism::ALL),
    };
    // Declared first, dropped last: after every process in it was killed.
    let net = Netns::create();
    let mut placement = net.placement(1..=3, KRAFTD);
    placement.clock_ahead.insert(SKEWED, CLOCK_AHEAD);
    let (mut w, epoch) = workload::run_led_by_kraftd(transport, placement, SKEWED, |q| {
        let endpoints: Vec<String> = q.voters.iter().map(|v| v.endpoint()).collect();
        let kraftd = q.metrics_addrs[(KRAFTD - 1) as usize].expect("observed");
        wait_for_controller_metrics(&[kraftd]);
        let d = doctor(&endpoints, 2, &[(KRAFTD, kraftd)]);
        let offset = assert_clock_named(&d, SKEWED, CLOCK_AHEAD, Duration::from_millis(500));
        eprintln!(
            "the doctor put Java controller {SKEWED}'s clock {offset} ms ahead of the others'"
        );
        cut_off_and_heal(q, &net, &endpoints);
    });
    eprintln!(
        "workload led by kraftd in epoch {epoch}, done in {:.0?}",
        w.elapsed
    );
    for id in [1, 2] {
        let dir = w.q.member(id).metadata_dir();
        // Below the high watermark seen with the workload done: the stop that follows stops
        // kraftd first, and the Java voters then elect one of themselves.
        assert_eq!(
            last_epoch_below(&dir, w.high_watermark),
            epoch,
            "java follower {id}: a later epoch than kraftd's {epoch} is in its log below offset {}",
            w.high_watermark
        );
        let (offset, topics, partitions) =
            assert_image_equals_javas(&dir.join("__cluster_metadata-0"), None);
        eprintln!(
            "java follower {id}: Java's image equals kraftd's at offset {offset} ({topics} topics, {partitions} partitions)"
        );
    }
}

/// kraftd (a follower of Java voter [`SKEWED`]) cut off from the leader: `/readyz` 503 and
/// `/healthz` 200 inside its namespace, the doctor (outside) names it as cut off; healed,
/// `/readyz` is 200 again from outside.
fn cut_off_and_heal(q: &Mixed, net: &Netns, endpoints: &[String]) {
    let addr = q.metrics_addrs[(KRAFTD - 1) as usize].expect("observed");
    let probe = |path: &str| http_get(addr, path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(probe("/readyz").0, 200, "kraftd not ready before the cut");
    net.partition();
    let cut = Instant::now();
    let (code, reason) = run_inside(net.name(), || wait_for_probe(addr, "/readyz", 503));
    eprintln!(
        "kraftd {KRAFTD} cut off: /readyz {code} after {:.1?}: {}",
        cut.elapsed(),
        reason.trim_end()
    );
    let alive = run_inside(net.name(), || http_get(addr, "/healthz"));
    assert_eq!(
        alive.as_ref().map(|(c, _)| *c),
        Ok(200),
        "/healthz of the cut-off kraftd: {alive:?}"
    );
    let lost = assert_voter_lost(&doctor(endpoints, 2, &[]), KRAFTD, "cut off:");
    eprintln!("the doctor: {lost}");
    net.heal();
    let healed = Instant::now();
    let (_, reason) = wait_for_probe(addr, "/readyz", 200);
    eprintln!(
        "healed: /readyz 200 after {:.1?}: {}",
        healed.elapsed(),
        reason.trim_end()
    );
}

/// Asks `path` on `addr` until it answers `status`; its answer.
fn wait_for_probe(addr: SocketAddr, path: &str, status: u16) -> (u16, String) {
    let deadline = Instant::now() + PROBE_TIMEOUT;
    loop {
        let got = http_get(addr, path);
        match &got {
            Ok((code, _)) if *code == status => return got.expect("ok"),
            _ if Instant::now() >= deadline => {
                panic!("{path} on {addr} did not answer {status} within {PROBE_TIMEOUT:?}: {got:?}")
            }
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}
