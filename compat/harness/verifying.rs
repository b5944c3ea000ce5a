//! A verifying client workload from the pinned Kafka jars (or a cluster's own release, see
//! [`VerifyingClients::start_on`]): Kafka's `VerifiableProducer`
//! (idempotent, acks=all) writing increasing integers into one topic, and Kafka's
//! `VerifiableConsumer` (one member of a consumer group, from the earliest offset) reading them
//! the whole time. Both print one JSON event a line into the test's directory; [`Tally`] reads
//! the two outputs and says whether every acknowledged message was consumed exactly once.
//!
//! ```ignore
//! let clients = VerifyingClients::start(&dir, &bootstrap, "orders", 200);
//! // ... move controllers around ...
//! let tally = clients.finish(Duration::from_secs(120));
//! tally.assert_exactly_once();
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{ChildGuard, Kafka, Properties, TestDir, Tool};

const PRODUCER: &str = "verifiable-producer";
const CONSUMER: &str = "verifiable-consumer";
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// The producer's own settings, over `VerifiableProducer`'s: it sets `retries=0`, which makes
/// the Java producer quietly drop idempotence, so idempotence and retries are asked for
/// explicitly (a config file's values win over the tool's).
const PRODUCER_CONFIG: &[(&str, &str)] = &[
    ("enable.idempotence", "true"),
    ("acks", "all"),
    ("retries", "2147483647"),
    ("max.in.flight.requests.per.connection", "5"),
];

/// The running producer and consumer.
pub struct VerifyingClients {
    producer: ChildGuard,
    consumer: ChildGuard,
    producer_log: PathBuf,
    consumer_log: PathBuf,
}

impl VerifyingClients {
    /// Starts the consumer (group `verifying-<topic>`), then the producer at about `rate`
    /// messages a second, both against the brokers in `bootstrap`. The topic must exist.
    pub fn start(dir: &TestDir, bootstrap: &str, topic: &str, rate: u32) -> VerifyingClients {
        Self::start_on(Kafka::get(), dir, bootstrap, topic, rate)
    }

    /// [`Self::start`] with Kafka release `kafka`'s producer and consumer.
    pub fn start_on(
        kafka: &Kafka,
        dir: &TestDir,
        bootstrap: &str,
        topic: &str,
        rate: u32,
    ) -> VerifyingClients {
        let producer_config = dir.join("verifiable-producer.properties");
        let mut props = Properties::new();
        for (k, v) in PRODUCER_CONFIG {
            props.set(*k, *v);
        }
        props.write(&producer_config);
        let group = format!("verifying-{topic}");
        let consumer = spawn(
            kafka,
            Tool::VerifiableConsumer,
            &[
                "--bootstrap-server",
                bootstrap,
                "--topic",
                topic,
                "--group-id",
                &group,
                "--reset-policy",
                "earliest",
                "--verbose",
            ],
            dir,
            CONSUMER,
        );
        let rate = rate.to_string();
        let producer = spawn(
            kafka,
            Tool::VerifiableProducer,
            &[
                "--bootstrap-server",
                bootstrap,
                "--topic",
                topic,
                "--throughput",
                &rate,
                "--acks",
                "-1",
                producer_config_flag(kafka),
                &producer_config.display().to_string(),
            ],
            dir,
            PRODUCER,
        );
        VerifyingClients {
            producer,
            consumer,
            producer_log: dir.log_path(PRODUCER),
            consumer_log: dir.log_path(CONSUMER),
        }
    }

    /// What the two outputs say now.
    pub fn tally(&self) -> Tally {
        Tally::from_outputs(&read(&self.producer_log), &read(&self.consumer_log))
    }

    /// Panics unless both clients still run.
    #[track_caller]
    pub fn assert_running(&mut self) {
        for (name, c) in [
            (PRODUCER, &mut self.producer),
            (CONSUMER, &mut self.consumer),
        ] {
            assert!(c.is_running(), "the {name} exited; see {}", c.log_display());
        }
    }

    /// Waits until more than `count` messages are acknowledged and consumed.
    #[track_caller]
    pub fn wait_beyond(&mut self, count: usize, timeout: Duration) -> Tally {
        let deadline = Instant::now() + timeout;
        loop {
            let t = self.tally();
            if t.acked > count && t.consumed_values() > count {
                return t;
            }
            self.assert_running();
            assert!(
                Instant::now() < deadline,
                "the clients did not get past {count} messages within {timeout:?}: {}",
                t.summary()
            );
            thread::sleep(Duration::from_millis(500));
        }
    }

    /// Stops the producer (SIGTERM: it closes, flushing what it sent), waits up to `timeout`
    /// for the consumer to see every acknowledged message, stops the consumer and returns the
    /// final tally.
    pub fn finish(mut self, timeout: Duration) -> Tally {
        self.assert_running();
        self.producer.sigterm();
        self.producer.wait_exit(STOP_TIMEOUT);
        let deadline = Instant::now() + timeout;
        while !self.tally().lost().is_empty() && Instant::now() < deadline {
            assert!(
                self.consumer.is_running(),
                "the {CONSUMER} exited; see {}",
                self.consumer.log_display()
            );
            thread::sleep(Duration::from_millis(500));
        }
        self.consumer.sigterm();
        self.consumer.wait_exit(STOP_TIMEOUT);
        self.tally()
    }
}

/// `VerifiableProducer`'s config-file option: `--command-config` since Kafka 4.2 (KIP-1147,
/// which deprecated the older name), `--producer.config` before; Kafka's own system tests
/// choose by release the same way.
fn producer_config_flag(kafka: &Kafka) -> &'static str {
    let mut numbers = kafka.version().split('.').map(|n| n.parse::<u32>());
    match (numbers.next(), numbers.next()) {
        (Some(Ok(major)), Some(Ok(minor))) if (major, minor) < (4, 2) => "--producer.config",
        (Some(Ok(_)), Some(Ok(_))) => "--command-config",
        _ => panic!("cannot read Kafka release {:?}", kafka.version()),
    }
}

fn spawn(kafka: &Kafka, tool: Tool, args: &[&str], dir: &TestDir, name: &str) -> ChildGuard {
    let mut cmd = kafka.java_command(
        kafka.main_class(tool),
        &kafka.tools_log4j_config(),
        &["-Xmx256m".to_string(), "-XX:+UseSerialGC".to_string()],
    );
    cmd.args(args);
    ChildGuard::spawn_logged(name, cmd, &dir.log_path(name))
        .unwrap_or_else(|e| panic!("cannot start the {name}: {e}"))
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Where a record sits in the topic.
pub type Position = (i64, i64);

/// The two clients' outputs, reconciled.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Messages the producer reported acknowledged (`producer_send_success`).
    pub acked: usize,
    /// Sends the producer reported failed (`producer_send_error`).
    pub send_errors: usize,
    /// Acknowledged value -> the position the broker acknowledged it at.
    acked_at: BTreeMap<String, Position>,
    /// Consumed value -> every position it was consumed at (a repeat included).
    consumed_at: BTreeMap<String, Vec<Position>>,
}

impl Tally {
    /// Reads `VerifiableProducer` and `VerifiableConsumer --verbose` output (other lines,
    /// such as warnings, are skipped).
    pub fn from_outputs(producer: &str, consumer: &str) -> Tally {
        let mut t = Tally::default();
        let events = |text: &str| -> Vec<Value> {
            text.lines()
                .filter(|l| l.starts_with('{'))
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        };
        let position = |e: &Value| Some((e["partition"].as_i64()?, e["offset"].as_i64()?));
        for e in events(producer) {
            match e["name"].as_str() {
                Some("producer_send_success") => {
                    let (Some(value), Some(at)) = (e["value"].as_str(), position(&e)) else {
                        continue;
                    };
                    t.acked += 1;
                    t.acked_at.insert(value.to_string(), at);
                }
                Some("producer_send_error") => t.send_errors += 1,
                _ => {}
            }
        }
        for e in events(consumer) {
            if e["name"].as_str() != Some("record_data") {
                continue;
            }
            if let (Some(value), Some(at)) = (e["value"].as_str(), position(&e)) {
                t.consumed_at.entry(value.to_string()).or_default().push(at);
            }
        }
        t
    }

    /// Records consumed, each delivery counted.
    pub fn deliveries(&self) -> usize {
        self.consumed_at.values().map(Vec::len).sum()
    }

    /// Distinct values consumed.
    pub fn consumed_values(&self) -> usize {
        self.consumed_at.len()
    }

    /// Acknowledged values the consumer never saw.
    pub fn lost(&self) -> Vec<&str> {
        self.acked_at
            .keys()
            .filter(|v| !self.consumed_at.contains_key(*v))
            .map(String::as_str)
            .collect()
    }

    /// Values written more than once: seen at two or more positions.
    pub fn duplicated(&self) -> Vec<(&str, BTreeSet<Position>)> {
        self.consumed_at
            .iter()
            .map(|(v, at)| (v.as_str(), at.iter().copied().collect::<BTreeSet<_>>()))
            .filter(|(_, at)| at.len() > 1)
            .collect()
    }

    /// Records delivered to the consumer more than once (the same position again).
    pub fn redelivered(&self) -> usize {
        self.consumed_at
            .values()
            .map(|at| at.len() - at.iter().collect::<BTreeSet<_>>().len())
            .sum()
    }

    /// Acknowledged values consumed at a position other than the acknowledged one.
    pub fn misplaced(&self) -> Vec<(&str, Position, &[Position])> {
        self.acked_at
            .iter()
            .filter_map(|(v, at)| {
                let seen = self.consumed_at.get(v)?;
                (!seen.contains(at)).then_some((v.as_str(), *at, seen.as_slice()))
            })
            .collect()
    }

    /// Consumed values the producer did not report acknowledged (a send whose answer was
    /// lost may still have been written; not an error).
    pub fn unacknowledged_consumed(&self) -> usize {
        self.consumed_at
            .keys()
            .filter(|v| !self.acked_at.contains_key(*v))
            .count()
    }

    pub fn summary(&self) -> String {
        format!(
            "{} acknowledged ({} send errors), {} consumed in {} deliveries; {} lost, {} \
             duplicated, {} redelivered, {} misplaced, {} consumed without an acknowledgement",
            self.acked,
            self.send_errors,
            self.consumed_values(),
            self.deliveries(),
            self.lost().len(),
            self.duplicated().len(),
            self.redelivered(),
            self.misplaced().len(),
            self.unacknowledged_consumed()
        )
    }

    /// Every acknowledged message consumed, once, at the position it was acknowledged at.
    #[track_caller]
    pub fn assert_exactly_once(&self) {
        let (lost, duplicated, misplaced) = (self.lost(), self.duplicated(), self.misplaced());
        assert!(
            self.acked > 0
                && lost.is_empty()
                && duplicated.is_empty()
                && misplaced.is_empty()
                && self.redelivered() == 0,
            "not exactly once: {}\n  lost (first 20): {:?}\n  duplicated (first 20): {:?}\n  \
             misplaced (first 20): {:?}",
            self.summary(),
            &lost[..lost.len().min(20)],
            &duplicated[..duplicated.len().min(20)],
            &misplaced[..misplaced.len().min(20)]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(value: u32, partition: i64, offset: i64) -> String {
        format!(
            r#"{{"timestamp":1,"name":"producer_send_success","key":null,"value":"{value}","offset":{offset},"topic":"t","partition":{partition}}}"#
        )
    }

    fn got(value: u32, partition: i64, offset: i64) -> String {
        format!(
            r#"{{"timestamp":1,"name":"record_data","key":null,"value":"{value}","topic":"t","partition":{partition},"offset":{offset}}}"#
        )
    }

    fn tally(producer: &[String], consumer: &[String]) -> Tally {
        Tally::from_outputs(&producer.join("\n"), &consumer.join("\n"))
    }

    #[test]
    fn every_acknowledged_message_consumed_once_passes() {
        let t = tally(
            &[sent(0, 0, 0), sent(1, 1, 0), "WARN something".into()],
            &[got(0, 0, 0), got(1, 1, 0), got(2, 0, 1)],
        );
        t.assert_exactly_once();
        assert_eq!(
            (t.acked, t.deliveries(), t.unacknowledged_consumed()),
            (2, 3, 1)
        );
    }

    #[test]
    fn a_lost_message_is_named() {
        let t = tally(&[sent(0, 0, 0), sent(1, 0, 1)], &[got(0, 0, 0)]);
        assert_eq!(t.lost(), ["1"]);
        assert!(std::panic::catch_unwind(|| t.assert_exactly_once()).is_err());
    }

    #[test]
    fn a_value_written_twice_is_a_duplicate_and_a_repeat_delivery_a_redelivery() {
        let t = tally(
            &[sent(0, 0, 0)],
            &[got(0, 0, 0), got(0, 0, 3), got(0, 0, 0)],
        );
        assert_eq!(t.duplicated().len(), 1);
        assert_eq!(t.redelivered(), 1);
        assert!(std::panic::catch_unwind(|| t.assert_exactly_once()).is_err());
    }

    #[test]
    fn a_value_consumed_elsewhere_than_acknowledged_is_misplaced() {
        let t = tally(&[sent(0, 0, 0)], &[got(0, 1, 0)]);
        assert_eq!(t.misplaced().len(), 1);
        assert!(std::panic::catch_unwind(|| t.assert_exactly_once()).is_err());
    }
}
