//! Partition reassignments (AlterPartitionReassignments, from admin
//! tools, directly or forwarded by a broker) and of replicas' log directories
//! (AssignReplicasToDirs, from brokers with several log directories): decided by
//! `controller::leadership` against the latest state and answered once their records commit.

use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::acls::authorizer::Denied;
use crate::controller::leadership::directories::assign_replicas_to_dirs;
use crate::controller::leadership::reassign::{alter_partition_reassignments, reassign_response};
use crate::controller::leadership::Leadership;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
    AssignReplicasToDirsRequest, AssignReplicasToDirsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
};

impl QuorumController {
    pub(super) fn alter_partition_reassignments(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AlterPartitionReassignmentsRequest,
    ) -> Decision {
        // An empty request asks for nothing: Java answers at once, active or not.
        if !self.acting(quorum) || request.topics.is_empty() {
            let r = not_active::alter_partition_reassignments(
                &request,
                version,
                &self.non_active(quorum),
            );
            return Decision::Answer(ControllerReply::AlterPartitionReassignments(r));
        }
        let image = self.machine.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            warn!(
                target: "kraftd::controller",
                "the metadata image has no metadata.version Kafka 4.4 knows: reassignments \
                 cannot be decided"
            );
            let r = not_active::alter_partition_reassignments(
                &request,
                version,
                &self.non_active(quorum),
            );
            return Decision::Answer(ControllerReply::AlterPartitionReassignments(r));
        };
        let result = alter_partition_reassignments(&leadership, &request);
        let (mut done, mut total) = (0, 0);
        for (topic, partitions) in &result.reply {
            for (p, outcome) in partitions {
                total += 1;
                match outcome {
                    Ok(()) => done += 1,
                    Err(e) => info!(
                        target: "kraftd::controller",
                        "Unable to alter partition reassignment for {topic}:{p} because of an {} \
                         error: {e}",
                        e.error_code().name()
                    ),
                }
            }
        }
        info!(
            target: "kraftd::controller",
            "Successfully altered {done} out of {total} partition reassignment(s) ({} record(s))",
            result.records.len()
        );
        let allow_rf_change = request.allow_replication_factor_change;
        let non_active = self.non_active(quorum);
        Decision::write_either(result, |outcome| {
            let r = match outcome {
                Ok(outcomes) => reassign_response(outcomes, allow_rf_change),
                Err(_) => not_active::alter_partition_reassignments(&request, version, &non_active),
            };
            ControllerReply::AlterPartitionReassignments(r)
        })
    }

    pub(super) fn assign_replicas_to_dirs(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AssignReplicasToDirsRequest,
    ) -> Decision {
        let refused = |code: ErrorCode| AssignReplicasToDirsResponse {
            error_code: code.0,
            ..Default::default()
        };
        if !self.acting(quorum) {
            let r =
                not_active::assign_replicas_to_dirs(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::AssignReplicasToDirs(r));
        }
        let broker = request.broker_id;
        let image = self.machine.image();
        let Some(leadership) = Leadership::new(image, &self.settings.topics) else {
            warn!(
                target: "kraftd::controller",
                "the metadata image has no metadata.version Kafka 4.4 knows: directory \
                 assignments cannot be decided"
            );
            let r = refused(ErrorCode::UNKNOWN_SERVER_ERROR);
            return Decision::Answer(ControllerReply::AssignReplicasToDirs(r));
        };
        let result = match assign_replicas_to_dirs(&leadership, &request) {
            Ok(result) => result,
            Err(e) => {
                warn!(
                    target: "kraftd::controller",
                    "AssignReplicasToDirs from broker {broker} refused with {}: {e}",
                    e.error_code().name()
                );
                let r = refused(e.error_code());
                return Decision::after_pending(ControllerReply::AssignReplicasToDirs(r));
            }
        };
        let ControllerResult {
            records,
            reply: (response, refusals),
        } = result;
        for r in &refusals {
            warn!(
                target: "kraftd::controller",
                "AssignReplicasToDirsRequest from broker {broker} {} ({})",
                r.why,
                r.code.name()
            );
        }
        info!(
            target: "kraftd::controller",
            "broker {broker} assigned replicas to log directories: {} record(s)",
            records.len()
        );
        Decision::write(
            ControllerResult::new(records, response),
            ControllerReply::AssignReplicasToDirs,
            ControllerReply::AssignReplicasToDirs(refused(ErrorCode::NOT_CONTROLLER)),
        )
    }
}

impl QuorumController {
    /// AlterPartitionReassignments refused its cluster operation: the error at the top and
    /// for every partition named.
    pub(super) fn alter_partition_reassignments_refused(
        r: &AlterPartitionReassignmentsRequest,
        _v: i16,
        denied: &Denied,
    ) -> AlterPartitionReassignmentsResponse {
        let code = denied.error_code().0;
        not_active::alter_partition_reassignments_error(r, code, denied.exception_message())
    }

    /// ListPartitionReassignments refused its cluster operation: the error at the top, and
    /// every partition named listed without replicas.
    pub(super) fn list_partition_reassignments_refused(
        r: &ListPartitionReassignmentsRequest,
        _v: i16,
        denied: &Denied,
    ) -> ListPartitionReassignmentsResponse {
        let code = denied.error_code().0;
        not_active::list_partition_reassignments_error(r, code, denied.exception_message())
    }
}
