//! The `brokers` check: fenced or flapping brokers, from the controllers' broker registration
//! gauges (`--metrics`; Java's `BrokerRegistrationState` numbering, which kraftd exports too).
//! A broker fenced in the latest reading is named; one whose state went between fenced and
//! unfenced during the window is flapping (its heartbeats come and go: a network, a GC pause, a
//! session timeout set too tight).

use std::collections::{BTreeMap, BTreeSet};

use super::diagnose::{Check, Verdict};
use super::readings::BrokerStates;

const FENCED: i32 = 10;

/// The check over the window's readings (in order), or None when no reading had brokers.
pub fn brokers_check(readings: &[BrokerStates]) -> Option<Check> {
    let latest = readings.iter().rev().find(|r| !r.states.is_empty())?;
    let mut seen: BTreeMap<i32, BTreeSet<bool>> = BTreeMap::new();
    for r in readings {
        for &(broker, state) in &r.states {
            seen.entry(broker).or_default().insert(state == FENCED);
        }
    }
    let fenced: Vec<i32> = latest
        .states
        .iter()
        .filter(|(_, s)| *s == FENCED)
        .map(|(b, _)| *b)
        .collect();
    let flapping: Vec<i32> = seen
        .iter()
        .filter(|(_, kinds)| kinds.len() > 1)
        .map(|(b, _)| *b)
        .collect();
    let mut findings: Vec<String> = fenced
        .iter()
        .map(|b| {
            format!(
                "broker {b} is fenced (controller {} reports it)",
                latest.node
            )
        })
        .collect();
    findings.extend(
        flapping
            .iter()
            .map(|b| format!("broker {b} went between fenced and unfenced during the window")),
    );
    let total = latest.states.len();
    if findings.is_empty() {
        return Some(Check {
            name: "brokers",
            verdict: Verdict::Healthy,
            summary: format!("all {total} registered brokers unfenced"),
            findings,
            fix: None,
        });
    }
    Some(Check {
        name: "brokers",
        verdict: Verdict::Degraded,
        summary: format!(
            "{} of {total} registered brokers fenced, {} flapping",
            fenced.len(),
            flapping.len()
        ),
        findings,
        fix: Some(
            "a fenced broker sent no heartbeat within broker.session.timeout.ms: start it, or \
             look at its log and its network to the active controller; a flapping one loses \
             heartbeats now and then (GC pauses, a lossy network, a session timeout too tight)"
                .into(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(node: i32, states: &[(i32, i32)]) -> BrokerStates {
        BrokerStates {
            node,
            states: states.to_vec(),
        }
    }

    #[test]
    fn unfenced_brokers_are_healthy_and_no_reading_is_no_check() {
        assert_eq!(brokers_check(&[]), None);
        let c = brokers_check(&[reading(1, &[(11, 30), (12, 30)])]).expect("a check");
        assert_eq!(c.verdict, Verdict::Healthy);
        assert_eq!(c.summary, "all 2 registered brokers unfenced");
    }

    #[test]
    fn a_fenced_broker_is_named_by_the_latest_reading() {
        let c = brokers_check(&[
            reading(1, &[(11, 30), (13, 10)]),
            reading(2, &[(11, 30), (13, 10)]),
        ])
        .expect("a check");
        assert_eq!(c.verdict, Verdict::Degraded);
        assert_eq!(
            c.findings,
            ["broker 13 is fenced (controller 2 reports it)"]
        );
    }

    #[test]
    fn a_broker_fenced_and_unfenced_within_the_window_is_flapping() {
        let c = brokers_check(&[
            reading(1, &[(11, 30), (12, 10)]),
            reading(1, &[(11, 30), (12, 30)]),
            reading(1, &[(11, 20), (12, 30)]),
        ])
        .expect("a check");
        assert_eq!(c.verdict, Verdict::Degraded);
        assert_eq!(c.summary, "0 of 2 registered brokers fenced, 1 flapping");
        assert_eq!(
            c.findings,
            ["broker 12 went between fenced and unfenced during the window"]
        );
    }
}
