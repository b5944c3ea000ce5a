//! UnregisterController (`kafka-cluster unregister-controller`, new in 4.4): the same requests,
//! in the same order, to a Java 4.4 controller and to kraftd, formatted at 4.4-IV2 and at
//! 4.3-IV0, and the answers compared. Controller 2 is registered by a raw ControllerRegistration
//! (it never runs, so it does not register again); the active controller may not unregister
//! itself. Then the tool against kraftd.

use std::time::{Duration, Instant};

use kraftd::protocol::codec::{Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::features::SUPPORTED_FEATURES;
use kraftd::protocol::messages::controller_registration_request::{Feature, Listener};
use kraftd::protocol::messages::{
    ControllerRegistrationRequest, ControllerRegistrationResponse, UnregisterControllerRequest,
    UnregisterControllerResponse,
};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::workload::log_view::LogView;
use crate::harness::{Kafka, TestDir, Tool};
use crate::security::assert_same_answers;
use crate::topics::cluster::TopicCluster;

/// A step: register controller `id` first (raw ControllerRegistration), or unregister it.
#[derive(Clone, Copy)]
enum Step {
    Register(i32),
    Unregister(i32),
}

/// (case, release formatted at, step, Java's error code).
const CASES: &[(&str, &str, Step, ErrorCode)] = &[
    (
        "an id no controller registered",
        "4.4-IV2",
        Step::Unregister(2),
        ErrorCode::CONTROLLER_ID_NOT_REGISTERED,
    ),
    (
        "a negative id",
        "4.4-IV2",
        Step::Unregister(-1),
        ErrorCode::CONTROLLER_ID_NOT_REGISTERED,
    ),
    (
        "the active controller itself",
        "4.4-IV2",
        Step::Unregister(1),
        ErrorCode::INVALID_REQUEST,
    ),
    (
        "controller 2 registers",
        "4.4-IV2",
        Step::Register(2),
        ErrorCode::NONE,
    ),
    (
        "controller 2, registered",
        "4.4-IV2",
        Step::Unregister(2),
        ErrorCode::NONE,
    ),
    (
        "controller 2 again",
        "4.4-IV2",
        Step::Unregister(2),
        ErrorCode::CONTROLLER_ID_NOT_REGISTERED,
    ),
    (
        "the active controller itself at 4.3-IV0",
        "4.3-IV0",
        Step::Unregister(1),
        ErrorCode::INVALID_REQUEST,
    ),
    (
        "controller 2 registers at 4.3-IV0",
        "4.3-IV0",
        Step::Register(2),
        ErrorCode::NONE,
    ),
    (
        "controller 2, registered, at 4.3-IV0",
        "4.3-IV0",
        Step::Unregister(2),
        ErrorCode::UNSUPPORTED_VERSION,
    ),
];
const WAIT: Duration = Duration::from_secs(60);

/// A ControllerRegistration like a stock 4.4 controller's, for controller `id`.
fn registration(id: i32) -> ControllerRegistrationRequest {
    ControllerRegistrationRequest {
        controller_id: id,
        incarnation_id: Uuid([id as u8; 16]),
        listeners: vec![Listener {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 1,
            ..Default::default()
        }],
        features: SUPPORTED_FEATURES
            .iter()
            .map(|f| Feature {
                name: f.name.into(),
                min_supported_version: f.min,
                max_supported_version: f.max,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Renders an answer's body, with its error code.
type Render = fn(&[u8]) -> (String, i16);

/// Sends `step`; its answer rendered, and its error code.
fn send(c: &TopicCluster, step: Step) -> (String, i16) {
    let (body, render): (_, Render) = match step {
        Step::Register(id) => (c.send(0, &registration(id)), |b| {
            let r = ControllerRegistrationResponse::decode_exact(b, 0)
                .expect("a ControllerRegistration response");
            let code = ErrorCode(r.error_code);
            (
                format!("registered: {} {:?}", code.name(), r.error_message),
                r.error_code,
            )
        }),
        Step::Unregister(id) => (
            c.send(
                0,
                &UnregisterControllerRequest {
                    controller_id: id,
                    ..Default::default()
                },
            ),
            |b| {
                let r = UnregisterControllerResponse::decode_exact(b, 0)
                    .expect("an UnregisterController response");
                let code = ErrorCode(r.error_code);
                let rendered = format!(
                    "throttle {} {} {:?}",
                    r.throttle_time_ms,
                    code.name(),
                    r.error_message
                );
                (rendered, r.error_code)
            },
        ),
    };
    match body {
        Ok(b) => render(&b),
        Err(e) => (format!("no answer: {e}"), -1),
    }
}

fn registered(c: &TopicCluster, id: i32) -> bool {
    LogView::read(&c.controller.metadata_dir())
        .controllers
        .contains_key(&id)
}

fn wait_registered(c: &TopicCluster, id: i32, kind: Kind) {
    let deadline = Instant::now() + WAIT;
    while !registered(c, id) {
        assert!(
            Instant::now() < deadline,
            "{kind}: controller {id} did not register"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn run_all(kind: Kind, dir: &TestDir) -> Vec<(String, i16)> {
    let mut answers = Vec::new();
    for release in ["4.4-IV2", "4.3-IV0"] {
        let mut c = TopicCluster::controller_only(dir, kind, &[], &["--release-version", release]);
        wait_registered(&c, 1, kind);
        for &(_, _, step, _) in CASES.iter().filter(|c| c.1 == release) {
            answers.push(send(&c, step));
        }
        if kind == Kind::Kraftd && release == "4.4-IV2" {
            let kafka = Kafka::get();
            let bootstrap = c.controller.endpoint();
            let unregister = |id: &str| {
                kafka.run(
                    Tool::Cluster,
                    &[
                        "unregister-controller",
                        "--bootstrap-controller",
                        &bootstrap,
                        "--id",
                        id,
                    ],
                )
            };
            let itself = unregister("1");
            assert!(
                !itself.success()
                    && itself
                        .to_string()
                        .contains("Controller cannot unregister itself while it is active."),
                "{itself}"
            );
            assert_eq!(send(&c, Step::Register(3)).1, 0);
            assert!(registered(&c, 3));
            let out = unregister("3");
            assert!(out.success(), "{out}");
            assert!(!registered(&c, 3), "controller 3 is still registered");
        }
        c.stop();
    }
    answers
}

#[test]
fn unregister_controller_gets_javas_answers() {
    let dir = TestDir::new();
    let java = run_all(Kind::Java, &dir);
    let kraftd = run_all(Kind::Kraftd, &dir);
    let cases: Vec<(&str, i16)> = CASES.iter().map(|c| (c.0, c.3 .0)).collect();
    assert_same_answers("UnregisterController", &cases, &java, &kraftd);
}
