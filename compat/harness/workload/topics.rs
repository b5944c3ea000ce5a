//! Topics, configs, partitions: TopicRecord, PartitionRecord, ConfigRecord (topic, broker,
//! cluster default, client metrics), RemoveTopicRecord, and PartitionChangeRecords with
//! adding and removing replicas from a completed reassignment.

use super::cluster::{Cluster, BROKERS};
use super::tools::in_parallel;
use crate::harness::Tool;

/// Topic names the later phases use.
pub const WIDE: &str = "wide";
pub const SMALL: &str = "small";
pub const DOOMED: &str = "doomed";
pub const WIDE_PARTITIONS: i32 = 50;

impl Cluster {
    /// Topics created (one with 50 partitions and configs) and one deleted; topic, broker and
    /// cluster-default configs set and removed; a client-metrics subscription. Three
    /// independent threads of tools.
    pub fn topics_and_configs(&mut self) {
        let t = self.tools();
        let wide = || {
            t.create_topic(
                WIDE,
                &[
                    "--partitions",
                    &WIDE_PARTITIONS.to_string(),
                    "--replication-factor",
                    "3",
                    "--config",
                    "retention.ms=86400000",
                    "--config",
                    "segment.bytes=10485760",
                    "--config",
                    "compression.type=lz4",
                    "--config",
                    "min.insync.replicas=2",
                ],
            );
            // A topic config changed and one removed (a ConfigRecord with a null value).
            t.alter_configs(
                &["--entity-type", "topics", "--entity-name", WIDE],
                Some("retention.bytes=1073741824"),
                Some("segment.bytes"),
            );
        };
        let small_and_doomed = || {
            t.create_topic(SMALL, &["--partitions", "3", "--replication-factor", "2"]);
            t.create_topic(
                DOOMED,
                &[
                    "--partitions",
                    "4",
                    "--replication-factor",
                    "3",
                    "--config",
                    "retention.ms=60000",
                ],
            );
            t.admin(Tool::Topics, &["--delete", "--topic", DOOMED]);
        };
        let brokers_and_metrics = || {
            // One broker's dynamic config and cluster-wide defaults, one removed again.
            let first = BROKERS[0].to_string();
            t.alter_configs(
                &["--entity-type", "brokers", "--entity-name", &first],
                Some("log.cleaner.backoff.ms=20000"),
                None,
            );
            t.alter_configs(
                &["--entity-type", "brokers", "--entity-default"],
                Some("message.max.bytes=2000000,log.retention.ms=604800000"),
                None,
            );
            t.alter_configs(
                &["--entity-type", "brokers", "--entity-default"],
                None,
                Some("log.retention.ms"),
            );
            // A client-metrics subscription: ConfigRecords of resource type CLIENT_METRICS.
            t.admin(
                Tool::ClientMetrics,
                &[
                    "--alter",
                    "--name",
                    "workload-metrics",
                    "--metrics",
                    "org.apache.kafka.producer.",
                    "--interval",
                    "60000",
                ],
            );
        };
        in_parallel(vec![
            Box::new(wide),
            Box::new(small_and_doomed),
            Box::new(brokers_and_metrics),
        ]);
        self.wait_for("wide and small created, doomed removed", |v| {
            v.topics.contains_key(WIDE)
                && v.topics.contains_key(SMALL)
                && !v.topics.contains_key(DOOMED)
        });
    }

    /// CreatePartitions on `small`, and a reassignment of `small-0` that replaces one replica
    /// and the leader, run to completion.
    pub fn partitions_and_reassignment(&mut self) {
        let t = self.tools();
        t.admin(
            Tool::Topics,
            &["--alter", "--topic", SMALL, "--partitions", "6"],
        );
        let view = self.wait_for("small grown to 6 partitions", |v| {
            v.topics.get(SMALL).is_some_and(|(_, p)| p.len() == 6)
        });
        let current = view.partition(SMALL, 0).unwrap().replicas.clone();
        // The broker not yet a replica first (it becomes the preferred leader), then the
        // current leader.
        let missing = *BROKERS.iter().find(|b| !current.contains(b)).unwrap();
        let target = vec![missing, current[0]];
        let plan = format!(
            r#"{{"version":1,"partitions":[{{"topic":"{SMALL}","partition":0,"replicas":[{},{}]}}]}}"#,
            target[0], target[1]
        );
        let plan_file = self.q.dir.join("reassignment.json");
        std::fs::write(&plan_file, plan)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", plan_file.display()));
        let plan_file = plan_file.display().to_string();
        let plan_args = ["--reassignment-json-file", plan_file.as_str()];
        t.admin(
            Tool::ReassignPartitions,
            &[&plan_args[..], &["--execute"]].concat(),
        );
        self.wait_for("the reassignment of small-0 completed", |v| {
            v.partition(SMALL, 0).is_some_and(|p| {
                p.replicas == target && p.adding.is_empty() && p.removing.is_empty()
            })
        });
        // --verify also clears any throttles the execution set.
        let verify = [
            &["--bootstrap-server", t.bootstrap.as_str()][..],
            &plan_args,
            &["--verify"],
        ]
        .concat();
        t.run_until(Tool::ReassignPartitions, &verify, |out| {
            out.stdout.contains("is complete")
        });
    }
}
