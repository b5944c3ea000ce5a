//! What the doctor reads from the controllers' Prometheus endpoints (`--metrics`): kraftd's
//! `/metrics`, or a Java controller's JMX exporter under Strimzi-style rules. Each endpoint is
//! read three times across the window; the checks use what they need of each reading.

use crate::server::disk_space::DiskSpace;
use crate::server::metrics::controller::BROKER_REGISTRATION_STATE;
use crate::server::metrics::extras::{METADATA_DIR_FREE_BYTES, METADATA_DIR_SIZE_BYTES};

use super::clock::ClockReading;
use super::scrape::Scraped;

/// Every reading of the window, in the order they came.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsReadings {
    /// Each reading's clock (see `clock`).
    pub clocks: Vec<ClockReading>,
    /// Each node's metadata log directory filesystem, the latest read (kraftd's gauges).
    pub disks: Vec<(i32, DiskSpace)>,
    /// Each reading's registered brokers and their state, as the controller that was read
    /// reports them (`brokerregistrationstate{broker}`), in reading order.
    pub brokers: Vec<BrokerStates>,
    /// Endpoints that could not be read, by node, with why.
    pub unread: Vec<(i32, String)>,
}

impl MetricsReadings {
    /// One reading of node `node`'s endpoint, or why there was none (kept once per node).
    pub fn add(&mut self, node: i32, reading: Result<Scraped, String>) {
        match reading {
            Ok(scraped) => {
                self.clocks.push(scraped.clock);
                if let Some(disk) = scraped.disk {
                    self.disks.retain(|(n, _)| *n != node);
                    self.disks.push((node, disk));
                }
                self.brokers.push(BrokerStates {
                    node,
                    states: scraped.brokers,
                });
            }
            Err(why) => {
                if !self.unread.iter().any(|(n, _)| *n == node) {
                    self.unread.push((node, why));
                }
            }
        }
    }
}

/// One reading of a controller's broker registration gauges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerStates {
    pub node: i32,
    /// (broker id, Java's `BrokerRegistrationState`: 10 fenced, 20 in controlled shutdown, 30
    /// active), by broker id.
    pub states: Vec<(i32, i32)>,
}

/// The metadata log directory's filesystem from a scrape of kraftd's endpoint
/// (`kraftd_metadata_dir_free_bytes`, `kraftd_metadata_dir_size_bytes`); None from a Java
/// controller's.
pub fn disk_from_scrape(text: &str) -> Option<DiskSpace> {
    let free = sample_value(text, METADATA_DIR_FREE_BYTES)?;
    let total = sample_value(text, METADATA_DIR_SIZE_BYTES)?;
    Some(DiskSpace {
        free_bytes: free as u64,
        total_bytes: total as u64,
    })
}

/// The broker registration states a scrape reports, by broker id.
pub fn broker_states_from_scrape(text: &str) -> Vec<(i32, i32)> {
    let mut states: Vec<(i32, i32)> = text
        .lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix(BROKER_REGISTRATION_STATE)?
                .strip_prefix('{')?;
            let (labels, value) = rest.split_once('}')?;
            let broker = labels.split(',').find_map(|l| {
                let v = l.trim().strip_prefix("broker=")?;
                v.trim_matches('"').parse().ok()
            })?;
            let state: f64 = value.split_whitespace().next()?.parse().ok()?;
            Some((broker, state as i32))
        })
        .collect();
    states.sort_unstable();
    states
}

/// The value of the first sample named `name` (with or without labels).
pub fn sample_value(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        let rest = match rest.strip_prefix('{') {
            Some(labelled) => &labelled[labelled.find('}')? + 1..],
            None => rest,
        };
        if !rest.starts_with(' ') {
            return None; // a longer name with this one as its prefix
        }
        rest.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_states_and_the_disk_are_read_from_kraftds_and_javas_lines() {
        let text = "\
# TYPE kafka_controller_kafkacontroller_brokerregistrationstate gauge
kafka_controller_kafkacontroller_brokerregistrationstate{broker=\"12\"} 10.0
kafka_controller_kafkacontroller_brokerregistrationstate{broker=\"11\"} 30
kraftd_metadata_dir_free_bytes 900
kraftd_metadata_dir_size_bytes 1000
";
        assert_eq!(broker_states_from_scrape(text), [(11, 30), (12, 10)]);
        assert_eq!(
            disk_from_scrape(text),
            Some(DiskSpace {
                free_bytes: 900,
                total_bytes: 1000
            })
        );
        assert_eq!(
            disk_from_scrape("kafka_server_raftmetrics_current_epoch 3\n"),
            None
        );
    }
}
