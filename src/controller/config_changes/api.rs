//! What Kafka 4.4's `ControllerApis` does with AlterConfigs and IncrementalAlterConfigs before
//! its quorum controller sees them: unknown resource types are answered UNSUPPORTED_VERSION,
//! a resource given twice is answered once "Duplicate resource." (a third time not at all),
//! BROKER_LOGGER resources of IncrementalAlterConfigs are the controller's own log levels
//! (`RuntimeLoggerManager`), and the legacy API refuses them as a type it cannot authorize.

use crate::protocol::errors::ErrorCode;

pub const BROKER_LOGGER_RESOURCE: i8 = 8;
pub const DUPLICATE_RESOURCE: &str = "Duplicate resource.";

/// `ConfigResource.Type.forId` knows the id (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS,
/// GROUP); anything else is UNKNOWN.
pub fn known_resource_type(id: i8) -> bool {
    matches!(id, 2 | 4 | 8 | 16 | 32)
}

/// A resource answered by the screening itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub resource_type: i8,
    pub resource_name: String,
    pub code: ErrorCode,
    pub message: String,
}

/// How a request's resources split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    /// Answered before the controller, in Java's order.
    pub refused: Vec<Refused>,
    /// Indexes of the resources the controller decides (first occurrence, request order).
    pub decided: Vec<usize>,
    /// Indexes of BROKER_LOGGER resources (IncrementalAlterConfigs), each answered after the
    /// controller's results.
    pub loggers: Vec<usize>,
}

fn screen(resources: &[(i8, &str)], incremental: bool) -> Screen {
    let mut refused = Vec::new();
    let mut decided: Vec<usize> = Vec::new();
    let mut duplicates: Vec<(i8, &str)> = Vec::new();
    let mut loggers = Vec::new();
    for (i, &(ty, name)) in resources.iter().enumerate() {
        if incremental && ty == BROKER_LOGGER_RESOURCE {
            loggers.push(i);
        } else if !known_resource_type(ty) {
            refused.push(Refused {
                resource_type: ty,
                resource_name: name.to_string(),
                code: ErrorCode::UNSUPPORTED_VERSION,
                message: format!("Unknown resource type {ty}."),
            });
        } else if !duplicates.contains(&(ty, name)) {
            if let Some(pos) = decided.iter().position(|&j| resources[j] == (ty, name)) {
                decided.remove(pos);
                duplicates.push((ty, name));
                refused.push(Refused {
                    resource_type: ty,
                    resource_name: name.to_string(),
                    code: ErrorCode::INVALID_REQUEST,
                    message: DUPLICATE_RESOURCE.to_string(),
                });
            } else {
                decided.push(i);
            }
        }
    }
    if !incremental {
        // `authorizeAlterResource` has no ACL resource for BROKER_LOGGER.
        decided.retain(|&i| {
            let (ty, name) = resources[i];
            if ty != BROKER_LOGGER_RESOURCE {
                return true;
            }
            refused.push(Refused {
                resource_type: ty,
                resource_name: name.to_string(),
                code: ErrorCode::INVALID_REQUEST,
                message: "Unexpected resource type BROKER_LOGGER.".to_string(),
            });
            false
        });
    }
    Screen {
        refused,
        decided,
        loggers,
    }
}

pub fn screen_incremental(resources: &[(i8, &str)]) -> Screen {
    screen(resources, true)
}

pub fn screen_legacy(resources: &[(i8, &str)]) -> Screen {
    screen(resources, false)
}

/// The log levels `RuntimeLoggerManager` accepts.
const LOG_LEVELS: &[&str] = &["DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN"];
pub const ROOT_LOGGER: &str = "root";

/// `RuntimeLoggerManager.applyChangesForResource` for this controller (`node_id`): the name
/// must be its id, and every operation a SET or DELETE of a logger that exists. kraftd's only
/// logger in log4j's sense is `root`, and its levels are not changed at runtime.
pub fn broker_logger(
    node_id: i32,
    name: &str,
    ops: &[(String, i8, Option<String>)],
) -> Result<(), (ErrorCode, String)> {
    let invalid = |m: String| Err((ErrorCode::INVALID_REQUEST, m));
    match name.parse::<i32>() {
        Err(_) => return invalid(format!("Node id must be an integer, but it is: {name}")),
        Ok(id) if id != node_id => {
            return invalid(format!(
                "Unexpected node id. Expected {node_id}, but received {id}"
            ))
        }
        Ok(_) => {}
    }
    for (logger, op, value) in ops {
        let exists = || {
            if logger == ROOT_LOGGER {
                Ok(())
            } else {
                Err((
                    ErrorCode::INVALID_CONFIG,
                    format!("Logger {logger} does not exist!"),
                ))
            }
        };
        match op {
            0 => {
                exists()?;
                let level = value.as_deref().unwrap_or("null");
                if !LOG_LEVELS.contains(&level) {
                    return Err((
                        ErrorCode::INVALID_CONFIG,
                        format!(
                            "Cannot set the log level of {logger} to {level} as it is not a supported log level. Valid log levels are {}",
                            LOG_LEVELS.join(", ")
                        ),
                    ));
                }
            }
            1 => {
                exists()?;
                return invalid(
                    "Removing the log level of the root logger is not allowed".to_string(),
                );
            }
            2 => {
                return invalid(
                    "APPEND operation is not allowed for the BROKER_LOGGER resource".to_string(),
                )
            }
            3 => {
                return invalid(
                    "SUBTRACT operation is not allowed for the BROKER_LOGGER resource".to_string(),
                )
            }
            other => {
                return invalid(format!(
                    "Unknown operation type {other} is not allowed for the BROKER_LOGGER resource"
                ))
            }
        }
    }
    Ok(())
}
