//! AlterConfigs and IncrementalAlterConfigs: the request is screened as
//! Kafka's `ControllerApis` screens it, decided by the controller (`controller::config_changes`)
//! against the latest state, and answered once the decision's records commit (`NOT_CONTROLLER`
//! for every resource if leadership is lost first). A node that is not the active controller
//! answers as a non-active Java controller does: what `ControllerApis` screens (BROKER_LOGGER
//! resources included) itself, anything else `NOT_CONTROLLER` for the whole request.

use tracing::{info, warn};

use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::acls::authorizer::Denied;
use crate::controller::acls::{operation, resource, CLUSTER_NAME};
use crate::controller::config_changes::api::{
    broker_logger, screen_incremental, screen_legacy, Refused,
};
use crate::controller::config_changes::{
    incremental_alter_configs, legacy_alter_configs, ConfigsContext, IncrementalChange,
    LegacyChange, Op, OpType, Outcomes, TooManyRecords,
};
use crate::controller::principal::RequestPrincipal;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_configs_response::AlterConfigsResourceResponse as LegacyEntry;
use crate::protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse as IncrementalEntry;
use crate::protocol::messages::{
    AlterConfigsRequest, AlterConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};

/// `ConfigResource.Type` ids of the resources authorized on themselves (others on the cluster).
const TOPIC_RESOURCE: i8 = 2;
const GROUP_RESOURCE: i8 = 32;

/// One resource's answer: type, name, code, message.
type Entry = (i8, String, ErrorCode, Option<String>);

fn refused_entries(refused: &[Refused]) -> Vec<Entry> {
    refused
        .iter()
        .map(|r| {
            (
                r.resource_type,
                r.resource_name.clone(),
                r.code,
                Some(r.message.clone()),
            )
        })
        .collect()
}

fn outcome_entries(outcomes: &Outcomes) -> Vec<Entry> {
    outcomes
        .iter()
        .map(|((ty, name), o)| match o {
            Ok(()) => (*ty, name.clone(), ErrorCode::NONE, None),
            Err(e) => (*ty, name.clone(), e.error_code(), Some(e.to_string())),
        })
        .collect()
}

fn describe(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|(ty, name, code, message)| match message {
            Some(m) => format!("{ty}:{name:?}: {} ({m})", code.name()),
            None => format!("{ty}:{name:?}: {}", code.name()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn incremental_response(entries: Vec<Entry>) -> IncrementalAlterConfigsResponse {
    IncrementalAlterConfigsResponse {
        responses: entries
            .into_iter()
            .map(|(ty, name, code, message)| IncrementalEntry {
                error_code: code.0,
                error_message: message,
                resource_type: ty,
                resource_name: name,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn legacy_response(entries: Vec<Entry>) -> AlterConfigsResponse {
    AlterConfigsResponse {
        responses: entries
            .into_iter()
            .map(|(ty, name, code, message)| LegacyEntry {
                error_code: code.0,
                error_message: message,
                resource_type: ty,
                resource_name: name,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `getErrorResponse`: every resource of the request with the error.
fn all_failed(resources: &[(i8, &str)], code: ErrorCode, message: Option<&str>) -> Vec<Entry> {
    resources
        .iter()
        .map(|(ty, name)| (*ty, name.to_string(), code, message.map(str::to_string)))
        .collect()
}

impl QuorumController {
    fn configs_context(&self, quorum: &dyn QuorumAccess) -> ConfigsContext {
        ConfigsContext {
            statics: self.settings.topics.statics.clone(),
            controller_ids: quorum.voter_ids(),
        }
    }

    fn log_configs(prefix: &str, validate_only: bool, entries: &[Entry]) {
        let prefix = if validate_only {
            format!("Validate-only {prefix}")
        } else {
            prefix.to_string()
        };
        info!(target: "kraftd::controller", "{prefix} result(s): {}", describe(entries));
    }

    pub(super) fn incremental_alter_configs(
        &mut self,
        quorum: &dyn QuorumAccess,
        _version: i16,
        request: IncrementalAlterConfigsRequest,
        forwarded: bool,
        who: &RequestPrincipal,
    ) -> Decision {
        let send = |entries: Vec<Entry>| {
            ControllerReply::IncrementalAlterConfigs(incremental_response(entries))
        };
        let resources: Vec<(i8, String)> = request
            .resources
            .iter()
            .map(|r| (r.resource_type, r.resource_name.clone()))
            .collect();
        let borrowed: Vec<(i8, &str)> = resources.iter().map(|(t, n)| (*t, n.as_str())).collect();
        let mut screen = screen_incremental(&borrowed);
        let mut before = refused_entries(&screen.refused);
        self.authorize_alter(who, &borrowed, &mut screen.decided, &mut before);
        let node_id = self.settings.node_id;
        // A logger change needs CLUSTER_ACTION (`RuntimeLoggerManager`, before its checks).
        let loggers_allowed = self.authorized(
            who,
            resource::CLUSTER,
            CLUSTER_NAME,
            operation::CLUSTER_ACTION,
        );
        let loggers: Vec<Entry> = screen
            .loggers
            .iter()
            .map(|&i| {
                let r = &request.resources[i];
                let ops: Vec<(String, i8, Option<String>)> = r
                    .configs
                    .iter()
                    .map(|c| (c.name.clone(), c.config_operation, c.value.clone()))
                    .collect();
                if !loggers_allowed {
                    let denied = Denied::Cluster;
                    let (code, message) = (denied.error_code(), Some(denied.to_string()));
                    return (r.resource_type, r.resource_name.clone(), code, message);
                }
                match broker_logger(node_id, &r.resource_name, &ops) {
                    Ok(()) => (
                        r.resource_type,
                        r.resource_name.clone(),
                        ErrorCode::NONE,
                        None,
                    ),
                    Err((code, m)) => (r.resource_type, r.resource_name.clone(), code, Some(m)),
                }
            })
            .collect();
        // ControllerApis answers what it screened, loggers included, without the quorum
        // controller; a request that reaches a quorum controller that is not active fails
        // whole with NOT_CONTROLLER.
        if screen.decided.is_empty() {
            let mut entries = before;
            entries.extend(loggers);
            return Decision::Answer(send(entries));
        }
        if !self.acting(quorum) {
            return Decision::Answer(send(self.not_controller_entries(quorum, &borrowed)));
        }
        let mut changes: Vec<IncrementalChange> = Vec::new();
        for &i in &screen.decided {
            let r = &request.resources[i];
            let mut ops = Vec::new();
            for c in &r.configs {
                let Some(op) = OpType::from_id(c.config_operation) else {
                    // Java's quorum controller fails on an operation it does not know (a
                    // null `OpType`): the whole request is UNKNOWN_SERVER_ERROR.
                    warn!(target: "kraftd::controller",
                        "IncrementalAlterConfigs refused: unknown config operation {} for {}",
                        c.config_operation, c.name);
                    let all = all_failed(&borrowed, ErrorCode::UNKNOWN_SERVER_ERROR, None);
                    return Decision::Answer(send(all));
                };
                ops.push((
                    c.name.clone(),
                    Op {
                        op,
                        value: c.value.clone(),
                    },
                ));
            }
            changes.push(((r.resource_type, r.resource_name.clone()), ops));
        }
        let ctx = self.configs_context(quorum);
        let state = self.machine.latest_state();
        let result = incremental_alter_configs(
            &state.image,
            &ctx,
            &changes,
            request.validate_only,
            forwarded,
        );
        let answered = Answered {
            api: "IncrementalAlterConfigs",
            validate_only: request.validate_only,
            resources,
            before,
            after: loggers,
        };
        self.submit_configs(quorum, result, answered, send)
    }

    pub(super) fn alter_configs(
        &mut self,
        quorum: &dyn QuorumAccess,
        _version: i16,
        request: AlterConfigsRequest,
        forwarded: bool,
        who: &RequestPrincipal,
    ) -> Decision {
        let send = |entries: Vec<Entry>| ControllerReply::AlterConfigs(legacy_response(entries));
        let resources: Vec<(i8, String)> = request
            .resources
            .iter()
            .map(|r| (r.resource_type, r.resource_name.clone()))
            .collect();
        let borrowed: Vec<(i8, &str)> = resources.iter().map(|(t, n)| (*t, n.as_str())).collect();
        let mut screen = screen_legacy(&borrowed);
        let mut before = refused_entries(&screen.refused);
        self.authorize_alter(who, &borrowed, &mut screen.decided, &mut before);
        let changes: Vec<LegacyChange> = screen
            .decided
            .iter()
            .map(|&i| {
                let r = &request.resources[i];
                let configs = r
                    .configs
                    .iter()
                    .map(|c| (c.name.clone(), c.value.clone()))
                    .collect();
                ((r.resource_type, r.resource_name.clone()), configs)
            })
            .collect();
        if changes.is_empty() {
            return Decision::Answer(send(before));
        }
        if !self.acting(quorum) {
            return Decision::Answer(send(self.not_controller_entries(quorum, &borrowed)));
        }
        let ctx = self.configs_context(quorum);
        let state = self.machine.latest_state();
        let result = legacy_alter_configs(
            &state.image,
            &ctx,
            &changes,
            request.validate_only,
            forwarded,
        );
        let answered = Answered {
            api: "AlterConfigs",
            validate_only: request.validate_only,
            resources,
            before,
            after: Vec::new(),
        };
        self.submit_configs(quorum, result, answered, send)
    }

    /// `ControllerApis.authorizeAlterResource` on each resource left to decide: ALTER_CONFIGS
    /// on the cluster (broker and client-metrics resources), on the topic or on the group;
    /// a refused resource leaves `decided` and is answered with the resources refused first.
    fn authorize_alter(
        &self,
        who: &RequestPrincipal,
        resources: &[(i8, &str)],
        decided: &mut Vec<usize>,
        before: &mut Vec<Entry>,
    ) {
        decided.retain(|&i| {
            let (ty, name) = resources[i];
            let (target, denied) = match ty {
                TOPIC_RESOURCE => ((resource::TOPIC, name), Denied::Topic),
                GROUP_RESOURCE => ((resource::GROUP, name), Denied::Group),
                _ => ((resource::CLUSTER, CLUSTER_NAME), Denied::Cluster),
            };
            if self.authorized(who, target.0, target.1, operation::ALTER_CONFIGS) {
                return true;
            }
            warn!(target: "kraftd::controller", "Altering the configs of {ty}:{name:?} refused for {who}: {denied}");
            before.push((ty, name.to_string(), denied.error_code(), Some(denied.to_string())));
            false
        });
    }

    /// Every resource answered `NOT_CONTROLLER`: this node is not the active controller.
    fn not_controller_entries(
        &self,
        quorum: &dyn QuorumAccess,
        resources: &[(i8, &str)],
    ) -> Vec<Entry> {
        let message = self.non_active(quorum).message();
        all_failed(resources, ErrorCode::NOT_CONTROLLER, Some(&message))
    }

    /// Logs a config decision and submits it: once committed, the resources refused up front,
    /// then the decided ones, then `after`; `POLICY_VIOLATION` for every resource of a request
    /// too large to write, `NOT_CONTROLLER` if leadership is lost first.
    fn submit_configs(
        &mut self,
        quorum: &dyn QuorumAccess,
        result: ControllerResult<Result<Outcomes, TooManyRecords>>,
        answered: Answered,
        send: impl Fn(Vec<Entry>) -> ControllerReply,
    ) -> Decision {
        let Answered {
            api,
            validate_only,
            resources,
            before,
            after,
        } = answered;
        match &result.reply {
            Ok(outcomes) => Self::log_configs(api, validate_only, &outcome_entries(outcomes)),
            Err(e) => {
                warn!(target: "kraftd::controller", "{api} refused with POLICY_VIOLATION: {e}")
            }
        }
        let message = self.non_active(quorum).message();
        Decision::write_either(result, |outcome| {
            let borrowed: Vec<(i8, &str)> =
                resources.iter().map(|(t, n)| (*t, n.as_str())).collect();
            let entries = match outcome {
                Ok(Ok(outcomes)) => {
                    let mut entries = before.clone();
                    entries.extend(outcome_entries(outcomes));
                    entries.extend(after.iter().cloned());
                    entries
                }
                Ok(Err(e)) => {
                    all_failed(&borrowed, ErrorCode::POLICY_VIOLATION, Some(&e.to_string()))
                }
                Err(_) => all_failed(&borrowed, ErrorCode::NOT_CONTROLLER, Some(&message)),
            };
            send(entries)
        })
    }
}

/// What a config request's answer is made of besides its decided resources.
struct Answered {
    api: &'static str,
    validate_only: bool,
    /// Every resource of the request, in order (type, name).
    resources: Vec<(i8, String)>,
    /// The resources refused before deciding.
    before: Vec<Entry>,
    /// Answers that follow the decided ones (BROKER_LOGGER resources).
    after: Vec<Entry>,
}
