//! Refused AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter requests: the very same bytes go to
//! a Java 4.4 controller and to kraftd, and kraftd must answer with Java's error code (the
//! messages are compared and their differences printed). `feature_updates` then runs its
//! UpdateFeatures cases on the same clusters.
//!
//! Each implementation gets the same three small clusters, all with one cluster id and the
//! leader's directory id chosen up front (so that the requests, and Java's messages naming voter
//! keys, are the same for both):
//! - `leader`: voter 1 alone, formatted `--initial-controllers 1@…:<dir>` (kraft.version 1);
//! - `observer`: a controller formatted `--no-initial-controllers` fetching from `leader`;
//! - `static`: voter 1 alone in `controller.quorum.voters` (kraft.version 0).
//!
//! The "change already pending" case adds a voter whose listener is a socket the test binds and
//! never reads: the leader's ApiVersions to it stays unanswered until the leader's request
//! timeout (`controller.quorum.request.timeout.ms`, 5 s here), and a second change sent meanwhile
//! is refused.

use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::{
    add_raft_voter_request, update_raft_voter_request, AddRaftVoterRequest, AddRaftVoterResponse,
    RemoveRaftVoterRequest, RemoveRaftVoterResponse, UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
};

use crate::harness::dynamic_quorum::{replica, start_node, Kind, Node};
use crate::harness::quorum_probe::{
    describe_quorum, send_frame, try_read_response, try_round_trip_frame,
};
use crate::harness::{free_port, random_kafka_uuid, Quorum, TestDir, Voter};

/// The leader's raft request timeout: how long the pending add keeps the leader busy.
const REQUEST_TIMEOUT_MS: u64 = 5000;
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// Ids and keys shared by both implementations' clusters.
struct Shared {
    cluster_id: String,
    leader_dir: String,
    /// Directory ids of voters that are not in any cluster.
    new_dir: String,
    other_dir: String,
}

/// One implementation's three clusters.
pub(super) struct Targets {
    pub kind: Kind,
    pub leader: Node,
    pub observer: Node,
    pub static_voter: Node,
}

fn start_targets(dir: &TestDir, kind: Kind, s: &Shared) -> Targets {
    let timeout = (
        "controller.quorum.request.timeout.ms",
        REQUEST_TIMEOUT_MS.to_string(),
    );
    let voter = Voter {
        id: 1,
        host: std::net::Ipv4Addr::LOCALHOST,
        port: free_port(),
        directory_id: s.leader_dir.clone(),
    };
    let leader_ep = voter.endpoint();
    let leader = start_node(
        dir,
        kind,
        1,
        voter.port,
        &s.cluster_id,
        Quorum::InitialControllers(vec![voter.clone()]),
        std::slice::from_ref(&timeout),
    );
    let observer = start_node(
        dir,
        kind,
        2,
        free_port(),
        &s.cluster_id,
        Quorum::Bootstrap(vec![leader_ep]),
        std::slice::from_ref(&timeout),
    );
    let static_port = free_port();
    // Node id 11 keeps its directories apart from the leader's (the harness names them by id).
    let static_voter = start_node(
        dir,
        kind,
        11,
        static_port,
        &s.cluster_id,
        Quorum::StaticVoters(vec![Voter {
            id: 11,
            host: std::net::Ipv4Addr::LOCALHOST,
            port: static_port,
            directory_id: String::new(),
        }]),
        &[timeout],
    );
    let t = Targets {
        kind,
        leader,
        observer,
        static_voter,
    };
    let deadline = Instant::now() + START_TIMEOUT;
    let ready = |t: &Targets| {
        let l = describe_quorum(t.leader.port)
            .is_some_and(|d| d.leader_id == 1 && d.high_watermark > 0 && replica(&d, 2).is_some());
        let s = describe_quorum(t.static_voter.port)
            .is_some_and(|d| d.leader_id == 11 && d.high_watermark > 0);
        l && s
    };
    while !ready(&t) {
        assert!(
            Instant::now() < deadline,
            "{kind}: the leader (with its observer) and the static voter did not come up within {START_TIMEOUT:?}; see the logs"
        );
        thread::sleep(Duration::from_millis(200));
    }
    t
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum To {
    Leader,
    Observer,
    Static,
}

/// A refused request: its name, where it goes, the frame, and the error Kafka's code leads us
/// to expect (the test asserts Java gives it, so a wrong expectation shows up at once).
struct Case {
    name: &'static str,
    to: To,
    api_key: i16,
    version: i16,
    frame: Vec<u8>,
    expected: ErrorCode,
}

pub(super) fn frame<M: Message + ApiMessage>(version: i16, body: &M) -> Vec<u8> {
    encode_request(M::API_KEY, version, 42, Some("compat-reconfig"), body).expect("encodes")
}

fn uuid(s: &str) -> Uuid {
    Uuid::parse(s).expect("a Kafka uuid")
}

fn add(s: &Shared, cluster: Option<&str>, id: i32, dir: Uuid, port: u16) -> AddRaftVoterRequest {
    AddRaftVoterRequest {
        cluster_id: cluster.map(str::to_string).or(Some(s.cluster_id.clone())),
        timeout_ms: 30_000,
        voter_id: id,
        voter_directory_id: dir,
        listeners: vec![add_raft_voter_request::Listener {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port,
            ..Default::default()
        }],
        ack_when_committed: true,
        ..Default::default()
    }
}

fn remove(s: &Shared, cluster: Option<&str>, id: i32, dir: Uuid) -> RemoveRaftVoterRequest {
    RemoveRaftVoterRequest {
        cluster_id: cluster.map(str::to_string).or(Some(s.cluster_id.clone())),
        voter_id: id,
        voter_directory_id: dir,
        ..Default::default()
    }
}

fn update(
    s: &Shared,
    cluster: Option<&str>,
    id: i32,
    dir: Uuid,
    kraft: (i16, i16),
) -> UpdateRaftVoterRequest {
    UpdateRaftVoterRequest {
        cluster_id: cluster.map(str::to_string).or(Some(s.cluster_id.clone())),
        current_leader_epoch: 1,
        voter_id: id,
        voter_directory_id: dir,
        listeners: vec![update_raft_voter_request::Listener {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 9,
            ..Default::default()
        }],
        k_raft_version_feature: update_raft_voter_request::KRaftVersionFeature {
            min_supported_version: kraft.0,
            max_supported_version: kraft.1,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn cases(s: &Shared, unused_port: u16) -> Vec<Case> {
    let (leader, new, other) = (uuid(&s.leader_dir), uuid(&s.new_dir), uuid(&s.other_dir));
    let wrong_cluster = random_kafka_uuid();
    let wc = Some(wrong_cluster.as_str());
    let c = |name, to, version, f: Vec<u8>, api_key, expected| Case {
        name,
        to,
        api_key,
        version,
        frame: f,
        expected,
    };
    let (a, r, u) = (80, 81, 82);
    vec![
        c(
            "add an existing voter (same key)",
            To::Leader,
            1,
            frame(1, &add(s, None, 1, leader, unused_port)),
            a,
            ErrorCode::DUPLICATE_VOTER,
        ),
        c(
            "add an existing voter id with a new directory id",
            To::Leader,
            1,
            frame(1, &add(s, None, 1, new, unused_port)),
            a,
            ErrorCode::DUPLICATE_VOTER,
        ),
        c(
            "add an existing voter (v0)",
            To::Leader,
            0,
            frame(0, &add(s, None, 1, leader, unused_port)),
            a,
            ErrorCode::DUPLICATE_VOTER,
        ),
        c(
            "remove the last voter",
            To::Leader,
            0,
            frame(0, &remove(s, None, 1, leader)),
            r,
            ErrorCode::VOTER_NOT_FOUND,
        ),
        c(
            "remove a voter with a wrong directory id",
            To::Leader,
            0,
            frame(0, &remove(s, None, 1, other)),
            r,
            ErrorCode::VOTER_NOT_FOUND,
        ),
        c(
            "remove an unknown voter id",
            To::Leader,
            0,
            frame(0, &remove(s, None, 7, other)),
            r,
            ErrorCode::VOTER_NOT_FOUND,
        ),
        c(
            "add with a wrong cluster id",
            To::Leader,
            1,
            frame(1, &add(s, wc, 5, new, unused_port)),
            a,
            ErrorCode::INCONSISTENT_CLUSTER_ID,
        ),
        c(
            "remove with a wrong cluster id",
            To::Leader,
            0,
            frame(0, &remove(s, wc, 1, leader)),
            r,
            ErrorCode::INCONSISTENT_CLUSTER_ID,
        ),
        c(
            "update with a wrong cluster id",
            To::Leader,
            0,
            frame(0, &update(s, wc, 1, leader, (0, 1))),
            u,
            ErrorCode::INCONSISTENT_CLUSTER_ID,
        ),
        c(
            "add with a zero directory id",
            To::Leader,
            1,
            frame(1, &add(s, None, 5, Uuid::ZERO, unused_port)),
            a,
            ErrorCode::INVALID_REQUEST,
        ),
        c(
            "remove with a zero directory id",
            To::Leader,
            0,
            frame(0, &remove(s, None, 1, Uuid::ZERO)),
            r,
            ErrorCode::INVALID_REQUEST,
        ),
        c(
            "update with a zero directory id",
            To::Leader,
            0,
            frame(0, &update(s, None, 1, Uuid::ZERO, (0, 1))),
            u,
            ErrorCode::INVALID_REQUEST,
        ),
        c(
            "update with a kraft.version range without 1",
            To::Leader,
            0,
            frame(0, &update(s, None, 1, leader, (0, 0))),
            u,
            ErrorCode::INVALID_REQUEST,
        ),
        c(
            "update an unknown voter",
            To::Leader,
            0,
            frame(0, &update(s, None, 7, other, (0, 1))),
            u,
            ErrorCode::VOTER_NOT_FOUND,
        ),
        c(
            "add to a non-leader",
            To::Observer,
            1,
            frame(1, &add(s, None, 5, new, unused_port)),
            a,
            ErrorCode::NOT_LEADER_OR_FOLLOWER,
        ),
        c(
            "remove to a non-leader",
            To::Observer,
            0,
            frame(0, &remove(s, None, 1, leader)),
            r,
            ErrorCode::NOT_LEADER_OR_FOLLOWER,
        ),
        c(
            "update to a non-leader",
            To::Observer,
            0,
            frame(0, &update(s, None, 1, leader, (0, 1))),
            u,
            ErrorCode::NOT_LEADER_OR_FOLLOWER,
        ),
        c(
            "add at kraft.version 0",
            To::Static,
            1,
            frame(1, &add(s, None, 5, new, unused_port)),
            a,
            ErrorCode::UNSUPPORTED_VERSION,
        ),
        c(
            "remove at kraft.version 0",
            To::Static,
            0,
            frame(0, &remove(s, None, 11, other)),
            r,
            ErrorCode::UNSUPPORTED_VERSION,
        ),
    ]
}

/// An answer: error code and message, or why there was none.
type Answer = Result<(ErrorCode, Option<String>), String>;

fn decode(api_key: i16, version: i16, body: Result<Vec<u8>, String>) -> Answer {
    let body = body?;
    let bad = |e| format!("undecodable response: {e:?}");
    Ok(match api_key {
        80 => {
            let r = AddRaftVoterResponse::decode_exact(&body, version).map_err(bad)?;
            (ErrorCode(r.error_code), r.error_message)
        }
        81 => {
            let r = RemoveRaftVoterResponse::decode_exact(&body, version).map_err(bad)?;
            (ErrorCode(r.error_code), r.error_message)
        }
        _ => {
            // No message field: the current leader (id and epoch; its host and port differ
            // between the two clusters) stands in for it.
            let r = UpdateRaftVoterResponse::decode_exact(&body, version).map_err(bad)?;
            let l = &r.current_leader;
            let leader = format!("current leader {} epoch {}", l.leader_id, l.leader_epoch);
            (ErrorCode(r.error_code), Some(leader))
        }
    })
}

fn port_of(t: &Targets, to: To) -> u16 {
    match to {
        To::Leader => t.leader.port,
        To::Observer => t.observer.port,
        To::Static => t.static_voter.port,
    }
}

fn send(t: &Targets, case: &Case) -> Answer {
    let body = try_round_trip_frame(
        port_of(t, case.to),
        case.api_key,
        case.version,
        &case.frame,
        Duration::from_secs(15),
    );
    decode(case.api_key, case.version, body)
}

/// The pending-change case: an add whose ApiVersions is never answered, then a second add and a
/// remove while it is pending; returns (second add, remove, first add) answers.
fn pending(t: &Targets, s: &Shared, silent: &TcpListener) -> [Answer; 3] {
    let silent_port = silent.local_addr().unwrap().port();
    let first = frame(1, &add(s, None, 5, uuid(&s.new_dir), silent_port));
    let second = frame(1, &add(s, None, 6, uuid(&s.other_dir), silent_port));
    let rm = frame(0, &remove(s, None, 1, uuid(&s.leader_dir)));
    let sent = Instant::now();
    let mut conn = send_frame(t.leader.port, &first);
    thread::sleep(Duration::from_millis(500));
    let quick = Duration::from_secs(15);
    let mut a = decode(
        80,
        1,
        try_round_trip_frame(t.leader.port, 80, 1, &second, quick),
    );
    let mut b = decode(
        81,
        0,
        try_round_trip_frame(t.leader.port, 81, 0, &rm, quick),
    );
    // Answers that came after the first add's timeout prove nothing about a pending change.
    let late = sent.elapsed();
    if late >= Duration::from_millis(REQUEST_TIMEOUT_MS) {
        for x in [&mut a, &mut b] {
            if x.is_ok() {
                *x = Err(format!(
                    "answered only after {late:?}, when the first add was no longer pending: {}",
                    show(x)
                ));
            }
        }
    }
    let wait = Duration::from_millis(REQUEST_TIMEOUT_MS + 15_000);
    let c = decode(
        80,
        1,
        conn.as_mut()
            .ok_or_else(|| "the first add could not be sent".to_string())
            .and_then(|c| try_read_response(c, 80, 1, wait)),
    );
    [a, b, c]
}

fn show(a: &Answer) -> String {
    match a {
        Ok((code, msg)) => format!("{code} {msg:?}"),
        Err(e) => e.clone(),
    }
}

pub fn run() {
    let dir = TestDir::new();
    let shared = Shared {
        cluster_id: random_kafka_uuid(),
        leader_dir: random_kafka_uuid(),
        new_dir: random_kafka_uuid(),
        other_dir: random_kafka_uuid(),
    };
    // A port nothing listens on, for listeners of voters that must never be contacted.
    let unused_port = free_port();
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind a silent listener");
    let cases = cases(&shared, unused_port);
    let mut java = start_targets(&dir, Kind::Java, &shared);
    let mut kraftd = start_targets(&dir, Kind::Kraftd, &shared);

    let mut rows = Vec::new();
    for case in &cases {
        rows.push((
            case.name,
            case.expected,
            send(&java, case),
            send(&kraftd, case),
        ));
    }
    let java_pending = pending(&java, &shared, &silent);
    let kraftd_pending = pending(&kraftd, &shared, &silent);
    let pending_names = [
        "add while another add is pending",
        "remove while an add is pending",
        "the pending add itself (ApiVersions never answered)",
    ];
    for (i, name) in pending_names.into_iter().enumerate() {
        rows.push((
            name,
            ErrorCode::REQUEST_TIMED_OUT,
            java_pending[i].clone(),
            kraftd_pending[i].clone(),
        ));
    }

    let mut failures = super::feature_updates::run(&java, &kraftd);
    eprintln!("bad reconfiguration requests, same bytes to Java 4.4 and kraftd:");
    for (name, expected, j, k) in &rows {
        eprintln!(
            "  {name}:\n    java:   {}\n    kraftd: {}",
            show(j),
            show(k)
        );
        match j {
            Ok((code, _)) if code == expected => {}
            _ => failures.push(format!(
                "{name}: Java answered {}, the test expects {expected}",
                show(j)
            )),
        }
        match (j, k) {
            (Ok((jc, jm)), Ok((kc, km))) => {
                if jc != kc {
                    failures.push(format!("{name}: kraftd answered {kc}, Java {jc}"));
                } else if jm != km {
                    eprintln!("    (messages differ)");
                }
            }
            (Ok(_), Err(e)) => {
                failures.push(format!("{name}: kraftd: {e}; Java answered {}", show(j)))
            }
            _ => {}
        }
    }
    // No Java controller logged a fault or exited, no kraftd exited.
    for t in [&mut java, &mut kraftd] {
        for n in [&mut t.leader, &mut t.observer, &mut t.static_voter] {
            let name = n.name();
            n.member.assert_java_healthy(&name);
            if !n.is_running() {
                failures.push(format!("{name} exited"));
            }
        }
    }
    // Nothing of this changed either leader's voter set.
    for t in [&java, &kraftd] {
        let d = describe_quorum(t.leader.port).expect("the leader still answers DescribeQuorum");
        let ids: Vec<i32> = d.voters.iter().map(|v| v.replica_key.id).collect();
        if ids != [1] {
            failures.push(format!("{}: the voters are now {ids:?}, not [1]", t.kind));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
