//! `kraftd doctor`: a live quorum checked against the KRaft incident runbook. It asks every
//! controller it can find (starting from `--bootstrap-controller`, over TLS and SASL as
//! `--command-config` says, as Kafka's tools do), watches for `--window` seconds, and gives a
//! verdict per check with the cause it found and what to do:
//!
//! - `leader`: a leader is known, or every metadata operation times out;
//! - `voters`: which voters fetch from the leader; for each that does not, whether it is
//!   stopped (refused), stalled (accepts, answers nothing), unresolvable, refused by TLS or SASL,
//!   or running but cut off from the leader; whether the majority holds;
//! - `replication`: fetching voters that lag more than 500 ms;
//! - `elections`: leader changes during the window (churn);
//! - `settings`: `controller.quorum.voters` that differs between voters or from the voter set;
//! - `clocks`: a controller whose wall clock is off the others' (see `clock`), read from the
//!   leader's answer and from each `--metrics` endpoint (kraftd's, or a Java controller's JMX
//!   exporter);
//! - `disk`: the metadata log directory's free space, from each kraftd `--metrics` endpoint
//!   (see `disk`; only when one was read);
//! - `brokers`: fenced or flapping brokers, from the controllers' broker registration gauges
//!   (see `brokers`; only when a `--metrics` endpoint reported brokers).
//!
//! `--data-dir DIR` checks a stopped node's metadata log directory instead (see `offline`).
//!
//! Exit status: 0 healthy, 1 degraded, 2 down; 3 when the doctor itself cannot run (an
//! unreadable `--command-config` or `--config`).

mod brokers;
mod client_config;
pub mod clock;
#[cfg(test)]
mod clock_tests;
pub mod diagnose;
pub mod disk;
pub mod gather;
pub mod offline;
pub mod readings;
pub mod report;
mod scrape;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use clock::MetricsEndpoint;
use diagnose::{diagnose, Limits};
use gather::Gatherer;
use readings::MetricsReadings;

/// The exit status when the doctor cannot run at all.
pub const CANNOT_RUN: i32 = 3;

#[derive(Debug, Args, PartialEq, Eq)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["bootstrap_controller", "data_dir"])))]
pub struct DoctorArgs {
    /// Controllers to start from, as Kafka's tools take them
    #[arg(long = "bootstrap-controller", value_name = "HOST:PORT[,HOST:PORT...]")]
    pub bootstrap_controller: Option<String>,
    /// Check a stopped node's metadata log directory (the log dir holding meta.properties, or
    /// its __cluster_metadata-0) instead, reading only
    #[arg(long = "data-dir", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// With --data-dir: the node's server.properties, whose node.id and metadata log dir the
    /// directory must match
    #[arg(
        short = 'c',
        long = "config",
        value_name = "FILE",
        requires = "data_dir"
    )]
    pub config: Option<PathBuf>,
    /// Client settings for the controller listener (security.protocol, ssl.*, sasl.*), as
    /// Kafka's tools take them
    #[arg(long = "command-config", value_name = "FILE")]
    pub command_config: Option<PathBuf>,
    /// Seconds to watch the quorum, for election churn and voters that stopped fetching
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub window: u64,
    /// How long to wait for each connection and answer, in ms (three times as long for a
    /// --metrics scrape)
    #[arg(long = "timeout-ms", value_name = "MS", default_value_t = 3000)]
    pub timeout_ms: u64,
    /// The quorum's controller.quorum.fetch.timeout.ms (a voter silent for longer is lost)
    #[arg(long = "fetch-timeout-ms", value_name = "MS", default_value_t = 2000)]
    pub fetch_timeout_ms: i64,
    /// Controllers' Prometheus endpoints (kraftd's kraftd.http.listener, a Java controller's
    /// JMX exporter with Strimzi-style rules), to read each one's clock: NODE_ID=http://HOST:PORT[/PATH]
    #[arg(long, value_name = "ID=URL[,ID=URL...]")]
    pub metrics: Vec<String>,
    /// A controller's clock further than this from the others' is reported, in ms
    #[arg(long = "clock-offset-ms", value_name = "MS", default_value_t = 250)]
    pub clock_offset_ms: i64,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// Runs the checks, prints the report, returns the exit status.
pub fn run(args: &DoctorArgs) -> i32 {
    match (&args.data_dir, &args.bootstrap_controller) {
        (Some(dir), _) => run_offline(args, dir),
        (None, Some(bootstrap)) => run_online(args, bootstrap),
        (None, None) => {
            eprintln!("kraftd doctor: give --bootstrap-controller or --data-dir");
            CANNOT_RUN
        }
    }
}

fn run_offline(args: &DoctorArgs, dir: &std::path::Path) -> i32 {
    let expected = match &args.config {
        None => None,
        Some(path) => match crate::server::cli::load_config(path) {
            Ok(c) => Some(offline::Expected {
                node_id: c.node_id,
                metadata_log_dir: c.metadata_log_dir,
            }),
            Err(e) => {
                eprintln!("kraftd doctor: {e}");
                return CANNOT_RUN;
            }
        },
    };
    let checks = offline::diagnose_dir(dir, expected.as_ref());
    let target = dir.display().to_string();
    print_report(args, &target, None, &checks)
}

fn print_report(
    args: &DoctorArgs,
    target: &str,
    window_s: Option<u64>,
    checks: &[diagnose::Check],
) -> i32 {
    if args.json {
        println!("{:#}", report::json(target, window_s, checks));
    } else {
        print!("{}", report::text(target, window_s, checks));
    }
    report::overall(checks).exit_code()
}

fn run_online(args: &DoctorArgs, bootstrap_arg: &str) -> i32 {
    let settings = match client_config::read(args.command_config.as_deref()) {
        Ok(s) => gather::peer_settings_with_timeout(s, Duration::from_millis(args.timeout_ms)),
        Err(e) => {
            eprintln!("kraftd doctor: {e}");
            return CANNOT_RUN;
        }
    };
    let bootstrap: BTreeSet<String> = bootstrap_arg
        .split(',')
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect();
    if bootstrap.is_empty() {
        eprintln!("kraftd doctor: --bootstrap-controller names no HOST:PORT");
        return CANNOT_RUN;
    }
    let mut metrics = Vec::new();
    for arg in &args.metrics {
        match clock::parse_metrics_arg(arg) {
            Ok(endpoints) => metrics.extend(endpoints),
            Err(e) => {
                eprintln!("kraftd doctor: {e}");
                return CANNOT_RUN;
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kraftd doctor: cannot start its runtime: {e}");
            return CANNOT_RUN;
        }
    };
    let window = Duration::from_secs(args.window);
    // A scrape walks every metric of the node (every MBean of a Java controller's JVM).
    let scrape_timeout = Duration::from_millis(args.timeout_ms) * 3;
    let (samples, voter_settings, readings) = runtime.block_on(async {
        let mut g = Gatherer::new(settings);
        let mut readings = MetricsReadings::default();
        let first = g.sample(&bootstrap).await;
        read_metrics(&metrics, scrape_timeout, &mut readings).await;
        tokio::time::sleep(window / 2).await;
        read_metrics(&metrics, scrape_timeout, &mut readings).await;
        tokio::time::sleep(window / 2).await;
        let last = g.sample(&bootstrap).await;
        read_metrics(&metrics, scrape_timeout, &mut readings).await;
        let voters = last
            .leader()
            .map(|v| v.endpoints.clone())
            .unwrap_or_default();
        let voter_settings = g.voter_settings(&voters).await;
        (vec![first, last], voter_settings, readings)
    });
    let limits = Limits {
        fetch_timeout_ms: args.fetch_timeout_ms,
        clock_offset_ms: args.clock_offset_ms,
        ..Limits::default()
    };
    let checks = diagnose(&samples, &voter_settings, &readings, limits);
    print_report(args, bootstrap_arg, Some(args.window), &checks)
}

/// One reading of each endpoint, all at once.
async fn read_metrics(
    endpoints: &[MetricsEndpoint],
    timeout: Duration,
    readings: &mut MetricsReadings,
) {
    let mut reads = tokio::task::JoinSet::new();
    for e in endpoints.iter().cloned() {
        reads.spawn(async move { (e.node, scrape::read_endpoint(&e, timeout).await) });
    }
    while let Some(done) = reads.join_next().await {
        match done {
            Ok((node, reading)) => readings.add(node, reading),
            Err(e) => readings.add(-1, Err(format!("a metrics read failed: {e}"))),
        }
    }
}
