//! How a transcript shows what the controller decided: answers as `<Api> <Kafka JSON>` (the
//! JSON Kafka's generated `JsonConverter` writes for the response at the request's version),
//! records as `<offset> <Schema> v<version> <Kafka JSON>`, and a summary of the image.

use kraftd::controller::quorum::ControllerReply;
use kraftd::controller::MetadataImage;
use kraftd::protocol::records::{MetadataRecordAndVersion, Offset};

/// The API's name and its response as Kafka's JSON at `version`.
pub fn reply(reply: &ControllerReply, version: i16) -> String {
    format!("{} {}", reply.api_name(), reply.to_kafka_json(version))
}

/// One written record: its offset, schema name, version and Kafka's JSON of it.
pub fn record(offset: Offset, value: &[u8]) -> String {
    match MetadataRecordAndVersion::decode(value) {
        Ok(r) => format!(
            "  {offset} {} v{} {}",
            r.record.schema_name(),
            r.version,
            r.to_kafka_json()
        ),
        Err(e) => format!("  {offset} undecodable record: {e:?}"),
    }
}

fn list(ids: &[i32]) -> String {
    let ids: Vec<String> = ids.iter().map(i32::to_string).collect();
    format!("[{}]", ids.join(","))
}

/// The parts of an image the transcripts look at, one line each: features, brokers,
/// partitions, configs, producer ids, ACLs and tokens.
pub fn image(image: &MetadataImage) -> Vec<String> {
    let mut out = Vec::new();
    let features: Vec<String> = image
        .features
        .levels
        .iter()
        .map(|(name, level)| format!("{name}={level}"))
        .collect();
    if !features.is_empty() {
        out.push(format!("features {}", features.join(" ")));
    }
    for (id, c) in &image.cluster.controllers {
        out.push(format!("controller {id} incarnation {}", c.incarnation_id));
    }
    for (id, b) in &image.cluster.brokers {
        let mut line = format!(
            "broker {id} epoch {} {}",
            b.epoch,
            if b.fenced { "fenced" } else { "unfenced" }
        );
        if b.in_controlled_shutdown {
            line += " in-controlled-shutdown";
        }
        out.push(line);
    }
    for (name, id) in &image.topics.by_name {
        let topic = &image.topics.by_id[id];
        out.push(format!("topic {name} id {id}"));
        for (p, r) in &topic.partitions {
            let mut line = format!(
                "  {name}-{p} leader {} leader-epoch {} partition-epoch {} replicas {} isr {}",
                r.leader,
                r.leader_epoch,
                r.partition_epoch,
                list(&r.replicas),
                list(&r.isr)
            );
            for (what, ids) in [
                ("elr", &r.elr),
                ("last-known-elr", &r.last_known_elr),
                ("adding", &r.adding_replicas),
                ("removing", &r.removing_replicas),
            ] {
                if !ids.is_empty() {
                    line += &format!(" {what} {}", list(ids));
                }
            }
            if r.leader_recovery_state != 0 {
                line += " recovering";
            }
            out.push(line);
        }
    }
    for ((ty, name), configs) in &image.configs.resources {
        let configs: Vec<String> = configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if name.is_empty() { "(default)" } else { name };
        out.push(format!(
            "config {} {name} {}",
            resource_type(*ty),
            configs.join(" ")
        ));
    }
    if image.producer_ids.next_producer_id >= 0 {
        out.push(format!(
            "producer-ids next block at {}",
            image.producer_ids.next_producer_id
        ));
    }
    for a in image.acls.by_id.values() {
        out.push(format!(
            "acl {} {} {} on {} {}:{} from {}",
            a.principal,
            match a.permission_type {
                2 => "deny",
                3 => "allow",
                _ => "?",
            },
            acl_operation(a.operation),
            match a.pattern_type {
                3 => "literal",
                4 => "prefixed",
                _ => "?",
            },
            acl_resource_type(a.resource_type),
            a.resource_name,
            a.host,
        ));
    }
    for (id, t) in &image.delegation_tokens.by_id {
        out.push(format!(
            "token {id} owner {} issued {} expires {} max {}",
            t.owner, t.issue_timestamp, t.expiry_timestamp, t.max_timestamp
        ));
    }
    out
}

fn resource_type(ty: i8) -> String {
    match ty {
        2 => "topic".into(),
        4 => "broker".into(),
        16 => "client-metrics".into(),
        32 => "group".into(),
        other => other.to_string(),
    }
}

fn acl_resource_type(ty: i8) -> &'static str {
    match ty {
        2 => "topic",
        3 => "group",
        4 => "cluster",
        5 => "transactional-id",
        6 => "delegation-token",
        7 => "user",
        _ => "?",
    }
}

fn acl_operation(op: i8) -> &'static str {
    const NAMES: [&str; 16] = [
        "unknown",
        "any",
        "all",
        "read",
        "write",
        "create",
        "delete",
        "alter",
        "describe",
        "cluster-action",
        "describe-configs",
        "alter-configs",
        "idempotent-write",
        "create-tokens",
        "describe-tokens",
        "two-phase-commit",
    ];
    usize::try_from(op)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("?")
}
