//! Clock offset between controllers, from what each node reports of its own wall clock and the
//! round trip of asking it:
//! - the leader's DescribeQuorum answer: its own row's `lastFetchTimestamp` is its clock when it
//!   answered (Java and kraftd both fill it so);
//! - a node's Prometheus endpoint (kraftd's `/metrics`, the JMX exporter on a Java controller):
//!   `LastAppliedRecordTimestamp + LastAppliedRecordLagMs` is its clock when it was scraped,
//!   since Kafka computes the lag as its `time.milliseconds()` minus the timestamp.
//!
//! A reading's offset from the doctor's clock is the node's time minus the middle of the round
//! trip, give or take half the round trip. The nodes are compared with each other, not with the
//! doctor's machine: with three or more nodes read, with their median.

use std::collections::BTreeMap;

use super::diagnose::{Check, Verdict};
use super::gather::Sample;
use super::readings::sample_value;

/// One look at a node's wall clock, all times in ms since the Unix epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockReading {
    pub node: i32,
    /// Where the node's time came from, for the report.
    pub source: String,
    /// The doctor's clock when it asked, and when the answer came.
    pub sent_ms: i64,
    pub received_ms: i64,
    /// The node's clock, as it reported it.
    pub node_ms: i64,
}

impl ClockReading {
    /// The node's clock minus the doctor's, at the middle of the round trip.
    pub fn offset_ms(&self) -> i64 {
        self.node_ms - (self.sent_ms + self.received_ms) / 2
    }

    /// How far off [`Self::offset_ms`] can be: half the round trip, plus the ms of rounding.
    pub fn uncertainty_ms(&self) -> i64 {
        (self.received_ms - self.sent_ms).max(0) / 2 + 1
    }
}

/// The leader's own clock in each sample: its own row in its DescribeQuorum answer.
pub fn leader_readings(samples: &[Sample]) -> Vec<ClockReading> {
    samples
        .iter()
        .filter_map(Sample::leader)
        .filter_map(|view| {
            let own = view.voters.iter().find(|r| r.id == view.leader_id)?;
            let (sent_ms, received_ms) = view.asked_ms;
            (own.last_fetch_ms >= 0 && sent_ms > 0).then(|| ClockReading {
                node: view.leader_id,
                source: "its DescribeQuorum answer as the leader".into(),
                sent_ms,
                received_ms,
                node_ms: own.last_fetch_ms,
            })
        })
        .collect()
}

/// A node's offset, from its readings.
#[derive(Debug, Clone, PartialEq)]
struct NodeOffset {
    node: i32,
    /// From its reading with the shortest round trip, the tightest bound (a scrape of a busy
    /// JVM can take seconds); among equally short ones, the median, since one reading may
    /// straddle a record applied between the exporter's reads of the timestamp and the lag.
    offset_ms: i64,
    uncertainty_ms: i64,
    source: String,
}

fn node_offsets(readings: &[ClockReading]) -> Vec<NodeOffset> {
    let mut by_node: BTreeMap<i32, Vec<&ClockReading>> = BTreeMap::new();
    for r in readings {
        by_node.entry(r.node).or_default().push(r);
    }
    by_node
        .into_iter()
        .map(|(node, rs)| {
            let tightest = rs.iter().map(|r| r.uncertainty_ms()).min().unwrap_or(0);
            // Within 10 ms of the tightest bound counts as equally short.
            let mut best: Vec<&ClockReading> = rs
                .into_iter()
                .filter(|r| r.uncertainty_ms() <= tightest + 10)
                .collect();
            best.sort_by_key(|r| r.offset_ms());
            let middle = best[best.len() / 2];
            NodeOffset {
                node,
                offset_ms: middle.offset_ms(),
                uncertainty_ms: middle.uncertainty_ms(),
                source: middle.source.clone(),
            }
        })
        .collect()
}

/// The clock check: a node whose clock is more than `limit_ms` off the others' even at the edge
/// of its reading's error bound is named, with its offset. With fewer than three nodes read to
/// within the limit, they are compared with the doctor's clock.
pub fn clock_check(readings: &[ClockReading], unread: &[(i32, String)], limit_ms: i64) -> Check {
    let nodes = node_offsets(readings);
    let unread_lines = unread
        .iter()
        .filter(|(node, _)| !nodes.iter().any(|n| n.node == *node))
        .map(|(node, why)| format!("controller {node}: its clock not read: {why}"));
    if nodes.is_empty() {
        return Check {
            name: "clocks",
            verdict: Verdict::Healthy,
            summary: "not measured: no controller's clock could be read (no leader answered, \
                      and no --metrics endpoint was given or could be read)"
                .into(),
            findings: unread_lines.collect(),
            fix: None,
        };
    }
    // The others' clock is the median of those read to within the limit: a slow scrape's
    // offset is too loose to stand for anyone's.
    let precise: Vec<&NodeOffset> = nodes
        .iter()
        .filter(|n| n.uncertainty_ms <= limit_ms)
        .collect();
    let (reference, against) = if precise.len() >= 3 {
        let mut offsets: Vec<i64> = precise.iter().map(|n| n.offset_ms).collect();
        offsets.sort_unstable();
        (
            offsets[offsets.len() / 2],
            "the other controllers' (their median)",
        )
    } else {
        (0, "this machine's")
    };
    let off: Vec<&NodeOffset> = nodes
        .iter()
        .filter(|n| (n.offset_ms - reference).abs() - n.uncertainty_ms > limit_ms)
        .collect();
    let findings = nodes
        .iter()
        .map(|n| {
            format!(
                "controller {}: {} (±{} ms, from {})",
                n.node,
                describe_offset(n.offset_ms - reference),
                n.uncertainty_ms,
                n.source
            )
        })
        .chain(unread_lines)
        .collect();
    if off.is_empty() {
        return Check {
            name: "clocks",
            verdict: Verdict::Healthy,
            summary: format!(
                "{} controller clock(s) read, all within {limit_ms} ms of {against} clock",
                nodes.len()
            ),
            findings,
            fix: None,
        };
    }
    let named: Vec<String> = off
        .iter()
        .map(|n| {
            format!(
                "controller {} is {}",
                n.node,
                describe_offset(n.offset_ms - reference)
            )
        })
        .collect();
    Check {
        name: "clocks",
        verdict: Verdict::Degraded,
        summary: format!(
            "{} against {against} clock (more than {limit_ms} ms)",
            named.join(", ")
        ),
        findings,
        fix: Some(
            "fix time synchronisation on the named controller(s) (chronyc tracking, or timedatectl \
             timesync-status): Kafka stamps records, delegation-token expiry and lastCaughtUp \
             times with the wall clock, and a leader's clock far off the others' misleads every \
             lag figure"
                .into(),
        ),
    }
}

fn describe_offset(ms: i64) -> String {
    match ms {
        0 => "0 ms off".into(),
        ms if ms > 0 => format!("{ms} ms ahead"),
        ms => format!("{} ms behind", -ms),
    }
}

/// A Prometheus endpoint to read a node's clock from, as `--metrics` gives it: `ID=URL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsEndpoint {
    pub node: i32,
    /// `host:port`
    pub authority: String,
    /// The path, `/metrics` when the URL has none.
    pub path: String,
}

impl MetricsEndpoint {
    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority, self.path)
    }
}

/// Why a `--metrics` argument was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetricsArgError {
    #[error("--metrics {0:?}: expected NODE_ID=http://HOST:PORT[/PATH], e.g. 1=http://10.0.0.1:9404/metrics")]
    Shape(String),
    #[error("--metrics {0:?}: only http:// endpoints are read (put a TLS-terminating proxy's plain side, or the exporter's own http port)")]
    Scheme(String),
}

/// Parses `--metrics`: `ID=URL`, several separated by commas.
pub fn parse_metrics_arg(arg: &str) -> Result<Vec<MetricsEndpoint>, MetricsArgError> {
    arg.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|one| {
            let shape = || MetricsArgError::Shape(one.to_string());
            let (id, url) = one.split_once('=').ok_or_else(shape)?;
            let node: i32 = id.trim().parse().map_err(|_| shape())?;
            let rest = match url.trim().split_once("://") {
                Some(("http", rest)) => rest,
                Some(_) => return Err(MetricsArgError::Scheme(one.to_string())),
                None => url.trim(),
            };
            let (authority, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, "/metrics"),
            };
            if authority.is_empty() || !authority.contains(':') {
                return Err(shape());
            }
            Ok(MetricsEndpoint {
                node,
                authority: authority.to_string(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// The node's clock from a scrape in Prometheus's text format: `LastAppliedRecordTimestamp +
/// LastAppliedRecordLagMs` under the JMX exporter's names (kraftd exports the same).
pub fn node_time_from_scrape(text: &str) -> Option<i64> {
    let timestamp = sample_value(
        text,
        "kafka_controller_kafkacontroller_lastappliedrecordtimestamp",
    )?;
    let lag = sample_value(
        text,
        "kafka_controller_kafkacontroller_lastappliedrecordlagms",
    )?;
    let now = timestamp + lag;
    now.is_finite().then_some(now.round() as i64)
}
