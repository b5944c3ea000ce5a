//! AlterClientQuotas: the controller decides every entity
//! (`controller::quotas::alter`) against the latest state, and the answer goes out once the
//! records commit (`NOT_CONTROLLER` for every entity if leadership is lost first).

use std::net::{IpAddr, ToSocketAddrs};

use tracing::{info, warn};

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::acls::authorizer::Denied;
use crate::controller::quotas::alter::{alter_client_quotas, QuotaAlteration, QuotaResult};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_client_quotas_response::{EntityData, EntryData};
use crate::protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};

/// Java's `InetAddress.getByName` succeeds: an address literal (IPv6 possibly in brackets), or
/// a host name the resolver knows.
fn resolves(name: &str) -> bool {
    let literal = name.trim_start_matches('[').trim_end_matches(']');
    literal.parse::<IpAddr>().is_ok()
        || (name, 0)
            .to_socket_addrs()
            .is_ok_and(|mut a| a.next().is_some())
}

fn entry(r: &QuotaResult, code: ErrorCode, message: Option<String>) -> EntryData {
    EntryData {
        error_code: code.0,
        error_message: message,
        entity: r
            .entity
            .iter()
            .map(|(t, n)| EntityData {
                entity_type: t.clone(),
                entity_name: n.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

impl QuorumController {
    pub(super) fn alter_client_quotas(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AlterClientQuotasRequest,
    ) -> Decision {
        if !self.acting(quorum) {
            let r = not_active::alter_client_quotas(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::AlterClientQuotas(r));
        }
        // Java answers a request without entries at once.
        if request.entries.is_empty() {
            let r = AlterClientQuotasResponse::default();
            return Decision::Answer(ControllerReply::AlterClientQuotas(r));
        }
        let alterations: Vec<QuotaAlteration> = request
            .entries
            .iter()
            .map(|e| QuotaAlteration {
                entity: e
                    .entity
                    .iter()
                    .map(|d| (d.entity_type.clone(), d.entity_name.clone()))
                    .collect(),
                ops: e
                    .ops
                    .iter()
                    .map(|o| (o.key.clone(), (!o.remove).then_some(o.value)))
                    .collect(),
            })
            .collect();
        let result = alter_client_quotas(
            &self.machine.image().client_quotas,
            &alterations,
            request.validate_only,
            &resolves,
        );
        let described: Vec<String> = result
            .reply
            .iter()
            .map(|r| {
                let outcome = match &r.outcome {
                    Ok(()) => "SUCCESS".to_string(),
                    Err(e) => format!("{} ({e})", e.error_code().name()),
                };
                format!("{:?}: {outcome}", r.entity)
            })
            .collect();
        let line = format!(
            "AlterClientQuotas{}: {} record(s); {}",
            if request.validate_only {
                " (validate only)"
            } else {
                ""
            },
            result.records.len(),
            described.join(", ")
        );
        if result.reply.iter().all(|r| r.outcome.is_ok()) {
            info!(target: "kraftd::controller", "{line}");
        } else {
            warn!(target: "kraftd::controller", "{line}");
        }
        let message = self.non_active(quorum).message();
        Decision::write_either(result, |outcome| {
            let entries = match outcome {
                Ok(results) => results
                    .iter()
                    .map(|r| match &r.outcome {
                        Ok(()) => entry(r, ErrorCode::NONE, None),
                        Err(e) => entry(r, e.error_code(), Some(e.to_string())),
                    })
                    .collect(),
                Err(_) => alterations
                    .iter()
                    .map(|a| {
                        let r = QuotaResult {
                            entity: a.entity.clone(),
                            outcome: Ok(()),
                        };
                        entry(&r, ErrorCode::NOT_CONTROLLER, Some(message.clone()))
                    })
                    .collect(),
            };
            let r = AlterClientQuotasResponse {
                entries,
                ..Default::default()
            };
            ControllerReply::AlterClientQuotas(r)
        })
    }
}

impl QuorumController {
    /// AlterClientQuotas refused its cluster operation: every entity carries the error.
    pub(super) fn alter_client_quotas_refused(
        r: &AlterClientQuotasRequest,
        _v: i16,
        denied: &Denied,
    ) -> AlterClientQuotasResponse {
        not_active::alter_client_quotas_failed(r, denied.error_code().0, &denied.code_message())
    }
}
