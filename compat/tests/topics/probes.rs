//! kraftd's topic config schema and replica placer against Kafka's own classes: the
//! definitions table, hundreds of config values through Java's `ControllerConfigurationValidator`
//! and kraftd's checks, and placements of Java's `StripedReplicaPlacer` and kraftd's on the same
//! brokers from the same `java.util.Random` seed.

use kraftd::controller::java::JavaRandom;
use kraftd::controller::topic_configs::defs::render_table;
use kraftd::controller::topic_configs::{
    validate_topic_configs, StaticLogConfig, TOPIC_CONFIG_DEFS,
};
use kraftd::controller::topics::placement::{place, UsableBroker};

use crate::harness::cases::Gen;
use crate::harness::java_probe::{line_differences, run_probe};
use crate::harness::TestDir;

#[test]
fn the_topic_config_table_is_kafkas() {
    let dir = TestDir::new();
    let java = run_probe("TopicConfigProbe", &["table"], "", dir.path());
    let diffs = line_differences(&java.stdout, &render_table());
    assert!(
        diffs.is_empty(),
        "the table differs from Kafka 4.4's:\n{}",
        diffs.join("\n")
    );
}

/// Values every config is tried with, besides the ones its type suggests.
const VALUES: &[&str] = &[
    "",
    " ",
    "abc",
    "-1",
    "0",
    "1",
    "2",
    "-2",
    "9",
    "10",
    "17",
    "23",
    "-131073",
    "1048575",
    "1048576",
    " 1048576 ",
    "+5",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "1.5",
    "0.5",
    "1e3",
    "-0.0001",
    "NaN",
    "Infinity",
    "1.5d",
    "true",
    "FALSE",
    " true ",
    "yes",
    "delete",
    "compact",
    "compact,delete",
    "delete, compact",
    "compact,,delete",
    "compact,",
    ",",
    "compact,compact",
    "Delete",
    "*",
    "0:1,1:2",
    "0:1, 1:2",
    "*,1:2",
    "1:2,",
    "a:b",
    "lz4",
    "LZ4",
    "producer",
    "uncompressed",
    "CreateTime",
    "LogAppendTime",
    "createtime",
];

#[test]
fn topic_config_values_are_judged_as_kafkas_validator_judges_them() {
    let dir = TestDir::new();
    let mut cases: Vec<Vec<(String, String)>> = Vec::new();
    for d in TOPIC_CONFIG_DEFS {
        for v in VALUES {
            cases.push(vec![(d.name.to_string(), v.to_string())]);
        }
    }
    // Across configs: unknown names, several bad values (which one Java reports), compaction.
    let multi: &[&[(&str, &str)]] = &[
        &[("no.such", "1")],
        &[("segment.bytes", "x"), ("no.such", "1")],
        &[("zzz", "1"), ("aaa", "1"), ("retention.ms", "1")],
        &[("retention.ms", "-9"), ("segment.ms", "0")],
        &[("cleanup.policy", "x"), ("segment.bytes", "1")],
        &[
            ("min.compaction.lag.ms", "10"),
            ("max.compaction.lag.ms", "5"),
        ],
        &[
            ("min.compaction.lag.ms", "5"),
            ("max.compaction.lag.ms", "10"),
        ],
        &[
            ("max.compaction.lag.ms", "1"),
            ("min.compaction.lag.ms", "1"),
        ],
        &[
            ("remote.storage.enable", "true"),
            ("cleanup.policy", "compact"),
        ],
        &[
            ("remote.storage.enable", "false"),
            ("remote.log.copy.disable", "true"),
        ],
    ];
    for m in multi {
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
            format!("t\t{}\n", pairs.join("\t"))
        })
        .collect();
    let java = run_probe("TopicConfigProbe", &["validate"], &input, dir.path());
    let answers: Vec<&str> = java.stdout.lines().collect();
    assert_eq!(answers.len(), cases.len(), "{java}");
    let mut mismatches = Vec::new();
    for (case, java) in cases.iter().zip(answers) {
        let java = match java.split_once(": ") {
            _ if java == "OK" => "OK".to_string(),
            Some((_, message)) => message.to_string(),
            None => java.to_string(),
        };
        let ours = match validate_topic_configs(case, &StaticLogConfig::default()) {
            Ok(_) => "OK".to_string(),
            Err(e) => e.to_string(),
        };
        if java != ours {
            mismatches.push(format!("{case:?}\n  java:   {java}\n  kraftd: {ours}"));
        }
    }
    eprintln!("{} config cases compared with Java 4.4", cases.len());
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}

#[test]
fn replica_placement_is_kafkas_draw_for_draw() {
    let dir = TestDir::new();
    let mut g = Gen(2024);
    let mut lines = Vec::new();
    let mut scenarios = Vec::new();
    for _ in 0..300 {
        let seed = g.below(1 << 40) as i64 - (1 << 39);
        let brokers = 1 + g.below(9) as i32;
        let racks = g.below(4);
        let layout: Vec<UsableBroker> = (0..brokers)
            .map(|i| UsableBroker {
                id: 1 + i * (1 + g.below(3) as i32),
                rack: match racks {
                    0 => None,
                    r => Some(["a", "b", "c", "rack-zz"][g.below(r) as usize].to_string()),
                },
                fenced: g.below(5) == 0,
            })
            .collect();
        let mut ids: Vec<i32> = layout.iter().map(|b| b.id).collect();
        ids.sort();
        ids.dedup();
        if ids.len() != layout.len() {
            continue;
        }
        let calls: Vec<(i32, i16)> = (0..1 + g.below(3))
            .map(|_| (1 + g.below(40) as i32, g.below(5) as i16))
            .collect();
        let brokers_text: Vec<String> = layout
            .iter()
            .map(|b| {
                format!(
                    "{}:{}:{}",
                    b.id,
                    b.rack.clone().unwrap_or_default(),
                    b.fenced
                )
            })
            .collect();
        let mut line = seed.to_string();
        for (p, rf) in &calls {
            line.push_str(&format!("|{p} {rf} {}", brokers_text.join(",")));
        }
        lines.push(line);
        scenarios.push((seed, layout, calls));
    }
    let java = run_probe(
        "PlacementProbe",
        &[],
        &(lines.join("\n") + "\n"),
        dir.path(),
    );
    let answers: Vec<&str> = java.stdout.lines().collect();
    assert_eq!(answers.len(), scenarios.len(), "{java}");
    let mut mismatches = Vec::new();
    for ((seed, layout, calls), java) in scenarios.iter().zip(answers) {
        let mut random = JavaRandom::new(*seed);
        let ours: Vec<String> = calls
            .iter()
            .map(|(p, rf)| match place(*p, *rf, layout, &mut random) {
                Ok(parts) => parts
                    .iter()
                    .map(|r| r.iter().map(i32::to_string).collect::<Vec<_>>().join(","))
                    .collect::<Vec<_>>()
                    .join(";"),
                Err(e) => format!("error: {e}"),
            })
            .collect();
        let ours = ours.join("|");
        if ours != java {
            mismatches.push(format!(
                "seed {seed} {layout:?} {calls:?}\n  java:   {java}\n  kraftd: {ours}"
            ));
        }
    }
    eprintln!(
        "{} placement scenarios compared with Java 4.4",
        scenarios.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
