//! A workload that makes the Java controllers of a mixed quorum write every metadata record
//! type Kafka 4.4 writes, while kraftd (voter 3) replicates the log. It records checkpoint
//! offsets along the way (the leader's high watermark after each phase) at which kraftd's and
//! Java's images can be compared, and ends with kraftd caught up and every process stopped;
//! the log directories stay for inspection.
//!
//! ```ignore
//! let w = workload::run();
//! for c in &w.checkpoints { /* compare images at c.offset */ }
//! ```

mod alerts;
mod cluster;
mod failures;
pub mod log_view;
mod security;
mod tools;
mod topics;

use std::path::PathBuf;
use std::time::Duration;

pub use cluster::{Checkpoint, Cluster, BROKERS, INITIAL_RELEASE, KRAFTD};
pub use failures::FINAL_METADATA_VERSION;

use crate::harness::mixed_quorum::Mixed;
use crate::harness::netns::Placement;
use crate::harness::quorum_probe::voter_end;
use crate::harness::transport::Transport;
use crate::harness::Tool;

/// What the workload leaves behind: the stopped quorum (its directories), the checkpoints, and
/// the offset kraftd was seen caught up to at the end.
pub struct Workload {
    pub q: Mixed,
    pub checkpoints: Vec<Checkpoint>,
    /// kraftd's metadata log dir (holding `__cluster_metadata-0`).
    pub kraftd_metadata_dir: PathBuf,
    /// The leader's high watermark when kraftd was last seen at it, before the stop: every
    /// batch below it is committed, and kraftd holds all of them.
    pub high_watermark: i64,
    pub elapsed: Duration,
}

/// Runs every phase; panics with the failing step (and the node logs) if one does not happen.
pub fn run(transport: Transport) -> Workload {
    phases(Cluster::start(transport, Placement::default()), true)
}

/// [`run`] with kraftd (voter 3) the active controller before the first phase: Java voters 1
/// and 2 follow it and replay every record it decides; the voters run where `placement` says.
/// First, `first` leads, and `led` looks at the quorum then. Also returns the epoch kraftd
/// leads in; nothing in the workload stops a controller, so it is expected to lead to the end.
pub fn run_led_by_kraftd(
    transport: Transport,
    placement: Placement,
    first: i32,
    led: impl FnOnce(&Mixed),
) -> (Workload, i32) {
    let mut c = Cluster::start(transport, placement);
    c.move_leadership_to(first);
    led(&c.q);
    let epoch = c.move_leadership_to(KRAFTD);
    (phases(c, false), epoch)
}

/// Runs every phase; with `move_leader`, then restarts the leader (its successor may be a Java
/// voter or kraftd) and checks the metrics again, and a real Prometheus watches Strimzi's
/// controller alerts throughout (alerts.rs).
fn phases(mut c: Cluster, move_leader: bool) -> Workload {
    c.wait_for("brokers 101-103 registered and unfenced", |v| {
        BROKERS.iter().all(|&b| v.is_active(b))
    });
    if move_leader && c.q.metrics_addrs.iter().all(Option::is_some) {
        c.watch_with_prometheus();
    }
    c.checkpoint("bootstrap and broker registration");
    c.check_metrics("brokers registered");
    c.topics_and_configs();
    c.checkpoint("topics and configs");
    c.partitions_and_reassignment();
    c.checkpoint("create partitions and reassignment");
    c.security_and_producers();
    c.checkpoint("acls, quotas, scram users, delegation tokens, producers");
    c.upgrade_features();
    c.checkpoint("metadata.version upgrade with ELR");
    c.shutdown_and_restart();
    c.checkpoint("broker 103 restarted");
    c.crash_and_unclean_election();
    c.checkpoint("brokers back in sync");
    c.preferred_election();
    c.checkpoint("preferred election");
    c.clear_elr();
    c.checkpoint("ELR cleared and disabled");
    c.unregistrations();
    c.checkpoint("broker and controller unregistered");
    c.check_metrics("after every phase");
    c.check_election_counts();
    if move_leader {
        let (from, to) = c.move_leadership();
        c.check_metrics(&format!("leader {from} restarted, {to} leads"));
    }
    c.controller_alert_never_fired();
    c.stop()
}

impl Cluster {
    /// When the voters serve metrics: kraftd exports every name Java does, and the values
    /// agree (`harness::metrics::assert_quorum_metrics`).
    pub(super) fn check_metrics(&self, when: &str) {
        if self.q.metrics_addrs.iter().all(Option::is_some) {
            crate::harness::metrics::assert_quorum_metrics(&self.q, when);
        }
    }

    /// When the voters serve metrics: every voter counted the workload's unclean election
    /// (`harness::metrics::assert_election_counts_agree`).
    fn check_election_counts(&self) {
        if self.q.metrics_addrs.iter().all(Option::is_some) {
            let [unclean, elr] = crate::harness::metrics::assert_election_counts_agree(&self.q);
            eprintln!("every voter counted {unclean} unclean and {elr} ELR elections");
        }
    }

    /// Stops the leader (SIGTERM: it resigns), waits for its successor, starts it again;
    /// returns (the old leader, the new).
    fn move_leadership(&mut self) -> (i32, i32) {
        let q = &mut self.q;
        let d = q.wait_for_leader(0);
        let (leader, epoch) = (d.leader_id, d.leader_epoch);
        let member = &mut q.members[(leader - 1) as usize];
        let name = format!("{} controller {leader}", member.kind());
        member.sigterm();
        member.assert_clean_exit(&name);
        let next = q.wait_for_leader(epoch).leader_id;
        q.restart_member(leader);
        eprintln!("{name} restarted; controller {next} leads");
        (leader, next)
    }

    /// Restarts the active controller, the third voter paused meanwhile, until voter `id` wins
    /// the election that follows (the restarted node can only vote, and only for `id`, unless
    /// its own log is ahead); returns `id`'s epoch.
    fn move_leadership_to(&mut self, id: i32) -> i32 {
        let mut d = self.q.wait_for_leader(0);
        for _ in 0..10 {
            if d.leader_id == id {
                // Settled: every voter (a restarted one too) caught up with a leader, and `id`
                // still leads in that epoch once a fetch timeout has passed.
                let epoch = d.leader_epoch;
                self.q.wait_caught_up(-1);
                std::thread::sleep(Duration::from_secs(2));
                d = self.q.wait_for_leader(0);
                if d.leader_id == id && d.leader_epoch == epoch {
                    eprintln!("controller {id} leads in epoch {epoch}");
                    return epoch;
                }
                continue;
            }
            let (leader, epoch) = (d.leader_id, d.leader_epoch);
            let q = &mut self.q;
            // The third voter is paused while the leader restarts: only `id` can then gather a
            // majority (the restarted leader votes for the candidate that stayed up).
            let rival = (1..=3)
                .find(|&v| v != leader && v != id)
                .expect("three voters");
            let member = &mut q.members[(leader - 1) as usize];
            let name = format!("{} controller {leader}", member.kind());
            eprintln!("{name} leads in epoch {epoch}: restarting it, voter {rival} paused");
            q.members[(rival - 1) as usize].signal(libc::SIGSTOP);
            let member = &mut q.members[(leader - 1) as usize];
            member.sigterm();
            member.assert_clean_exit(&name);
            q.restart_member(leader);
            d = q.wait_for_leader_asking(epoch, &[leader, id]);
            q.members[(rival - 1) as usize].signal(libc::SIGCONT);
        }
        panic!("controller {id} did not win any of 10 elections; the last: {d:?}");
    }

    /// Broker 103 stopped and unregistered (UnregisterBrokerRecord); a controller's
    /// registration removed (UnregisterControllerRecord, 4.4-IV2): kraftd's, or a Java
    /// controller's while kraftd is the active one; the node then registers again.
    fn unregistrations(&mut self) {
        self.controlled_shutdown(103);
        let t = self.tools();
        t.run(
            Tool::Cluster,
            &[
                "unregister",
                "--bootstrap-server",
                &t.bootstrap,
                "--id",
                "103",
            ],
        );
        self.wait_for("broker 103 unregistered", |v| !v.brokers.contains_key(&103));
        // The active controller may not unregister itself (Java's rule, kraftd's too): when
        // kraftd leads, a Java controller's registration is the one removed.
        let d = self.q.wait_caught_up(0);
        let leader = d.leader_id;
        let target = if leader == KRAFTD { 1 } else { KRAFTD };
        let registered = self.view().controller_registrations.get(&target).copied();
        let controllers = self.q.bootstrap();
        t.run(
            Tool::Cluster,
            &[
                "unregister-controller",
                "--bootstrap-controller",
                &controllers,
                "--id",
                &target.to_string(),
            ],
        );
        self.wait_for(
            "the controller registered again after its unregistration",
            |v| {
                v.controllers.contains_key(&target)
                    && v.controller_registrations.get(&target).copied() > registered
            },
        );
    }

    /// Stops the brokers, waits until kraftd holds everything the leader committed, and stops
    /// the controllers, kraftd first.
    fn stop(mut self) -> Workload {
        for id in BROKERS {
            if self.broker(id).is_running() {
                self.controlled_shutdown(id);
            }
        }
        self.q.assert_java_healthy();
        for id in BROKERS {
            self.broker(id).assert_no_metadata_faults();
        }
        let d = self.q.wait_caught_up(0);
        let high_watermark = d.high_watermark;
        let kraftd_end = voter_end(&d, KRAFTD).unwrap_or(-1);
        assert!(
            kraftd_end >= high_watermark,
            "kraftd's log ends at {kraftd_end}, below the leader's high watermark {high_watermark}"
        );
        self.checkpoint_at("brokers stopped, kraftd caught up", high_watermark);
        let kraftd_metadata_dir = self.kraftd_metadata_dir();
        let elapsed = self.elapsed();
        let Cluster {
            mut q, checkpoints, ..
        } = self;
        let kraftd = q.member(KRAFTD);
        kraftd.sigterm();
        kraftd.assert_clean_exit("kraftd");
        for id in [1, 2] {
            q.member(id).sigterm();
        }
        for id in [1, 2] {
            q.member(id)
                .assert_clean_exit(&format!("java controller {id}"));
        }
        Workload {
            q,
            checkpoints,
            kraftd_metadata_dir,
            high_watermark,
            elapsed,
        }
    }
}
