//! Partition leadership: AlterPartition from partition leaders and
//! ElectLeaders from operators, decided by `controller::leadership` against the latest state
//! and answered once their records commit; and the active controller's periodic elections
//! (preferred leaders back when `auto.leader.rebalance.enable`, unclean elections for
//! leaderless partitions of topics that allow them), as Kafka 4.4's `QuorumController`
//! schedules them.

use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController, Then, Write};
use crate::controller::acls::authorizer::Denied;
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
use crate::protocol::records::MetadataRecordAndVersion;

/// `QuorumController`'s `maxElectionsPerImbalance`: elections per periodic run.
const MAX_ELECTIONS_PER_RUN: usize = 1_000;
/// How often leaderless partitions are checked for an unclean election (Java's 5 minutes).
const UNCLEAN_ELECTION_INTERVAL_MS: u64 = 300_000;

impl QuorumController {
    pub(super) fn alter_partition(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AlterPartitionRequest,
    ) -> Decision {
        // `QuorumController.alterPartition` answers no topics at once, active or not, before
        // any check of the broker or its epoch.
        if request.topics.is_empty() {
            return Decision::Answer(ControllerReply::AlterPartition(
                AlterPartitionResponse::default(),
            ));
        }
        if !self.acting(quorum) {
            let r = not_active::alter_partition(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::AlterPartition(r));
        }
        let broker = request.broker_id;
        let image = self.machine.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            let r = AlterPartitionResponse {
                error_code: ErrorCode::UNKNOWN_SERVER_ERROR.0,
                ..Default::default()
            };
            return self.answer_without_metadata_version(ControllerReply::AlterPartition(r));
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
                return Decision::after_pending(ControllerReply::AlterPartition(r));
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
        Decision::write(
            ControllerResult::new(records, response),
            ControllerReply::AlterPartition,
            ControllerReply::AlterPartition(AlterPartitionResponse {
                error_code: ErrorCode::NOT_CONTROLLER.0,
                ..Default::default()
            }),
        )
    }

    pub(super) fn elect_leaders(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: ElectLeadersRequest,
    ) -> Decision {
        // An empty partition list asks for nothing: Java answers at once.
        if !self.acting(quorum) || request.topic_partitions.as_ref().is_some_and(Vec::is_empty) {
            let r = not_active::elect_leaders(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::ElectLeaders(r));
        }
        let image = self.machine.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            // Every version can carry NOT_CONTROLLER per partition (v0 has no top-level error).
            let r = not_active::elect_leaders(&request, version, &self.non_active(quorum));
            return self.answer_without_metadata_version(ControllerReply::ElectLeaders(r));
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
                let r = not_active::elect_leaders_failed(
                    &request,
                    version,
                    e.error_code().0,
                    &e.to_string(),
                );
                return Decision::after_pending(ControllerReply::ElectLeaders(r));
            }
        };
        info!(
            target: "kraftd::controller",
            "ElectLeaders (type {}): {} partition(s) get a new leader",
            request.election_type,
            result.records.len()
        );
        let non_active = self.non_active(quorum);
        Decision::write(
            result,
            |results| ControllerReply::ElectLeaders(election_response(&results)),
            ControllerReply::ElectLeaders(not_active::elect_leaders(
                &request,
                version,
                &non_active,
            )),
        )
    }

    /// An active controller always has a metadata.version (its activation wrote one); a log
    /// that lacks one cannot be led, and says so.
    fn answer_without_metadata_version(&self, response: ControllerReply) -> Decision {
        warn!(
            target: "kraftd::controller",
            "the metadata image has no metadata.version Kafka 4.4 knows: partition leadership \
             cannot be decided"
        );
        Decision::Answer(response)
    }

    /// The periodic elections of an active controller: preferred leaders back (when
    /// `auto.leader.rebalance.enable`) and unclean leaders for leaderless partitions of topics
    /// that allow them. Each runs at its interval; a run that hit the per-run bound runs again
    /// on the next turn.
    pub(super) fn run_due_election(&mut self, now: u64) -> Option<Write> {
        let active = self.active.as_ref()?;
        let deadlines = active.elections;
        let rebalance = self.settings.leader_rebalance_interval_ms;
        if deadlines.rebalance.is_some_and(|d| d <= now) {
            let run = self.run_election("preferred leader election", |l| {
                balance_leaders(l, MAX_ELECTIONS_PER_RUN)
            });
            let more = run.as_ref().is_some_and(|(_, more)| *more);
            if let Some(a) = self.active.as_mut() {
                a.elections.rebalance = rebalance.map(|i| now + if more { 1 } else { i });
            }
            if let Some((write, _)) = run {
                return Some(write);
            }
        }
        if deadlines.unclean <= now {
            let run = self.run_election("unclean leader election", |l| {
                elect_unclean_leaders(l, MAX_ELECTIONS_PER_RUN)
            });
            let more = run.as_ref().is_some_and(|(_, more)| *more);
            if let Some(a) = self.active.as_mut() {
                a.elections.unclean = now
                    + if more {
                        1
                    } else {
                        UNCLEAN_ELECTION_INTERVAL_MS
                    };
            }
            if let Some((write, _)) = run {
                return Some(write);
            }
        }
        None
    }

    /// One periodic election's records, and whether it hit the per-run bound.
    fn run_election(
        &self,
        what: &str,
        decide: impl Fn(&Leadership) -> (Vec<MetadataRecordAndVersion>, bool),
    ) -> Option<(Write, bool)> {
        let image = self.machine.image();
        let leadership = Leadership::new(image, &self.settings.topics)?;
        let (records, more) = decide(&leadership);
        if records.is_empty() {
            return None;
        }
        let what = format!(
            "periodic {what}: {} partition(s) get a new leader",
            records.len()
        );
        Some((Write::periodic(records, Some(Then::Log(what))), more))
    }
}

/// When the periodic elections of this activation are next due (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ElectionDeadlines {
    /// None: `auto.leader.rebalance.enable=false`.
    pub rebalance: Option<u64>,
    pub unclean: u64,
}

impl ElectionDeadlines {
    /// A controller active from `now`: each election one interval later.
    pub fn activate(now: u64, rebalance_interval_ms: Option<u64>) -> ElectionDeadlines {
        ElectionDeadlines {
            rebalance: rebalance_interval_ms.map(|i| now + i),
            unclean: now + UNCLEAN_ELECTION_INTERVAL_MS,
        }
    }

    pub fn next_due(&self) -> u64 {
        self.rebalance.map_or(self.unclean, |r| r.min(self.unclean))
    }
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

impl QuorumController {
    /// ElectLeaders refused its cluster operation: every partition named carries the error
    /// (and the top level too, from v1).
    pub(super) fn elect_leaders_refused(
        r: &ElectLeadersRequest,
        v: i16,
        denied: &Denied,
    ) -> ElectLeadersResponse {
        not_active::elect_leaders_error(r, v, denied.error_code().0, denied.exception_message())
    }
}
