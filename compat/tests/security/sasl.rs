//! SASL/PLAIN on a SASL_PLAINTEXT controller listener, side by side: one Java 4.4 controller
//! and one kraftd, each a single-node quorum that dials itself over SASL too (raft client and
//! controller channel, `sasl.mechanism.controller.protocol=PLAIN`), with
//! `connections.max.reauth.ms` set. The same exchanges go to both, each on a connection of its
//! own, and must get the same bytes back (SaslHandshake and SaslAuthenticate answers compared
//! as Kafka's JSON; ApiVersions by error code and API table, as the feature levels differ), or both close:
//! a wrong password, an unknown mechanism, an oversized token, a malformed PLAIN token, a
//! request before authentication, a second ApiVersions, SaslHandshake v0's bare tokens (right
//! and wrong), and re-authentication as another principal. Both serve authenticated requests
//! afterwards, and kraftd logs one line for each connection it ended.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message, Reader};
use kraftd::protocol::frame::{encode_request, response_header_version};
use kraftd::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeQuorumRequest, DescribeQuorumResponse,
    ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};

use crate::harness::dynamic_quorum::{start_node_formatted, Kind, Node};
use crate::harness::{free_port, random_kafka_uuid, Kafka, Quorum, TestDir};

const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const REAUTH_MS: &str = "60000";
const START_TIMEOUT: Duration = Duration::from_secs(120);
const READ_TIMEOUT: Duration = Duration::from_secs(10);

fn props() -> Vec<(&'static str, String)> {
    vec![
        (
            "listener.security.protocol.map",
            "CONTROLLER:SASL_PLAINTEXT".into(),
        ),
        ("sasl.enabled.mechanisms", "PLAIN".into()),
        ("sasl.mechanism.controller.protocol", "PLAIN".into()),
        (
            "listener.name.controller.plain.sasl.jaas.config",
            format!(
                "{PLAIN_MODULE} required username=\"admin\" password=\"admin-pw\" \
                 user_admin=\"admin-pw\" user_alice=\"alice-pw\" user_bob=\"bob-pw\";"
            ),
        ),
        ("connections.max.reauth.ms", REAUTH_MS.into()),
    ]
}

/// One client connection, speaking raw frames.
struct Conn(TcpStream);

/// What came back for one frame.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    /// A response frame (size prefix removed).
    Frame(Vec<u8>),
    Closed,
}

impl Conn {
    fn open(port: u16) -> Conn {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        Conn(s)
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        // A peer that already closed may refuse the write; the read says so.
        let _ = self.0.write_all(bytes);
    }

    fn send<M: Message + ApiMessage>(&mut self, version: i16, body: &M) {
        let frame = encode_request(M::API_KEY, version, 7, Some("compat-sasl"), body).unwrap();
        self.send_raw(&frame);
    }

    fn recv(&mut self) -> Got {
        let mut size = [0u8; 4];
        if self.0.read_exact(&mut size).is_err() {
            return Got::Closed;
        }
        let mut frame = vec![0; i32::from_be_bytes(size) as usize];
        match self.0.read_exact(&mut frame) {
            Ok(()) => Got::Frame(frame),
            Err(_) => Got::Closed,
        }
    }
}

/// A response body of api `Req` at `version`.
fn body<Req: ApiMessage, M: Message>(frame: &[u8], version: i16) -> M {
    let mut r = Reader::new(frame);
    ResponseHeader::decode(&mut r, response_header_version(Req::API_KEY, version)).unwrap();
    M::decode_exact(r.rest(), version).unwrap()
}

fn handshake(c: &mut Conn, version: i16, mechanism: &str) -> String {
    c.send(
        version,
        &SaslHandshakeRequest {
            mechanism: mechanism.into(),
            ..Default::default()
        },
    );
    match c.recv() {
        Got::Frame(f) => {
            let h: SaslHandshakeResponse = body::<SaslHandshakeRequest, _>(&f, version);
            h.to_kafka_json(version).to_string()
        }
        Got::Closed => "closed".into(),
    }
}

fn authenticate(c: &mut Conn, version: i16, token: &[u8]) -> String {
    c.send(
        version,
        &SaslAuthenticateRequest {
            auth_bytes: token.to_vec(),
            ..Default::default()
        },
    );
    match c.recv() {
        Got::Frame(f) => {
            let a: SaslAuthenticateResponse = body::<SaslAuthenticateRequest, _>(&f, version);
            a.to_kafka_json(version).to_string()
        }
        Got::Closed => "closed".into(),
    }
}

/// ApiVersions v3, valid (`valid`) or with an empty client software name (INVALID_REQUEST).
fn api_versions(c: &mut Conn, valid: bool) -> String {
    let name = if valid { "compat-sasl" } else { "" };
    c.send(
        3,
        &ApiVersionsRequest {
            client_software_name: name.into(),
            client_software_version: "1.0".into(),
            ..Default::default()
        },
    );
    match c.recv() {
        Got::Frame(f) => {
            let a: ApiVersionsResponse = body::<ApiVersionsRequest, _>(&f, 3);
            // The API table a SASL listener advertises (feature levels and epochs differ).
            let apis: Vec<String> = a
                .api_keys
                .iter()
                .map(|k| format!("{}:{}-{}", k.api_key, k.min_version, k.max_version))
                .collect();
            format!("ApiVersions error {} apis {}", a.error_code, apis.join(","))
        }
        Got::Closed => "closed".into(),
    }
}

fn closed(c: &mut Conn) -> String {
    match c.recv() {
        Got::Closed => "closed".into(),
        Got::Frame(f) => format!("a frame of {} bytes", f.len()),
    }
}

/// Authenticates a new connection as `user` (SaslHandshake v1, SaslAuthenticate v2).
fn logged_in(port: u16, user: &str, password: &str) -> Conn {
    let mut c = Conn::open(port);
    handshake(&mut c, 1, "PLAIN");
    let answer = authenticate(&mut c, 2, format!("\0{user}\0{password}").as_bytes());
    assert!(answer.contains("\"errorCode\":0"), "{answer}");
    c
}

fn describe_quorum() -> DescribeQuorumRequest {
    DescribeQuorumRequest {
        topics: vec![
            kraftd::protocol::messages::describe_quorum_request::TopicData {
                topic_name: "__cluster_metadata".into(),
                partitions: vec![
                    kraftd::protocol::messages::describe_quorum_request::PartitionData {
                        partition_index: 0,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

/// A DescribeQuorum on an authenticated connection: (leader, high watermark).
fn quorum(c: &mut Conn) -> Option<(i32, i64)> {
    c.send(2, &describe_quorum());
    let Got::Frame(f) = c.recv() else {
        return None;
    };
    let r: DescribeQuorumResponse = body::<DescribeQuorumRequest, _>(&f, 2);
    let p = r.topics.first()?.partitions.first()?;
    Some((p.leader_id, p.high_watermark))
}

/// The exchanges, each on a new connection; the transcript of what came back.
type Case = (&'static str, fn(u16) -> Vec<String>);

fn cases() -> Vec<Case> {
    vec![
        ("wrong password", |port| {
            let mut c = Conn::open(port);
            vec![
                api_versions(&mut c, true),
                handshake(&mut c, 1, "PLAIN"),
                authenticate(&mut c, 2, b"\0alice\0wrong"),
                closed(&mut c),
            ]
        }),
        ("unknown mechanism", |port| {
            let mut c = Conn::open(port);
            vec![handshake(&mut c, 1, "SCRAM-SHA-256"), closed(&mut c)]
        }),
        ("oversized token", |port| {
            let mut c = Conn::open(port);
            let h = handshake(&mut c, 1, "PLAIN");
            c.send_raw(&600_000i32.to_be_bytes());
            vec![h, closed(&mut c)]
        }),
        ("malformed PLAIN token", |port| {
            let mut c = Conn::open(port);
            vec![
                handshake(&mut c, 1, "PLAIN"),
                authenticate(&mut c, 1, b"alice-without-separators"),
                closed(&mut c),
            ]
        }),
        ("authorization id other than the user", |port| {
            let mut c = Conn::open(port);
            vec![
                handshake(&mut c, 1, "PLAIN"),
                authenticate(&mut c, 0, b"bob\0alice\0alice-pw"),
                closed(&mut c),
            ]
        }),
        ("a request before authentication", |port| {
            let mut c = Conn::open(port);
            c.send(2, &DescribeQuorumRequest::default());
            vec![closed(&mut c)]
        }),
        ("a refused ApiVersions, then two", |port| {
            let mut c = Conn::open(port);
            vec![
                api_versions(&mut c, false),
                api_versions(&mut c, true),
                api_versions(&mut c, true),
            ]
        }),
        ("SaslHandshake v0, bare token", |port| {
            let mut c = Conn::open(port);
            let h = handshake(&mut c, 0, "PLAIN");
            c.send_raw(&[0, 0, 0, 15]);
            c.send_raw(b"\0alice\0alice-pw");
            let bare = format!("{:?}", c.recv());
            // Authenticated: SaslAuthenticate is now the API's, which refuses it.
            vec![h, bare, authenticate(&mut c, 1, b"again")]
        }),
        ("SaslHandshake v0, wrong password", |port| {
            let mut c = Conn::open(port);
            let h = handshake(&mut c, 0, "PLAIN");
            c.send_raw(&[0, 0, 0, 12]);
            c.send_raw(b"\0alice\0wrong");
            vec![h, closed(&mut c)]
        }),
        ("re-authentication as another principal", |port| {
            let mut c = Conn::open(port);
            vec![
                handshake(&mut c, 1, "PLAIN"),
                authenticate(&mut c, 2, b"\0alice\0alice-pw"),
                handshake(&mut c, 1, "PLAIN"),
                authenticate(&mut c, 2, b"\0bob\0bob-pw"),
                closed(&mut c),
            ]
        }),
        ("re-authentication with another mechanism", |port| {
            let mut c = Conn::open(port);
            vec![
                handshake(&mut c, 1, "PLAIN"),
                authenticate(&mut c, 1, b"\0alice\0alice-pw"),
                handshake(&mut c, 1, "SCRAM-SHA-512"),
            ]
        }),
    ]
}

fn start(dir: &TestDir, kind: Kind) -> Node {
    let port = free_port();
    let node = start_node_formatted(
        dir,
        kind,
        1,
        port,
        &random_kafka_uuid(),
        Quorum::Standalone,
        &props(),
        &[],
    );
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        // Until it listens and leads, connecting or authenticating fails.
        let listening = TcpStream::connect(("127.0.0.1", port)).is_ok();
        let led = listening.then(|| quorum(&mut logged_in(port, "admin", "admin-pw")));
        if matches!(led, Some(Some((1, hw))) if hw > 0) {
            return node;
        }
        assert!(
            Instant::now() < deadline,
            "{kind} did not lead within {START_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn sasl_plain_as_a_java_controller_answers() {
    let dir = TestDir::new();
    let java = start(&dir, Kind::Java);
    let kraftd = start(&dir, Kind::Kraftd);
    let log_before = kraftd.member.log_text().lines().count();
    let mut failures = Vec::new();
    for (name, case) in cases() {
        let j = case(java.port);
        let k = case(kraftd.port);
        eprintln!("  {name}:\n    java:   {j:?}\n    kraftd: {k:?}");
        if j != k {
            failures.push(name);
        }
    }
    assert!(failures.is_empty(), "different answers: {failures:?}");
    // Both serve authenticated connections afterwards.
    for node in [&java, &kraftd] {
        let mut c = logged_in(node.port, "alice", "alice-pw");
        assert!(matches!(quorum(&mut c), Some((1, _))), "{}", node.kind);
    }
    // kraftd logged one line for each connection it ended, and dialled itself over SASL.
    let log = kraftd.member.log_text();
    let ended = log
        .lines()
        .skip(log_before)
        .filter(|l| {
            l.contains("Failed authentication with") || l.contains("Closing connection from")
        })
        .count();
    assert_eq!(ended, 10, "one line per ended connection:\n{log}");
    // kraftd's client side (raft, the controller channel) against both: authenticated, or
    // refused with the server's message.
    for node in [&java, &kraftd] {
        let answer = kraftd_dials(node.port, "admin-pw");
        assert!(
            answer.is_ok(),
            "{} refused kraftd's client: {answer:?}",
            node.kind
        );
        let refused = kraftd_dials(node.port, "wrong").unwrap_err();
        assert!(
            refused.contains("Invalid username or password"),
            "{}: {refused}",
            node.kind
        );
    }
    // A stock Java client (kafka-metadata-quorum's admin client) against both.
    let config = dir.path().join("sasl-client.properties");
    std::fs::write(
        &config,
        format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=\
             {PLAIN_MODULE} required username=\"alice\" password=\"alice-pw\";\n"
        ),
    )
    .unwrap();
    for node in [&java, &kraftd] {
        let endpoint = format!("127.0.0.1:{}", node.port);
        let config = config.display().to_string();
        let out = Kafka::get().metadata_quorum(
            &endpoint,
            &["--command-config", &config, "describe", "--status"],
        );
        assert!(
            out.success() && out.stdout.contains("LeaderId:"),
            "{}: kafka-metadata-quorum over SASL_PLAINTEXT:\n{out}",
            node.kind
        );
    }
}

/// One DescribeQuorum through kraftd's outbound client (`Peers`, as raft dials) to the
/// controller at `port`, authenticating as admin with `password`: Ok, or why it failed.
fn kraftd_dials(port: u16, password: &str) -> Result<(), String> {
    use kraftd::server::config::Password;
    use kraftd::server::peer::{Completion, OutboundRequest, PeerSettings, Peers};
    use kraftd::server::sasl::settings::ClientSasl;
    use kraftd::server::sasl::Mechanism;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let settings = PeerSettings {
            request_timeout: Duration::from_secs(10),
            sasl: Some(std::sync::Arc::new(ClientSasl {
                mechanism: Mechanism::Plain,
                username: "admin".into(),
                password: Password::new(password),
            })),
            ..Default::default()
        };
        let peers = Peers::start(vec![(1, format!("127.0.0.1:{port}"))], settings, tx.clone());
        let request = OutboundRequest {
            token: 1,
            api_key: <DescribeQuorumRequest as ApiMessage>::API_KEY,
            min_version: 0,
            max_version: 2,
            encode_body: Box::new(|v| describe_quorum().encode_to_vec(v)),
        };
        peers.send(1, request, &tx);
        match rx.recv().await {
            Some(Completion::Response { .. }) => Ok(()),
            Some(Completion::Failed { reason, .. }) => Err(reason),
            None => Err("no completion".into()),
        }
    })
}
