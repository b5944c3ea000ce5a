//! The node loop's side of partition leadership: AlterPartition from partition leaders and
//! ElectLeaders from operators, decided by `controller::leadership` against the latest state
//! and answered once their records commit; and the active controller's periodic elections
//! (preferred leaders back when `auto.leader.rebalance.enable`, unclean elections for
//! leaderless partitions of topics that allow them), as Kafka 4.4's `QuorumController`
//! schedules them.

use std::time::Duration;

use tokio::sync::oneshot;
use tracing::{info, warn};

use super::runner::NodeLoop;
use crate::controller::leadership::alter_partition::alter_partition;
use crate::controller::leadership::elections::{
    balance_leaders, elect_leaders, elect_unclean_leaders, ElectionResults,
};
use crate::controller::leadership::Leadership;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use crate::protocol::messages::{
    AlterPartitionRequest, AlterPartitionResponse, ElectLeadersRequest, ElectLeadersResponse,
};
use crate::raft::{FatalError, Instant, QuorumStateStore, RaftLog};
use crate::server::api::not_controller;
use crate::server::api::NodeResponse;

type Reply = oneshot::Sender<NodeResponse>;

/// `QuorumController`'s `maxElectionsPerImbalance`: elections per periodic run.
const MAX_ELECTIONS_PER_RUN: usize = 1_000;
/// How often leaderless partitions are checked for an unclean election (Java's 5 minutes).
const UNCLEAN_ELECTION_INTERVAL: Duration = Duration::from_secs(300);

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    pub(super) fn alter_partition(
        &mut self,
        now: Instant,
        version: i16,
        request: AlterPartitionRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        // `QuorumController.alterPartition` answers no topics at once, active or not, before
        // any check of the broker or its epoch.
        if request.topics.is_empty() {
            let _ = reply.send(NodeResponse::AlterPartition(
                AlterPartitionResponse::default(),
            ));
            return Ok(());
        }
        if !self.acting() {
            let r = not_controller::alter_partition(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::AlterPartition(r));
            return Ok(());
        }
        let broker = request.broker_id;
        let image = self.controller.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            let r = AlterPartitionResponse {
                error_code: ErrorCode::UNKNOWN_SERVER_ERROR.0,
                ..Default::default()
            };
            return self.answer_without_metadata_version(reply, NodeResponse::AlterPartition(r));
        };
        let decided = alter_partition(&leadership, version, &request);
        let result = match decided {
            Ok(result) => result,
            Err(e) => {
                warn!(
                    target: "kraftd::controller",
                    "AlterPartition from broker {broker} refused with {}: {e}",
                    e.error_code().name()
                );
                let r = AlterPartitionResponse {
                    error_code: e.error_code().0,
                    ..Default::default()
                };
                return self.answer_after_pending(now, reply, NodeResponse::AlterPartition(r));
            }
        };
        let ControllerResult {
            records,
            reply: (response, refusals),
        } = result;
        for r in &refusals {
            info!(
                target: "kraftd::controller",
                "AlterPartition from broker {broker}: {} ({})",
                r.code.name(),
                r.why
            );
        }
        if !records.is_empty() {
            info!(
                target: "kraftd::controller",
                "broker {broker} altered the ISR of {} partition(s)",
                records.len()
            );
        }
        self.submit(
            now,
            ControllerResult::new(records, response),
            move |outcome| {
                let r = match outcome {
                    Ok(r) => r,
                    Err(_) => AlterPartitionResponse {
                        error_code: ErrorCode::NOT_CONTROLLER.0,
                        ..Default::default()
                    },
                };
                let _ = reply.send(NodeResponse::AlterPartition(r));
            },
        )?;
        Ok(())
    }

    pub(super) fn elect_leaders(
        &mut self,
        now: Instant,
        version: i16,
        request: ElectLeadersRequest,
        reply: Reply,
    ) -> Result<(), FatalError> {
        // An empty partition list asks for nothing: Java answers at once.
        if !self.acting() || request.topic_partitions.as_ref().is_some_and(Vec::is_empty) {
            let r = not_controller::elect_leaders(&request, version, &self.non_active());
            let _ = reply.send(NodeResponse::ElectLeaders(r));
            return Ok(());
        }
        let image = self.controller.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            // Every version can carry NOT_CONTROLLER per partition (v0 has no top-level error).
            let r = not_controller::elect_leaders(&request, version, &self.non_active());
            return self.answer_without_metadata_version(reply, NodeResponse::ElectLeaders(r));
        };
        let named: Option<Vec<(String, Vec<i32>)>> = request.topic_partitions.as_ref().map(|ts| {
            ts.iter()
                .map(|t| (t.topic.clone(), t.partitions.clone()))
                .collect()
        });
        let result = match elect_leaders(&leadership, request.election_type, named.as_deref()) {
            Ok(result) => result,
            Err(e) => {
                warn!(target: "kraftd::controller", "ElectLeaders refused: {e}");
                let r = not_controller::elect_leaders_failed(
                    &request,
                    version,
                    e.error_code().0,
                    &e.to_string(),
                );
                return self.answer_after_pending(now, reply, NodeResponse::ElectLeaders(r));
            }
        };
        info!(
            target: "kraftd::controller",
            "ElectLeaders (type {}): {} partition(s) get a new leader",
            request.election_type,
            result.records.len()
        );
        let non_active = self.non_active();
        self.submit(now, result, move |outcome| {
            let r = match outcome {
                Ok(results) => election_response(&results),
                Err(_) => not_controller::elect_leaders(&request, version, &non_active),
            };
            let _ = reply.send(NodeResponse::ElectLeaders(r));
        })?;
        Ok(())
    }

    /// An active controller always has a metadata.version (its activation wrote one); a log
    /// that lacks one cannot be led, and says so.
    fn answer_without_metadata_version(
        &mut self,
        reply: Reply,
        response: NodeResponse,
    ) -> Result<(), FatalError> {
        warn!(
            target: "kraftd::controller",
            "the metadata image has no metadata.version Kafka 4.4 knows: partition leadership \
             cannot be decided"
        );
        let _ = reply.send(response);
        Ok(())
    }

    /// The periodic elections of an active controller: preferred leaders back (when
    /// `auto.leader.rebalance.enable`) and unclean leaders for leaderless partitions of topics
    /// that allow them. Each runs at its interval; a run that hit the per-run bound runs again
    /// at once.
    pub(super) fn maybe_run_elections(&mut self, now: Instant) -> Result<(), FatalError> {
        if !self.acting() {
            self.election_deadlines = None;
            return Ok(());
        }
        let rebalance = self.settings.leader_rebalance_interval;
        let deadlines = *self.election_deadlines.get_or_insert(ElectionDeadlines {
            rebalance: rebalance.map(|i| now + i),
            unclean: now + UNCLEAN_ELECTION_INTERVAL,
        });
        if deadlines.rebalance.is_some_and(|d| d <= now) {
            let more = self.run_election(
                "preferred leader election",
                |l| balance_leaders(l, MAX_ELECTIONS_PER_RUN),
                now,
            )?;
            if let Some(d) = self.election_deadlines.as_mut() {
                d.rebalance = rebalance.map(|i| if more { now } else { now + i });
            }
        }
        if deadlines.unclean <= now {
            let more = self.run_election(
                "unclean leader election",
                |l| elect_unclean_leaders(l, MAX_ELECTIONS_PER_RUN),
                now,
            )?;
            if let Some(d) = self.election_deadlines.as_mut() {
                d.unclean = if more {
                    now
                } else {
                    now + UNCLEAN_ELECTION_INTERVAL
                };
            }
        }
        Ok(())
    }

    fn run_election(
        &mut self,
        what: &str,
        decide: impl Fn(
            &Leadership,
        ) -> (
            Vec<crate::protocol::records::MetadataRecordAndVersion>,
            bool,
        ),
        now: Instant,
    ) -> Result<bool, FatalError> {
        let image = self.controller.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            return Ok(false);
        };
        let (records, more) = decide(&leadership);
        if records.is_empty() {
            return Ok(false);
        }
        info!(
            target: "kraftd::controller",
            "periodic {what}: {} partition(s) get a new leader",
            records.len()
        );
        self.submit(now, ControllerResult::new(records, ()), |_| {})?;
        Ok(more)
    }

    /// When a periodic election is next due (None unless acting).
    pub(super) fn next_election(&self) -> Option<Instant> {
        let d = self.election_deadlines.as_ref()?;
        Some(d.rebalance.map_or(d.unclean, |r| r.min(d.unclean)))
    }
}

/// When the periodic elections of this activation are next due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ElectionDeadlines {
    /// None: `auto.leader.rebalance.enable=false`.
    pub rebalance: Option<Instant>,
    pub unclean: Instant,
}

/// Java's ElectLeaders response: per topic, per partition, the code and message.
fn election_response(results: &ElectionResults) -> ElectLeadersResponse {
    ElectLeadersResponse {
        error_code: ErrorCode::NONE.0,
        replica_election_results: results
            .iter()
            .map(|(topic, partitions)| ReplicaElectionResult {
                topic: topic.clone(),
                partition_result: partitions
                    .iter()
                    .map(|(p, o)| PartitionResult {
                        partition_id: *p,
                        error_code: o.code.0,
                        error_message: o.message.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
