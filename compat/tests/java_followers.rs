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
//! before kraftd takes over, `kraftd doctor` names it with its offset.

use std::path::Path;
use std::time::Duration;

use crate::harness::doctor::{assert_clock_named, doctor, wait_for_controller_metrics};
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::netns::Placement;
use crate::harness::pki::StoreFormat;
use crate::harness::quorum_probe::read_log_batches;
use crate::harness::transport::{PerNode, SaslMechanism, Transport};
use crate::harness::workload;
use kraftd::protocol::records::split_batches;

/// The Java voter whose clock runs ahead, and by how much; the kraftd voter.
const SKEWED: i32 = 2;
const KRAFTD: i32 = 3;
const CLOCK_AHEAD: Duration = Duration::from_secs(2);

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
    let placement = Placement::clock_ahead(SKEWED, CLOCK_AHEAD);
    let (mut w, epoch) = workload::run_led_by_kraftd(transport, placement, SKEWED, |q| {
        let endpoints: Vec<String> = q.voters.iter().map(|v| v.endpoint()).collect();
        let kraftd = q.metrics_ports[(KRAFTD - 1) as usize].expect("observed");
        wait_for_controller_metrics(&[kraftd]);
        let d = doctor(&endpoints, 2, &[(KRAFTD, kraftd)]);
        let offset = assert_clock_named(&d, SKEWED, CLOCK_AHEAD, Duration::from_millis(500));
        eprintln!(
            "the doctor put Java controller {SKEWED}'s clock {offset} ms ahead of the others'"
        );
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
