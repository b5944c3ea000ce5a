//! CreateAcls, DeleteAcls and DescribeAcls, as Java's `ControllerApis`
//! hands them to `AclApis`: the caller must hold ALTER (create, delete) or DESCRIBE (describe)
//! on the cluster; without an authorizer the answer is SECURITY_DISABLED; otherwise the
//! controller decides (`controller::acls::decide`) and the answer goes out once the records
//! commit (`NOT_CONTROLLER` for every result if leadership is lost first or this node is not
//! the active controller). DescribeAcls reads the committed image.

use tracing::{info, warn};

use super::not_active;
use super::request::AclRequest;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::acls::decide::{create_acls, delete_acls, describe_acls, AclError};
use crate::controller::acls::{self, operation, resource, Acl, AclFilter};
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::principal::RequestPrincipal;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::create_acls_response::AclCreationResult;
use crate::protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use crate::protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use crate::protocol::messages::{
    CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse, DescribeAclsRequest,
    DescribeAclsResponse,
};

/// An error result's code and message, as Java's `ApiError` puts them on the wire.
fn refusal(code: ErrorCode, message: String) -> (i16, Option<String>) {
    (code.0, Some(message))
}

fn creation(code: i16, message: Option<String>) -> AclCreationResult {
    AclCreationResult {
        error_code: code,
        error_message: message,
        ..Default::default()
    }
}

fn filter_result(code: i16, message: Option<String>, acls: &[Acl]) -> DeleteAclsFilterResult {
    DeleteAclsFilterResult {
        error_code: code,
        error_message: message,
        matching_acls: acls
            .iter()
            .map(|a| DeleteAclsMatchingAcl {
                error_code: 0,
                error_message: None,
                resource_type: a.resource_type,
                resource_name: a.resource_name.clone(),
                pattern_type: a.pattern_type,
                principal: a.principal.clone(),
                host: a.host.clone(),
                operation: a.operation,
                permission_type: a.permission_type,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// A DeleteAcls filter, its codes as Java's `fromCode` reads them.
fn delete_filter(
    f: &crate::protocol::messages::delete_acls_request::DeleteAclsFilter,
) -> AclFilter {
    AclFilter {
        resource_type: acls::resource_type(f.resource_type_filter),
        resource_name: f.resource_name_filter.clone(),
        pattern_type: acls::pattern_type(f.pattern_type_filter),
        principal: f.principal_filter.clone(),
        host: f.host_filter.clone(),
        operation: acls::operation(f.operation),
        permission_type: acls::permission_type(f.permission_type),
    }
}

fn describe_filter(f: &DescribeAclsRequest) -> AclFilter {
    AclFilter {
        resource_type: acls::resource_type(f.resource_type_filter),
        resource_name: f.resource_name_filter.clone(),
        pattern_type: acls::pattern_type(f.pattern_type_filter),
        principal: f.principal_filter.clone(),
        host: f.host_filter.clone(),
        operation: acls::operation(f.operation),
        permission_type: acls::permission_type(f.permission_type),
    }
}

impl QuorumController {
    pub(super) fn acls(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: AclRequest,
        who: &RequestPrincipal,
    ) -> Decision {
        let (api, op) = match &request {
            AclRequest::Create(_) => ("CreateAcls", operation::ALTER),
            AclRequest::Delete(_) => ("DeleteAcls", operation::ALTER),
            AclRequest::Describe(_) => ("DescribeAcls", operation::DESCRIBE),
        };
        // `AuthHelper.authorizeClusterOperation`, before anything else.
        let denied = self
            .authorize_cluster_operation(api, who, op)
            .err()
            .map(|denied| (denied.error_code().0, denied.exception_message()));
        let ctx = self.non_active(quorum);
        let (no_authorizer, acting) = (self.settings.authorizer.is_none(), self.acting(quorum));
        // A non-active controller (or one without an authorizer) answers every result alike.
        let blanket = denied.or_else(|| {
            if no_authorizer {
                None
            } else if !acting {
                Some(refusal(ErrorCode::NOT_CONTROLLER, ctx.message()))
            } else {
                None
            }
        });
        match request {
            AclRequest::Describe(r) => {
                let response = match (blanket, no_authorizer) {
                    (Some((code, message)), _) => DescribeAclsResponse {
                        error_code: code,
                        error_message: message,
                        ..Default::default()
                    },
                    (None, true) => not_active::describe_acls(&r, version, &ctx),
                    (None, false) => self.describe(&r),
                };
                Decision::Answer(ControllerReply::DescribeAcls(response))
            }
            AclRequest::Create(r) => {
                if let Some((code, message)) = blanket {
                    let results = r.creations.iter().map(|_| creation(code, message.clone()));
                    let response = CreateAclsResponse {
                        results: results.collect(),
                        ..Default::default()
                    };
                    Decision::Answer(ControllerReply::CreateAcls(response))
                } else if no_authorizer {
                    let response = not_active::create_acls(&r, version, &ctx);
                    Decision::Answer(ControllerReply::CreateAcls(response))
                } else {
                    self.create(quorum, r)
                }
            }
            AclRequest::Delete(r) => {
                if let Some((code, message)) = blanket {
                    let results = r
                        .filters
                        .iter()
                        .map(|_| filter_result(code, message.clone(), &[]));
                    let response = DeleteAclsResponse {
                        filter_results: results.collect(),
                        ..Default::default()
                    };
                    Decision::Answer(ControllerReply::DeleteAcls(response))
                } else if no_authorizer {
                    let response = not_active::delete_acls(&r, version, &ctx);
                    Decision::Answer(ControllerReply::DeleteAcls(response))
                } else {
                    self.delete(quorum, r)
                }
            }
        }
    }

    fn create(
        &mut self,
        quorum: &dyn QuorumAccess,
        request: crate::protocol::messages::CreateAclsRequest,
    ) -> Decision {
        let creations: Vec<Acl> = request
            .creations
            .iter()
            .map(|c| Acl {
                resource_type: acls::resource_type(c.resource_type),
                resource_name: c.resource_name.clone(),
                pattern_type: acls::pattern_type(c.resource_pattern_type),
                principal: c.principal.clone(),
                host: c.host.clone(),
                operation: acls::operation(c.operation),
                permission_type: acls::permission_type(c.permission_type),
            })
            .collect();
        // `CreateAclsRequest.aclBinding` cannot build an ACL with an ANY or MATCH field: the
        // whole request fails with UNKNOWN_SERVER_ERROR and no message.
        if creations.iter().any(unbuildable) {
            let results = creations
                .iter()
                .map(|_| creation(ErrorCode::UNKNOWN_SERVER_ERROR.0, None));
            let r = CreateAclsResponse {
                results: results.collect(),
                ..Default::default()
            };
            return Decision::Answer(ControllerReply::CreateAcls(r));
        }
        let image = self.machine.image();
        let mv = image
            .features
            .metadata_version()
            .and_then(|l| MetadataVersion::from_level(l).ok());
        let Some(mv) = mv else {
            // No metadata.version yet: Java's controller is not active before activation.
            let message = self.non_active(quorum).message();
            let results = creations
                .iter()
                .map(|_| creation(ErrorCode::NOT_CONTROLLER.0, Some(message.clone())));
            let r = CreateAclsResponse {
                results: results.collect(),
                ..Default::default()
            };
            return Decision::Answer(ControllerReply::CreateAcls(r));
        };
        let result = create_acls(&image.acls, &creations, mv, &mut self.topic_random.ids);
        log_results(
            "CreateAcls",
            result.records.len(),
            result.reply.iter().map(|r| r.as_ref().err()),
        );
        let message = self.non_active(quorum).message();
        let count = creations.len();
        Decision::write_either(result, |outcome| {
            let results = match outcome {
                Ok(results) => results
                    .iter()
                    .map(|r| match r {
                        // Java's success result carries an empty message.
                        Ok(()) => creation(0, Some(String::new())),
                        Err(e) => creation(e.error_code().0, Some(e.to_string())),
                    })
                    .collect(),
                Err(_) => (0..count)
                    .map(|_| creation(ErrorCode::NOT_CONTROLLER.0, Some(message.clone())))
                    .collect(),
            };
            let r = CreateAclsResponse {
                results,
                ..Default::default()
            };
            ControllerReply::CreateAcls(r)
        })
    }

    fn delete(&mut self, quorum: &dyn QuorumAccess, request: DeleteAclsRequest) -> Decision {
        let filters: Vec<AclFilter> = request.filters.iter().map(delete_filter).collect();
        let result = delete_acls(&self.machine.image().acls, &filters);
        log_results(
            "DeleteAcls",
            result.records.len(),
            result.reply.iter().map(|r| r.as_ref().err()),
        );
        let message = self.non_active(quorum).message();
        let count = filters.len();
        Decision::write_either(result, |outcome| {
            let filter_results = match outcome {
                Ok(results) => results
                    .iter()
                    .map(|r| match r {
                        Ok(acls) => filter_result(0, None, acls),
                        Err(e) => filter_result(e.error_code().0, Some(e.to_string()), &[]),
                    })
                    .collect(),
                Err(_) => (0..count)
                    .map(|_| filter_result(ErrorCode::NOT_CONTROLLER.0, Some(message.clone()), &[]))
                    .collect(),
            };
            let r = DeleteAclsResponse {
                filter_results,
                ..Default::default()
            };
            ControllerReply::DeleteAcls(r)
        })
    }

    /// DescribeAcls from the committed image (`StandardAuthorizer.acls`).
    fn describe(&self, request: &DescribeAclsRequest) -> DescribeAclsResponse {
        let (_, stable) = self.machine.stable_image();
        let resources = describe_acls(&stable.acls, &describe_filter(request))
            .into_iter()
            .map(
                |((resource_type, resource_name, pattern_type), acls)| DescribeAclsResource {
                    resource_type,
                    resource_name,
                    pattern_type,
                    acls: acls
                        .into_iter()
                        .map(|a| AclDescription {
                            principal: a.principal,
                            host: a.host,
                            operation: a.operation,
                            permission_type: a.permission_type,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                },
            )
            .collect();
        DescribeAclsResponse {
            resources,
            error_message: Some(String::new()),
            ..Default::default()
        }
    }
}

/// Java's `ResourcePattern` and `AccessControlEntry` constructors refuse ANY (and MATCH).
fn unbuildable(acl: &Acl) -> bool {
    use crate::controller::acls::{pattern, permission};
    acl.resource_type == resource::ANY
        || matches!(acl.pattern_type, pattern::ANY | pattern::MATCH)
        || acl.operation == operation::ANY
        || acl.permission_type == permission::ANY
}

/// One log line per decision: how many records, and each refusal.
fn log_results<'a>(api: &str, records: usize, errors: impl Iterator<Item = Option<&'a AclError>>) {
    let refused: Vec<String> = errors
        .flatten()
        .map(|e| format!("{} ({e})", e.error_code().name()))
        .collect();
    if refused.is_empty() {
        info!(target: "kraftd::controller", "{api}: {records} record(s)");
    } else {
        warn!(target: "kraftd::controller", "{api}: {records} record(s); refused: {}", refused.join(", "));
    }
}
