//! Client quotas decided by kraftd take effect on a stock Kafka 4.4 broker, as an operator
//! sees it: `kafka-configs` through the broker sets `producer_byte_rate` for client id
//! `slow-producer` and for user `ANONYMOUS` (every PLAINTEXT client) with client id
//! `user-producer`, `consumer_byte_rate` for the default client id and a far higher one for
//! client id `free-consumer` (the specific entity overrides the default), and describes them
//! once the broker has them. Then `kafka-producer-perf-test` and `kafka-consumer-perf-test`
//! (with `--print-metrics`) show the broker throttling the quota's clients (the client's
//! `produce-throttle-time-max` / `fetch-throttle-time-max` above 0, the byte rate held near the
//! quota) and not the others (no throttle time, well above the quota). Once `--delete-config`
//! removed the quotas, the same clients are no longer throttled. Last, the broker logged no
//! metadata fault, and Java's image of kraftd's log equals kraftd's both while the quotas were
//! set (where kraftd's image holds the three entities) and at the end (no quotas).
//!
//! The broker keeps 2 quota samples of 1 s (`quota.window.num`, default 11): Kafka's `Rate`
//! pads a young window to `samples - 1` windows, so a client may send that many seconds' worth
//! of quota before the first throttle. With 2 samples a short run is throttled early.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::quorum_probe::describe_quorum;
use crate::harness::{Kafka, Output, TestDir, Tool};
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 11;
/// How long the broker may take to learn of a committed change.
const PROPAGATION: Duration = Duration::from_secs(60);
/// The byte-rate quota (bytes/s) of the throttled producer and consumers.
const QUOTA: f64 = 32_768.0;
/// `consumer_byte_rate` of `free-consumer`, overriding the default client id's (under 1e7, so
/// that `kafka-configs` prints it as Rust does: Java prints 1e9 as `1.0E9`).
const FREE: f64 = 8_388_608.0;
const RECORD_SIZE: usize = 1024;
/// Records a throttled producer sends: about 5 s at the quota (beyond the first second's worth
/// the broker lets through).
const THROTTLED_RECORDS: usize = 192;
/// Records an unthrottled producer sends: more, so that its start-up (connection, metadata)
/// weighs less in its rate on a loaded machine.
const FREE_RECORDS: usize = 4 * THROTTLED_RECORDS;
/// Records a consumer reads (at least: it takes whole batches).
const CONSUMED: usize = 96;
const TOPIC: &str = "quota-effect";
const SLOW_PRODUCER: &str = "slow-producer";
/// The client id of the (user, client id) quota; PLAINTEXT clients are User:ANONYMOUS.
const USER_PRODUCER: &str = "user-producer";
const SLOW_CONSUMER: &str = "slow-consumer";
const FREE_CONSUMER: &str = "free-consumer";
const DEFAULT_CLIENT: [&str; 3] = ["--entity-type", "clients", "--entity-default"];
const EVERY_CLIENT: [&str; 2] = ["--entity-type", "clients"];
/// Every (ANONYMOUS, client id) entity.
const ANONYMOUS_CLIENTS: [&str; 6] = [
    "--entity-type",
    "users",
    "--entity-name",
    "ANONYMOUS",
    "--entity-type",
    "clients",
];

/// What one perf-test run achieved, and the throttle time the broker asked of it.
#[derive(Debug)]
struct Run {
    client_id: String,
    /// Record bytes per second, as the tool measured them.
    byte_rate: f64,
    throttle_avg: f64,
    throttle_max: f64,
}

impl Run {
    #[track_caller]
    fn assert_throttled(&self, why: &str) {
        eprintln!("{why}: {self:?}");
        assert!(
            self.throttle_max > 0.0 && self.throttle_avg > 0.0,
            "{why}: the broker never throttled {}: {self:?}",
            self.client_id
        );
        // Request overhead counts against the quota and the last throttle is never waited
        // out, so the rate of record bytes ends near the quota: below twice it, or the quota
        // was not applied.
        assert!(
            self.byte_rate < 2.0 * QUOTA,
            "{why}: {} ran at {:.0} B/s, the quota is {QUOTA} B/s: {self:?}",
            self.client_id,
            self.byte_rate
        );
    }

    #[track_caller]
    fn assert_free(&self, why: &str) {
        eprintln!("{why}: {self:?}");
        assert_eq!(
            (self.throttle_avg, self.throttle_max),
            (0.0, 0.0),
            "{why}: the broker throttled {}: {self:?}",
            self.client_id
        );
        assert!(
            self.byte_rate > 2.0 * QUOTA,
            "{why}: {} ran at {:.0} B/s, no faster than the quota of {QUOTA} B/s would allow: \
             {self:?}",
            self.client_id,
            self.byte_rate
        );
    }
}

/// The value of a `--print-metrics` line `group:name:{tags} : value`.
fn metric(out: &Output, group_and_name: &str) -> f64 {
    let prefix = format!("{group_and_name}:{{");
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no metric {group_and_name} in:\n{out}"));
    let value = line.rsplit(" : ").next().unwrap_or_default().trim();
    value
        .parse()
        .unwrap_or_else(|_| panic!("metric {group_and_name} is {value:?}:\n{out}"))
}

struct Tools<'a> {
    kafka: &'a Kafka,
    broker: String,
}

impl Tools<'_> {
    fn admin(&self, tool: Tool, args: &[&str]) -> Output {
        let mut all = vec!["--bootstrap-server", self.broker.as_str()];
        all.extend_from_slice(args);
        self.kafka.run(tool, &all)
    }

    fn alter(&self, entity: &[&str], change: &[&str]) {
        let mut args = vec!["--alter"];
        args.extend_from_slice(entity);
        args.extend_from_slice(change);
        self.admin(Tool::Configs, &args).assert_success();
    }

    /// `kafka-configs --describe <entity>` through the broker until its output satisfies
    /// `done`.
    fn describe_until(&self, entity: &[&str], done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PROPAGATION;
        loop {
            let mut args = vec!["--describe"];
            args.extend_from_slice(entity);
            let out = self.admin(Tool::Configs, &args);
            if out.success() && done(&out.stdout) {
                return out.stdout;
            }
            assert!(
                Instant::now() < deadline,
                "the broker describes {entity:?} as:\n{out}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// `kafka-producer-perf-test` of `records` records as fast as it can, as `client_id`.
    fn produce(&self, client_id: &str, records: usize) -> Run {
        let (count, size) = (records.to_string(), RECORD_SIZE.to_string());
        let id = format!("client.id={client_id}");
        let out = self.admin(
            Tool::ProducerPerformance,
            &[
                "--topic",
                TOPIC,
                "--num-records",
                count.as_str(),
                "--record-size",
                size.as_str(),
                "--throughput",
                "-1",
                "--print-metrics",
                "--command-property",
                id.as_str(),
                "acks=1",
            ],
        );
        out.assert_success();
        // `N records sent, R records/sec (M MB/sec), ...`
        let summary = format!("{records} records sent, ");
        let rate = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(summary.as_str()))
            .and_then(|rest| rest.split(" records/sec").next())
            .and_then(|r| r.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no summary line in:\n{out}"));
        Run {
            client_id: client_id.to_string(),
            byte_rate: rate * RECORD_SIZE as f64,
            throttle_avg: metric(&out, "producer-metrics:produce-throttle-time-avg"),
            throttle_max: metric(&out, "producer-metrics:produce-throttle-time-max"),
        }
    }

    /// `kafka-consumer-perf-test` of the [`CONSUMED`] first records, as `client_id` in a group
    /// of its own.
    fn consume(&self, client_id: &str) -> Run {
        let records = CONSUMED.to_string();
        let id = format!("client.id={client_id}");
        let out = self.admin(
            Tool::ConsumerPerformance,
            &[
                "--topic",
                TOPIC,
                "--num-records",
                records.as_str(),
                "--timeout",
                "30000",
                "--print-metrics",
                "--command-property",
                id.as_str(),
            ],
        );
        out.assert_success();
        // A header line naming the columns, then one line of values.
        let mut lines = out.stdout.lines();
        let header: Vec<&str> = lines
            .find(|l| l.starts_with("start.time"))
            .unwrap_or_else(|| panic!("no header in:\n{out}"))
            .split(", ")
            .collect();
        let values: Vec<&str> = lines.next().unwrap_or_default().split(", ").collect();
        let column = |name: &str| -> f64 {
            header
                .iter()
                .position(|h| *h == name)
                .and_then(|i| values.get(i))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in:\n{out}"))
        };
        assert!(
            column("data.consumed.in.nMsg") as usize >= CONSUMED,
            "{client_id} consumed too few records:\n{out}"
        );
        // fetch.nMsg.sec leaves the group's rebalance out.
        Run {
            client_id: client_id.to_string(),
            byte_rate: column("fetch.nMsg.sec") * RECORD_SIZE as f64,
            throttle_avg: metric(
                &out,
                "consumer-fetch-manager-metrics:fetch-throttle-time-avg",
            ),
            throttle_max: metric(
                &out,
                "consumer-fetch-manager-metrics:fetch-throttle-time-max",
            ),
        }
    }
}

fn client(name: &str) -> [&str; 4] {
    ["--entity-type", "clients", "--entity-name", name]
}

fn anonymous_user_with(client: &str) -> [&str; 8] {
    [
        "--entity-type",
        "users",
        "--entity-name",
        "ANONYMOUS",
        "--entity-type",
        "clients",
        "--entity-name",
        client,
    ]
}

/// Two producers at once (their runs are mostly waiting when throttled).
fn produce_both(t: &Tools, records: usize) -> (Run, Run) {
    std::thread::scope(|s| {
        let by_user = s.spawn(|| t.produce(USER_PRODUCER, records));
        let by_client = t.produce(SLOW_PRODUCER, records);
        (by_client, by_user.join().expect("the user's producer ran"))
    })
}

#[test]
fn client_quotas_set_through_kraftd_throttle_clients_on_stock_brokers() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut c = TopicCluster::start_configured(&dir, Kind::Kraftd, &[BROKER], &[], |b| {
        b.prop("quota.window.num", 2)
            .prop("quota.window.size.seconds", 1)
            .prop("group.initial.rebalance.delay.ms", 0)
    });
    let t = Tools {
        kafka,
        broker: c.bootstrap_server(),
    };
    t.admin(
        Tool::Topics,
        &["--create", "--topic", TOPIC, "--partitions", "1"],
    )
    .assert_success();

    let started = Instant::now();
    let quota = format!("producer_byte_rate={QUOTA}");
    t.alter(&client(SLOW_PRODUCER), &["--add-config", &quota]);
    t.alter(
        &anonymous_user_with(USER_PRODUCER),
        &["--add-config", &quota],
    );
    let quota = format!("consumer_byte_rate={QUOTA}");
    t.alter(&DEFAULT_CLIENT, &["--add-config", &quota]);
    let free = format!("consumer_byte_rate={FREE}");
    t.alter(&client(FREE_CONSUMER), &["--add-config", &free]);
    let described = t.describe_until(&EVERY_CLIENT, |o| {
        o.contains(&format!(
            "Quota configs for client-id '{SLOW_PRODUCER}' are producer_byte_rate={QUOTA:.1}"
        )) && o.contains(&format!(
            "Quota configs for the default client-id are consumer_byte_rate={QUOTA:.1}"
        )) && o.contains(&format!(
            "Quota configs for client-id '{FREE_CONSUMER}' are consumer_byte_rate={FREE:.1}"
        ))
    });
    eprintln!("kafka-configs --describe --entity-type clients:\n{described}");
    let described = t.describe_until(&ANONYMOUS_CLIENTS, |o| {
        o.contains(&format!(
            "Quota configs for user-principal 'ANONYMOUS', client-id '{USER_PRODUCER}' are \
             producer_byte_rate={QUOTA:.1}"
        ))
    });
    eprintln!("kafka-configs --describe {ANONYMOUS_CLIENTS:?}:\n{described}");
    // The quotas are committed below the controller's high watermark.
    let with_quotas = describe_quorum(c.controller.port)
        .expect("the controller answers DescribeQuorum")
        .high_watermark
        - 1;

    let (by_client, by_user) = produce_both(&t, THROTTLED_RECORDS);
    by_client.assert_throttled("producer_byte_rate of its client id");
    by_user.assert_throttled("producer_byte_rate of its user and client id");
    t.produce("other-producer", FREE_RECORDS)
        .assert_free("a producer with another client id");
    t.consume(SLOW_CONSUMER)
        .assert_throttled("consumer_byte_rate of the default client id");
    t.consume(FREE_CONSUMER)
        .assert_free("its client id's consumer_byte_rate, over the default's");

    t.alter(
        &client(SLOW_PRODUCER),
        &["--delete-config", "producer_byte_rate"],
    );
    t.alter(
        &anonymous_user_with(USER_PRODUCER),
        &["--delete-config", "producer_byte_rate"],
    );
    t.alter(&DEFAULT_CLIENT, &["--delete-config", "consumer_byte_rate"]);
    t.alter(
        &client(FREE_CONSUMER),
        &["--delete-config", "consumer_byte_rate"],
    );
    t.describe_until(&EVERY_CLIENT, |o| !o.contains("Quota configs"));
    t.describe_until(&ANONYMOUS_CLIENTS, |o| !o.contains("Quota configs"));
    let (by_client, by_user) = produce_both(&t, FREE_RECORDS);
    by_client.assert_free("the same client id, its quota deleted");
    by_user.assert_free("the same user and client id, their quota deleted");
    t.consume(SLOW_CONSUMER)
        .assert_free("the same client id, the default's quota deleted");
    eprintln!("quotas set, applied and removed in {:?}", started.elapsed());

    drop(t);
    for b in &c.brokers {
        b.assert_no_metadata_faults();
    }
    let log: PathBuf = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    assert_eq!(
        kraftd_image(&log, Some(with_quotas))["clientQuotas"],
        serde_json::json!({
            "client-id": {"consumer_byte_rate": QUOTA},
            format!("client-id={FREE_CONSUMER}"): {"consumer_byte_rate": FREE},
            format!("client-id={SLOW_PRODUCER}"): {"producer_byte_rate": QUOTA},
            format!("client-id={USER_PRODUCER},user=ANONYMOUS"): {"producer_byte_rate": QUOTA},
        })
    );
    assert_eq!(
        kraftd_image(&log, None)["clientQuotas"],
        serde_json::json!({})
    );
    for at in [Some(with_quotas), None] {
        let (offset, _, _) = assert_image_equals_javas(&log, at);
        eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
    }
}
