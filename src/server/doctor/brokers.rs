//! The `brokers` check: fenced or flapping brokers, from the controllers' broker registration
//! gauges (`--metrics`; Java's `BrokerRegistrationState` numbering, which kraftd exports too).
//! A broker is fenced when the latest reading of every controller that reports it says so (a
//! lagging controller alone does not decide); it is flapping when one controller saw it go
//! between fenced and unfenced twice or more during the window (its heartbeats come and go: a
//! network, a GC pause, a session timeout set too tight), where a restart changes it once.

use std::collections::{BTreeMap, BTreeSet};

use super::diagnose::{Check, Verdict};
use super::readings::BrokerStates;
use crate::server::metrics::controller::BROKER_FENCED;

/// The check over the window's readings (in order), or None when no reading had brokers.
pub fn brokers_check(readings: &[BrokerStates]) -> Option<Check> {
    let mut by_node: BTreeMap<i32, Vec<&BrokerStates>> = BTreeMap::new();
    for r in readings.iter().filter(|r| !r.states.is_empty()) {
        by_node.entry(r.node).or_default().push(r);
    }
    if by_node.is_empty() {
        return None;
    }
    // Each broker's fencing in each controller's latest reading.
    let mut latest: BTreeMap<i32, Vec<(i32, bool)>> = BTreeMap::new();
    for (node, rs) in &by_node {
        for &(broker, state) in &rs.last().expect("one reading at least").states {
            latest
                .entry(broker)
                .or_default()
                .push((*node, state == BROKER_FENCED));
        }
    }
    let mut findings = Vec::new();
    let mut fenced = 0;
    for (broker, seen) in &latest {
        if seen.iter().all(|(_, f)| *f) {
            fenced += 1;
            let nodes: Vec<i32> = seen.iter().map(|(n, _)| *n).collect();
            findings.push(format!(
                "broker {broker} is fenced (controllers {nodes:?} report it)"
            ));
        }
    }
    let mut flapping = BTreeSet::new();
    for rs in by_node.values() {
        for broker in latest.keys() {
            let states: Vec<bool> = rs
                .iter()
                .filter_map(|r| r.states.iter().find(|(b, _)| b == broker))
                .map(|(_, s)| *s == BROKER_FENCED)
                .collect();
            let changes = states.windows(2).filter(|w| w[0] != w[1]).count();
            if changes >= 2 {
                flapping.insert(*broker);
            }
        }
    }
    findings.extend(flapping.iter().map(|b| {
        format!("broker {b} went between fenced and unfenced more than once during the window")
    }));
    let total = latest.len();
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
            "{fenced} of {total} registered brokers fenced, {} flapping",
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
    fn a_broker_fenced_in_every_controllers_latest_reading_is_named() {
        let c = brokers_check(&[
            reading(1, &[(11, 30), (13, 30)]),
            reading(1, &[(11, 30), (13, 10)]),
            reading(2, &[(11, 30), (13, 10)]),
        ])
        .expect("a check");
        assert_eq!(c.verdict, Verdict::Degraded);
        assert_eq!(
            c.findings,
            ["broker 13 is fenced (controllers [1, 2] report it)"]
        );
        // A lagging controller's fencing alone does not decide.
        let c = brokers_check(&[
            reading(1, &[(11, 30), (13, 30)]),
            reading(2, &[(11, 30), (13, 10)]),
        ])
        .expect("a check");
        assert_eq!(c.verdict, Verdict::Healthy);
    }

    #[test]
    fn a_broker_fenced_and_unfenced_twice_is_flapping_and_a_restart_is_not() {
        let c = brokers_check(&[
            reading(1, &[(11, 30), (12, 10)]),
            reading(1, &[(11, 30), (12, 30)]),
            reading(1, &[(11, 20), (12, 10)]),
            reading(2, &[(11, 30), (12, 30)]),
        ])
        .expect("a check");
        assert_eq!(c.verdict, Verdict::Degraded);
        assert_eq!(c.summary, "0 of 2 registered brokers fenced, 1 flapping");
        assert_eq!(
            c.findings,
            ["broker 12 went between fenced and unfenced more than once during the window"]
        );
        // Fenced, then back (a restart), seen by two controllers: one change each.
        let c = brokers_check(&[
            reading(1, &[(12, 10)]),
            reading(2, &[(12, 10)]),
            reading(1, &[(12, 30)]),
            reading(2, &[(12, 30)]),
        ])
        .expect("a check");
        assert_eq!(c.verdict, Verdict::Healthy);
    }
}
