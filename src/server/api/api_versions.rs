//! ApiVersions (key 18): the versions and features this controller supports.

use crate::protocol::codec::{ApiMessage, DecodeError, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame::ParsedRequest;
use crate::protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use crate::protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};

use super::{respond, served_api, served_apis, Outcome};
use crate::server::context::{FeatureRange, ServerContext};

/// The feature ranges this build supports, as a controller advertises them.
pub fn supported_features() -> Vec<FeatureRange> {
    crate::protocol::features::SUPPORTED_FEATURES.to_vec()
}

pub(super) fn handle(
    ctx: &ServerContext,
    request: &ParsedRequest<'_>,
) -> Result<Outcome, DecodeError> {
    let version = request.api_version();
    let body = ApiVersionsRequest::decode_exact(request.body, version)?;
    // Java's `ApiVersionsRequest.isValid`: from v5, ClusterId and NodeId come both or neither
    // (a controller checks no more than that: only brokers answer REBOOTSTRAP_REQUIRED); from
    // v3, a well-formed client software name and version.
    let half_addressed = version >= 5 && (body.cluster_id.is_none() != (body.node_id == -1));
    if half_addressed
        || version >= 3
            && !(valid_software_field(&body.client_software_name)
                && valid_software_field(&body.client_software_version))
    {
        let response = ApiVersionsResponse {
            error_code: ErrorCode::INVALID_REQUEST.0,
            ..Default::default()
        };
        return Ok(respond(request, &response, version));
    }
    Ok(respond(request, &response(ctx, version), version))
}

/// The full answer at `version`.
pub fn response(ctx: &ServerContext, version: i16) -> ApiVersionsResponse {
    let api_keys = served_apis()
        .into_iter()
        .map(|a| ApiVersion {
            api_key: a.key,
            min_version: a.min_version,
            max_version: a.max_version,
            ..Default::default()
        })
        .collect();
    let finalized = ctx.finalized_features();
    ApiVersionsResponse {
        error_code: ErrorCode::NONE.0,
        api_keys,
        throttle_time_ms: 0,
        supported_features: ctx
            .supported_features
            .iter()
            // Clients before v4 cannot parse a feature whose minimum is 0 (KIP-1022), so
            // those are left out for them.
            .filter(|f| version >= 4 || f.min > 0)
            .map(|f| SupportedFeatureKey {
                name: f.name.to_owned(),
                min_version: f.min,
                max_version: f.max,
                ..Default::default()
            })
            .collect(),
        finalized_features_epoch: finalized.epoch,
        finalized_features: finalized
            .levels
            .iter()
            .map(|(name, level)| FinalizedFeatureKey {
                name: name.clone(),
                max_version_level: *level,
                min_version_level: *level,
                ..Default::default()
            })
            .collect(),
        zk_migration_ready: false,
        ..Default::default()
    }
}

/// KIP-511's fallback for a version newer than served: v0 layout, UNSUPPORTED_VERSION, and
/// ApiVersions' own range so the client can retry at a version both sides speak.
pub(super) fn unsupported_version_response() -> ApiVersionsResponse {
    let own = served_api(ApiVersionsRequest::API_KEY).expect("ApiVersions is served");
    ApiVersionsResponse {
        error_code: ErrorCode::UNSUPPORTED_VERSION.0,
        api_keys: vec![ApiVersion {
            api_key: own.key,
            min_version: own.min_version,
            max_version: own.max_version,
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Kafka's rule for ClientSoftwareName and ClientSoftwareVersion: alphanumerics, '-' and '.',
/// starting and ending with an alphanumeric.
fn valid_software_field(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: u8| c.is_ascii_alphanumeric();
    !b.is_empty()
        && edge(b[0])
        && edge(b[b.len() - 1])
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_names_follow_kafkas_pattern() {
        assert!(valid_software_field("apache-kafka-java"));
        assert!(valid_software_field("4.4.0"));
        assert!(valid_software_field("a"));
        assert!(!valid_software_field(""));
        assert!(!valid_software_field("-x"));
        assert!(!valid_software_field("x."));
        assert!(!valid_software_field("a b"));
    }
}
