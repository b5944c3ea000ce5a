//! The runbook's checks, as a pure function of what the quorum answered: no I/O, no clock (the
//! samples carry their times), so each diagnosis is a transcript in `tests.rs`.

use std::collections::{BTreeMap, BTreeSet};

use super::brokers::brokers_check;
use super::clock::{clock_check, leader_readings};
use super::disk::disks_check;
use super::gather::{Endpoint, LeaderView, Replica, Sample, VoterSettings};
use super::readings::MetricsReadings;
use crate::server::peer::FailKind;

/// How bad a check found things; a report's verdict is its worst check's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Healthy,
    Degraded,
    Down,
}

impl Verdict {
    /// The exit status scripts read: 0 healthy, 1 degraded, 2 down.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Healthy => 0,
            Verdict::Degraded => 1,
            Verdict::Down => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Healthy => "healthy",
            Verdict::Degraded => "degraded",
            Verdict::Down => "down",
        }
    }
}

/// One check's outcome: what it found and, when not healthy, what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: &'static str,
    pub verdict: Verdict,
    pub summary: String,
    /// One line per finding (a voter, a setting).
    pub findings: Vec<String>,
    pub fix: Option<String>,
}

/// Thresholds, from Kafka's defaults and the runbook's alerts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// `controller.quorum.fetch.timeout.ms`: a voter that has not fetched for longer is lost
    /// to the leader.
    pub fetch_timeout_ms: i64,
    /// Replication lag above this is degraded (the runbook's alert: 500 ms).
    pub lag_ms: i64,
    /// This many leader changes within the window is election churn.
    pub churn_epochs: i32,
    /// A controller's clock further than this from the others' is off.
    pub clock_offset_ms: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fetch_timeout_ms: 2000,
            lag_ms: 500,
            churn_epochs: 2,
            clock_offset_ms: 250,
        }
    }
}

/// Every check over `samples` (in time order, at least one), the voters' own settings, and the
/// controllers' clocks read from their metrics endpoints.
pub fn diagnose(
    samples: &[Sample],
    settings: &[VoterSettings],
    metrics: &MetricsReadings,
    limits: Limits,
) -> Vec<Check> {
    let last = samples.last().expect("at least one sample");
    let leader = last.leader();
    let mut clocks = leader_readings(samples);
    clocks.extend_from_slice(&metrics.clocks);
    let mut checks = vec![
        leader_check(last, leader),
        voters_check(samples, leader, limits),
        replication_check(samples, leader, limits),
        elections_check(samples, limits),
        settings_check(settings, leader),
        clock_check(&clocks, &metrics.unread, limits.clock_offset_ms),
    ];
    checks.extend(disks_check(&metrics.disks));
    checks.extend(brokers_check(&metrics.brokers));
    checks
}

/// Why an endpoint gave no answer, in an operator's words.
pub fn unreachable_cause(kind: FailKind, reason: &str) -> String {
    let cause = match kind {
        FailKind::Refused => "stopped: nothing listens there (connection refused)",
        FailKind::TimedOut => {
            "stalled: it accepts connections but answers nothing in time (a paused or overloaded \
             process, a blocked disk, or packets dropped on the way)"
        }
        FailKind::Unresolved => "its host name does not resolve (DNS)",
        FailKind::NoPath => {
            "cut off: connecting to it goes unanswered or finds no route (a network partition, a \
             firewall, or its host is down)"
        }
        FailKind::Tls => "the TLS handshake fails",
        FailKind::Sasl => "SASL authentication fails",
        FailKind::Disconnected | FailKind::UnsupportedVersion => "the connection fails",
    };
    format!("{cause}: {reason}")
}

fn endpoint_line(address: &str, e: &Endpoint) -> String {
    match e {
        Endpoint::Leads(v) => format!("{address}: leads in epoch {}", v.epoch),
        Endpoint::Follows => format!("{address}: answers, does not lead"),
        Endpoint::Refused { error } => format!("{address}: answers with {error}"),
        Endpoint::Unreachable { kind, reason } => {
            format!("{address}: {}", unreachable_cause(*kind, reason))
        }
    }
}

fn leader_check(sample: &Sample, leader: Option<&LeaderView>) -> Check {
    let findings: Vec<String> = sample
        .endpoints
        .iter()
        .map(|(a, e)| endpoint_line(a, e))
        .collect();
    match leader {
        Some(v) => Check {
            name: "leader",
            verdict: Verdict::Healthy,
            summary: format!(
                "node {} leads in epoch {}, high watermark {}",
                v.leader_id, v.epoch, v.high_watermark
            ),
            findings: Vec::new(),
            fix: None,
        },
        None => Check {
            name: "leader",
            verdict: Verdict::Down,
            summary: "no controller answers as the leader: every metadata operation times out"
                .into(),
            findings,
            fix: Some(
                "bring back the unreachable voters until a majority runs (the voters check names \
                 them); if a majority runs and still no leader is elected, look for clock drift \
                 and for a network partition between the voters"
                    .into(),
            ),
        },
    }
}

/// What became of one voter in the leader's eyes over the window.
enum VoterState {
    Leader,
    Fetching,
    /// Not fetched for this long (ms, leader's clock; `None`: never).
    Lost(Option<i64>),
}

/// The freshest fetch time the leader reports: its own clock's reading, near enough.
fn leader_now(view: &LeaderView) -> i64 {
    view.voters
        .iter()
        .chain(&view.observers)
        .map(|r| r.last_fetch_ms)
        .max()
        .unwrap_or(-1)
}

fn voter_state(id: i32, samples: &[Sample], view: &LeaderView, limits: Limits) -> VoterState {
    if id == view.leader_id {
        return VoterState::Leader;
    }
    let Some(r) = view.voters.iter().find(|r| r.id == id) else {
        return VoterState::Lost(None);
    };
    if r.last_fetch_ms < 0 {
        return VoterState::Lost(None);
    }
    let age = leader_now(view) - r.last_fetch_ms;
    // Across the window: a voter whose last fetch stayed put while the leader's clock moved on
    // is not fetching, even if the window is shorter than the fetch timeout.
    let first = samples
        .first()
        .and_then(Sample::leader)
        .filter(|v| v.leader_id == view.leader_id && v.epoch == view.epoch)
        .and_then(|v| v.voters.iter().find(|x| x.id == id));
    let stuck = first.is_some_and(|f| {
        f.last_fetch_ms == r.last_fetch_ms && age >= limits.fetch_timeout_ms.min(1000)
    });
    if age > limits.fetch_timeout_ms || stuck {
        VoterState::Lost(Some(age))
    } else {
        VoterState::Fetching
    }
}

fn voters_check(samples: &[Sample], leader: Option<&LeaderView>, limits: Limits) -> Check {
    let last = samples.last().expect("at least one sample");
    let Some(view) = leader else {
        // Without a leader: which voters answer at all.
        let total = last.endpoints.len();
        let answering = last
            .endpoints
            .values()
            .filter(|e| !matches!(e, Endpoint::Unreachable { .. }))
            .count();
        let majority = total / 2 + 1;
        let findings = last
            .endpoints
            .iter()
            .filter(|(_, e)| matches!(e, Endpoint::Unreachable { .. }))
            .map(|(a, e)| endpoint_line(a, e))
            .collect();
        let (verdict, summary) = if answering < majority {
            (
                Verdict::Down,
                format!(
                    "majority lost: {answering} of the {total} controllers asked answer, {majority} are needed"
                ),
            )
        } else {
            (
                Verdict::Down,
                format!("{answering} of the {total} controllers asked answer, yet none leads"),
            )
        };
        return Check {
            name: "voters",
            verdict,
            summary,
            findings,
            fix: Some(
                "start or reconnect the unreachable voters; a voter change (add-controller, \
                 remove-controller) cannot finish until a majority is back"
                    .into(),
            ),
        };
    };
    let total = view.voters.len();
    let majority = total / 2 + 1;
    let mut lost = Vec::new();
    let mut fetching = 0;
    for r in &view.voters {
        match voter_state(r.id, samples, view, limits) {
            VoterState::Leader | VoterState::Fetching => fetching += 1,
            VoterState::Lost(age) => {
                let address = view.endpoints.get(&r.id);
                let seen = address.and_then(|a| last.endpoints.get(a));
                let since = match age {
                    Some(ms) => format!("has not fetched from the leader for {ms} ms"),
                    None => "has never fetched from the leader".to_string(),
                };
                let why = match seen {
                    Some(Endpoint::Unreachable { kind, reason }) => {
                        unreachable_cause(*kind, reason)
                    }
                    Some(_) => "it answers the doctor, so it runs but cannot reach the leader or \
                                is stuck: look for a network partition between it and the leader"
                        .to_string(),
                    None => "the doctor was not told its endpoint".to_string(),
                };
                let at = address.map_or(String::new(), |a| format!(" at {a}"));
                lost.push(format!("voter {}{at} {since}; {why}", r.id));
            }
        }
    }
    let verdict = if fetching < majority {
        Verdict::Down
    } else if lost.is_empty() {
        Verdict::Healthy
    } else {
        Verdict::Degraded
    };
    let summary = match verdict {
        Verdict::Healthy => format!("all {total} voters fetch from the leader"),
        Verdict::Degraded => format!(
            "{fetching} of {total} voters fetch from the leader; the majority of {majority} holds, \
             one more loss stops the quorum"
        ),
        Verdict::Down => format!(
            "majority lost: {fetching} of {total} voters fetch from the leader, {majority} are needed"
        ),
    };
    Check {
        name: "voters",
        verdict,
        summary,
        findings: lost,
        fix: (verdict != Verdict::Healthy).then(|| {
            "start a stopped voter; resume a paused one (SIGCONT) or find what blocks it (its \
             disk, its GC); heal the network between a cut-off voter and the leader"
                .into()
        }),
    }
}

fn replication_check(samples: &[Sample], leader: Option<&LeaderView>, limits: Limits) -> Check {
    let Some(view) = leader else {
        return Check {
            name: "replication",
            verdict: Verdict::Down,
            summary: "no leader to replicate from".into(),
            findings: Vec::new(),
            fix: None,
        };
    };
    let now = leader_now(view);
    let lagging: Vec<(&Replica, i64)> = view
        .voters
        .iter()
        .filter(|r| r.id != view.leader_id)
        .filter(|r| {
            matches!(
                voter_state(r.id, samples, view, limits),
                VoterState::Fetching
            )
        })
        .filter(|r| r.last_caught_up_ms >= 0)
        .map(|r| (r, now - r.last_caught_up_ms))
        .filter(|(_, lag)| *lag > limits.lag_ms)
        .collect();
    let findings: Vec<String> = lagging
        .iter()
        .map(|(r, lag)| {
            format!(
                "voter {} last caught up {lag} ms ago, {} offsets behind the high watermark {}",
                r.id,
                (view.high_watermark - r.log_end_offset).max(0),
                view.high_watermark
            )
        })
        .collect();
    Check {
        name: "replication",
        verdict: if findings.is_empty() {
            Verdict::Healthy
        } else {
            Verdict::Degraded
        },
        summary: if findings.is_empty() {
            format!("every fetching voter caught up within {} ms", limits.lag_ms)
        } else {
            format!(
                "{} voter(s) lag more than {} ms",
                findings.len(),
                limits.lag_ms
            )
        },
        fix: (!findings.is_empty()).then(|| {
            "a lagging voter's disk is the usual cause: check its fsync latency and I/O load, \
             then its CPU and network"
                .into()
        }),
        findings,
    }
}

fn elections_check(samples: &[Sample], limits: Limits) -> Check {
    let epochs: Vec<(u64, i32)> = samples
        .iter()
        .filter_map(|s| s.leader().map(|v| (s.at_ms, v.epoch)))
        .collect();
    let (Some(first), Some(last)) = (epochs.first(), epochs.last()) else {
        return Check {
            name: "elections",
            verdict: Verdict::Down,
            summary: "no leader seen during the window".into(),
            findings: Vec::new(),
            fix: None,
        };
    };
    let changes = last.1 - first.1;
    let window_s = (last.0 - first.0) as f64 / 1000.0;
    let churn = changes >= limits.churn_epochs;
    Check {
        name: "elections",
        verdict: if churn {
            Verdict::Degraded
        } else {
            Verdict::Healthy
        },
        summary: format!(
            "epoch {} to {} in {window_s:.1} s: {changes} leader change(s)",
            first.1, last.1
        ),
        findings: Vec::new(),
        fix: churn.then(|| {
            "elections keep happening: look for a voter whose clock runs ahead or drifts, a \
             flapping network between voters, or a leader too slow to send fetch answers within \
             controller.quorum.fetch.timeout.ms"
                .into()
        }),
    }
}

/// A `controller.quorum.voters` value as a set of `id@host:port` entries.
fn voter_entries(value: &str) -> BTreeSet<String> {
    value
        .split(',')
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

fn settings_check(settings: &[VoterSettings], leader: Option<&LeaderView>) -> Check {
    const KEY: &str = "controller.quorum.voters";
    let mut findings = Vec::new();
    let mut values: BTreeMap<BTreeSet<String>, Vec<i32>> = BTreeMap::new();
    for s in settings {
        match &s.settings {
            Err(why) => findings.push(format!(
                "voter {} at {}: its settings could not be read: {why}",
                s.voter, s.address
            )),
            Ok(map) => {
                if let Some(v) = map.get(KEY) {
                    values.entry(voter_entries(v)).or_default().push(s.voter);
                }
            }
        }
    }
    let mut mismatch = values.len() > 1;
    if values.len() > 1 {
        for (entries, voters) in &values {
            let list: Vec<&str> = entries.iter().map(String::as_str).collect();
            findings.push(format!("voters {voters:?} have {KEY}={}", list.join(",")));
        }
    }
    if let Some(view) = leader {
        let committed: BTreeSet<i32> = view.voters.iter().map(|r| r.id).collect();
        for (entries, voters) in &values {
            let ids: BTreeSet<i32> = entries
                .iter()
                .filter_map(|e| e.split_once('@')?.0.parse().ok())
                .collect();
            if ids != committed {
                mismatch = true;
                findings.push(format!(
                    "voters {voters:?} list voters {ids:?} in {KEY}, but the leader's voter set is {committed:?}"
                ));
            }
        }
    }
    let unread = settings.iter().any(|s| s.settings.is_err());
    let verdict = if mismatch {
        Verdict::Degraded
    } else {
        Verdict::Healthy
    };
    Check {
        name: "settings",
        verdict,
        summary: match (mismatch, values.is_empty()) {
            (true, _) => format!("{KEY} differs between voters or from the voter set"),
            (false, true) if unread => "the voters' settings could not be read".to_string(),
            (false, true) => format!("no voter sets {KEY} (a dynamic quorum)"),
            (false, false) => format!("every voter has the same {KEY}, matching the voter set"),
        },
        findings,
        fix: mismatch.then(|| {
            format!(
                "make {KEY} the same on every node (controllers and brokers) and equal to the \
                 voter set; on a dynamic quorum, use controller.quorum.bootstrap.servers and \
                 kafka-metadata-quorum add-controller / remove-controller instead"
            )
        }),
    }
}
