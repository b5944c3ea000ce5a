//! A stock Kafka 4.4 broker against a single kraftd controller in the shape `make run` starts
//! (config/controller.properties, formatted `--standalone`): the broker registers, catches up,
//! is unfenced and serves clients; killed with SIGKILL it is fenced once its session times out;
//! restarted (a new incarnation) it is unfenced again at a new epoch; on SIGTERM it shuts down
//! in a controlled way, granted by kraftd. Afterwards Java's own image of kraftd's log equals
//! kraftd's.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::metrics::{http_get, leads, scrape, Scrape};
use crate::harness::quorum_probe::round_trip;
use crate::harness::{
    free_port, JavaBroker, Kafka, KraftdProcess, Properties, Quorum, TestDir, Tool,
    KRAFTD_COMMAND_TIMEOUT,
};
use kraftd::protocol::codec::Message;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::broker_registration_request::{Feature, Listener};
use kraftd::protocol::messages::{
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse, DescribeClusterRequest, DescribeClusterResponse,
};

const BROKER: i32 = 2;
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// Kafka's default `broker.session.timeout.ms`, which the `make run` config keeps.
const SESSION_TIMEOUT: Duration = Duration::from_millis(9000);
const RUNNING: &str = "The broker has been unfenced. Transitioning from RECOVERY to RUNNING.";
/// Logged once the listeners accept connections, which is a little after RUNNING.
const SERVING: &str = "Kafka Server started";

#[test]
fn a_stock_broker_registers_unfences_and_is_fenced_when_its_session_expires() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let endpoint = format!("127.0.0.1:{port}");
    let data = dir.subdir("kraftd-1");
    let mut props = Properties::read(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("config/controller.properties"),
    );
    props
        .set("listeners", format!("CONTROLLER://{endpoint}"))
        .set("controller.quorum.bootstrap.servers", endpoint.clone())
        .set("log.dirs", data.display().to_string());
    // The `make run` config serves HTTP on 9404; this test on a port of its own.
    let http = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    props.set("kraftd.http.listener", http.to_string());
    let config = KraftdProcess::write_config(&dir, "kraftd-1", &props);
    let config = config.display().to_string();
    let cluster_id = KraftdProcess::run(&["random-uuid"], &[], KRAFTD_COMMAND_TIMEOUT)
        .stdout
        .trim()
        .to_string();
    KraftdProcess::run(
        &["format", "--standalone", "-t", &cluster_id, "-c", &config],
        &[],
        KRAFTD_COMMAND_TIMEOUT,
    )
    .assert_success();
    let mut kraftd = KraftdProcess::start(&dir, "kraftd-1", &["start", &config], &[]);
    let status = wait_for("kraftd to lead", START_TIMEOUT, || {
        kafka
            .quorum_status(&endpoint)
            .ok()
            .filter(|s| s.leader_id == 1)
    });
    eprintln!("kraftd leads: {status:?}");
    // Its HTTP listener: alive, ready (it leads, its log dir takes writes), and a leader's
    // metrics.
    let (code, body) = wait_for("kraftd to be ready", START_TIMEOUT, || {
        http_get(http, "/readyz").ok().filter(|(c, _)| *c == 200)
    });
    assert_eq!(
        (code, body.as_str()),
        (
            200,
            "ready: leader 1, caught up, metadata log dir writable\n"
        )
    );
    assert_eq!(
        http_get(http, "/healthz").unwrap(),
        (200, "ok: node loop alive\n".to_string())
    );
    let metrics = Scrape::parse(&scrape(http).unwrap());
    assert!(leads(&metrics), "not a leader's metrics: {metrics:?}");
    assert_eq!(
        metrics.value("kafka_controller_kafkacontroller_activecontrollercount"),
        Some(1.0)
    );
    assert!(
        metrics
            .value("process_resident_memory_bytes")
            .unwrap_or(0.0)
            > 0.0
    );
    let log = data.join("__cluster_metadata-0");

    // 1. The broker registers, catches up and is unfenced: it reaches RUNNING and serves clients.
    let mut broker = JavaBroker::builder(BROKER, Quorum::Bootstrap(vec![endpoint.clone()]))
        .cluster_id(cluster_id.clone())
        .start(&dir);
    let broker_log = broker.log_path().to_path_buf();
    wait_for_count(&mut broker, &broker_log, RUNNING, 1, START_TIMEOUT);
    wait_for_count(&mut broker, &broker_log, SERVING, 1, START_TIMEOUT);
    let first = broker_view(broker.broker_port().unwrap());
    assert!(!first.is_fenced, "the broker sees itself fenced: {first:?}");
    kafka
        .broker_api_versions(&broker.bootstrap_server())
        .assert_success();
    // DescribeQuorum forwarded by the broker to kraftd in an Envelope.
    let described = kafka.run(
        Tool::MetadataQuorum,
        &[
            "--bootstrap-server",
            &broker.bootstrap_server(),
            "describe",
            "--status",
        ],
    );
    described.assert_success();
    assert!(described.stdout.contains("LeaderId:"), "{described}");
    // UpdateFeatures forwarded by the broker in an Envelope: decided by kraftd.
    let features = |feature: &str| {
        kafka.run(
            Tool::Features,
            &[
                "--bootstrap-server",
                &broker.bootstrap_server(),
                "upgrade",
                "--feature",
                feature,
            ],
        )
    };
    features("group.version=1").assert_success();
    let refused = features("kraftd.no.such.feature=1");
    assert!(
        !refused.success()
            && refused
                .to_string()
                .contains("Local controller 1 does not support this feature."),
        "{refused}"
    );
    let registered = broker_in_image(&log);
    assert_eq!(registered["fenced"], false, "{registered}");
    let first_epoch = registered["epoch"].as_i64().unwrap();
    assert!(
        !registered["directories"].as_array().unwrap().is_empty(),
        "the registration carries the broker's log dirs: {registered}"
    );

    // 2. SIGKILL: no more heartbeats, so kraftd fences it once the session times out, and not
    // before (its last heartbeat was at most an interval before the kill).
    broker.kill9();
    let killed = Instant::now();
    let fenced_after = wait_for("the dead broker to be fenced", START_TIMEOUT, || {
        (broker_in_image(&log)["fenced"] == true).then(|| killed.elapsed())
    });
    eprintln!("fenced {fenced_after:?} after SIGKILL");
    assert!(
        fenced_after >= SESSION_TIMEOUT - Duration::from_millis(2500)
            && fenced_after <= SESSION_TIMEOUT + Duration::from_secs(6),
        "fenced {fenced_after:?} after the kill, session timeout {SESSION_TIMEOUT:?}"
    );
    assert!(kraftd.wait_for_log(
        &format!(
            "Fencing broker {BROKER} at epoch {first_epoch} because its session has timed out."
        ),
        Duration::from_secs(1)
    ));

    // 3. Restarted, it is a new incarnation: registered at a new epoch and unfenced again.
    broker.restart(&dir);
    wait_for_count(&mut broker, &broker_log, RUNNING, 2, START_TIMEOUT);
    wait_for_count(&mut broker, &broker_log, SERVING, 2, START_TIMEOUT);
    let again = broker_in_image(&log);
    assert_eq!(again["fenced"], false, "{again}");
    let second_epoch = again["epoch"].as_i64().unwrap();
    assert!(second_epoch > first_epoch, "{first_epoch} then {again}");
    assert!(!broker_view(broker.broker_port().unwrap()).is_fenced);
    // UnregisterBroker forwarded by the broker in an Envelope: an unknown id gets Java's error.
    let unknown = kafka.run(
        Tool::Cluster,
        &[
            "unregister",
            "--bootstrap-server",
            &broker.bootstrap_server(),
            "--id",
            "99",
        ],
    );
    assert!(
        !unknown.success()
            && unknown
                .to_string()
                .contains("Broker ID 99 is not currently registered"),
        "{unknown}"
    );

    // Bad requests straight to kraftd: Java's error codes, and kraftd keeps serving.
    let mut wrong_cluster = registration_request(7);
    wrong_cluster.cluster_id = "notTheClusterIdAtAll00".into();
    let r = round_trip(port, 62, 4, &wrong_cluster).expect("kraftd answers");
    let r = BrokerRegistrationResponse::decode_exact(&r, 4).unwrap();
    assert_eq!(r.error_code, ErrorCode::INCONSISTENT_CLUSTER_ID.0, "{r:?}");
    let stale = BrokerHeartbeatRequest {
        broker_id: BROKER,
        broker_epoch: first_epoch,
        current_metadata_offset: 0,
        want_fence: true,
        ..Default::default()
    };
    let r = round_trip(port, 63, 2, &stale).expect("kraftd answers");
    let r = BrokerHeartbeatResponse::decode_exact(&r, 2).unwrap();
    assert_eq!(r.error_code, ErrorCode::STALE_BROKER_EPOCH.0, "{r:?}");
    assert!(kraftd.wait_for_log(
        "BrokerRegistration from broker 7 refused with INCONSISTENT_CLUSTER_ID",
        Duration::from_secs(5)
    ));
    assert!(kraftd.wait_for_log(
        &format!("BrokerHeartbeat from broker {BROKER} refused with STALE_BROKER_EPOCH: Expected broker epoch {second_epoch}, but got broker epoch {first_epoch}"),
        Duration::from_secs(5)
    ));

    // 4. SIGTERM: a controlled shutdown that kraftd grants (the broker leads no partition, so
    // at once), and the broker exits cleanly.
    broker.sigterm();
    let status = broker.wait_exit(Duration::from_secs(60));
    // The JVM exits with 128 + SIGTERM once its shutdown hook has run.
    assert_eq!(
        status.code(),
        Some(143),
        "the broker exited with {status:?}"
    );
    let broker_text = fs::read_to_string(&broker_log).unwrap();
    assert!(
        broker_text.contains("[BrokerServer id=2] shut down completed"),
        "the broker did not shut down cleanly; log {}",
        broker_log.display()
    );
    assert!(
        broker_text.contains("The controller has asked us to exit controlled shutdown."),
        "the broker did not get ShouldShutDown; log {}",
        broker_log.display()
    );
    assert!(kraftd.wait_for_log(
        &format!("broker {BROKER}: heartbeat"),
        Duration::from_secs(1)
    ));
    let after = broker_in_image(&log);
    assert_eq!(
        (after["fenced"].clone(), after["epoch"].as_i64()),
        (Value::Bool(true), Some(second_epoch))
    );

    // 5. UnregisterBroker straight to the controller (kafka-cluster --bootstrap-controller).
    let unregister = |id: &str| {
        kafka.run(
            Tool::Cluster,
            &[
                "unregister",
                "--bootstrap-controller",
                &endpoint,
                "--id",
                id,
            ],
        )
    };
    unregister("2").assert_success();
    assert_eq!(broker_in_image(&log), Value::Null);
    let again = unregister("2");
    assert!(
        !again.success()
            && again
                .to_string()
                .contains("Broker ID 2 is not currently registered"),
        "{again}"
    );

    // 6. Java's image of kraftd's log is kraftd's own.
    kraftd.stop(Duration::from_secs(30));
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}

/// A registration like a stock broker's, for raw requests.
fn registration_request(id: i32) -> BrokerRegistrationRequest {
    BrokerRegistrationRequest {
        broker_id: id,
        cluster_id: String::new(),
        incarnation_id: kraftd::protocol::codec::Uuid([9; 16]),
        listeners: vec![Listener {
            name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port: 1,
            ..Default::default()
        }],
        features: vec![Feature {
            name: "metadata.version".into(),
            min_supported_version: 7,
            max_supported_version: 33,
            ..Default::default()
        }],
        log_dirs: vec![kraftd::protocol::codec::Uuid([8; 16])],
        previous_broker_epoch: -1,
        ..Default::default()
    }
}

/// Broker `BROKER` in kraftd's image of its live log.
fn broker_in_image(log: &Path) -> Value {
    let image = kraftd_image(log, None);
    image["cluster"]["brokers"][BROKER.to_string()].clone()
}

/// How the broker sees itself (DescribeCluster v2 with fenced brokers, from its metadata).
fn broker_view(
    port: u16,
) -> kraftd::protocol::messages::describe_cluster_response::DescribeClusterBroker {
    let request = DescribeClusterRequest {
        endpoint_type: 1,
        include_fenced_brokers: true,
        ..Default::default()
    };
    let body = round_trip(port, 60, 2, &request).expect("the broker answers DescribeCluster");
    let response = DescribeClusterResponse::decode_exact(&body, 2).unwrap();
    response
        .brokers
        .into_iter()
        .find(|b| b.broker_id == BROKER)
        .unwrap_or_else(|| panic!("broker {BROKER} is not in its own DescribeCluster"))
}

/// Waits until the broker's log holds `needle` `n` times (the log is kept across restarts).
#[track_caller]
fn wait_for_count(
    broker: &mut JavaBroker,
    log: &PathBuf,
    needle: &str,
    n: usize,
    timeout: Duration,
) {
    let deadline = Instant::now() + timeout;
    loop {
        let count = fs::read(log)
            .map(|b| String::from_utf8_lossy(&b).matches(needle).count())
            .unwrap_or(0);
        if count >= n {
            return;
        }
        assert!(
            broker.is_running() && Instant::now() < deadline,
            "broker {BROKER} did not log {needle:?} {n} time(s) (running: {}); log {}",
            broker.is_running(),
            log.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[track_caller]
fn wait_for<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
