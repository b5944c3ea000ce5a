//! kraftd's group config schema and checks against Kafka's own classes: the definitions table,
//! and hundreds of group configs through Java's `ControllerConfigurationValidator` and
//! kraftd's, on a controller with Kafka's default group-coordinator configs and on one that
//! sets its own.

use std::collections::BTreeMap;

use kraftd::controller::config_changes::group::{validate, GroupLimits, GROUP_CONFIG_DEFS};
use kraftd::controller::topic_configs::defs::render_defs;

use crate::harness::java_probe::{line_differences, run_probe};
use crate::harness::TestDir;

#[test]
fn the_group_config_table_is_kafkas() {
    let dir = TestDir::new();
    let java = run_probe("GroupConfigProbe", &["table"], "", dir.path());
    let diffs = line_differences(&java.stdout, &render_defs(GROUP_CONFIG_DEFS));
    assert!(
        diffs.is_empty(),
        "the table differs from Kafka 4.4's:\n{}",
        diffs.join("\n")
    );
}

/// Values every group config is tried with.
const VALUES: &[&str] = &[
    "",
    " ",
    "abc",
    "-1",
    "0",
    "1",
    "2",
    "9",
    "10",
    "11",
    "99",
    "100",
    "999",
    "1000",
    "4000",
    "4001",
    "5000",
    "4999",
    "14999",
    "15000",
    "15001",
    "20",
    "21",
    "44999",
    "45000",
    "45001",
    "60000",
    "60001",
    " 45000 ",
    "+5",
    "2147483647",
    "2147483648",
    "1.5",
    "true",
    "FALSE",
    " true ",
    "yes",
    "latest",
    "earliest",
    "none",
    "LATEST",
    " latest ",
    "by_duration",
    "by_duration:",
    "by_duration:PT1S",
    "by_duration:-PT1S",
    "by_duration:PT0S",
    "by_duration:P1DT2H3M4.5S",
    "by_duration:pt-0.5s",
    "by_duration:P1Y",
    "BY_DURATION:PT1S",
    "read_committed",
    "read_uncommitted",
    "READ_COMMITTED",
    "sticky",
    "greedy",
    " sticky ",
    "a",
    "a,b",
    "a, a",
    "a ,a",
    "a,,b",
    ",",
    "a,",
    "__dlq",
    "_dlq",
    "dlq",
];

/// Groups of configs, to see which one Java reports and the checks across configs.
const MULTI: &[&[(&str, &str)]] = &[
    &[("no.such", "1")],
    &[
        ("zzz", "1"),
        ("aaa", "1"),
        ("consumer.session.timeout.ms", "1"),
    ],
    &[("consumer.session.timeout.ms", "x"), ("no.such", "1")],
    &[
        ("consumer.session.timeout.ms", "1"),
        ("consumer.heartbeat.interval.ms", "1"),
    ],
    &[
        ("share.delivery.count.limit", "x"),
        ("consumer.session.timeout.ms", "x"),
    ],
    &[
        ("streams.num.warmup.replicas", "50"),
        ("consumer.session.timeout.ms", "1"),
    ],
    &[
        ("consumer.session.timeout.ms", "45000"),
        ("consumer.heartbeat.interval.ms", "15000"),
    ],
    &[
        ("share.session.timeout.ms", "50000"),
        ("share.heartbeat.interval.ms", "6000"),
    ],
    &[
        ("streams.session.timeout.ms", "46000"),
        ("streams.heartbeat.interval.ms", "14000"),
    ],
    &[
        ("streams.rack.aware.assignment.tags", "a, a"),
        ("no.such", "1"),
    ],
    &[
        ("streams.rack.aware.assignment.tags", "a,a"),
        ("consumer.session.timeout.ms", "x"),
    ],
];

/// A controller that sets its own bounds, so that they are seen to be read from its config.
const OVERRIDES: &[(&str, &str)] = &[
    ("group.consumer.min.session.timeout.ms", "10000"),
    ("group.consumer.max.session.timeout.ms", "90000"),
    ("group.consumer.heartbeat.interval.ms", "9000"),
    ("group.consumer.max.heartbeat.interval.ms", "20000"),
    ("group.share.min.record.lock.duration.ms", "2000"),
    ("group.share.max.delivery.count.limit", "8"),
    ("group.streams.max.standby.replicas", "5"),
    ("group.streams.min.task.offset.interval.ms", "1000"),
];

#[test]
fn group_config_values_are_judged_as_kafkas_validator_judges_them() {
    let dir = TestDir::new();
    let mut cases: Vec<Vec<(String, String)>> = Vec::new();
    for d in GROUP_CONFIG_DEFS {
        for v in VALUES {
            cases.push(vec![(d.name.to_string(), v.to_string())]);
        }
    }
    for m in MULTI {
        cases.push(
            m.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
    }
    let input: String = cases
        .iter()
        .map(|c| {
            let pairs: Vec<String> = c.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("g\t{}\n", pairs.join("\t"))
        })
        .collect();
    let overrides: Vec<String> = OVERRIDES.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut mismatches = Vec::new();
    for props in [Vec::new(), overrides] {
        let mut args = vec!["validate"];
        args.extend(props.iter().map(String::as_str));
        let java = run_probe("GroupConfigProbe", &args, &input, dir.path());
        let answers: Vec<&str> = java.stdout.lines().collect();
        assert_eq!(answers.len(), cases.len(), "{java}");
        let originals: BTreeMap<String, String> = props
            .iter()
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (case, java) in cases.iter().zip(answers) {
            let java = match java.split_once(": ") {
                _ if java == "OK" => "OK".to_string(),
                Some((_, message)) => message.to_string(),
                None => java.to_string(),
            };
            let ours = match validate(case, GroupLimits(&originals)) {
                Ok(()) => "OK".to_string(),
                Err(e) => e.to_string(),
            };
            if java != ours {
                mismatches.push(format!(
                    "{case:?} (controller {props:?})\n  java:   {java}\n  kraftd: {ours}"
                ));
            }
        }
    }
    eprintln!(
        "{} group config cases compared with Java 4.4, twice",
        cases.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} cases differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
