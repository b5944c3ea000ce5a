//! AlterPartition churn: each partition leader among the simulated brokers shrinks and expands
//! the ISR of its partitions in turn, as a leader does when a follower falls behind and catches
//! up again. One AlterPartition in flight per leader, of up to `batch` partitions (Kafka's
//! AlterPartitionManager sends one at a time and batches what is pending). Each change is one
//! PartitionChangeRecord.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kraftd::protocol::messages::{AlterPartitionRequest, AlterPartitionResponse};

use super::client::{ControllerClient, Controllers};
use super::error::LoadError;
use super::fleet::Fleet;
use super::stats::{ErrorTally, Latencies};
use super::topics::{assigned, create_one};

/// The AlterPartition version with broker epochs in the new ISR (KIP-903), served by Kafka 4.x.
const ALTER_PARTITION_VERSION: i16 = 3;

/// What the leader knows of one of its partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    pub index: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
}

impl PartitionState {
    pub fn leader(&self) -> i32 {
        self.replicas[0]
    }

    /// The next ISR of the churn: without the last replica, or all of them again.
    pub fn next_isr(&self) -> Vec<i32> {
        if self.isr.len() == self.replicas.len() {
            self.replicas[..self.replicas.len() - 1].to_vec()
        } else {
            self.replicas.clone()
        }
    }
}

/// Creates `topic` with partition p on brokers p, p+1, p+2 (mod the brokers): each broker leads
/// a third of them (the first replica leads a new partition when all replicas are unfenced).
pub async fn create_churn_topic(
    controllers: Arc<Controllers>,
    topic: &str,
    partitions: usize,
    brokers: &[i32],
) -> Result<(Uuid, Vec<PartitionState>), LoadError> {
    let replicas: Vec<Vec<i32>> = (0..partitions)
        .map(|p| (0..3).map(|r| brokers[(p + r) % brokers.len()]).collect())
        .collect();
    let mut client = ControllerClient::new(controllers, "load-admin");
    let id = create_one(&mut client, assigned(topic, &replicas)).await?;
    let states = replicas
        .into_iter()
        .enumerate()
        .map(|(p, r)| PartitionState {
            index: p as i32,
            isr: r.clone(),
            replicas: r,
            leader_epoch: 0,
            partition_epoch: 0,
        })
        .collect();
    Ok((id, states))
}

#[derive(Debug, Clone)]
pub struct ChurnConfig {
    pub batch: usize,
    pub duration: Duration,
}

#[derive(Debug, Clone, Default)]
pub struct ChurnReport {
    pub wall: Duration,
    pub requests: u64,
    /// ISR changes the controller accepted with the ISR asked for.
    pub changes: u64,
    pub errors: ErrorTally,
    pub latencies: Latencies,
    /// Every partition as its leader last saw it.
    pub partitions: Vec<PartitionState>,
}

/// Runs the churn for `config.duration`, one task per leader.
pub async fn churn(
    controllers: Arc<Controllers>,
    fleet: &Fleet,
    topic_id: Uuid,
    partitions: Vec<PartitionState>,
    config: &ChurnConfig,
) -> ChurnReport {
    let epochs: Arc<BTreeMap<i32, i64>> = Arc::new(
        fleet
            .broker_ids()
            .into_iter()
            .map(|b| (b, fleet.epoch(b)))
            .collect(),
    );
    let mut by_leader: BTreeMap<i32, Vec<PartitionState>> = BTreeMap::new();
    for p in partitions {
        by_leader.entry(p.leader()).or_default().push(p);
    }
    let started = Instant::now();
    let until = started + config.duration;
    let leaders: Vec<_> = by_leader
        .into_iter()
        .map(|(leader, owned)| {
            let client = ControllerClient::new(controllers.clone(), "load-alter-partition");
            let epochs = epochs.clone();
            let batch = config.batch.max(1);
            tokio::spawn(lead(client, leader, owned, epochs, topic_id, batch, until))
        })
        .collect();
    let mut report = ChurnReport::default();
    for l in leaders {
        let Ok(part) = l.await else {
            report.errors.add("PANIC", "a leader task panicked".into());
            continue;
        };
        report.requests += part.requests;
        report.changes += part.changes;
        report.errors.merge(part.errors);
        report.latencies.extend(part.latencies);
        report.partitions.extend(part.partitions);
    }
    report.partitions.sort_by_key(|p| p.index);
    report.wall = started.elapsed();
    report
}

/// One leader's loop: the next `batch` of its partitions, round robin, until `until`. A
/// partition the controller refused is left alone from then on (its state is unknown).
async fn lead(
    mut client: ControllerClient,
    leader: i32,
    mut owned: Vec<PartitionState>,
    epochs: Arc<BTreeMap<i32, i64>>,
    topic_id: Uuid,
    batch: usize,
    until: Instant,
) -> ChurnReport {
    let epoch_of = |b: i32| epochs.get(&b).copied().unwrap_or(-1);
    let mut report = ChurnReport::default();
    let mut live: Vec<usize> = (0..owned.len()).collect();
    let mut cursor = 0;
    while Instant::now() < until && !live.is_empty() {
        let picked: Vec<usize> = (0..batch.min(live.len()))
            .map(|i| live[(cursor + i) % live.len()])
            .collect();
        cursor = (cursor + picked.len()) % live.len();
        let asked: BTreeMap<i32, Vec<i32>> = picked
            .iter()
            .map(|&i| (owned[i].index, owned[i].next_isr()))
            .collect();
        let request = AlterPartitionRequest {
            broker_id: leader,
            broker_epoch: epoch_of(leader),
            topics: vec![TopicData {
                topic_id,
                partitions: picked
                    .iter()
                    .map(|&i| PartitionData {
                        partition_index: owned[i].index,
                        leader_epoch: owned[i].leader_epoch,
                        new_isr_with_epochs: asked[&owned[i].index]
                            .iter()
                            .map(|&b| BrokerState {
                                broker_id: b,
                                broker_epoch: epoch_of(b),
                                ..Default::default()
                            })
                            .collect(),
                        leader_recovery_state: 0,
                        partition_epoch: owned[i].partition_epoch,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let sent = Instant::now();
        let answer = client
            .call_versions::<_, AlterPartitionResponse>(
                &request,
                ALTER_PARTITION_VERSION,
                ALTER_PARTITION_VERSION,
            )
            .await;
        report.latencies.record(sent.elapsed());
        report.requests += 1;
        let answer = match answer {
            Ok(a) if a.error_code == 0 => a,
            Ok(a) => {
                let code = ErrorCode(a.error_code).name();
                report
                    .errors
                    .add(code, format!("broker {leader}: AlterPartition {code}"));
                continue;
            }
            Err(e) => {
                report
                    .errors
                    .add("NO_ANSWER", format!("broker {leader}: {e}"));
                continue;
            }
        };
        let mut refused = Vec::new();
        for p in answer.topics.iter().flat_map(|t| &t.partitions) {
            let Some(i) = picked
                .iter()
                .copied()
                .find(|&i| owned[i].index == p.partition_index)
            else {
                report.errors.add(
                    "UNASKED",
                    format!("an answer for partition {}", p.partition_index),
                );
                continue;
            };
            let code = ErrorCode(p.error_code);
            if code != ErrorCode::NONE {
                report.errors.add(
                    code.name(),
                    format!("partition {}: {}", p.partition_index, code.name()),
                );
                refused.push(i);
            } else if p.isr != asked[&p.partition_index] || p.leader_id != leader {
                let why = format!(
                    "partition {}: asked ISR {:?}, got {:?} led by {}",
                    p.partition_index, asked[&p.partition_index], p.isr, p.leader_id
                );
                report.errors.add("OTHER_ISR", why);
                refused.push(i);
            } else {
                let s = &mut owned[i];
                s.isr = p.isr.clone();
                s.leader_epoch = p.leader_epoch;
                s.partition_epoch = p.partition_epoch;
                report.changes += 1;
            }
        }
        live.retain(|i| !refused.contains(i));
        if !live.is_empty() {
            cursor %= live.len();
        }
    }
    report.partitions = owned;
    report
}
