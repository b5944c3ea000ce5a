//! Features, broker failures and elections: a metadata.version upgrade that also turns ELR on
//! (FeatureLevelRecord); a controlled shutdown, a restart and a kill -9
//! (RegisterBrokerRecord, BrokerRegistrationChangeRecord, ISR shrink and expand, ELR);
//! unclean and preferred elections; min.insync.replicas changes that clear ELRs
//! (ClearElrRecord) and ELR turned off again.

use std::time::Duration;

use super::cluster::{Cluster, BROKERS};
use super::tools::in_parallel;
use crate::harness::Tool;

pub const ELR_TOPIC: &str = "elr";
pub const UNCLEAN_TOPIC: &str = "unclean";
/// The 4.4.0 release's latest production metadata.version (4.4-IV2).
pub const FINAL_METADATA_VERSION: i16 = 33;
const ELR_FEATURE: &str = "eligible.leader.replicas.version";
/// A JVM's shutdown may take a while on a loaded machine (controlled shutdown included).
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

impl Cluster {
    /// `kafka-features upgrade` from 3.9-IV0 to 4.4-IV2, with ELR, transaction.version 2 and
    /// group.version 1. Not `--release-version`: that would also move kraft.version to 1,
    /// which a static quorum is not asked to do here.
    pub fn upgrade_features(&mut self) {
        let t = self.tools();
        let mv = format!("metadata.version={FINAL_METADATA_VERSION}");
        let elr = format!("{ELR_FEATURE}=1");
        t.admin(
            Tool::Features,
            &[
                "upgrade",
                "--feature",
                &mv,
                "--feature",
                &elr,
                "--feature",
                "transaction.version=2",
                "--feature",
                "group.version=1",
            ],
        );
        // Topics for the failure phases, created at the new level (PartitionRecord v2):
        // `elr` needs all 3 replicas in sync, so one broker down leaves it an ELR;
        // `unclean` lives on brokers 102 and 103 only.
        in_parallel(vec![
            Box::new(|| {
                t.create_topic(
                    ELR_TOPIC,
                    &[
                        "--partitions",
                        "1",
                        "--replication-factor",
                        "3",
                        "--config",
                        "min.insync.replicas=3",
                    ],
                )
            }),
            Box::new(|| t.create_topic(UNCLEAN_TOPIC, &["--replica-assignment", "102:103"])),
            // A group config (resource type GROUP; group configs need group.version 1).
            Box::new(|| {
                t.alter_configs(
                    &["--entity-type", "groups", "--entity-name", "workload-group"],
                    Some("consumer.session.timeout.ms=50000"),
                    None,
                )
            }),
        ]);
        self.wait_for("topics elr and unclean created", |v| {
            v.partition(ELR_TOPIC, 0).is_some() && v.partition(UNCLEAN_TOPIC, 0).is_some()
        });
    }

    /// SIGTERM: the broker asks for a controlled shutdown, leaves the ISRs and is fenced.
    pub fn controlled_shutdown(&mut self, id: i32) {
        let b = self.broker(id);
        b.sigterm();
        let status = b.wait_exit(STOP_TIMEOUT);
        assert!(
            status.code() == Some(143) || status.success(),
            "broker {id} exited with {status:?} after SIGTERM"
        );
        self.wait_for(&format!("broker {id} fenced after its shutdown"), |v| {
            v.is_fenced(id)
        });
    }

    /// kill -9: the controller fences the broker once its session times out.
    pub fn crash(&mut self, id: i32) {
        self.broker(id).kill9();
        self.wait_for(&format!("broker {id} fenced after kill -9"), |v| {
            v.is_fenced(id)
        });
    }

    /// Restarts a stopped broker and waits until it is unfenced.
    pub fn restart(&mut self, id: i32) {
        let Cluster { q, brokers, .. } = self;
        brokers[(id - BROKERS[0]) as usize].restart(&q.dir);
        self.wait_for(&format!("broker {id} unfenced after its restart"), |v| {
            v.is_active(id)
        });
    }

    /// Waits until every partition's ISR holds each of its replicas among `live`.
    pub fn wait_in_sync(&mut self, live: &[i32]) {
        self.wait_for(
            &format!("every ISR holding its replicas among {live:?}"),
            |v| v.under_replicated(live).is_empty(),
        );
    }

    /// Controlled shutdown of 103 (ISR shrink; `elr-0` keeps 103 as an ELR), restart
    /// (unfence, ISR expand).
    pub fn shutdown_and_restart(&mut self) {
        self.controlled_shutdown(103);
        self.wait_for("103 an eligible leader replica of elr-0", |v| {
            v.partition(ELR_TOPIC, 0)
                .is_some_and(|p| p.elr.contains(&103))
        });
        self.checkpoint("controlled shutdown of broker 103");
        self.restart(103);
        self.wait_in_sync(&BROKERS);
    }

    /// kill -9 of 102, then 103 stopped too, so `unclean-0` has no live ISR member; 102
    /// restarts and an unclean election makes it the leader; 103 comes back.
    pub fn crash_and_unclean_election(&mut self) {
        self.crash(102);
        self.wait_for("103 leading unclean-0", |v| {
            v.partition(UNCLEAN_TOPIC, 0)
                .is_some_and(|p| p.leader == 103)
        });
        self.checkpoint("kill -9 of broker 102");
        self.controlled_shutdown(103);
        self.wait_for("unclean-0 without a leader", |v| {
            v.partition(UNCLEAN_TOPIC, 0)
                .is_some_and(|p| p.leader == -1)
        });
        self.check_metrics("brokers 102 and 103 down, unclean-0 offline");
        self.offline_alert_fires_everywhere();
        self.restart(102);
        self.tools().admin(
            Tool::LeaderElection,
            &[
                "--election-type",
                "unclean",
                "--topic",
                UNCLEAN_TOPIC,
                "--partition",
                "0",
            ],
        );
        self.wait_for("102 leading unclean-0 after the unclean election", |v| {
            v.partition(UNCLEAN_TOPIC, 0)
                .is_some_and(|p| p.leader == 102)
        });
        self.checkpoint("unclean election");
        self.restart(103);
        self.wait_in_sync(&BROKERS);
        self.offline_alert_quiet();
    }

    /// After the restarts many leaders are not the preferred replica; the tool moves them.
    pub fn preferred_election(&mut self) {
        let before = self.view();
        let misplaced = before
            .all_partitions()
            .filter(|(_, _, p)| p.replicas.first() != Some(&p.leader))
            .count();
        assert!(
            misplaced > 0,
            "every leader is already the preferred replica; the election would write nothing"
        );
        self.tools().admin(
            Tool::LeaderElection,
            &["--election-type", "preferred", "--all-topic-partitions"],
        );
        self.wait_for("every leader the preferred replica", |v| {
            v.all_partitions()
                .all(|(_, _, p)| p.replicas.first() == Some(&p.leader))
        });
    }

    /// Changing min.insync.replicas with ELR on clears ELRs (ClearElrRecord, for one topic and
    /// for all); then ELR is turned off (`kafka-features downgrade`).
    pub fn clear_elr(&mut self) {
        let t = self.tools();
        t.alter_configs(
            &["--entity-type", "topics", "--entity-name", ELR_TOPIC],
            Some("min.insync.replicas=2"),
            None,
        );
        t.alter_configs(
            &["--entity-type", "brokers", "--entity-default"],
            Some("min.insync.replicas=1"),
            None,
        );
        let off = format!("{ELR_FEATURE}=0");
        t.admin(Tool::Features, &["downgrade", "--feature", &off]);
    }
}
