//! `kraftd doctor` as an operator runs it: against controller endpoints, with the harness's
//! `--command-config` when their listener is secured, the JSON report read back.

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::transport::{tool_config, transport_of, Transport};
use super::KraftdProcess;

/// What one doctor run said.
#[derive(Debug)]
pub struct Diagnosis {
    /// 0 healthy, 1 degraded, 2 down.
    pub exit: i32,
    pub report: Value,
}

impl Diagnosis {
    /// The check named `name` (`leader`, `voters`, ...).
    pub fn check(&self, name: &str) -> &Value {
        self.report["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|c| c["name"] == name))
            .unwrap_or_else(|| panic!("no {name} check in {:#}", self.report))
    }

    /// The summary line of check `name`.
    pub fn summary(&self, name: &str) -> String {
        self.check(name)["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The findings of check `name`, which must be degraded.
    #[track_caller]
    pub fn degraded_findings(&self, name: &str) -> Vec<String> {
        assert_eq!(
            self.check(name)["verdict"],
            "degraded",
            "the {name} check is not degraded:\n{:#}",
            self.report
        );
        self.findings(name)
    }

    /// The findings of check `name`, one string each.
    pub fn findings(&self, name: &str) -> Vec<String> {
        self.check(name)["findings"]
            .as_array()
            .map(|f| {
                f.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs `kraftd doctor --bootstrap-controller <endpoints> --window <window_s> --json`, with
/// `--metrics ID=http://ADDR/metrics` for each of `metrics` (node id, address).
pub fn doctor(endpoints: &[String], window_s: u64, metrics: &[(i32, SocketAddr)]) -> Diagnosis {
    let port = endpoints[0]
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .expect("host:port");
    let transport = transport_of(port);
    let config = (transport != Transport::Plaintext)
        .then(|| tool_config(transport, None).display().to_string());
    let bootstrap = endpoints.join(",");
    let window = window_s.to_string();
    let metrics = metrics
        .iter()
        .map(|(id, addr)| format!("{id}=http://{addr}/metrics"))
        .collect::<Vec<_>>()
        .join(",");
    let mut args = vec![
        "doctor",
        "--bootstrap-controller",
        &bootstrap,
        "--window",
        &window,
        "--json",
    ];
    if let Some(c) = &config {
        args.extend(["--command-config", c.as_str()]);
    }
    if !metrics.is_empty() {
        args.extend(["--metrics", metrics.as_str()]);
    }
    run_doctor(&args, Duration::from_secs(window_s + 60))
}

/// Asserts that the doctor found the quorum degraded (exit 1) with voter `id` alone lost, for
/// `cause` (e.g. "stopped: nothing listens there"); returns that finding.
#[track_caller]
pub fn assert_voter_lost(d: &Diagnosis, id: i32, cause: &str) -> String {
    let findings = d.degraded_findings("voters");
    assert!(
        d.exit == 1
            && findings.len() == 1
            && findings[0].starts_with(&format!("voter {id} at "))
            && findings[0].contains(cause),
        "the doctor does not name voter {id} alone as {cause:?}:\n{:#}",
        d.report
    );
    findings[0].clone()
}

/// Asserts that the doctor's clocks check is degraded and names controller `node` alone, its
/// clock `ahead` of the others' within `tolerance`; returns the offset it gave, in ms.
pub fn assert_clock_named(d: &Diagnosis, node: i32, ahead: Duration, tolerance: Duration) -> i64 {
    assert_eq!(d.check("clocks")["verdict"], "degraded", "{:#}", d.report);
    let summary = d.summary("clocks");
    let prefix = format!("controller {node} is ");
    let offset: i64 = summary
        .strip_prefix(&prefix)
        .and_then(|rest| rest.split_once(" ms ahead against "))
        .and_then(|(ms, _)| ms.parse().ok())
        .unwrap_or_else(|| panic!("the clocks check does not name controller {node} alone as ahead: {summary:?}\n{:#}", d.report));
    let error = (offset - ahead.as_millis() as i64).abs();
    assert!(
        error <= tolerance.as_millis() as i64,
        "the doctor put controller {node} {offset} ms ahead; it runs {ahead:?} ahead (tolerance {tolerance:?})\n{:#}",
        d.report
    );
    offset
}

/// Runs `kraftd <args>` (a doctor command with `--json`) and reads its exit status and report.
fn run_doctor(args: &[&str], timeout: Duration) -> Diagnosis {
    let out = KraftdProcess::run(args, &[], timeout);
    let exit = out
        .code()
        .unwrap_or_else(|| panic!("kraftd doctor did not finish:\n{out}"));
    let report = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("kraftd doctor printed no JSON ({e}):\n{out}"));
    Diagnosis { exit, report }
}

/// Runs `kraftd doctor --data-dir <dir> --json` on a stopped node's metadata log directory.
pub fn doctor_offline(dir: &Path) -> Diagnosis {
    let dir = dir.display().to_string();
    run_doctor(
        &["doctor", "--data-dir", &dir, "--json"],
        Duration::from_secs(120),
    )
}

/// A copy of the directory tree `from` at `to` (files and directories only).
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
    for entry in
        fs::read_dir(from).unwrap_or_else(|e| panic!("cannot list {}: {e}", from.display()))
    {
        let path = entry.expect("a directory entry").path();
        let target = to.join(path.file_name().expect("a name"));
        if path.is_dir() {
            copy_tree(&path, &target);
        } else if path.is_file() {
            fs::copy(&path, &target)
                .unwrap_or_else(|e| panic!("cannot copy {}: {e}", path.display()));
        }
    }
}

/// The offline checks on three copies of a stopped node's log directory `log_dir`, made under
/// `scratch`: as it is (not down), with its last segment's last batch torn (degraded, the tear
/// named and what start-up cuts), and with a byte flipped inside its first batch (degraded,
/// the corruption named); the original is never touched.
pub fn assert_offline_diagnoses(log_dir: &Path, scratch: &Path) {
    let partition = |root: &Path| root.join("__cluster_metadata-0");
    let last_segment = |root: &Path| {
        let mut logs: Vec<PathBuf> = fs::read_dir(partition(root))
            .expect("the partition directory")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        logs
    };
    let as_is = scratch.join("as-is");
    copy_tree(log_dir, &as_is);
    let d = doctor_offline(&as_is);
    assert!(d.exit <= 1, "{:#}", d.report);
    assert_eq!(
        d.check("meta.properties")["verdict"],
        "healthy",
        "{:#}",
        d.report
    );
    assert_eq!(d.check("snapshots")["verdict"], "healthy", "{:#}", d.report);

    let torn = scratch.join("torn");
    copy_tree(log_dir, &torn);
    let segment = last_segment(&torn).pop().expect("a segment");
    let len = fs::metadata(&segment).expect("the segment").len();
    assert!(len > 10, "{} is empty", segment.display());
    let file = fs::OpenOptions::new()
        .write(true)
        .open(&segment)
        .expect("the segment");
    file.set_len(len - 7).expect("cut");
    let d = doctor_offline(&torn);
    assert_eq!(d.exit, 1, "{:#}", d.report);
    let summary = d.summary("log");
    assert!(
        summary.starts_with("a torn tail (a write cut short by a crash) in ")
            && summary.contains("start-up cuts it at byte"),
        "{:#}",
        d.report
    );

    let corrupt = scratch.join("corrupt");
    copy_tree(log_dir, &corrupt);
    let first = last_segment(&corrupt).remove(0);
    let mut bytes = fs::read(&first).expect("the segment");
    // Inside the first batch's records: its CRC no longer matches.
    let at = 61.min(bytes.len() - 1);
    bytes[at] ^= 0x5a;
    fs::write(&first, &bytes).expect("write");
    let d = doctor_offline(&corrupt);
    assert_eq!(d.exit, 1, "{:#}", d.report);
    let summary = d.summary("log");
    assert!(
        summary.starts_with("corruption (") && summary.contains("at byte 0,"),
        "{:#}",
        d.report
    );
}

/// Waits until each of `addrs` serves the controller's applied-record gauges (a Java
/// controller's exporter answers before its controller registered them), so that the doctor
/// can read every clock.
pub fn wait_for_controller_metrics(addrs: &[SocketAddr]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    for &addr in addrs {
        loop {
            let ready = super::metrics::scrape(addr).is_ok_and(|text| {
                super::metrics::Scrape::parse(&text)
                    .families
                    .contains_key("kafka_controller_kafkacontroller_lastappliedrecordtimestamp")
            });
            if ready {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{addr} serves no kafka_controller_kafkacontroller_lastappliedrecordtimestamp"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
