//! `kraftd test-raft-server`, the kraftd side of `make bench-raft`: a bare raft node whose
//! records are opaque bytes (as Kafka's TestRaftServer's), so no controller replays them. A
//! single voter must lead, commit and report, and keep running.

use std::time::Duration;

use crate::harness::{free_port, KraftdProcess, Properties, TestDir};

#[test]
fn a_single_test_raft_server_leads_commits_and_reports_without_halting() {
    let dir = TestDir::new();
    let port = free_port();
    let mut props = Properties::new();
    props
        .set("node.id", "1")
        .set("process.roles", "controller")
        .set("listeners", format!("CONTROLLER://127.0.0.1:{port}"))
        .set("controller.listener.names", "CONTROLLER")
        .set("controller.quorum.voters", format!("1@127.0.0.1:{port}"))
        .set("log.dirs", dir.subdir("data").display().to_string());
    let config = KraftdProcess::write_config(&dir, "raft-1", &props);
    let config = config.display().to_string();
    let mut node = KraftdProcess::start(
        &dir,
        "raft-1",
        &[
            "test-raft-server",
            "--config",
            &config,
            "--throughput",
            "500",
            "--replica-directory-id",
            "b8tRS7h4TJ2Vt43Dp85v2A",
            "--report-interval-ms",
            "200",
        ],
        &[],
    );
    assert!(
        node.wait_for_log("\"raft_bench\":1", Duration::from_secs(20)),
        "no report line within 20 s; see {}",
        node.log_path().display()
    );
    // Several reports later it still runs: committed opaque records never stop it.
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        node.is_running(),
        "test-raft-server exited; see {}",
        node.log_path().display()
    );
    let log = std::fs::read_to_string(node.log_path()).unwrap_or_default();
    assert!(!log.contains("Halting"), "it halted:\n{log}");
    let reports = log.matches("\"raft_bench\":1").count();
    assert!(reports >= 3, "{reports} report lines:\n{log}");
    node.sigterm();
}
