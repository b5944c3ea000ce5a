//! The clock check as transcripts: what each controller reported of its clock, when the doctor
//! asked, and the verdict an operator reads.

use super::clock::{clock_check, node_time_from_scrape, parse_metrics_arg, ClockReading};
use super::clock::{MetricsArgError, MetricsEndpoint};
use super::diagnose::Verdict;

/// Node `node` scraped at doctor time `at` with a 4 ms round trip, its clock `ahead` ms ahead.
fn scraped(node: i32, at: i64, ahead: i64) -> ClockReading {
    ClockReading {
        node,
        source: format!("its metrics at http://10.0.0.{node}:9404/metrics"),
        sent_ms: at - 2,
        received_ms: at + 2,
        node_ms: at + ahead,
    }
}

#[test]
fn a_controller_two_seconds_ahead_of_the_others_is_named_with_its_offset() {
    let at = 1_796_361_868_000;
    let readings = [
        scraped(1, at, 3),
        scraped(2, at + 10, -4),
        scraped(3, at + 20, 2_000),
        // A second look at each: the median reading counts.
        scraped(1, at + 1_000, 1),
        scraped(2, at + 1_010, -2),
        scraped(3, at + 1_020, 2_003),
        scraped(1, at + 2_000, 2),
        scraped(2, at + 2_010, -3),
        // A reading straddling an applied record (the timestamp read before it, the lag after).
        scraped(3, at + 2_020, 1_500),
    ];
    let c = clock_check(&readings, &[], 250);
    assert_eq!(c.verdict, Verdict::Degraded, "{c:#?}");
    assert_eq!(
        c.summary,
        "controller 3 is 1998 ms ahead against the other controllers' (their median) clock (more \
         than 250 ms)"
    );
    assert_eq!(
        c.findings,
        [
            "controller 1: 0 ms off (±3 ms, from its metrics at http://10.0.0.1:9404/metrics)",
            "controller 2: 5 ms behind (±3 ms, from its metrics at http://10.0.0.2:9404/metrics)",
            "controller 3: 1998 ms ahead (±3 ms, from its metrics at http://10.0.0.3:9404/metrics)",
        ]
    );
    assert!(c.fix.as_deref().unwrap().contains("chronyc tracking"));
}

#[test]
fn a_slow_scrape_counts_less_than_a_quick_one_and_names_no_one_alone() {
    let at = 1_796_361_868_000;
    // A busy JVM's exporter took 2.7 s to answer once; its quick answer counts.
    let slow = ClockReading {
        sent_ms: at - 1_350,
        received_ms: at + 1_350,
        node_ms: at + 1_208,
        ..scraped(1, at, 0)
    };
    let readings = [
        slow.clone(),
        scraped(1, at + 2_000, 4),
        scraped(2, at, 0),
        scraped(3, at, -2),
    ];
    let c = clock_check(&readings, &[], 250);
    assert_eq!(c.verdict, Verdict::Healthy, "{c:#?}");
    assert!(
        c.findings[0].starts_with("controller 1: 4 ms ahead (±3 ms"),
        "{:?}",
        c.findings
    );
    // Read only slowly, its offset is within its error bound of the others': not named.
    let c = clock_check(&[slow, scraped(2, at, 0), scraped(3, at, -2)], &[], 250);
    assert_eq!(c.verdict, Verdict::Healthy, "{c:#?}");
    assert!(
        c.findings[0].starts_with("controller 1: 1208 ms ahead (±1351 ms"),
        "{:?}",
        c.findings
    );
}

#[test]
fn clocks_within_the_limit_are_healthy() {
    let at = 1_796_361_868_000;
    let readings = [scraped(1, at, 40), scraped(2, at, -60), scraped(3, at, 0)];
    let c = clock_check(&readings, &[], 250);
    assert_eq!(c.verdict, Verdict::Healthy, "{c:#?}");
    assert_eq!(
        c.summary,
        "3 controller clock(s) read, all within 250 ms of the other controllers' (their median) \
         clock"
    );
}

#[test]
fn with_only_the_leaders_clock_read_it_is_compared_with_this_machines() {
    let at = 1_796_361_868_000;
    let leader = ClockReading {
        node: 2,
        source: "its DescribeQuorum answer as the leader".into(),
        sent_ms: at - 10,
        received_ms: at + 10,
        node_ms: at - 2_000,
    };
    let c = clock_check(&[leader], &[], 250);
    assert_eq!(c.verdict, Verdict::Degraded);
    assert_eq!(
        c.summary,
        "controller 2 is 2000 ms behind against this machine's clock (more than 250 ms)"
    );
    assert_eq!(
        c.findings,
        ["controller 2: 2000 ms behind (±11 ms, from its DescribeQuorum answer as the leader)"]
    );
}

#[test]
fn no_reading_is_reported_as_not_measured() {
    let c = clock_check(&[], &[], 250);
    assert_eq!(c.verdict, Verdict::Healthy);
    assert!(c.summary.starts_with("not measured"), "{}", c.summary);
}

#[test]
fn the_node_clock_is_the_applied_timestamp_plus_the_lag_in_either_exporters_words() {
    // The JMX exporter on a Java controller writes doubles in Java's notation.
    let java = "# TYPE kafka_controller_kafkacontroller_lastappliedrecordlagms gauge\n\
                kafka_controller_kafkacontroller_lastappliedrecordlagms 462.0\n\
                # TYPE kafka_controller_kafkacontroller_lastappliedrecordoffset gauge\n\
                kafka_controller_kafkacontroller_lastappliedrecordoffset 58.0\n\
                kafka_controller_kafkacontroller_lastappliedrecordtimestamp 1.796361868156E12\n";
    assert_eq!(node_time_from_scrape(java), Some(1_796_361_868_618));
    // kraftd's, with a lag below zero: this node's clock behind the leader that stamped it.
    let kraftd = "kafka_controller_kafkacontroller_lastappliedrecordtimestamp 1796361868156\n\
                  kafka_controller_kafkacontroller_lastappliedrecordlagms -1500\n";
    assert_eq!(node_time_from_scrape(kraftd), Some(1_796_361_866_656));
    // A longer name that starts with the wanted one is not it.
    let other = "kafka_controller_kafkacontroller_lastappliedrecordtimestampx 5\n\
                 kafka_controller_kafkacontroller_lastappliedrecordlagms 1\n";
    assert_eq!(node_time_from_scrape(other), None);
}

#[test]
fn metrics_arguments_name_a_node_and_an_http_endpoint() {
    assert_eq!(
        parse_metrics_arg("1=http://10.0.0.1:9404/metrics, 2=10.0.0.2:9404").unwrap(),
        [
            MetricsEndpoint {
                node: 1,
                authority: "10.0.0.1:9404".into(),
                path: "/metrics".into(),
            },
            MetricsEndpoint {
                node: 2,
                authority: "10.0.0.2:9404".into(),
                path: "/metrics".into(),
            },
        ]
    );
    assert_eq!(
        parse_metrics_arg("1=https://a:1/metrics"),
        Err(MetricsArgError::Scheme("1=https://a:1/metrics".into()))
    );
    for bad in [
        "http://a:1",
        "x=http://a:1",
        "1=http://nohostport/metrics",
        "1=",
    ] {
        assert_eq!(
            parse_metrics_arg(bad),
            Err(MetricsArgError::Shape(bad.into())),
            "{bad}"
        );
    }
}
