//! The doctor's diagnoses as transcripts: each test states what the quorum answered and reads
//! back the verdicts and the words an operator sees.

use std::collections::BTreeMap;

use super::diagnose::{diagnose, Check, Limits, Verdict};
use super::gather::{Endpoint, LeaderView, Replica, Sample, VoterSettings};
use super::readings::MetricsReadings;
use super::report;
use crate::server::peer::FailKind;

const A1: &str = "10.0.0.1:9093";
const A2: &str = "10.0.0.2:9093";
const A3: &str = "10.0.0.3:9093";

/// Voter `id` as the leader sees it at leader time `now`: fetched `fetch_age` ms ago, caught
/// up `lag` ms ago, at `leo`.
fn replica(id: i32, now: i64, fetch_age: i64, lag: i64, leo: i64) -> Replica {
    Replica {
        id,
        log_end_offset: leo,
        last_fetch_ms: now - fetch_age,
        last_caught_up_ms: now - lag,
    }
}

/// Leader 1 in `epoch` at leader time `now`, the voters 1-3 as `voters` says.
/// Asked by a doctor whose clock agrees with the leader's (2 ms each way).
fn leads(epoch: i32, hw: i64, voters: Vec<Replica>) -> Endpoint {
    let own = voters
        .iter()
        .find(|r| r.id == 1)
        .map_or(0, |r| r.last_fetch_ms);
    Endpoint::Leads(LeaderView {
        asked_ms: (own - 2, own + 2),
        leader_id: 1,
        epoch,
        high_watermark: hw,
        voters,
        observers: Vec::new(),
        endpoints: BTreeMap::from([(1, A1.into()), (2, A2.into()), (3, A3.into())]),
    })
}

fn sample(at_ms: u64, endpoints: [(&str, Endpoint); 3]) -> Sample {
    Sample {
        at_ms,
        endpoints: endpoints
            .into_iter()
            .map(|(a, e)| (a.to_string(), e))
            .collect(),
    }
}

fn refused() -> Endpoint {
    Endpoint::Unreachable {
        kind: FailKind::Refused,
        reason: "connect to 10.0.0.3:9093: Connection refused".into(),
    }
}

fn same_voters() -> Vec<VoterSettings> {
    (1..=3)
        .map(|id| VoterSettings {
            voter: id,
            address: format!("10.0.0.{id}:9093"),
            settings: Ok(BTreeMap::from([(
                "controller.quorum.voters".to_string(),
                format!("1@{A1},2@{A2},3@{A3}"),
            )])),
        })
        .collect()
}

fn check<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|c| c.name == name).unwrap()
}

fn verdicts(checks: &[Check]) -> Vec<(&'static str, Verdict)> {
    checks.iter().map(|c| (c.name, c.verdict)).collect()
}

#[test]
fn a_healthy_quorum_is_healthy_on_every_check() {
    let now = 1_000_000;
    let s0 = sample(
        0,
        [
            (
                A1,
                leads(
                    4,
                    100,
                    vec![
                        replica(1, now, 0, 0, 100),
                        replica(2, now, 20, 0, 100),
                        replica(3, now, 40, 0, 100),
                    ],
                ),
            ),
            (A2, Endpoint::Follows),
            (A3, Endpoint::Follows),
        ],
    );
    let later = now + 3000;
    let s1 = sample(
        3000,
        [
            (
                A1,
                leads(
                    4,
                    130,
                    vec![
                        replica(1, later, 0, 0, 130),
                        replica(2, later, 10, 0, 130),
                        replica(3, later, 30, 0, 129),
                    ],
                ),
            ),
            (A2, Endpoint::Follows),
            (A3, Endpoint::Follows),
        ],
    );
    let checks = diagnose(
        &[s0, s1],
        &same_voters(),
        &MetricsReadings::default(),
        Limits::default(),
    );
    assert!(
        checks.iter().all(|c| c.verdict == Verdict::Healthy),
        "{checks:#?}"
    );
    assert_eq!(report::overall(&checks).exit_code(), 0);
    let text = report::text(A1, Some(3), &checks);
    assert!(
        text.contains("node 1 leads in epoch 4, high watermark 130"),
        "{text}"
    );
    assert!(text.ends_with("verdict: healthy (exit 0)\n"), "{text}");
}

#[test]
fn a_stopped_voter_is_named_with_its_cause_and_the_quorum_is_degraded() {
    let now = 1_000_000;
    // Voter 3 last fetched at leader time `now - 5000`, and never since.
    let voters = |t: i64| {
        vec![
            replica(1, t, 0, 0, 50),
            replica(2, t, 5, 0, 50),
            replica(3, now, 5000, 5000, 40),
        ]
    };
    let s0 = sample(
        0,
        [
            (A1, leads(7, 50, voters(now))),
            (A2, Endpoint::Follows),
            (A3, refused()),
        ],
    );
    let s1 = sample(
        3000,
        [
            (A1, leads(7, 50, voters(now + 3000))),
            (A2, Endpoint::Follows),
            (A3, refused()),
        ],
    );
    let mut settings = same_voters();
    settings[2].settings = Err("connect to 10.0.0.3:9093: Connection refused".into());
    let checks = diagnose(
        &[s0, s1],
        &settings,
        &MetricsReadings::default(),
        Limits::default(),
    );
    assert_eq!(
        verdicts(&checks),
        [
            ("leader", Verdict::Healthy),
            ("voters", Verdict::Degraded),
            ("replication", Verdict::Healthy),
            ("elections", Verdict::Healthy),
            ("settings", Verdict::Healthy),
            ("clocks", Verdict::Healthy),
        ]
    );
    let voters = check(&checks, "voters");
    assert_eq!(voters.findings.len(), 1);
    let f = &voters.findings[0];
    assert!(f.starts_with("voter 3 at 10.0.0.3:9093 has not fetched from the leader for 8000 ms; stopped: nothing listens there"), "{f}");
    assert!(
        voters.summary.contains("2 of 3 voters fetch"),
        "{}",
        voters.summary
    );
    assert_eq!(report::overall(&checks).exit_code(), 1);
}

#[test]
fn a_paused_voter_is_stalled_and_a_partitioned_one_answers_but_does_not_fetch() {
    let now = 2_000_000;
    let stalled = Endpoint::Unreachable {
        kind: FailKind::TimedOut,
        reason: "ApiVersions handshake with 10.0.0.2:9093 timed out".into(),
    };
    // Voter 2 paused: its last fetch stays put across the window (1.5 s, under the fetch
    // timeout); voter 3 cut off from the leader but answering the doctor.
    let s0 = sample(
        0,
        [
            (
                A1,
                leads(
                    9,
                    70,
                    vec![
                        replica(1, now, 0, 0, 70),
                        replica(2, now, 100, 0, 70),
                        replica(3, now, 2500, 2500, 60),
                    ],
                ),
            ),
            (A2, stalled.clone()),
            (A3, Endpoint::Follows),
        ],
    );
    let later = now + 1500;
    let s1 = sample(
        1500,
        [
            (
                A1,
                leads(
                    9,
                    70,
                    vec![
                        replica(1, later, 0, 0, 70),
                        replica(2, later, 1600, 0, 70),
                        replica(3, later, 4000, 4000, 60),
                    ],
                ),
            ),
            (A2, stalled),
            (A3, Endpoint::Follows),
        ],
    );
    let checks = diagnose(
        &[s0, s1],
        &same_voters(),
        &MetricsReadings::default(),
        Limits::default(),
    );
    let voters = check(&checks, "voters");
    assert_eq!(voters.verdict, Verdict::Down, "{voters:#?}");
    assert!(
        voters.summary.starts_with("majority lost: 1 of 3 voters"),
        "{}",
        voters.summary
    );
    assert!(
        voters.findings[0].contains("voter 2")
            && voters.findings[0].contains("stalled: it accepts connections"),
        "{:?}",
        voters.findings
    );
    assert!(
        voters.findings[1].contains("voter 3") && voters.findings[1].contains("network partition"),
        "{:?}",
        voters.findings
    );
    assert_eq!(report::overall(&checks).exit_code(), 2);
}

#[test]
fn no_leader_and_no_majority_is_down_with_every_endpoints_cause() {
    let s = sample(
        0,
        [
            (A1, Endpoint::Follows),
            (A2, refused()),
            (
                A3,
                Endpoint::Unreachable {
                    kind: FailKind::Unresolved,
                    reason: "resolving c3:9093: no such host".into(),
                },
            ),
        ],
    );
    let checks = diagnose(
        &[s.clone(), s],
        &[],
        &MetricsReadings::default(),
        Limits::default(),
    );
    assert_eq!(check(&checks, "leader").verdict, Verdict::Down);
    let voters = check(&checks, "voters");
    assert!(
        voters
            .summary
            .starts_with("majority lost: 1 of the 3 controllers"),
        "{}",
        voters.summary
    );
    assert!(
        voters.findings.iter().any(|f| f.contains("DNS")),
        "{:?}",
        voters.findings
    );
    let json = report::json(A1, Some(1), &checks);
    assert_eq!(json["verdict"], "down");
    assert_eq!(json["checks"][0]["name"], "leader");
}

#[test]
fn epochs_rising_during_the_window_are_election_churn() {
    let now = 3_000_000;
    let healthy = |epoch, now| {
        leads(
            epoch,
            10,
            vec![
                replica(1, now, 0, 0, 10),
                replica(2, now, 0, 0, 10),
                replica(3, now, 0, 0, 10),
            ],
        )
    };
    let s0 = sample(
        0,
        [
            (A1, healthy(11, now)),
            (A2, Endpoint::Follows),
            (A3, Endpoint::Follows),
        ],
    );
    let s1 = sample(
        5000,
        [
            (A1, healthy(14, now + 5000)),
            (A2, Endpoint::Follows),
            (A3, Endpoint::Follows),
        ],
    );
    let checks = diagnose(
        &[s0, s1],
        &same_voters(),
        &MetricsReadings::default(),
        Limits::default(),
    );
    let e = check(&checks, "elections");
    assert_eq!(
        (e.verdict, e.summary.as_str()),
        (
            Verdict::Degraded,
            "epoch 11 to 14 in 5.0 s: 3 leader change(s)"
        )
    );
    assert!(e.fix.as_deref().unwrap().contains("clock"));
}

#[test]
fn a_fetching_voter_that_does_not_catch_up_lags() {
    let now = 4_000_000;
    let view = |now| {
        leads(
            2,
            900,
            vec![
                replica(1, now, 0, 0, 900),
                replica(2, now, 10, 0, 900),
                replica(3, now, 10, 1200, 640),
            ],
        )
    };
    let s0 = sample(
        0,
        [
            (A1, view(now)),
            (A2, Endpoint::Follows),
            (A3, Endpoint::Follows),
        ],
    );
    let s1 = sample(
        2000,
        [
            (A1, view(now + 2000)),
            (A2, Endpoint::Follows),
            (A3, Endpoint::Follows),
        ],
    );
    let checks = diagnose(
        &[s0, s1],
        &same_voters(),
        &MetricsReadings::default(),
        Limits::default(),
    );
    let r = check(&checks, "replication");
    assert_eq!(r.verdict, Verdict::Degraded);
    assert_eq!(
        r.findings,
        ["voter 3 last caught up 1200 ms ago, 260 offsets behind the high watermark 900"]
    );
    assert_eq!(check(&checks, "voters").verdict, Verdict::Healthy);
}

#[test]
fn mismatched_controller_quorum_voters_are_named() {
    let now = 5_000_000;
    let view = leads(
        1,
        5,
        vec![
            replica(1, now, 0, 0, 5),
            replica(2, now, 0, 0, 5),
            replica(3, now, 0, 0, 5),
        ],
    );
    let s = sample(
        0,
        [(A1, view), (A2, Endpoint::Follows), (A3, Endpoint::Follows)],
    );
    let mut settings = same_voters();
    settings[1].settings = Ok(BTreeMap::from([(
        "controller.quorum.voters".to_string(),
        format!("1@{A1},2@{A2},4@10.0.0.4:9093"),
    )]));
    let checks = diagnose(
        &[s.clone(), s],
        &settings,
        &MetricsReadings::default(),
        Limits::default(),
    );
    let c = check(&checks, "settings");
    assert_eq!(c.verdict, Verdict::Degraded);
    assert!(c.findings.iter().any(|f| f == "voters [2] list voters {1, 2, 4} in controller.quorum.voters, but the leader's voter set is {1, 2, 3}"), "{:?}", c.findings);
}
