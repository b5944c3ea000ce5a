//! A real Prometheus (Debian's `prometheus` package) scraping controllers every second, with
//! the labels Strimzi's PodMonitor gives a controller pod, so that Strimzi's KRaft dashboard
//! queries (compat/prometheus/strimzi-kraft-panels.tsv) and controller alerts
//! (compat/prometheus/kafka-controller-alerts.yaml) run against it as they would on Kubernetes.

use std::collections::BTreeSet;
use std::fs;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::metrics::http_get;
use super::{free_port, ChildGuard, TestDir};

/// The dashboard's template variables as a Kubernetes cluster would fill them: the namespace,
/// the Kafka cluster's name, and "All" controller pods.
pub const NAMESPACE: &str = "kraftd";
pub const CLUSTER: &str = "my-cluster";

/// How long Prometheus may take to start, to have data, or to change an alert's state.
const WAIT: Duration = Duration::from_secs(60);

/// One panel of Strimzi's KRaft dashboard: its title and its query, variables filled in.
#[derive(Debug, Clone)]
pub struct Panel {
    pub title: String,
    pub query: String,
}

impl Panel {
    /// Every panel, in the dashboard's order.
    pub fn strimzi_kraft() -> Vec<Panel> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("compat/prometheus/strimzi-kraft-panels.tsv");
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (title, query) = l
                    .split_once('\t')
                    .unwrap_or_else(|| panic!("{}: no tab in {l:?}", path.display()));
                Panel {
                    title: title.to_string(),
                    query: query
                        .replace("$kubernetes_namespace", NAMESPACE)
                        .replace("$strimzi_cluster_name", CLUSTER)
                        .replace("$kraft_node", ".*"),
                }
            })
            .collect()
    }

    /// What the panel reads that no controller's own exporter serves, if anything: Kubernetes'
    /// container and volume metrics (cAdvisor, kubelet) or a JVM's.
    pub fn reads_elsewhere(&self) -> Option<&'static str> {
        if self.query.contains("container_") || self.query.contains("kubelet_") {
            Some("Kubernetes' own metrics (cAdvisor, kubelet)")
        } else if self.query.contains("jvm_") {
            Some("a JVM's metrics")
        } else {
            None
        }
    }
}

/// A Prometheus server, killed when dropped.
pub struct Prometheus {
    _process: ChildGuard,
    addr: SocketAddr,
    started: Instant,
}

impl Prometheus {
    /// Starts Prometheus scraping each of `controllers` (node id, `/metrics` address) every
    /// second, labelled as Strimzi's PodMonitor labels pod `my-cluster-controller-<id>`, with
    /// the controller alerts loaded; returns once it is ready.
    pub fn start(dir: &TestDir, controllers: &[(i32, SocketAddr)]) -> Prometheus {
        let home = dir.subdir("prometheus");
        let rules = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("compat/prometheus/kafka-controller-alerts.yaml");
        let targets: String = controllers
            .iter()
            .map(|(id, addr)| {
                let pod = Self::pod(*id);
                format!(
                    "      - targets: [\"{addr}\"]\n        labels:\n          \
                     namespace: {NAMESPACE}\n          strimzi_io_cluster: {CLUSTER}\n          \
                     strimzi_io_name: {CLUSTER}-kafka\n          kubernetes_pod_name: {pod}\n          \
                     pod: {pod}\n          container: kafka\n"
                )
            })
            .collect();
        let config = home.join("prometheus.yml");
        fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n\
                 rule_files: [\"{}\"]\n\
                 scrape_configs:\n  - job_name: kraft-controllers\n    static_configs:\n{targets}",
                rules.display()
            ),
        )
        .expect("write prometheus.yml");
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                home.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--log.level=warn");
        let process = ChildGuard::spawn_logged("prometheus", cmd, &dir.log_path("prometheus"))
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start prometheus ({e}): the compat suite needs Debian's `prometheus` \
                     package (.ci/run installs it)"
                )
            });
        let p = Prometheus {
            _process: process,
            addr,
            started: Instant::now(),
        };
        p.wait("Prometheus to be ready", |p| {
            http_get(p.addr, "/-/ready")
                .ok()
                .filter(|(code, _)| *code == 200)
        });
        p
    }

    /// Every panel of Strimzi's KRaft dashboard that reads a controller's own metrics returns data
    /// (the others read Kubernetes' or a JVM's, which no kraftd exports: they are listed), with a
    /// series for each of the `controllers` targets.
    pub fn assert_dashboard_has_data(&self, controllers: usize) {
        let panels = Panel::strimzi_kraft();
        let (ours, elsewhere): (Vec<&Panel>, Vec<&Panel>) =
            panels.iter().partition(|p| p.reads_elsewhere().is_none());
        // Every panel groups by pod: one series per controller (the raft-state table one per
        // controller and state).
        for panel in &ours {
            let what = format!("a series per controller for panel {:?}", panel.title);
            let series = self.wait(&what, |p| {
                let n = p
                    .query(&panel.query)
                    .unwrap_or_else(|e| panic!("panel {:?}: {e}", panel.title))
                    .len();
                (n >= controllers).then_some(n)
            });
            eprintln!("prometheus: panel {:?}: {series} series", panel.title);
        }
        assert_eq!(
            (ours.len(), elsewhere.len()),
            (14, 7),
            "the dashboard's panels that read a controller's metrics, and the others"
        );
        for panel in &elsewhere {
            let series = self.query(&panel.query).expect("a valid query").len();
            eprintln!(
                "prometheus: panel {:?} reads {} ({series} series here)",
                panel.title,
                panel.reads_elsewhere().expect("elsewhere")
            );
        }
        eprintln!(
            "prometheus: {} of the {} panels of Strimzi's KRaft dashboard read the controllers' metrics, all with data",
            ours.len(),
            panels.len()
        );
    }

    /// An instant query's result vector (`/api/v1/query`), or why not.
    pub fn query(&self, promql: &str) -> Result<Vec<Value>, String> {
        let path = format!("/api/v1/query?query={}", percent_encode(promql));
        let (code, body) = http_get(self.addr, &path)?;
        let v: Value = serde_json::from_str(&body)
            .map_err(|e| format!("{promql}: answer {code} is not JSON ({e}): {body}"))?;
        if v["status"] != "success" {
            return Err(format!("{promql}: {code} {}", v["error"]));
        }
        Ok(v["data"]["result"].as_array().cloned().unwrap_or_default())
    }

    /// How long it has been running.
    pub fn age(&self) -> Duration {
        self.started.elapsed()
    }

    /// Waits until `n` targets are up, then two rule evaluations more (1 s apart), so that the
    /// alerts have been evaluated on every target's data.
    pub fn wait_targets_up(&self, n: usize) {
        self.wait(&format!("{n} targets up"), |p| {
            let up = p.query("count(up == 1)").ok()?;
            let count: f64 = up.first()?["value"][1].as_str()?.parse().ok()?;
            (count as usize == n).then_some(())
        });
        std::thread::sleep(Duration::from_secs(2));
    }

    /// Whether alert `name` was firing at any evaluation of the last `within` (Prometheus's own
    /// `ALERTS` series).
    pub fn fired_within(&self, name: &str, within: Duration) -> bool {
        let query = format!(
            "max_over_time(ALERTS{{alertname=\"{name}\",alertstate=\"firing\"}}[{}s])",
            within.as_secs().max(1)
        );
        !self
            .query(&query)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    }

    /// The `pod` labels of alert `name`'s firing instances (Prometheus's own `ALERTS` series).
    pub fn firing_pods(&self, name: &str) -> BTreeSet<String> {
        let query = format!("ALERTS{{alertname=\"{name}\",alertstate=\"firing\"}}");
        self.query(&query)
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .filter_map(|s| s["metric"]["pod"].as_str().map(String::from))
            .collect()
    }

    /// The controller `id`'s `pod` label.
    pub fn pod(id: i32) -> String {
        format!("{CLUSTER}-controller-{id}")
    }

    /// The state of alert `name`: "pending" or "firing", or None while inactive.
    pub fn alert_state(&self, name: &str) -> Option<String> {
        let (_, body) = http_get(self.addr, "/api/v1/alerts").unwrap_or_else(|e| panic!("{e}"));
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        v["data"]["alerts"]
            .as_array()?
            .iter()
            .find(|a| a["labels"]["alertname"] == name)
            .and_then(|a| a["state"].as_str().map(String::from))
    }

    /// Waits until alert `name` is in `state` ("firing", or None: inactive); how long it took.
    pub fn wait_alert(&self, name: &str, state: Option<&str>) -> Duration {
        let start = Instant::now();
        self.wait(&format!("alert {name} to be {state:?}"), |p| {
            (p.alert_state(name).as_deref() == state).then_some(())
        });
        start.elapsed()
    }

    /// Polls `probe` until it gives a value, for up to [`WAIT`].
    pub fn wait<T>(&self, what: &str, mut probe: impl FnMut(&Prometheus) -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(v) = probe(self) {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// A query string's percent-encoding (RFC 3986's unreserved characters kept).
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
