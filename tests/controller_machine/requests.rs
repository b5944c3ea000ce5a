//! What the brokers and operators of the simulated cluster ask a kraftd active controller: one
//! request directive (tests/controller_requests) at a time, chosen from the published image as
//! a broker or an admin tool would choose it. The controller decides; many requests are
//! refused (a stale epoch, a fenced replica, a topic that exists), which is part of the test:
//! only what it decides to write reaches the log.

use kraftd::controller::MetadataImage;

use super::draws::Draws;

/// Broker ids the simulated brokers have.
const BROKERS: usize = 5;

/// The directive a client sends in draw `attempt` of proposal `n` at `now` (ms), when the
/// clients hold `tokens` delegation tokens.
pub fn directive(image: &MetadataImage, tokens: usize, n: u64, attempt: u64, now: u64) -> String {
    let mut d = Draws::new(n.wrapping_mul(0x1_0000) ^ attempt ^ now.rotate_left(40));
    let brokers: Vec<(i32, bool)> = image
        .cluster
        .brokers
        .values()
        .map(|b| (b.id, b.fenced))
        .collect();
    let partitions = partitions(image);
    let roll = d.below(100);
    let some = match roll {
        0..=9 => Some(register(&mut d, n, attempt)),
        10..=31 => pick_broker(&mut d, &brokers).map(|(id, _)| format!("heartbeat {id}")),
        32..=34 => pick_broker(&mut d, &brokers).map(|(id, _)| {
            let what = if d.one_in(2) { "shutdown" } else { "fence" };
            format!("heartbeat {id} {what}")
        }),
        35..=36 => pick_broker(&mut d, &brokers).map(|(id, _)| format!("unregister-broker {id}")),
        37..=46 => Some(create_topic(&mut d, n, attempt, brokers.len())),
        47..=49 => d
            .pick(&topic_names(image))
            .map(|t| format!("delete-topic {t}")),
        50..=52 => d.pick(&topic_names(image)).map(|t| {
            let count = image.topics.by_id[&image.topics.by_name[t.as_str()]]
                .partitions
                .len();
            format!("create-partitions {t} count={}", count + 1)
        }),
        53..=64 => d
            .pick(&partitions)
            .filter(|p| brokers.iter().any(|(id, _)| *id == p.leader))
            .map(|p| alter_isr(&mut d, p, &brokers)),
        65..=68 => d.pick(&partitions).map(|p| reassign(&mut d, p, &brokers)),
        69..=73 => d.pick(&partitions).map(|p| {
            let kind = if d.one_in(3) { "unclean" } else { "preferred" };
            format!("elect-leaders {kind} {}", p.name)
        }),
        74..=80 => Some(config(&mut d, image)),
        81..=83 => Some(quota(&mut d)),
        84..=86 => Some(acl(&mut d)),
        87..=90 => {
            pick_broker(&mut d, &brokers).map(|(id, _)| format!("allocate-producer-ids {id}"))
        }
        91..=93 => Some(feature(&mut d)),
        94..=96 => Some(format!(
            "create-token forwarded max-lifetime-ms={}",
            1000 + d.below(5000)
        )),
        _ => (tokens > 0).then(|| {
            let verb = if d.one_in(2) { "renew" } else { "expire" };
            let period = d.below(4000) as i64 - 1000;
            format!(
                "{verb}-token {} forwarded period-ms={period}",
                1 + d.below(tokens)
            )
        }),
    };
    some.unwrap_or_else(|| register(&mut d, n, attempt))
}

/// A broker (re)registering with a new incarnation.
fn register(d: &mut Draws, n: u64, attempt: u64) -> String {
    let id = 1 + d.below(BROKERS);
    let rack = if id % 2 == 0 {
        format!(" rack=r{}", id % 3)
    } else {
        String::new()
    };
    format!(
        "register-broker {id} incarnation={}{rack}",
        (n * 8 + attempt) % 60_000
    )
}

fn pick_broker(d: &mut Draws, brokers: &[(i32, bool)]) -> Option<(i32, bool)> {
    d.pick(brokers).copied()
}

/// One partition of the published image.
struct Partition {
    /// `topic-p`.
    name: String,
    replicas: Vec<i32>,
    isr: Vec<i32>,
    leader: i32,
}

fn partitions(image: &MetadataImage) -> Vec<Partition> {
    image
        .topics
        .by_id
        .values()
        .flat_map(|t| {
            t.partitions.iter().map(|(p, r)| Partition {
                name: format!("{}-{p}", t.name),
                replicas: r.replicas.clone(),
                isr: r.isr.clone(),
                leader: r.leader,
            })
        })
        .collect()
}

fn topic_names(image: &MetadataImage) -> Vec<String> {
    image.topics.by_name.keys().map(|n| n.to_string()).collect()
}

fn create_topic(d: &mut Draws, n: u64, attempt: u64, brokers: usize) -> String {
    let partitions = 1 + d.below(3);
    let rf = 1 + d.below(3.min(brokers.max(1)));
    let mut line = format!("create-topic t{n}.{attempt} partitions={partitions} rf={rf}");
    if d.one_in(5) {
        line += " configs=min.insync.replicas:2";
    }
    line
}

/// The partition leader shrinks its ISR by one follower, or expands it to every replica.
fn alter_isr(d: &mut Draws, p: &Partition, brokers: &[(i32, bool)]) -> String {
    let list = |ids: &[i32]| {
        ids.iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let followers: Vec<i32> = p.isr.iter().copied().filter(|b| *b != p.leader).collect();
    let isr = match d.pick(&followers) {
        Some(out) if d.one_in(2) => p.isr.iter().copied().filter(|b| b != out).collect(),
        _ => {
            // Every replica the leader sees caught up: the unfenced ones.
            let live = |b: &i32| brokers.iter().any(|(id, fenced)| id == b && !fenced);
            let joining: Vec<i32> = p
                .replicas
                .iter()
                .copied()
                .filter(|b| live(b) && !p.isr.contains(b))
                .collect();
            [p.isr.clone(), joining].concat()
        }
    };
    format!("alter-partition {} {} isr={}", p.leader, p.name, list(&isr))
}

fn reassign(d: &mut Draws, p: &Partition, brokers: &[(i32, bool)]) -> String {
    if d.one_in(4) {
        return format!("reassign {} cancel", p.name);
    }
    let ids: Vec<i32> = brokers.iter().map(|(id, _)| *id).collect();
    let count = p.replicas.len().clamp(1, ids.len().max(1));
    let from = d.below(ids.len().max(1));
    let replicas: Vec<String> = (0..count.min(ids.len()))
        .map(|i| ids[(from + i) % ids.len()].to_string())
        .collect();
    match replicas.is_empty() {
        true => format!("reassign {} cancel", p.name),
        false => format!("reassign {} replicas={}", p.name, replicas.join(",")),
    }
}

fn config(d: &mut Draws, image: &MetadataImage) -> String {
    let topics = topic_names(image);
    let resource = match (d.below(3), d.pick(&topics)) {
        (0, Some(t)) => format!("topic={t}"),
        (1, _) => format!("broker={}", 1 + d.below(BROKERS)),
        _ => "broker=default".to_string(),
    };
    let key = if resource.starts_with("topic") {
        *d.pick(&["retention.ms", "segment.bytes", "min.insync.replicas"])
            .expect("non-empty")
    } else {
        *d.pick(&[
            "log.retention.ms",
            "min.insync.replicas",
            "log.cleaner.threads",
        ])
        .expect("non-empty")
    };
    let value = match key {
        "min.insync.replicas" => 1 + d.below(3) as u64,
        "segment.bytes" => 1_048_576 * (1 + d.below(4) as u64),
        "log.cleaner.threads" => 1 + d.below(2) as u64,
        _ => 60_000 * (1 + d.below(100) as u64),
    };
    match d.one_in(4) {
        true => format!("alter-config {resource} delete:{key}"),
        false => format!("alter-config {resource} set:{key}={value}"),
    }
}

fn quota(d: &mut Draws) -> String {
    let user = format!("u{}", d.below(4));
    let key = *d
        .pick(&[
            "producer_byte_rate",
            "consumer_byte_rate",
            "request_percentage",
        ])
        .expect("non-empty");
    match d.one_in(3) {
        true => format!("alter-quota user={user} delete:{key}"),
        false => format!(
            "alter-quota user={user} set:{key}={}",
            1024 * (1 + d.below(100))
        ),
    }
}

fn acl(d: &mut Draws) -> String {
    let principal = format!("User:u{}", d.below(4));
    match d.one_in(3) {
        true => format!("delete-acls principal={principal}"),
        false => {
            let op = *d
                .pick(&["read", "write", "describe", "alter"])
                .expect("non-empty");
            let permission = if d.one_in(4) { "deny" } else { "allow" };
            format!(
                "create-acl {principal} {permission} {op} topic=t{}",
                d.below(10)
            )
        }
    }
}

fn feature(d: &mut Draws) -> String {
    let (name, level) = match d.below(3) {
        0 => ("group.version", d.below(2)),
        1 => ("eligible.leader.replicas.version", d.below(2)),
        _ => ("metadata.version", 33),
    };
    // Level 0 is a downgrade from the bootstrap's 1.
    let kind = if level == 0 {
        " type=safe-downgrade"
    } else {
        ""
    };
    format!("update-features {name}={level}{kind}")
}
