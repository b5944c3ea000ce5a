//! A test's cheap view of the cluster: the brokers and partitions a node's metadata log on
//! disk describes, read without starting a JVM. The workload polls it to know when Kafka has
//! done what a step asked (a broker fenced, an ISR expanded, a reassignment completed).
//!
//! This is no replay to compare images with: it tracks just what the waits need, and it reads
//! whatever batches are on disk, committed or not, from the snapshot the log starts at when
//! its older segments are gone (a broker that caught up through FetchSnapshot).

use std::collections::BTreeMap;
use std::path::Path;

use crate::harness::quorum_probe::read_log_batches;
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::records::{split_batches, MetadataRecord, MetadataRecordAndVersion};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionView {
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub leader: i32,
    pub elr: Vec<i32>,
    pub adding: Vec<i32>,
    pub removing: Vec<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerView {
    pub epoch: i64,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
}

#[derive(Debug, Default)]
pub struct LogView {
    /// Topic name -> (id, partitions by index).
    pub topics: BTreeMap<String, (Uuid, BTreeMap<i32, PartitionView>)>,
    pub brokers: BTreeMap<i32, BrokerView>,
    /// Controller id -> how many times it registered.
    pub controller_registrations: BTreeMap<i32, usize>,
    pub controllers: BTreeMap<i32, Uuid>,
    /// Kafka record type name (e.g. `TOPIC_RECORD`) -> how many are on disk.
    pub record_counts: BTreeMap<&'static str, usize>,
    /// The offset after the last batch read.
    pub end_offset: i64,
    /// Each broker a record fenced after it had registered, in log order.
    pub fencings: Vec<i32>,
    /// Each ProducerIdsRecord as (broker, next producer id), in log order: the block handed
    /// out ends just below the next id.
    pub producer_id_blocks: Vec<(i32, i64)>,
}

impl LogView {
    /// Reads every batch of `<metadata_dir>/__cluster_metadata-0`. Panics on a record that does
    /// not decode: kraftd would have refused it, and the test should stop there.
    pub fn read(metadata_dir: &Path) -> LogView {
        let mut view = LogView::default();
        let batches = read_log_batches(metadata_dir);
        // A log that no longer starts at 0 starts at a snapshot: the image up to there.
        if let Some(&(start, _, _)) = batches.first().filter(|(start, _, _)| *start > 0) {
            if let Some(snapshot) = snapshot_at(metadata_dir, start) {
                view.apply_batches(metadata_dir, start - 1, &snapshot);
            }
        }
        for (_, last, bytes) in batches {
            view.end_offset = last + 1;
            view.apply_batches(metadata_dir, last, &bytes);
        }
        view
    }

    /// Applies the metadata records of the batches in `bytes`, the last ending at `last`.
    fn apply_batches(&mut self, metadata_dir: &Path, last: i64, bytes: &[u8]) {
        for batch in split_batches(bytes).batches {
            if batch.is_control() {
                continue;
            }
            let records = batch.records().unwrap_or_else(|e| {
                panic!(
                    "{}: unreadable batch at {}: {e}",
                    metadata_dir.display(),
                    last
                )
            });
            for r in records.iter() {
                let r = r.unwrap_or_else(|e| panic!("unreadable record before {last}: {e}"));
                let value = r.value.expect("metadata records have a value");
                let decoded = MetadataRecordAndVersion::decode(value).unwrap_or_else(|e| {
                    panic!("offset {}: undecodable metadata record: {e}", r.offset)
                });
                self.apply(decoded.record);
            }
        }
    }

    fn apply(&mut self, record: MetadataRecord) {
        *self.record_counts.entry(record.kafka_name()).or_default() += 1;
        match record {
            MetadataRecord::Topic(t) => {
                self.topics.insert(t.name, (t.topic_id, BTreeMap::new()));
            }
            MetadataRecord::RemoveTopic(t) => self.topics.retain(|_, (id, _)| *id != t.topic_id),
            MetadataRecord::Partition(p) => {
                if let Some(parts) = self.partitions_of(p.topic_id) {
                    parts.insert(
                        p.partition_id,
                        PartitionView {
                            replicas: p.replicas,
                            isr: p.isr,
                            leader: p.leader,
                            elr: p.eligible_leader_replicas.unwrap_or_default(),
                            adding: p.adding_replicas,
                            removing: p.removing_replicas,
                        },
                    );
                }
            }
            MetadataRecord::PartitionChange(c) => {
                let Some(p) = self
                    .partitions_of(c.topic_id)
                    .and_then(|parts| parts.get_mut(&c.partition_id))
                else {
                    return;
                };
                // Absent fields leave the value as it was; a leader of -2 means "no change".
                if let Some(isr) = c.isr {
                    p.isr = isr;
                }
                if c.leader != -2 {
                    p.leader = c.leader;
                }
                if let Some(r) = c.replicas {
                    p.replicas = r;
                }
                if let Some(r) = c.adding_replicas {
                    p.adding = r;
                }
                if let Some(r) = c.removing_replicas {
                    p.removing = r;
                }
                if let Some(e) = c.eligible_leader_replicas {
                    p.elr = e;
                }
            }
            MetadataRecord::ClearElr(c) => {
                for (name, (_, parts)) in self.topics.iter_mut() {
                    if c.topic_name.is_empty() || *name == c.topic_name {
                        parts.values_mut().for_each(|p| p.elr.clear());
                    }
                }
            }
            MetadataRecord::RegisterBroker(b) => {
                self.brokers.insert(
                    b.broker_id,
                    BrokerView {
                        epoch: b.broker_epoch,
                        fenced: b.fenced,
                        in_controlled_shutdown: b.in_controlled_shutdown,
                    },
                );
            }
            MetadataRecord::BrokerRegistrationChange(c) => {
                if let Some(b) = self.brokers.get_mut(&c.broker_id) {
                    match c.fenced {
                        1 => {
                            b.fenced = true;
                            self.fencings.push(c.broker_id);
                        }
                        -1 => b.fenced = false,
                        _ => {}
                    }
                    if c.in_controlled_shutdown == 1 {
                        b.in_controlled_shutdown = true;
                    }
                }
            }
            MetadataRecord::FenceBroker(f) => {
                if let Some(b) = self.brokers.get_mut(&f.id) {
                    b.fenced = true;
                    self.fencings.push(f.id);
                }
            }
            MetadataRecord::ProducerIds(p) => {
                self.producer_id_blocks
                    .push((p.broker_id, p.next_producer_id));
            }
            MetadataRecord::UnregisterBroker(b) => {
                self.brokers.remove(&b.broker_id);
            }
            MetadataRecord::RegisterController(c) => {
                *self
                    .controller_registrations
                    .entry(c.controller_id)
                    .or_default() += 1;
                self.controllers.insert(c.controller_id, c.incarnation_id);
            }
            MetadataRecord::UnregisterController(c) => {
                self.controllers.remove(&c.controller_id);
            }
            _ => {}
        }
    }

    fn partitions_of(&mut self, topic: Uuid) -> Option<&mut BTreeMap<i32, PartitionView>> {
        self.topics
            .values_mut()
            .find(|(id, _)| *id == topic)
            .map(|(_, parts)| parts)
    }

    pub fn partition(&self, topic: &str, index: i32) -> Option<&PartitionView> {
        self.topics.get(topic)?.1.get(&index)
    }

    /// Registered and unfenced.
    pub fn is_active(&self, broker: i32) -> bool {
        self.brokers
            .get(&broker)
            .is_some_and(|b| !b.fenced && !b.in_controlled_shutdown)
    }

    pub fn is_fenced(&self, broker: i32) -> bool {
        self.brokers.get(&broker).is_some_and(|b| b.fenced)
    }

    /// Every partition of every topic, as `(topic, index, partition)`.
    pub fn all_partitions(&self) -> impl Iterator<Item = (&str, i32, &PartitionView)> {
        self.topics
            .iter()
            .flat_map(|(name, (_, parts))| parts.iter().map(move |(i, p)| (name.as_str(), *i, p)))
    }

    /// Partitions whose ISR lacks some of the given (live) brokers among their replicas.
    pub fn under_replicated(&self, live: &[i32]) -> Vec<String> {
        self.all_partitions()
            .filter(|(_, _, p)| {
                p.replicas
                    .iter()
                    .any(|r| live.contains(r) && !p.isr.contains(r))
            })
            .map(|(t, i, _)| format!("{t}-{i}"))
            .collect()
    }
}

/// The bytes of the snapshot `<start>-<epoch>.checkpoint` a log starting at `start` starts
/// from, if it is on disk.
fn snapshot_at(metadata_dir: &Path, start: i64) -> Option<Vec<u8>> {
    let partition = metadata_dir.join("__cluster_metadata-0");
    let prefix = format!("{start:020}-");
    let path = std::fs::read_dir(&partition)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.extension().is_some_and(|x| x == "checkpoint")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
        })?;
    std::fs::read(path).ok()
}
