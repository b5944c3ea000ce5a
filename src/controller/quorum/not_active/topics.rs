//! CreateTopics, DeleteTopics and CreatePartitions as a non-active controller answers them.

use super::*;

pub fn create_topics(r: &CreateTopicsRequest, _v: i16, ctx: &NonActive) -> CreateTopicsResponse {
    // ControllerApis drops duplicates and the metadata topic before asking the quorum
    // controller, which answers an empty request at once.
    let mut seen = HashSet::new();
    let mut duplicate = BTreeSet::new();
    for t in &r.topics {
        if !seen.insert(t.name.as_str()) {
            duplicate.insert(t.name.as_str());
        }
    }
    let asks_controller = r
        .topics
        .iter()
        .any(|t| !duplicate.contains(t.name.as_str()) && t.name != "__cluster_metadata");
    if asks_controller {
        let message = ctx.message();
        return CreateTopicsResponse {
            topics: r
                .topics
                .iter()
                .map(|t| CreatableTopicResult {
                    name: t.name.clone(),
                    error_code: NOT_CONTROLLER,
                    error_message: Some(message.clone()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
    }
    let mut topics: Vec<CreatableTopicResult> = duplicate
        .iter()
        .map(|name| CreatableTopicResult {
            name: name.to_string(),
            error_code: ErrorCode::INVALID_REQUEST.0,
            error_message: Some("Duplicate topic name.".into()),
            ..Default::default()
        })
        .collect();
    if seen.contains("__cluster_metadata") && !duplicate.contains("__cluster_metadata") {
        topics.push(CreatableTopicResult {
            name: "__cluster_metadata".into(),
            error_code: ErrorCode::INVALID_REQUEST.0,
            error_message: Some(
                "Creation of internal topic __cluster_metadata is prohibited.".into(),
            ),
            ..Default::default()
        });
    }
    CreateTopicsResponse {
        topics,
        ..Default::default()
    }
}

pub fn delete_topics(r: &DeleteTopicsRequest, v: i16, ctx: &NonActive) -> DeleteTopicsResponse {
    // The request names topics by name (v0-5) or by name or id (v6+).
    let named: Vec<(Option<String>, Uuid)> = if v < 6 {
        r.topic_names
            .iter()
            .map(|n| (Some(n.clone()), Uuid::ZERO))
            .collect()
    } else {
        r.topics
            .iter()
            .map(|t| (t.name.clone(), t.topic_id))
            .collect()
    };
    let all_failed = |code: ErrorCode| DeleteTopicsResponse {
        responses: named
            .iter()
            .map(|(name, id)| DeletableTopicResult {
                name: name.clone(),
                topic_id: *id,
                error_code: code.0,
                error_message: None,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    if !ctx.delete_topic_enable {
        return all_failed(if v < 3 {
            ErrorCode::INVALID_REQUEST
        } else {
            ErrorCode::TOPIC_DELETION_DISABLED
        });
    }
    // What Java refuses before resolving names and ids: entries with neither or both, and
    // duplicates. If anything is left, the active controller must resolve and delete it
    // (kraftd holds no topics yet), and Java's answer is then NOT_CONTROLLER for every entry.
    let mut refused = Vec::new();
    let (mut names, mut ids) = (Vec::new(), Vec::new());
    for (name, id) in &named {
        match (name, *id == Uuid::ZERO) {
            (None, true) => refused.push((
                None,
                Uuid::ZERO,
                "Neither topic name nor id were specified.",
            )),
            (Some(_), false) => refused.push((
                name.clone(),
                *id,
                "You may not specify both topic name and topic id.",
            )),
            (Some(n), true) => names.push(n.clone()),
            (None, false) => ids.push(*id),
        }
    }
    if any_unique(&names) || any_unique(&ids) {
        return all_failed(ErrorCode::NOT_CONTROLLER);
    }
    let mut duplicate_names: Vec<String> = names.clone();
    duplicate_names.sort();
    duplicate_names.dedup();
    let mut duplicate_ids: Vec<Uuid> = ids.clone();
    duplicate_ids.sort_by_key(|u| u.to_string());
    duplicate_ids.dedup();
    let results = refused
        .into_iter()
        .map(|(name, topic_id, message)| (name, topic_id, message.to_string()))
        .chain(
            duplicate_names
                .into_iter()
                .map(|n| (Some(n), Uuid::ZERO, "Duplicate topic name.".to_string())),
        )
        .chain(
            duplicate_ids
                .into_iter()
                .map(|id| (None, id, "Duplicate topic id.".to_string())),
        )
        .map(|(name, topic_id, message)| DeletableTopicResult {
            name,
            topic_id,
            error_code: ErrorCode::INVALID_REQUEST.0,
            error_message: if v >= 5 { Some(message) } else { None },
            ..Default::default()
        })
        .collect();
    DeleteTopicsResponse {
        responses: results,
        ..Default::default()
    }
}

/// Whether some entry of `all` occurs once (and so is not refused as a duplicate).
fn any_unique<T: PartialEq>(all: &[T]) -> bool {
    all.iter()
        .any(|x| all.iter().filter(|y| *y == x).count() == 1)
}

pub fn create_partitions(
    r: &CreatePartitionsRequest,
    _v: i16,
    ctx: &NonActive,
) -> CreatePartitionsResponse {
    if r.topics.is_empty() {
        return CreatePartitionsResponse::default();
    }
    create_partitions_failed(r, ErrorCode::NOT_CONTROLLER, &ctx.message())
}

/// `CreatePartitionsRequest.getErrorResponse`: every topic fails with `code` and `message`.
pub fn create_partitions_failed(
    r: &CreatePartitionsRequest,
    code: ErrorCode,
    message: &str,
) -> CreatePartitionsResponse {
    CreatePartitionsResponse {
        results: r
            .topics
            .iter()
            .map(|t| CreatePartitionsTopicResult {
                name: t.name.clone(),
                error_code: code.0,
                error_message: Some(message.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
