//! A kraftd controller in a live cluster of Java 4.4 controllers and stock brokers: it answers
//! the broker-facing controller APIs as a Java controller that is not active does, and when it
//! wins an election it is the brokers' active controller, its decisions replayed by the Java
//! controllers.
//!
//! One cluster for both checks (JVMs are expensive on two cores): voters 1 and 2 run Java,
//! voter 3 runs kraftd (static voters), brokers 101-103 run stock Kafka.
//! 1. The same bytes to both kinds of follower: every API at every version kraftd advertises,
//!    directly and inside an Envelope, gets the same answer (error messages aside) from the
//!    kraftd follower and the Java follower; ApiVersions ranges agree.
//! 2. Leadership moves while the verifying clients run (an idempotent producer and a
//!    consumer): the leader is stopped and restarted each round, with the other Java frozen
//!    when a Java leader stops, so that kraftd wins and leads until it is stopped in turn. No live broker is fenced, topics are created and
//!    deleted through whoever leads, the Java controllers replay kraftd's records without a
//!    fault, and every acknowledged message is consumed exactly once.

use std::thread;
use std::time::{Duration, Instant};

use crate::harness::mixed_quorum::{Mixed, TIMEOUT};
use crate::harness::quorum_probe::{leader_view, round_trip};
use crate::harness::verifying::VerifyingClients;
use crate::harness::workload::log_view::LogView;
use crate::harness::{JavaBroker, Kafka, Quorum};
use kraftd::protocol::codec::{Message, RawBody, Uuid};
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::{ApiVersionsRequest, ApiVersionsResponse, EnvelopeResponse};
use kraftd::server::api::not_controller::{self, samples, CONTROLLER_APIS};

const KRAFTD: i32 = 3;
const BROKERS: [i32; 3] = [101, 102, 103];

#[test]
fn a_kraftd_follower_answers_like_java_and_never_gets_brokers_fenced() {
    let kafka = Kafka::get();
    let mut q = Mixed::start(&[KRAFTD]);
    let mut brokers: Vec<JavaBroker> = BROKERS
        .iter()
        .map(|&id| {
            JavaBroker::builder(id, Quorum::StaticVoters(q.voters.clone()))
                .cluster_id(q.cluster_id.clone())
                .prop("offsets.topic.replication.factor", 3)
                .prop("transaction.state.log.replication.factor", 3)
                .prop("transaction.state.log.min.isr", 2)
                .start(&q.dir)
        })
        .collect();
    let bootstrap = brokers
        .iter()
        .map(|b| b.bootstrap_server())
        .collect::<Vec<_>>()
        .join(",");
    let started = Instant::now();
    retry("create topic orders", || {
        kafka.topics(
            &bootstrap,
            &[
                "--create",
                "--topic",
                "orders",
                "--partitions",
                "3",
                "--replication-factor",
                "3",
            ],
        )
    });
    retry("create topic golden", || {
        kafka.topics(
            &bootstrap,
            &[
                "--create",
                "--topic",
                "golden",
                "--partitions",
                "1",
                "--replication-factor",
                "3",
            ],
        )
    });
    eprintln!("cluster up, topics created after {:?}", started.elapsed());

    // 1. The same bytes to a kraftd follower and a Java follower.
    let (java_leader, mut epoch) = java_leader(&mut q);
    let java_follower = [1, 2].into_iter().find(|&id| id != java_leader).unwrap();
    let (java_port, kraftd_port) = (port(&q, java_follower), port(&q, KRAFTD));
    let compared = compare_answers(java_port, kraftd_port);
    eprintln!("{compared} (api, version) answers identical on the Java and kraftd followers");

    // 2. Leadership moves with an idempotent producer running: each round the leader (Java or
    //    kraftd) is stopped and restarted; when a Java leader is stopped with the other Java
    //    frozen, only kraftd can stand: it wins and stays the active controller.
    let clients = VerifyingClients::start(&q.dir, &bootstrap, "orders", 100);
    let mut kraftd_led = 0;
    for round in 0..4 {
        let leader = q.wait_for_leader(epoch - 1).leader_id;
        let force = round % 2 == 0 && leader != KRAFTD;
        let other = [1, 2].into_iter().find(|&id| id != leader && id != KRAFTD);
        let moved = Instant::now();
        if let (true, Some(other)) = (force, other) {
            q.member(other).signal(libc::SIGSTOP);
        }
        q.member(leader).sigterm();
        if let (true, Some(other)) = (force, other) {
            thread::sleep(Duration::from_millis(2500));
            q.member(other).signal(libc::SIGCONT);
        }
        let d = q.wait_for_leader(epoch);
        let (next, next_epoch) = (d.leader_id, d.leader_epoch);
        eprintln!(
            "move {}: {} {leader} stopped{} -> {} {next} leads epoch {next_epoch} after {:?}",
            round + 1,
            q.member(leader).kind(),
            if force {
                " with the other Java frozen"
            } else {
                ""
            },
            q.member(next).kind(),
            moved.elapsed()
        );
        epoch = next_epoch;
        let Mixed { dir, members, .. } = &mut q;
        let stopped = &mut members[(leader - 1) as usize];
        stopped.assert_clean_exit(&format!("voter {leader}"));
        stopped.restart(dir);
        // The brokers' controller is whoever leads, kraftd included.
        let name = format!("t-{round}");
        retry(&format!("create {name}"), || {
            kafka.topics(
                &bootstrap,
                &[
                    "--create",
                    "--topic",
                    &name,
                    "--partitions",
                    "2",
                    "--replication-factor",
                    "3",
                ],
            )
        });
        if next == KRAFTD && leader_now(&q) == Some(KRAFTD) {
            kraftd_led += 1;
        }
        retry(&format!("delete {name}"), || {
            kafka.topics(&bootstrap, &["--delete", "--topic", &name])
        });
        for b in brokers.iter_mut() {
            assert!(b.is_running(), "broker {} exited", b.node_id());
        }
    }
    eprintln!("kraftd was the active controller for {kraftd_led} of 4 rounds");
    assert!(
        kraftd_led >= 1,
        "kraftd never led, so the brokers never had it as their controller"
    );
    // The Java controllers replayed kraftd's decisions without a fault.
    for id in [1, 2] {
        q.member(id)
            .assert_java_healthy(&format!("java controller {id}"));
    }

    // Every acknowledged message is consumed, exactly once.
    let tally = clients.finish(Duration::from_secs(60));
    eprintln!("clients: {}", tally.summary());
    tally.assert_exactly_once();
    assert!(
        tally.acked > 100,
        "only {} messages acknowledged",
        tally.acked
    );

    // No live broker was fenced: the log holds no fencing after registration.
    let fenced = LogView::read(&q.members[(KRAFTD - 1) as usize].metadata_dir()).fencings;
    assert!(fenced.is_empty(), "brokers fenced: {fenced:?}");
}

fn port(q: &Mixed, id: i32) -> u16 {
    q.voters[(id - 1) as usize].port
}

/// Runs a Kafka tool until it succeeds (controllers may be moving), for up to `TIMEOUT`.
fn retry(what: &str, mut run: impl FnMut() -> crate::harness::Output) {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let out = run();
        if out.success() {
            return;
        }
        assert!(Instant::now() < deadline, "{what} kept failing:\n{out}");
        thread::sleep(Duration::from_millis(500));
    }
}

/// Waits for a leader; if kraftd won, stops and restarts it until a Java controller leads.
fn java_leader(q: &mut Mixed) -> (i32, i32) {
    let mut after = 0;
    loop {
        let d = q.wait_for_leader(after);
        let (leader, epoch) = (d.leader_id, d.leader_epoch);
        if leader != KRAFTD {
            return (leader, epoch);
        }
        let Mixed { dir, members, .. } = q;
        let kraftd = &mut members[(KRAFTD - 1) as usize];
        kraftd.sigterm();
        kraftd.assert_clean_exit("kraftd");
        kraftd.restart(dir);
        after = epoch;
    }
}

/// The current leader, if one answers.
fn leader_now(q: &Mixed) -> Option<i32> {
    let ports: Vec<u16> = q.voters.iter().map(|v| v.port).collect();
    leader_view(&ports).map(|d| d.leader_id)
}

/// The answer of the node at `port` to one raw request, as JSON.
fn ask(port: u16, key: i16, version: i16, body: &[u8]) -> serde_json::Value {
    let answer = round_trip(port, key, version, &RawBody(body.to_vec()))
        .unwrap_or_else(|| panic!("no answer to api {key} v{version} from port {port}"));
    not_controller::response_json(key, version, &answer)
        .expect("an api answered here")
        .unwrap_or_else(|e| panic!("api {key} v{version} from port {port}: {e}"))
}

/// `json` without its `errorMessage` fields (kraftd and Java word some differently).
fn without_messages(json: &serde_json::Value) -> serde_json::Value {
    match json {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "errorMessage")
                .map(|(k, v)| (k.clone(), without_messages(v)))
                .collect(),
        ),
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(without_messages).collect())
        }
        other => other.clone(),
    }
}

/// Sends every API at every version kraftd advertises to both followers, directly and in an
/// Envelope, and requires the same answers. Returns how many answers were compared.
fn compare_answers(java: u16, kraftd: u16) -> usize {
    let mut compared = 0;
    let topic_id = Uuid([7; 16]);
    let versions = |port: u16| {
        let request = ApiVersionsRequest {
            client_software_name: "compat".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
        let body = round_trip(port, 18, 4, &request).expect("ApiVersions answered");
        ApiVersionsResponse::decode_exact(&body, 4)
            .unwrap()
            .api_keys
    };
    let (java_versions, kraftd_versions) = (versions(java), versions(kraftd));
    let range = |all: &[kraftd::protocol::messages::api_versions_response::ApiVersion], key| {
        all.iter()
            .find(|a| a.api_key == key)
            .map(|a| (a.min_version, a.max_version))
    };
    for key in CONTROLLER_APIS.iter().map(|a| a.key).chain([58]) {
        assert_eq!(
            range(&kraftd_versions, key),
            range(&java_versions, key),
            "ApiVersions range of api {key}"
        );
    }
    for api in CONTROLLER_APIS {
        for v in api.min_version..=api.max_version {
            let body = samples::sample_request(api.key, v, "golden", topic_id)
                .unwrap()
                .unwrap();
            let (j, k) = (ask(java, api.key, v, &body), ask(kraftd, api.key, v, &body));
            assert_eq!(
                without_messages(&k),
                without_messages(&j),
                "{} v{v}: kraftd (left) and Java (right) differ",
                api.name
            );
            if k != j {
                eprintln!(
                    "  {} v{v}: messages differ: kraftd {k} / java {j}",
                    api.name
                );
            }
            compared += 1;
            // The same request forwarded by a broker, when Kafka lets it be forwarded.
            let inner = encode_request(api.key, v, 5, Some("broker-101"), &RawBody(body)).unwrap()
                [4..]
                .to_vec();
            let envelope = samples::envelope(inner).unwrap();
            let (je, ke) = (forwarded(java, &envelope), forwarded(kraftd, &envelope));
            let inner_json = |e: &EnvelopeResponse| {
                e.response_data.as_ref().map(|d| {
                    let mut r = kraftd::protocol::codec::Reader::new(d);
                    let hv = kraftd::protocol::frame::response_header_version(api.key, v);
                    kraftd::protocol::messages::ResponseHeader::decode(&mut r, hv).unwrap();
                    without_messages(
                        &not_controller::response_json(api.key, v, r.rest())
                            .unwrap()
                            .unwrap(),
                    )
                })
            };
            assert_eq!(
                (ke.error_code, inner_json(&ke)),
                (je.error_code, inner_json(&je)),
                "Envelope({} v{v}): kraftd (left) and Java (right) differ",
                api.name
            );
            compared += 1;
        }
    }
    compared
}

fn forwarded(port: u16, envelope: &[u8]) -> EnvelopeResponse {
    let answer = round_trip(port, 58, 0, &RawBody(envelope.to_vec()))
        .unwrap_or_else(|| panic!("no answer to an Envelope from port {port}"));
    EnvelopeResponse::decode_exact(&answer, 0).unwrap()
}
