//! AlterConfigs and IncrementalAlterConfigs as a non-active controller answers them.

use super::*;

/// The resources AlterConfigs and IncrementalAlterConfigs screen before the quorum
/// controller: unknown types and duplicates get their own errors; `None` for the rest.
fn screen_config_resources<'a>(
    resources: impl Iterator<Item = (i8, &'a str)> + Clone,
) -> (Vec<(i8, String, ErrorCode, String)>, bool) {
    let mut seen = HashSet::new();
    let mut duplicate = HashSet::new();
    let mut screened = Vec::new();
    for (ty, name) in resources.clone() {
        if !known_resource_type(ty) {
            screened.push((
                ty,
                name.to_string(),
                ErrorCode::UNSUPPORTED_VERSION,
                format!("Unknown resource type {ty}."),
            ));
        } else if !duplicate.contains(&(ty, name)) && !seen.insert((ty, name)) {
            seen.remove(&(ty, name));
            duplicate.insert((ty, name));
            screened.push((
                ty,
                name.to_string(),
                ErrorCode::INVALID_REQUEST,
                "Duplicate resource.".to_string(),
            ));
        }
    }
    (screened, !seen.is_empty())
}

/// The per-resource answers of AlterConfigs and IncrementalAlterConfigs: NOT_CONTROLLER for
/// every resource if any reaches the quorum controller, else the screening's own errors.
fn config_resource_results<T>(
    resources: &[(i8, &str)],
    ctx: &NonActive,
    entry: impl Fn(i8, &str, ErrorCode, String) -> T,
) -> Vec<T> {
    let (screened, asks_controller) = screen_config_resources(resources.iter().copied());
    if asks_controller {
        resources
            .iter()
            .map(|&(ty, name)| entry(ty, name, ErrorCode::NOT_CONTROLLER, ctx.message()))
            .collect()
    } else {
        screened
            .into_iter()
            .map(|(ty, name, code, message)| entry(ty, &name, code, message))
            .collect()
    }
}

pub fn alter_configs(r: &AlterConfigsRequest, _v: i16, ctx: &NonActive) -> AlterConfigsResponse {
    let resources: Vec<(i8, &str)> = r
        .resources
        .iter()
        .map(|c| (c.resource_type, c.resource_name.as_str()))
        .collect();
    AlterConfigsResponse {
        responses: config_resource_results(&resources, ctx, |ty, name, code, message| {
            alter_configs_resp::AlterConfigsResourceResponse {
                error_code: code.0,
                error_message: Some(message),
                resource_type: ty,
                resource_name: name.to_string(),
                ..Default::default()
            }
        }),
        ..Default::default()
    }
}

pub fn incremental_alter_configs(
    r: &IncrementalAlterConfigsRequest,
    _v: i16,
    ctx: &NonActive,
) -> IncrementalAlterConfigsResponse {
    // BROKER_LOGGER resources are the controller's own log levels, which it sets itself;
    // kraftd has no runtime loggers to change, so it leaves them to the active controller
    // with the rest.
    let resources: Vec<(i8, &str)> = r
        .resources
        .iter()
        .map(|c| (c.resource_type, c.resource_name.as_str()))
        .collect();
    IncrementalAlterConfigsResponse {
        responses: config_resource_results(&resources, ctx, |ty, name, code, message| {
            incremental_resp::AlterConfigsResourceResponse {
                error_code: code.0,
                error_message: Some(message),
                resource_type: ty,
                resource_name: name.to_string(),
                ..Default::default()
            }
        }),
        ..Default::default()
    }
}
