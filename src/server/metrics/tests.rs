//! The exposition as a transcript: a given raft and controller state, and the exact lines
//! `/metrics` serves for it (the process collector's left out: its values are the test's).

use super::controller::{ControllerSample, EventManagerSample};
use std::time::Duration;

use super::extras::{KraftdSample, SnapshotGauges};
use super::loader::LoaderSample;
use super::raft::ChannelCounters;
use super::sampler::RaftRates;
use super::text::Format;
use super::{render, Sample};
use crate::log::fsync_latency::FsyncLatency;
use crate::raft::metrics::RaftMetricsView;
use crate::server::disk_space::DiskSpace;

fn follower() -> Sample {
    Sample {
        raft: RaftMetricsView {
            state: "follower",
            leader: 1,
            vote: 1,
            epoch: 7,
            high_watermark: 120,
            log_end_offset: 121,
            log_end_epoch: 7,
            number_of_voters: 3,
            unknown_voter_connections: 0,
            observers: None,
            uncommitted_voter_change: None,
            fetching_from_leader: true,
            is_voter: true,
            elections_started: 0,
        },
        rates: RaftRates {
            commit_latency_avg: f64::NAN,
            commit_latency_max: f64::NAN,
            election_latency_avg: 250.0,
            election_latency_max: 400.0,
            append_records_rate: 0.0,
            fetch_records_rate: 1.5,
            poll_idle_ratio_avg: 0.75,
        },
        controller: ControllerSample {
            active: false,
            topics: 2,
            partitions: 5,
            offline_partitions: 1,
            preferred_replica_imbalance: 2,
            metadata_errors: 0,
            active_brokers: 3,
            fenced_brokers: 1,
            controlled_shutdown_brokers: 0,
            last_applied_offset: 119,
            last_committed_offset: 119,
            last_applied_timestamp: 1_700_000_000_000,
            last_applied_lag_ms: 35,
            timed_out_heartbeats: 0,
            new_active_controllers: 2,
            operations_started: 9,
            operations_timed_out: 0,
            ignored_static_voters: false,
            unclean_elections: 1,
            elr_elections: 0,
            broker_states: vec![(101, 30), (102, 10)],
            since_last_heartbeat_ms: vec![(101, 1200), (102, 0)],
        },
        events: EventManagerSample {
            avg_idle_ratio: 0.75,
            queue_time_count: 9,
            queue_time_ms: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
            processing_time_count: 9,
            processing_time_ms: [1.0, 1.0, 2.5, 3.0, 3.0, 7.0],
        },
        loader: LoaderSample {
            avg_idle_ratio: 0.75,
            current_controller_id: 1,
            metadata_version: 33,
            snapshot_loads: 1,
            finalized: LoaderSample::finalized_levels(1, |name| {
                (name == "metadata.version").then_some(33)
            }),
        },
        kraftd: KraftdSample {
            metadata_dir: Some(DiskSpace {
                free_bytes: 900,
                total_bytes: 1000,
            }),
            fsync: Some({
                let mut h = FsyncLatency::default();
                h.observe(Duration::from_micros(400));
                h.observe(Duration::from_millis(3));
                h
            }),
            last_snapshot: Some(SnapshotGauges {
                bytes: 4096,
                records: 20,
                duration_seconds: 0.05,
                age_seconds: 12.5,
            }),
            elections_started: 1,
            leader_changes: 2,
            voters: Vec::new(),
            peer_rtt_seconds: vec![(1, 0.002)],
            leader_clock_offset_ms: Some((1, -3)),
        },
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("the exposition is UTF-8")
}

/// The sample lines only (HELP and TYPE left to `types_are_the_exporters`).
fn samples(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

#[test]
fn a_followers_exposition_line_by_line() {
    let channel = ChannelCounters::default();
    channel.sent(100);
    channel.sent(50);
    channel.received(70);
    let text = text(&render(&follower(), &channel, None, Format::Text, 0));
    let expected = [
        r#"kafka_server_raftmetrics_current_state{current_state="follower"} 1"#,
        "kafka_server_raftmetrics_current_leader 1",
        "kafka_server_raftmetrics_current_vote 1",
        "kafka_server_raftmetrics_current_epoch 7",
        "kafka_server_raftmetrics_high_watermark 120",
        "kafka_server_raftmetrics_log_end_offset 121",
        "kafka_server_raftmetrics_log_end_epoch 7",
        "kafka_server_raftmetrics_number_unknown_voter_connections 0",
        "kafka_server_raftmetrics_number_of_voters 3",
        "kafka_server_raftmetrics_commit_latency_avg NaN",
        "kafka_server_raftmetrics_election_latency_avg 250",
        "kafka_server_raftmetrics_fetch_records_rate 1.5",
        "kafka_server_raftmetrics_append_records_rate 0",
        "kafka_server_raftmetrics_poll_idle_ratio_avg 0.75",
        "kafka_server_raftmetrics_commit_latency_max_total NaN",
        "kafka_server_raftmetrics_election_latency_max_total 400",
        "kafka_server_raftchannelmetrics_incoming_byte_total 70",
        "kafka_server_raftchannelmetrics_outgoing_byte_total 150",
        "kafka_server_raftchannelmetrics_request_total 2",
        "kafka_server_raftchannelmetrics_response_total 1",
        "kafka_controller_kafkacontroller_activecontrollercount 0",
        "kafka_controller_kafkacontroller_globaltopiccount 2",
        "kafka_controller_kafkacontroller_globalpartitioncount 5",
        "kafka_controller_kafkacontroller_offlinepartitionscount 1",
        "kafka_controller_kafkacontroller_preferredreplicaimbalancecount 2",
        "kafka_controller_kafkacontroller_metadataerrorcount 0",
        "kafka_controller_kafkacontroller_activebrokercount 3",
        "kafka_controller_kafkacontroller_fencedbrokercount 1",
        "kafka_controller_kafkacontroller_controlledshutdownbrokercount 0",
        "kafka_controller_kafkacontroller_lastappliedrecordoffset 119",
        "kafka_controller_kafkacontroller_lastcommittedrecordoffset 119",
        "kafka_controller_kafkacontroller_lastappliedrecordtimestamp 1700000000000",
        "kafka_controller_kafkacontroller_lastappliedrecordlagms 35",
        "kafka_controller_kafkacontroller_timedoutbrokerheartbeatcount 0",
        "kafka_controller_kafkacontroller_newactivecontrollerscount 2",
        "kafka_controller_kafkacontroller_eventqueueoperationsstartedcount 9",
        "kafka_controller_kafkacontroller_eventqueueoperationstimedoutcount 0",
        "kafka_controller_kafkacontroller_ignoredstaticvoters 0",
        r#"kafka_controller_kafkacontroller_brokerregistrationstate{broker="101"} 30"#,
        r#"kafka_controller_kafkacontroller_brokerregistrationstate{broker="102"} 10"#,
        r#"kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms{broker="101"} 1200"#,
        r#"kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms{broker="102"} 0"#,
        "kafka_controller_controllereventmanager_avgidleratio 0.75",
        r#"kafka_controller_controllereventmanager_eventqueuetimems{quantile="0.50"} 0"#,
        r#"kafka_controller_controllereventmanager_eventqueuetimems{quantile="0.75"} 1"#,
        r#"kafka_controller_controllereventmanager_eventqueuetimems{quantile="0.95"} 2"#,
        r#"kafka_controller_controllereventmanager_eventqueuetimems{quantile="0.98"} 3"#,
        r#"kafka_controller_controllereventmanager_eventqueuetimems{quantile="0.99"} 4"#,
        r#"kafka_controller_controllereventmanager_eventqueuetimems{quantile="0.999"} 5"#,
        "kafka_controller_controllereventmanager_eventqueuetimems_count_total 9",
        r#"kafka_controller_controllereventmanager_eventqueueprocessingtimems{quantile="0.50"} 1"#,
        r#"kafka_controller_controllereventmanager_eventqueueprocessingtimems{quantile="0.75"} 1"#,
        r#"kafka_controller_controllereventmanager_eventqueueprocessingtimems{quantile="0.95"} 2.5"#,
        r#"kafka_controller_controllereventmanager_eventqueueprocessingtimems{quantile="0.98"} 3"#,
        r#"kafka_controller_controllereventmanager_eventqueueprocessingtimems{quantile="0.99"} 3"#,
        r#"kafka_controller_controllereventmanager_eventqueueprocessingtimems{quantile="0.999"} 7"#,
        "kafka_controller_controllereventmanager_eventqueueprocessingtimems_count_total 9",
        "kafka_controller_controllerstats_uncleanleaderelections_total 1",
        "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total 0",
        "kafka_server_metadataloader_avgidleratio 0.75",
        "kafka_server_metadataloader_currentcontrollerid 1",
        "kafka_server_metadataloader_currentmetadataversion 33",
        "kafka_server_metadataloader_handleloadsnapshotcount 1",
        r#"kafka_server_metadataloader_finalizedlevel{featureName="metadataVersion"} 33"#,
        r#"kafka_server_metadataloader_finalizedlevel{featureName="kraftVersion"} 1"#,
        r#"kafka_server_metadataloader_finalizedlevel{featureName="groupVersion"} 0"#,
        r#"kafka_server_metadataloader_finalizedlevel{featureName="shareVersion"} 0"#,
        r#"kafka_server_metadataloader_finalizedlevel{featureName="streamsVersion"} 0"#,
        r#"kafka_server_metadataloader_finalizedlevel{featureName="transactionVersion"} 0"#,
        r#"kafka_server_metadataloader_finalizedlevel{featureName="eligibleLeaderReplicasVersion"} 0"#,
        "kraftd_metadata_dir_free_bytes 900",
        "kraftd_metadata_dir_size_bytes 1000",
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.0001"} 0"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.00025"} 0"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.0005"} 1"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.001"} 1"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.0025"} 1"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.005"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.01"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.025"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.05"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.1"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.25"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="0.5"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="1"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="2.5"} 2"#,
        r#"kraftd_log_fsync_duration_seconds_bucket{le="+Inf"} 2"#,
        "kraftd_log_fsync_duration_seconds_sum 0.0034000000000000002",
        "kraftd_log_fsync_duration_seconds_count 2",
        "kraftd_snapshot_last_bytes 4096",
        "kraftd_snapshot_last_records 20",
        "kraftd_snapshot_last_duration_seconds 0.05",
        "kraftd_snapshot_age_seconds 12.5",
        "kraftd_elections_started_total 1",
        "kraftd_leader_changes_total 2",
        r#"kraftd_peer_rtt_seconds{peer="1"} 0.002"#,
        r#"kraftd_leader_clock_offset_ms{leader="1"} -3"#,
    ];
    assert_eq!(samples(&text), expected, "full text:\n{text}");
}

#[test]
fn the_leader_adds_its_two_metrics_and_the_types_are_the_exporters() {
    let mut s = follower();
    s.raft.state = "leader";
    s.raft.observers = Some(1);
    s.raft.uncommitted_voter_change = Some(false);
    s.controller.active = true;
    let text = text(&render(
        &s,
        &ChannelCounters::default(),
        None,
        Format::Text,
        0,
    ));
    let lines = samples(&text);
    assert!(lines.contains(&r#"kafka_server_raftmetrics_current_state{current_state="leader"} 1"#));
    assert!(lines.contains(&"kafka_server_raftmetrics_number_of_observers 1"));
    assert!(lines.contains(&"kafka_server_raftmetrics_uncommitted_voter_change 0"));
    assert!(lines.contains(&"kafka_controller_kafkacontroller_activecontrollercount 1"));
    // The JMX exporter's types under Strimzi's rules, as a Java 4.4 controller shows them.
    for (name, kind) in [
        ("kafka_server_raftmetrics_current_state", "untyped"),
        ("kafka_server_raftmetrics_current_epoch", "gauge"),
        (
            "kafka_server_raftmetrics_commit_latency_max_total",
            "counter",
        ),
        (
            "kafka_server_raftmetrics_election_latency_max_total",
            "counter",
        ),
        ("kafka_server_raftmetrics_number_of_observers", "gauge"),
        ("kafka_server_raftchannelmetrics_request_total", "counter"),
        (
            "kafka_controller_kafkacontroller_activecontrollercount",
            "gauge",
        ),
        (
            "kafka_controller_controllereventmanager_eventqueuetimems",
            "gauge",
        ),
        (
            "kafka_controller_controllereventmanager_eventqueuetimems_count_total",
            "counter",
        ),
        (
            "kafka_controller_controllerstats_uncleanleaderelections_total",
            "counter",
        ),
    ] {
        let line = format!("# TYPE {name} {kind}");
        assert!(text.lines().any(|l| l == line), "no '{line}' in:\n{text}");
    }
    assert!(
        text.contains("# HELP kafka_server_raftmetrics_current_epoch The current quorum epoch.\n")
    );
}

/// (name, type, label names) of each sample of the checked families in a text exposition.
fn signatures(text: &str) -> std::collections::BTreeSet<(String, String, Vec<String>)> {
    let checked = super::JAVA_FAMILY_PREFIXES;
    let mut types = std::collections::BTreeMap::new();
    let mut out = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            types.insert(name.to_string(), kind.to_string());
        } else if !line.starts_with('#') && checked.iter().any(|p| line.starts_with(p)) {
            let series = line.rsplit_once(' ').unwrap().0;
            let (name, labels) = series.split_once('{').unwrap_or((series, ""));
            let labels = labels
                .trim_end_matches('}')
                .split(',')
                .filter(|l| !l.is_empty())
                .map(|l| l.split_once('=').unwrap().0.to_string())
                .collect();
            out.insert((name.to_string(), types[name].clone(), labels));
        }
    }
    out
}

/// The names, types and label sets a real Java 4.4 leader exported through the JMX exporter
/// (compat/metrics/java-4.4-controller-leader.prom) are kraftd's leader's, no more, no fewer.
/// The compat test every_record checks the same against live Java controllers.
#[test]
fn a_leader_exports_the_names_a_java_leader_exports() {
    let java = include_str!("../../../compat/metrics/java-4.4-controller-leader.prom");
    let mut s = follower();
    // The captured leader had no brokers (the live check covers the per-broker gauges).
    s.controller.broker_states.clear();
    s.controller.since_last_heartbeat_ms.clear();
    s.raft.state = "leader";
    s.raft.observers = Some(0);
    s.raft.uncommitted_voter_change = Some(false);
    let kraftd = text(&render(
        &s,
        &ChannelCounters::default(),
        None,
        Format::Text,
        0,
    ));
    let (java, kraftd) = (signatures(java), signatures(&kraftd));
    let missing: Vec<_> = java.difference(&kraftd).collect();
    let extra: Vec<_> = kraftd.difference(&java).collect();
    assert!(
        missing.is_empty(),
        "Java exports, kraftd does not: {missing:?}"
    );
    assert!(extra.is_empty(), "kraftd exports, Java does not: {extra:?}");
    assert_eq!(java.len(), 52);
}

#[test]
fn a_peers_rtt_is_its_shortest_recent_round_trip() {
    let c = ChannelCounters::default();
    for ms in [30, 2, 500] {
        c.round_trip(1, Duration::from_millis(ms));
    }
    assert_eq!(c.round_trips(), [(1, 0.002)]);
}
