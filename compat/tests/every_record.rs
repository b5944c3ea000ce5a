//! Every metadata record type Kafka 4.4 writes reaches kraftd's log, byte for byte as the Java
//! voters hold it. The workload (`compat/harness/workload`) drives Java voters 1 and 2, kraftd
//! voter 3 and three stock brokers through topics, configs, reassignment, ACLs, quotas, SCRAM,
//! delegation tokens, producers, a feature upgrade, broker failures, elections and
//! unregistrations; kraftd replicates as a follower, and the snapshots its node writes meanwhile
//! are Java's image at their offsets.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::harness::image_compare::{assert_image_equals_javas, image_differences};
use crate::harness::pki::StoreFormat;
use crate::harness::transport::{PerNode, Transport};
use crate::harness::workload::{self, Workload};
use crate::harness::{dump_java_image, dump_java_snapshot, KraftdProcess, KRAFTD_COMMAND_TIMEOUT};
use kraftd::log::snapshot::{parse_file_name, OffsetAndEpoch, SnapshotFileKind};
use kraftd::protocol::records::METADATA_RECORD_TYPES;

/// Record types the workload must make Java write, and the step that writes each.
const PRODUCED: &[(&str, &str)] = &[
    ("REGISTER_BROKER_RECORD", "broker (re)registration"),
    (
        "UNREGISTER_BROKER_RECORD",
        "kafka-cluster unregister of stopped broker 103",
    ),
    ("TOPIC_RECORD", "kafka-topics --create"),
    (
        "PARTITION_RECORD",
        "topic creation and kafka-topics --alter --partitions",
    ),
    (
        "CONFIG_RECORD",
        "topic, broker, cluster, client-metrics and group configs",
    ),
    (
        "PARTITION_CHANGE_RECORD",
        "ISR changes, elections, reassignment",
    ),
    ("REMOVE_TOPIC_RECORD", "kafka-topics --delete"),
    (
        "DELEGATION_TOKEN_RECORD",
        "kafka-delegation-tokens --create and --renew",
    ),
    (
        "USER_SCRAM_CREDENTIAL_RECORD",
        "kafka-configs --add-config SCRAM-SHA-*",
    ),
    (
        "FEATURE_LEVEL_RECORD",
        "bootstrap and kafka-features upgrade/downgrade",
    ),
    (
        "CLIENT_QUOTA_RECORD",
        "kafka-configs on clients, users and ips",
    ),
    (
        "PRODUCER_IDS_RECORD",
        "idempotent and transactional producers",
    ),
    (
        "BROKER_REGISTRATION_CHANGE_RECORD",
        "fence, unfence, controlled shutdown",
    ),
    ("ACCESS_CONTROL_ENTRY_RECORD", "kafka-acls --add"),
    ("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "kafka-acls --remove"),
    ("NO_OP_RECORD", "the active controller, every 500 ms"),
    (
        "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        "kafka-configs --delete-config SCRAM-SHA-512",
    ),
    ("BEGIN_TRANSACTION_RECORD", "the bootstrap records"),
    ("END_TRANSACTION_RECORD", "the bootstrap records"),
    (
        "REMOVE_DELEGATION_TOKEN_RECORD",
        "kafka-delegation-tokens --expire",
    ),
    ("REGISTER_CONTROLLER_RECORD", "controller registration"),
    (
        "CLEAR_ELR_RECORD",
        "min.insync.replicas changed while ELR is on",
    ),
    (
        "UNREGISTER_CONTROLLER_RECORD",
        "kafka-cluster unregister-controller (4.4-IV2)",
    ),
];

/// Record types Kafka 4.4 knows but that no tool can make it write, and why.
const NOT_PRODUCIBLE: &[(&str, &str)] = &[
    (
        "FENCE_BROKER_RECORD",
        "written only below metadata.version 3.3-IV2; Kafka 4.x starts at 3.3-IV3 and fences \
         with BrokerRegistrationChangeRecord",
    ),
    (
        "UNFENCE_BROKER_RECORD",
        "written only below metadata.version 3.3-IV2; Kafka 4.x unfences with \
         BrokerRegistrationChangeRecord",
    ),
    (
        "ZK_MIGRATION_STATE_RECORD",
        "ZooKeeper migration is gone from Kafka 4.x, which never writes this record",
    ),
    (
        "ABORT_TRANSACTION_RECORD",
        "written only by a new leader that finds a metadata transaction open; Kafka 4.4 opens \
         one only around the bootstrap records, which it writes in the same batch as its end",
    ),
];

/// Shapes of records the image must handle, beyond their types: (what, the step that writes
/// it, does this record show it).
type Variant = (&'static str, &'static str, fn(&Record) -> bool);
const VARIANTS: &[Variant] = &[
    ("PartitionRecord v1", "topics created at 3.9-IV0", |r| {
        r.is("PARTITION_RECORD", 1)
    }),
    ("PartitionRecord v2", "topics created at 4.4-IV2", |r| {
        r.is("PARTITION_RECORD", 2)
    }),
    ("RegisterBrokerRecord v3", "registrations at 3.9-IV0", |r| {
        r.is("REGISTER_BROKER_RECORD", 3)
    }),
    ("RegisterBrokerRecord v4", "registrations at 4.4-IV2", |r| {
        r.is("REGISTER_BROKER_RECORD", 4)
    }),
    (
        "PartitionChangeRecord v1",
        "the reassignment at 3.9-IV0",
        |r| r.is("PARTITION_CHANGE_RECORD", 1),
    ),
    ("PartitionChangeRecord v2", "changes at 4.4-IV2", |r| {
        r.is("PARTITION_CHANGE_RECORD", 2)
    }),
    (
        "PartitionChangeRecord adding replicas",
        "the reassignment",
        |r| r.name == "PARTITION_CHANGE_RECORD" && r.non_empty("addingReplicas"),
    ),
    (
        "PartitionChangeRecord removing replicas",
        "the reassignment",
        |r| r.name == "PARTITION_CHANGE_RECORD" && r.non_empty("removingReplicas"),
    ),
    (
        "PartitionChangeRecord with an ELR",
        "a broker down with ELR on",
        |r| r.name == "PARTITION_CHANGE_RECORD" && r.non_empty("eligibleLeaderReplicas"),
    ),
    (
        "PartitionChangeRecord with a last known ELR",
        "ELR members down",
        |r| r.name == "PARTITION_CHANGE_RECORD" && r.non_empty("lastKnownElr"),
    ),
    (
        "PartitionChangeRecord leader recovering",
        "the unclean election",
        |r| r.name == "PARTITION_CHANGE_RECORD" && r.data["leaderRecoveryState"] == 1,
    ),
    (
        "BrokerRegistrationChangeRecord fence",
        "shutdowns and kill -9",
        |r| r.name == "BROKER_REGISTRATION_CHANGE_RECORD" && r.data["fenced"] == 1,
    ),
    (
        "BrokerRegistrationChangeRecord unfence",
        "registrations",
        |r| r.name == "BROKER_REGISTRATION_CHANGE_RECORD" && r.data["fenced"] == -1,
    ),
    (
        "BrokerRegistrationChangeRecord controlled shutdown",
        "SIGTERM",
        |r| r.name == "BROKER_REGISTRATION_CHANGE_RECORD" && r.data["inControlledShutdown"] == 1,
    ),
    (
        "ConfigRecord deleting a value",
        "kafka-configs --delete-config",
        |r| r.name == "CONFIG_RECORD" && r.data["value"].is_null(),
    ),
    (
        "ConfigRecord of a broker",
        "kafka-configs --entity-name 101",
        |r| r.config_of(4) && r.data["resourceName"] != "",
    ),
    (
        "ConfigRecord of the cluster",
        "kafka-configs --entity-default",
        |r| r.config_of(4) && r.data["resourceName"] == "",
    ),
    (
        "ConfigRecord of a client-metrics subscription",
        "kafka-client-metrics",
        |r| r.config_of(16),
    ),
    (
        "ConfigRecord of a group",
        "kafka-configs --entity-type groups",
        |r| r.config_of(32),
    ),
    (
        "ClearElrRecord of one topic",
        "a topic's min.insync.replicas",
        |r| r.name == "CLEAR_ELR_RECORD" && r.data["topicName"] != "",
    ),
    (
        "ClearElrRecord of every topic",
        "the cluster's min.insync.replicas",
        |r| r.name == "CLEAR_ELR_RECORD" && r.data["topicName"] == "",
    ),
    (
        "FeatureLevelRecord turning a feature off",
        "ELR downgraded to 0",
        |r| r.name == "FEATURE_LEVEL_RECORD" && r.data["featureLevel"] == 0,
    ),
];

#[test]
fn every_metadata_record_type_reaches_kraftd_byte_for_byte() {
    // The two lists name every type of Kafka 4.4's MetadataRecordType (which kraftd's table
    // mirrors), each once, before any JVM starts.
    let known: Vec<&str> = PRODUCED
        .iter()
        .chain(NOT_PRODUCIBLE)
        .map(|(n, _)| *n)
        .collect();
    let mut defined: Vec<&str> = METADATA_RECORD_TYPES.iter().map(|t| t.kafka_name).collect();
    let mut listed = known.clone();
    defined.sort();
    listed.sort();
    assert_eq!(
        listed, defined,
        "PRODUCED and NOT_PRODUCIBLE must name every metadata record type once"
    );

    // Over mutual TLS, kraftd's stores JKS (Kafka's default type).
    let mut w = workload::run(Transport::MutualTls {
        kraftd: PerNode::Every(StoreFormat::Jks),
    });
    eprintln!("workload done after {:.1?}", w.elapsed);

    let (records, batch_ends) = committed_records(&w);
    let mut counts: BTreeMap<(&str, i64), usize> = BTreeMap::new();
    for r in &records {
        *counts.entry((r.name.as_str(), r.version)).or_default() += 1;
    }
    print_table(&counts, &w);

    for (name, step) in PRODUCED {
        assert!(
            records.iter().any(|r| r.name == *name),
            "kraftd's committed log holds no {name} (written by: {step})"
        );
    }
    for (name, why) in NOT_PRODUCIBLE {
        assert!(
            !records.iter().any(|r| r.name == *name),
            "kraftd's committed log holds a {name}, which Kafka 4.4 was not expected to write: {why}"
        );
    }
    let unknown: Vec<&(&str, i64)> = counts
        .keys()
        .filter(|(n, _)| !n.starts_with("control:") && !known.contains(n))
        .collect();
    assert!(
        unknown.is_empty(),
        "record types this test does not know: {unknown:?}"
    );
    eprintln!("{:<52} {:>6}", "record shape", "count");
    for (what, step, shows) in VARIANTS {
        let n = records.iter().filter(|r| shows(r)).count();
        eprintln!("{what:<52} {n:>6}");
        assert!(
            n > 0,
            "kraftd's committed log holds no {what} (written by: {step})"
        );
    }

    let batches = w.q.assert_logs_identical(w.high_watermark);
    eprintln!(
        "{batches} batches below offset {} identical on kraftd and both Java voters",
        w.high_watermark
    );

    assert!(
        w.checkpoints.len() >= 5,
        "only {} checkpoints",
        w.checkpoints.len()
    );
    assert!(
        w.checkpoints.windows(2).all(|p| p[0].offset <= p[1].offset),
        "checkpoints go backwards: {:?}",
        w.checkpoints
    );
    assert_eq!(w.checkpoints.last().unwrap().offset, w.high_watermark);
    // An image is published at batch ends; a checkpoint inside a batch would name no image.
    for c in &w.checkpoints {
        assert!(
            batch_ends.contains(&c.offset),
            "checkpoint {} ({}) is not the end of a batch of kraftd's log",
            c.offset,
            c.phase
        );
    }

    // The controller's image equals Java's MetadataImage of the same log after every phase
    // (a checkpoint is a high watermark: the image at the offset before it) and at the end.
    eprintln!("\nkraftd's image against Java's (field by field):");
    let partition = w.kraftd_metadata_dir.join("__cluster_metadata-0");
    for c in &w.checkpoints {
        let (offset, topics, partitions) =
            assert_image_equals_javas(&partition, Some(c.offset - 1));
        eprintln!(
            "  at {:>5} ({}): equal, image offset {offset}, {topics} topics, {partitions} partitions",
            c.offset - 1,
            c.phase
        );
    }
    let (offset, topics, partitions) = assert_image_equals_javas(&partition, None);
    eprintln!(
        "  whole log: equal, image offset {offset}, {topics} topics, {partitions} partitions"
    );

    // The snapshots kraftd's node wrote while it followed are images: Java's dumper reads each
    // as the image Java's own log (voter 1's, from its own snapshots) has at that offset.
    let snapshots = kraftd_snapshots(&partition);
    assert!(
        snapshots.len() >= 2,
        "kraftd wrote {} snapshot(s) during the workload; at 8 KiB between snapshots of a 60 KiB log it should write several",
        snapshots.len()
    );
    let java_partition = w.q.member(1).metadata_dir().join("__cluster_metadata-0");
    eprintln!("\nkraftd's snapshots against Java's image of voter 1's log:");
    for (id, file) in &snapshots {
        let java = dump_java_image(&java_partition, Some(id.offset - 1));
        let from_snapshot = dump_java_snapshot(file);
        let diffs = image_differences(&java, &from_snapshot);
        assert!(
            diffs.is_empty(),
            "kraftd's snapshot {} read by Java differs from Java's image at {} in {} places:\n  {}",
            file.display(),
            id.offset - 1,
            diffs.len(),
            diffs.join("\n  ")
        );
        eprintln!(
            "  snapshot {}-{}: equal ({} bytes)",
            id.offset,
            id.epoch,
            std::fs::metadata(file).map_or(0, |m| m.len())
        );
    }
}

/// The frozen snapshots of kraftd's partition directory, oldest first (the bootstrap
/// checkpoint 0-0 left out).
fn kraftd_snapshots(partition: &Path) -> Vec<(OffsetAndEpoch, PathBuf)> {
    let mut out: Vec<(OffsetAndEpoch, PathBuf)> = std::fs::read_dir(partition)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", partition.display()))
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            match parse_file_name(&name) {
                Some((id, SnapshotFileKind::Frozen)) if id.offset > 0 => Some((id, path)),
                _ => None,
            }
        })
        .collect();
    out.sort_by_key(|(id, _)| id.offset);
    out
}

/// One record of kraftd's log as `kraftd dump-log --json` shows it.
struct Record {
    /// Kafka's record type name, or `control:<type>` for a control record.
    name: String,
    version: i64,
    data: serde_json::Value,
}

impl Record {
    fn is(&self, name: &str, version: i64) -> bool {
        self.name == name && self.version == version
    }
    fn non_empty(&self, field: &str) -> bool {
        self.data[field].as_array().is_some_and(|a| !a.is_empty())
    }
    fn config_of(&self, resource_type: i64) -> bool {
        self.name == "CONFIG_RECORD" && self.data["resourceType"] == resource_type
    }
}

/// The records of kraftd's log segments below the high watermark, read with `kraftd dump-log
/// --json`, and the offsets where its batches end (last offset + 1); snapshots (the bootstrap
/// checkpoint among them) are left out.
fn committed_records(w: &Workload) -> (Vec<Record>, Vec<i64>) {
    let dir = w.kraftd_metadata_dir.display().to_string();
    let out = KraftdProcess::run(&["dump-log", "--json", &dir], &[], KRAFTD_COMMAND_TIMEOUT);
    out.assert_success();
    let mut records = Vec::new();
    let mut last_read = -1;
    let mut batch_ends = Vec::new();
    let mut in_segment = false;
    for line in out.stdout.lines() {
        let batch: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("dump-log printed a line that is not JSON ({e}): {line}"));
        if let Some(kind) = batch["type"].as_str() {
            in_segment = kind == "segment"; // a file line
            continue;
        }
        let last = batch["lastOffset"]
            .as_i64()
            .unwrap_or_else(|| panic!("dump-log printed neither a file nor a batch: {line}"));
        if !in_segment || last >= w.high_watermark {
            continue;
        }
        last_read = last_read.max(last);
        batch_ends.push(last + 1);
        for r in batch["records"].as_array().expect("records") {
            records.push(if let Some(control) = r["control"].as_str() {
                Record {
                    name: format!("control:{control}"),
                    version: 0,
                    data: r["data"].clone(),
                }
            } else {
                let payload = &r["payload"];
                Record {
                    name: payload["type"]
                        .as_str()
                        .unwrap_or_else(|| panic!("a record without a type: {r}"))
                        .to_string(),
                    version: payload["version"].as_i64().unwrap(),
                    data: payload["data"].clone(),
                }
            });
        }
    }
    assert_eq!(
        last_read + 1,
        w.high_watermark,
        "kraftd's log does not reach the high watermark it was seen at"
    );
    (records, batch_ends)
}

fn print_table(counts: &BTreeMap<(&str, i64), usize>, w: &Workload) {
    eprintln!("\n{:<40} {:>7} {:>7}", "record type", "version", "count");
    for ((name, version), count) in counts {
        eprintln!("{name:<40} {version:>7} {count:>7}");
    }
    eprintln!("\ncheckpoints (the leader's high watermark after each phase):");
    for c in &w.checkpoints {
        eprintln!("{:>8}  {}", c.offset, c.phase);
    }
    eprintln!(
        "kraftd's metadata log: {}\n",
        w.kraftd_metadata_dir.display()
    );
}
