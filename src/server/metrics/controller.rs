//! `kafka_controller_*`: the Yammer metrics of Java's quorum controller
//! (`kafka.controller:type=KafkaController`, `type=ControllerEventManager`,
//! `type=ControllerStats`) as the JMX exporter names them under Strimzi's rules: a gauge's
//! `Value` as `kafka_controller_<type>_<name>`, a meter's `Count` as `…_total`, a histogram's
//! `Count` as `…_count_total` and its percentiles as `quantile`-labelled gauges.

use super::text::{Exposition, Kind};
use super::window::QUANTILES;
use crate::controller::image::MetadataImage;

/// What `type=KafkaController` reports, taken from the controller (Java: `QuorumControllerMetrics`
/// and `ControllerMetadataMetrics`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ControllerSample {
    pub active: bool,
    pub topics: u64,
    pub partitions: u64,
    pub offline_partitions: u64,
    pub preferred_replica_imbalance: u64,
    pub metadata_errors: u64,
    pub active_brokers: u64,
    pub fenced_brokers: u64,
    pub controlled_shutdown_brokers: u64,
    pub last_applied_offset: i64,
    pub last_committed_offset: i64,
    pub last_applied_timestamp: i64,
    pub last_applied_lag_ms: i64,
    pub timed_out_heartbeats: u64,
    pub new_active_controllers: u64,
    pub operations_started: u64,
    pub operations_timed_out: u64,
    pub ignored_static_voters: bool,
    /// Leaders elected uncleanly, and from the ELR, among committed partition changes.
    pub unclean_elections: u64,
    pub elr_elections: u64,
    /// Each registered broker's state, as Java's `BrokerRegistrationState` numbers it.
    pub broker_states: Vec<(i32, i32)>,
    /// On the active controller only (as in Java), each registered broker and the ms since its
    /// last heartbeat (0 before its first).
    pub since_last_heartbeat_ms: Vec<(i32, u64)>,
}

/// Java's `BrokerRegistrationState` values.
pub const BROKER_FENCED: i32 = 10;
pub const BROKER_CONTROLLED_SHUTDOWN: i32 = 20;
pub const BROKER_ACTIVE: i32 = 30;
/// The gauge holding them, one sample per broker (`broker` label).
pub const BROKER_REGISTRATION_STATE: &str =
    "kafka_controller_kafkacontroller_brokerregistrationstate";

/// Java's `BrokerRegistrationState`: fenced first, then in controlled shutdown, else active
/// (an unregistered broker, -1, has no gauge).
pub fn broker_registration_state(fenced: bool, in_controlled_shutdown: bool) -> i32 {
    match (fenced, in_controlled_shutdown) {
        (true, _) => BROKER_FENCED,
        (false, true) => BROKER_CONTROLLED_SHUTDOWN,
        (false, false) => BROKER_ACTIVE,
    }
}

impl ControllerSample {
    /// The counts Java's `ControllerMetadataMetricsPublisher` keeps of the published image:
    /// topics, partitions, those without a leader (offline) or not led by their first replica
    /// (imbalanced), brokers fenced, unfenced (active) and in controlled shutdown. The partition
    /// counts come from the image's index, kept on every replay: a scrape walks topics and
    /// brokers, never every partition.
    pub fn count_image(&mut self, image: &MetadataImage) {
        let topics = &image.topics;
        self.topics = topics.by_id.len() as u64;
        self.partitions = topics.partition_count() as u64;
        self.offline_partitions = topics.leaderless_count() as u64;
        self.preferred_replica_imbalance = topics.not_preferred_count() as u64;
        let brokers = image.cluster.brokers.values();
        let (mut fenced, mut active, mut shutting_down) = (0, 0, 0);
        self.broker_states.clear();
        for b in brokers {
            self.broker_states.push((
                b.id,
                broker_registration_state(b.fenced, b.in_controlled_shutdown),
            ));
            if b.fenced {
                fenced += 1;
            } else {
                active += 1;
            }
            if b.in_controlled_shutdown {
                shutting_down += 1;
            }
        }
        self.fenced_brokers = fenced;
        self.active_brokers = active;
        self.controlled_shutdown_brokers = shutting_down;
    }
}

/// Java's `ControllerEventManager` beans: the event queue's idle ratio and two histograms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventManagerSample {
    pub avg_idle_ratio: f64,
    pub queue_time_count: u64,
    pub queue_time_ms: [f64; 6],
    pub processing_time_count: u64,
    pub processing_time_ms: [f64; 6],
}

/// The exporter's name prefix for `type=KafkaController` beans, and the beans' own name prefix
/// (each family's help).
const KAFKA_CONTROLLER: &str = "kafka_controller_kafkacontroller_";
const KAFKA_CONTROLLER_BEAN: &str = "kafka.controller:type=KafkaController,name=";

pub fn controller_families(f: &mut Exposition, c: &ControllerSample, e: &EventManagerSample) {
    let gauges: [(&str, f64); 18] = [
        ("ActiveControllerCount", u64::from(c.active) as f64),
        ("GlobalTopicCount", c.topics as f64),
        ("GlobalPartitionCount", c.partitions as f64),
        ("OfflinePartitionsCount", c.offline_partitions as f64),
        (
            "PreferredReplicaImbalanceCount",
            c.preferred_replica_imbalance as f64,
        ),
        ("MetadataErrorCount", c.metadata_errors as f64),
        ("ActiveBrokerCount", c.active_brokers as f64),
        ("FencedBrokerCount", c.fenced_brokers as f64),
        (
            "ControlledShutdownBrokerCount",
            c.controlled_shutdown_brokers as f64,
        ),
        ("LastAppliedRecordOffset", c.last_applied_offset as f64),
        ("LastCommittedRecordOffset", c.last_committed_offset as f64),
        (
            "LastAppliedRecordTimestamp",
            c.last_applied_timestamp as f64,
        ),
        ("LastAppliedRecordLagMs", c.last_applied_lag_ms as f64),
        (
            "TimedOutBrokerHeartbeatCount",
            c.timed_out_heartbeats as f64,
        ),
        ("NewActiveControllersCount", c.new_active_controllers as f64),
        (
            "EventQueueOperationsStartedCount",
            c.operations_started as f64,
        ),
        (
            "EventQueueOperationsTimedOutCount",
            c.operations_timed_out as f64,
        ),
        (
            "IgnoredStaticVoters",
            u64::from(c.ignored_static_voters) as f64,
        ),
    ];
    for (bean, value) in gauges {
        f.gauge(
            [KAFKA_CONTROLLER, bean],
            [KAFKA_CONTROLLER_BEAN, bean],
            value,
        );
    }

    // One gauge per registered broker (`…,name=BrokerRegistrationState,broker=<id>`), and on
    // the active controller one per broker for its heartbeats.
    f.gauge_by(
        [KAFKA_CONTROLLER, "BrokerRegistrationState"],
        [
            KAFKA_CONTROLLER_BEAN,
            "BrokerRegistrationState",
            " (-1 unregistered, 10 fenced, 20 controlled shutdown, 30 active)",
        ],
        "broker",
        c.broker_states.iter().map(|&(id, s)| (id, f64::from(s))),
    );
    f.gauge_by(
        [KAFKA_CONTROLLER, "TimeSinceLastHeartbeatReceivedMs"],
        [KAFKA_CONTROLLER_BEAN, "TimeSinceLastHeartbeatReceivedMs"],
        "broker",
        c.since_last_heartbeat_ms
            .iter()
            .map(|&(id, ms)| (id, ms as f64)),
    );

    let events = "kafka_controller_controllereventmanager_";
    f.gauge(
        [events, "avgidleratio"],
        "kafka.controller:type=ControllerEventManager,name=AvgIdleRatio",
        e.avg_idle_ratio,
    );
    let histograms = [
        ("EventQueueTimeMs", e.queue_time_count, &e.queue_time_ms),
        (
            "EventQueueProcessingTimeMs",
            e.processing_time_count,
            &e.processing_time_ms,
        ),
    ];
    for (bean, count, quantiles) in histograms {
        let help = ["kafka.controller:type=ControllerEventManager,name=", bean];
        f.family([events, bean], help, Kind::Gauge);
        for ((q, _), v) in QUANTILES.iter().zip(quantiles) {
            f.sample(&[("quantile", q)], *v);
        }
        f.counter([events, bean, "_count_total"], help, count as f64);
    }

    // Meters: their Count.
    for (bean, count) in [
        ("UncleanLeaderElectionsPerSec", c.unclean_elections),
        ("ElectionFromEligibleLeaderReplicasPerSec", c.elr_elections),
    ] {
        let stem = bean.trim_end_matches("PerSec");
        f.counter(
            ["kafka_controller_controllerstats_", stem, "_total"],
            ["kafka.controller:type=ControllerStats,name=", bean],
            count as f64,
        );
    }
}
