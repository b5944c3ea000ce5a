//! CreateTopics storms, as admin clients send them to the active controller: `concurrency`
//! clients, each with one request of `per_request` topics in flight at a time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic,
};
use kraftd::protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};

use super::client::{ControllerClient, Controllers};
use super::error::LoadError;
use super::stats::{ErrorTally, Latencies};

/// How long the controller may take over one CreateTopics (the request's `timeoutMs`).
const CREATE_TIMEOUT_MS: i32 = 60_000;

#[derive(Debug, Clone)]
pub struct TopicStorm {
    /// Topics `<prefix>-0`, `<prefix>-1`, ...
    pub prefix: String,
    pub topics: usize,
    pub partitions: i32,
    pub replication_factor: i16,
    pub per_request: usize,
    pub concurrency: usize,
}

impl TopicStorm {
    pub fn names(&self) -> Vec<String> {
        (0..self.topics)
            .map(|i| format!("{}-{i}", self.prefix))
            .collect()
    }

    /// Metadata records the controller writes for it: a TopicRecord and a PartitionRecord each.
    pub fn records(&self) -> u64 {
        self.topics as u64 * (1 + self.partitions as u64)
    }
}

#[derive(Debug, Clone, Default)]
pub struct StormReport {
    pub wall: Duration,
    pub requests: u64,
    /// Topics the controller created as asked (no error, the partition count and RF asked).
    pub created: usize,
    /// Each refused topic's error by name.
    pub errors: ErrorTally,
    pub latencies: Latencies,
}

/// Topics the controller places itself (no assignment).
pub fn creatable(name: &str, partitions: i32, replication_factor: i16) -> CreatableTopic {
    CreatableTopic {
        name: name.to_string(),
        num_partitions: partitions,
        replication_factor,
        ..Default::default()
    }
}

/// A topic with replicas chosen by the caller: partition p on `replicas[p]`.
pub fn assigned(name: &str, replicas: &[Vec<i32>]) -> CreatableTopic {
    CreatableTopic {
        name: name.to_string(),
        num_partitions: -1,
        replication_factor: -1,
        assignments: replicas
            .iter()
            .enumerate()
            .map(|(p, r)| CreatableReplicaAssignment {
                partition_index: p as i32,
                broker_ids: r.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn create_request(topics: Vec<CreatableTopic>, validate_only: bool) -> CreateTopicsRequest {
    CreateTopicsRequest {
        topics,
        timeout_ms: CREATE_TIMEOUT_MS,
        validate_only,
        ..Default::default()
    }
}

/// Creates one topic and returns its id; refused or misshapen topics are errors.
pub async fn create_one(
    client: &mut ControllerClient,
    topic: CreatableTopic,
) -> Result<Uuid, LoadError> {
    let name = topic.name.clone();
    let answer: CreateTopicsResponse = client.call(&create_request(vec![topic], false)).await?;
    let result = answer
        .topics
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| LoadError::Unexpected(format!("CreateTopics answered without {name}")))?;
    if result.error_code != 0 {
        return Err(LoadError::Refused {
            what: format!("CreateTopics {name}"),
            code: ErrorCode(result.error_code),
            message: result.error_message.clone().unwrap_or_default(),
        });
    }
    Ok(result.topic_id)
}

/// Runs the storm to its end; errors of single topics are counted, not fatal.
pub async fn create_topics(controllers: Arc<Controllers>, storm: &TopicStorm) -> StormReport {
    let names = Arc::new(storm.names());
    let next = Arc::new(AtomicUsize::new(0));
    let report = Arc::new(Mutex::new(StormReport::default()));
    let started = Instant::now();
    let clients: Vec<_> = (0..storm.concurrency.max(1))
        .map(|_| {
            let (names, next, report, storm) =
                (names.clone(), next.clone(), report.clone(), storm.clone());
            let client = ControllerClient::new(controllers.clone(), "load-admin");
            tokio::spawn(admin_client(client, names, next, report, storm))
        })
        .collect();
    for c in clients {
        let _ = c.await;
    }
    let mut report = std::mem::take(&mut *report.lock().expect("not poisoned"));
    report.wall = started.elapsed();
    report
}

async fn admin_client(
    mut client: ControllerClient,
    names: Arc<Vec<String>>,
    next: Arc<AtomicUsize>,
    report: Arc<Mutex<StormReport>>,
    storm: TopicStorm,
) {
    let per_request = storm.per_request.max(1);
    loop {
        let from = next.fetch_add(per_request, Ordering::Relaxed);
        if from >= names.len() {
            return;
        }
        let batch = &names[from..(from + per_request).min(names.len())];
        let topics = batch
            .iter()
            .map(|n| creatable(n, storm.partitions, storm.replication_factor))
            .collect();
        let sent = Instant::now();
        let answer = client
            .call::<_, CreateTopicsResponse>(&create_request(topics, false))
            .await;
        let took = sent.elapsed();
        let mut r = report.lock().expect("not poisoned");
        r.requests += 1;
        r.latencies.record(took);
        match answer {
            Ok(answer) => {
                for t in &answer.topics {
                    if t.error_code != 0 {
                        let code = ErrorCode(t.error_code).name();
                        let why = format!("{}: {code} {:?}", t.name, t.error_message);
                        r.errors.add(code, why);
                    } else if t.num_partitions != storm.partitions
                        || t.replication_factor != storm.replication_factor
                    {
                        let why = format!(
                            "{}: created with {} partitions of RF {}",
                            t.name, t.num_partitions, t.replication_factor
                        );
                        r.errors.add("MISSHAPEN", why);
                    } else {
                        r.created += 1;
                    }
                }
            }
            Err(e) => {
                let why = format!("{} topics from {}: {e}", batch.len(), batch[0]);
                r.errors.add("NO_ANSWER", why);
            }
        }
    }
}

/// How many of `names` exist, asked of the controller itself: a validate-only CreateTopics
/// answers TOPIC_ALREADY_EXISTS for each existing topic and changes nothing.
pub async fn count_existing(
    controllers: Arc<Controllers>,
    names: &[String],
) -> Result<usize, LoadError> {
    let mut client = ControllerClient::new(controllers, "load-admin-check");
    let mut existing = 0;
    for chunk in names.chunks(500) {
        let topics = chunk.iter().map(|n| creatable(n, 1, 1)).collect();
        let answer: CreateTopicsResponse = client.call(&create_request(topics, true)).await?;
        existing += answer
            .topics
            .iter()
            .filter(|t| ErrorCode(t.error_code) == ErrorCode::TOPIC_ALREADY_EXISTS)
            .count();
    }
    Ok(existing)
}
