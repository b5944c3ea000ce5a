//! The wire front end of a real kraftd process under bad input. After each bad input the
//! process must still answer ApiVersions on a new connection, and it must have said why it
//! closed the bad connection in one log line.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kraftd::protocol::codec::Message;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::frame::{encode_request, response_header_version};
use kraftd::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeClusterRequest, DescribeClusterResponse,
    ResponseHeader,
};
use kraftd::server::api::not_controller;
use kraftd::server::raft_wire as raft;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qk";

/// A kraftd process on a free loopback port, killed when dropped.
struct Kraftd {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Kraftd {
    fn start(name: &str) -> Kraftd {
        let dir = std::env::temp_dir().join(format!("kraftd-wire-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let data = dir.join("data");
        std::fs::create_dir_all(&dir).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let props = dir.join("controller.properties");
        std::fs::write(
            &props,
            format!(
                "process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:{port}\n\
                 controller.listener.names=CONTROLLER\n\
                 controller.quorum.voters=1@127.0.0.1:{port}\nlog.dirs={}\n\
                 socket.request.max.bytes=1048576\n",
                data.display()
            ),
        )
        .unwrap();
        // Formatted, so that it writes its bootstrap metadata (a metadata.version) once it leads.
        let format = Command::new(env!("CARGO_BIN_EXE_kraftd"))
            .args(["format", "-t", CLUSTER_ID, "-c"])
            .arg(&props)
            .output()
            .expect("run kraftd format");
        assert!(format.status.success(), "kraftd format: {format:?}");
        let log = std::fs::File::create(dir.join("kraftd.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_kraftd"))
            .arg("start")
            .arg(&props)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start kraftd");
        let k = Kraftd { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        // A connection to itself (an ephemeral source port equal to the port, which Linux
        // allows while nothing listens) is not kraftd listening.
        let listening = || {
            TcpStream::connect(("127.0.0.1", port))
                .is_ok_and(|s| s.local_addr().ok() != s.peer_addr().ok())
        };
        while !listening() {
            assert!(
                Instant::now() < deadline,
                "kraftd did not listen:\n{}",
                k.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // DescribeCluster needs a finalized metadata.version, which the node publishes once it
        // has committed its bootstrap records (as Java's controller does).
        let finalized = || {
            let (_, resp) = api_versions(&mut k.connect(), 3, 1);
            resp.finalized_features
                .iter()
                .any(|f| f.name == "metadata.version")
        };
        while !finalized() {
            assert!(
                Instant::now() < deadline,
                "kraftd published no metadata.version:\n{}",
                k.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        k
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("kraftd.log")).unwrap_or_default()
    }

    /// The process is alive and a fresh connection gets a full, valid ApiVersions answer.
    fn assert_serving(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "kraftd exited:\n{}",
            self.log()
        );
        let mut s = self.connect();
        let (corr, resp) = api_versions(&mut s, 3, 42);
        assert_eq!(corr, 42);
        assert_eq!(resp.error_code, 0);
        assert!(resp
            .api_keys
            .iter()
            .any(|k| k.api_key == 18 && k.max_version == 5));
    }

    /// The server closed the connection (EOF, or a reset) without answering.
    fn assert_closed(&self, mut s: TcpStream, why: &str) {
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => panic!(
                "{why}: expected a closed connection, got {n} bytes: {:?}",
                &buf[..n]
            ),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!(
                "{why}: expected a closed connection, got {e}\n{}",
                self.log()
            ),
        }
    }

    fn wait_for_log(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.log().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "log never said {needle:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Kraftd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- kraftd log ---\n{}", self.log());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size).expect("response size");
    let mut frame = vec![0u8; i32::from_be_bytes(size) as usize];
    s.read_exact(&mut frame).expect("response body");
    frame
}

fn api_versions(s: &mut TcpStream, version: i16, corr: i32) -> (i32, ApiVersionsResponse) {
    let req = ApiVersionsRequest {
        client_software_name: "kraftd-wire-test".into(),
        client_software_version: "1.0".into(),
        ..Default::default()
    };
    s.write_all(&encode_request(18, version, corr, Some("t"), &req).unwrap())
        .unwrap();
    let frame = read_frame(s);
    let mut r = kraftd::protocol::codec::Reader::new(&frame);
    let header = ResponseHeader::decode(&mut r, 0).unwrap();
    let body = ApiVersionsResponse::decode_exact(r.rest(), version).unwrap();
    (header.correlation_id, body)
}

/// A forwarded CreateDelegationToken, which the active kraftd (no
/// `delegation.token.secret.key`) answers DELEGATION_TOKEN_AUTH_DISABLED inside the envelope.
fn forwarded_create_delegation_token() -> Vec<u8> {
    let body =
        not_controller::samples::sample_request(38, 3, "t", kraftd::protocol::codec::Uuid::ZERO)
            .unwrap()
            .unwrap();
    encode_request(
        38,
        3,
        5,
        Some("broker-101"),
        &kraftd::protocol::codec::RawBody(body),
    )
    .unwrap()[4..]
        .to_vec()
}

fn frame_with_size(size: i32, body: &[u8]) -> Vec<u8> {
    let mut v = size.to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

#[test]
fn api_versions_lists_exactly_what_kraftd_serves() {
    let k = Kraftd::start("exact");
    let mut s = k.connect();
    for version in 0..=5 {
        let (_, resp) = api_versions(&mut s, version, version as i32);
        let listed: Vec<(i16, i16, i16)> = resp
            .api_keys
            .iter()
            .map(|a| (a.api_key, a.min_version, a.max_version))
            .collect();
        let served: Vec<(i16, i16, i16)> = kraftd::server::api::served_apis()
            .into_iter()
            .map(|a| (a.key, a.min_version, a.max_version))
            .collect();
        assert_eq!(listed, served, "v{version}");
        // Each advertised range is one the codec implements, and the dispatcher answers.
        assert_eq!(
            listed,
            vec![
                (1, 4, 18),
                (17, 0, 1),
                (18, 0, 5),
                // Kafka 4.4 controllers' ranges for the broker-facing controller APIs.
                (19, 2, 7),
                (20, 1, 6),
                (29, 1, 3),
                (30, 1, 3),
                (31, 1, 3),
                (32, 1, 4),
                (33, 0, 2),
                (36, 0, 2),
                (37, 0, 3),
                (38, 1, 3),
                (39, 1, 2),
                (40, 1, 2),
                (41, 1, 3),
                (43, 0, 2),
                (44, 0, 1),
                (45, 0, 1),
                (46, 0, 0),
                (49, 0, 1),
                (50, 0, 0),
                (51, 0, 0),
                (52, 0, 2),
                (53, 0, 1),
                (54, 0, 1),
                (55, 0, 2),
                (56, 2, 3),
                (57, 0, 2),
                (58, 0, 0),
                (59, 0, 1),
                (60, 0, 2),
                (62, 0, 4),
                (63, 0, 2),
                (64, 0, 0),
                (67, 0, 0),
                (70, 0, 0),
                (73, 0, 0),
                // Voter changes (KIP-853), as a Java 4.4 controller serves them.
                (80, 0, 1),
                (81, 0, 0),
                (82, 0, 0),
                // Controller unregistration (new in 4.4).
                (94, 0, 0)
            ]
        );
        if version >= 3 {
            let names: Vec<_> = resp
                .supported_features
                .iter()
                .map(|f| f.name.as_str())
                .collect();
            assert!(names.contains(&"metadata.version"), "v{version}: {names:?}");
            // kraft.version's minimum is 0, which clients before v4 cannot parse.
            assert_eq!(
                names.contains(&"kraft.version"),
                version >= 4,
                "v{version}: {names:?}"
            );
        }
    }
}

#[test]
fn every_advertised_api_version_is_answered_and_the_next_one_is_not() {
    let k = Kraftd::start("implemented");
    let mut s = k.connect();
    let (_, advertised) = api_versions(&mut s, 4, 1);
    for api in &advertised.api_keys {
        for version in api.min_version..=api.max_version + 1 {
            let frame = match api.api_key {
                18 => encode_request(
                    18,
                    version.min(5),
                    77,
                    Some("v"),
                    &ApiVersionsRequest {
                        client_software_name: "kraftd-wire-test".into(),
                        client_software_version: "1.0".into(),
                        ..Default::default()
                    },
                ),
                60 => encode_request(
                    60,
                    version.min(2),
                    77,
                    Some("v"),
                    &DescribeClusterRequest {
                        // v0 cannot name the controller endpoint type; it means brokers.
                        endpoint_type: if version >= 1 { 2 } else { 1 },
                        ..Default::default()
                    },
                ),
                70 => encode_request(
                    70,
                    0,
                    77,
                    Some("v"),
                    &kraftd::protocol::messages::ControllerRegistrationRequest {
                        controller_id: 2,
                        ..Default::default()
                    },
                ),
                82 => encode_request(
                    82,
                    0,
                    77,
                    Some("v"),
                    &kraftd::protocol::messages::UpdateRaftVoterRequest {
                        voter_id: 1,
                        ..Default::default()
                    },
                ),
                17 => encode_request(
                    17,
                    version.min(1),
                    77,
                    Some("v"),
                    &kraftd::protocol::messages::SaslHandshakeRequest {
                        mechanism: "PLAIN".into(),
                        ..Default::default()
                    },
                ),
                36 => encode_request(
                    36,
                    version.min(2),
                    77,
                    Some("v"),
                    &kraftd::protocol::messages::SaslAuthenticateRequest::default(),
                ),
                32 => encode_request(
                    32,
                    version.clamp(1, 4),
                    77,
                    Some("v"),
                    &kraftd::protocol::messages::DescribeConfigsRequest {
                        resources: vec![
                            kraftd::protocol::messages::describe_configs_request::DescribeConfigsResource {
                                resource_type: 4,
                                resource_name: "1".into(),
                                configuration_keys: Some(vec!["node.id".into()]),
                                ..Default::default()
                            },
                        ],
                        ..Default::default()
                    },
                ),
                58 => encode_request(
                    58,
                    0,
                    77,
                    Some("v"),
                    &kraftd::protocol::codec::RawBody(
                        not_controller::samples::envelope(forwarded_create_delegation_token())
                            .unwrap(),
                    ),
                ),
                key if not_controller::answers(key) => {
                    // A body at the last schema version for versions past the range: the
                    // version check must refuse it before the body is read.
                    let body_version = version.min(api.max_version);
                    let body = not_controller::samples::sample_request(
                        key,
                        body_version,
                        "t",
                        kraftd::protocol::codec::Uuid([7; 16]),
                    )
                    .unwrap()
                    .unwrap();
                    encode_request(
                        key,
                        body_version,
                        77,
                        Some("v"),
                        &kraftd::protocol::codec::RawBody(body),
                    )
                }
                other => raft_request_frame(other, version),
            };
            let mut frame = frame.unwrap();
            frame[6..8].copy_from_slice(&version.to_be_bytes());
            let mut c = k.connect();
            c.write_all(&frame).unwrap();
            let mut size = [0u8; 4];
            let answered = c.read_exact(&mut size).is_ok();
            let beyond = version > api.max_version;
            match (api.api_key, beyond) {
                // ApiVersions answers every version; beyond its range with the v0 fallback.
                (18, _) => assert!(answered, "ApiVersions v{version} not answered"),
                (_, false) => assert!(answered, "api {} v{version} not answered", api.api_key),
                (_, true) => assert!(!answered, "api {} v{version} answered", api.api_key),
            }
            if answered {
                let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
                c.read_exact(&mut body).unwrap();
                let mut r = kraftd::protocol::codec::Reader::new(&body);
                let header_version = response_header_version(api.api_key, version);
                assert_eq!(
                    ResponseHeader::decode(&mut r, header_version)
                        .unwrap()
                        .correlation_id,
                    77
                );
                let ok = match (api.api_key, beyond) {
                    (18, true) => ApiVersionsResponse::decode_exact(r.rest(), 0).is_ok(),
                    (18, false) => ApiVersionsResponse::decode_exact(r.rest(), version).is_ok(),
                    (70, _) => {
                        kraftd::protocol::messages::ControllerRegistrationResponse::decode_exact(
                            r.rest(),
                            version,
                        )
                        .is_ok()
                    }
                    (82, _) => kraftd::protocol::messages::UpdateRaftVoterResponse::decode_exact(
                        r.rest(),
                        version,
                    )
                    .is_ok(),
                    // PLAINTEXT listeners: the SASL exchange is out of place (ILLEGAL_SASL_STATE).
                    (17, _) => kraftd::protocol::messages::SaslHandshakeResponse::decode_exact(
                        r.rest(),
                        version,
                    )
                    .is_ok_and(|a| a.error_code == 34),
                    (36, _) => kraftd::protocol::messages::SaslAuthenticateResponse::decode_exact(
                        r.rest(),
                        version,
                    )
                    .is_ok_and(|a| a.error_code == 34),
                    // The controller's own node.id, described.
                    (32, _) => kraftd::protocol::messages::DescribeConfigsResponse::decode_exact(
                        r.rest(),
                        version,
                    )
                    .is_ok_and(|a| {
                        a.results.len() == 1
                            && a.results[0].error_code == 0
                            && a.results[0].configs.len() == 1
                    }),
                    (58, _) => kraftd::protocol::messages::EnvelopeResponse::decode_exact(
                        r.rest(),
                        version,
                    )
                    .is_ok_and(|e| {
                        let inner = e.response_data.unwrap_or_default();
                        let mut r = kraftd::protocol::codec::Reader::new(&inner);
                        e.error_code == 0
                            && ResponseHeader::decode(&mut r, 1).is_ok()
                            && kraftd::protocol::messages::CreateDelegationTokenResponse::decode_exact(
                                r.rest(),
                                3,
                            )
                            .is_ok_and(|t| t.error_code == 61)
                    }),
                    (key, _) if not_controller::answers(key) => {
                        not_controller::response_json(key, version, r.rest())
                            .unwrap()
                            .is_ok()
                    }
                    (60, _) => DescribeClusterResponse::decode_exact(r.rest(), version)
                        // A controller answers v0 with INVALID_REQUEST, as Java does.
                        .map(|b| b.error_code == if version == 0 { 42 } else { 0 })
                        .unwrap_or(false),
                    (key, _) => {
                        let kind = raft::raft_api_by_key(key).unwrap().kind;
                        raft::decode_response(kind, version, r.rest()).is_ok()
                    }
                };
                assert!(
                    ok,
                    "api {} v{version}: answer does not decode as expected",
                    api.api_key
                );
            }
        }
    }
}

#[test]
fn a_newer_api_versions_gets_the_v0_unsupported_version_fallback() {
    let k = Kraftd::start("fallback");
    let mut s = k.connect();
    // A v6 request, as a client newer than Kafka 4.4 would send first.
    let req = ApiVersionsRequest {
        client_software_name: "apache-kafka-java".into(),
        client_software_version: "4.4.0".into(),
        ..Default::default()
    };
    let mut frame = encode_request(18, 5, 9, Some("c"), &req).unwrap();
    frame[6..8].copy_from_slice(&6i16.to_be_bytes());
    s.write_all(&frame).unwrap();
    let frame = read_frame(&mut s);
    let mut r = kraftd::protocol::codec::Reader::new(&frame);
    assert_eq!(ResponseHeader::decode(&mut r, 0).unwrap().correlation_id, 9);
    let body = ApiVersionsResponse::decode_exact(r.rest(), 0).unwrap();
    assert_eq!(body.error_code, ErrorCode::UNSUPPORTED_VERSION.0);
    let keys: Vec<_> = body
        .api_keys
        .iter()
        .map(|a| (a.api_key, a.min_version, a.max_version))
        .collect();
    assert_eq!(keys, vec![(18, 0, 5)]);
    // The connection stays open: the client retries at v5 on it.
    let (corr, resp) = api_versions(&mut s, 5, 10);
    assert_eq!((corr, resp.error_code), (10, 0));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let k = Kraftd::start("pipeline");
    let mut s = k.connect();
    let av = ApiVersionsRequest::default();
    let dc = DescribeClusterRequest {
        endpoint_type: 2,
        ..Default::default()
    };
    let mut batch = Vec::new();
    for corr in 0..20 {
        if corr % 2 == 0 {
            batch.extend(encode_request(18, 2, corr, Some("p"), &av).unwrap());
        } else {
            batch.extend(encode_request(60, 1, corr, Some("p"), &dc).unwrap());
        }
    }
    s.write_all(&batch).unwrap();
    for corr in 0..20 {
        let frame = read_frame(&mut s);
        let header_version = if corr % 2 == 0 { 0 } else { 1 };
        let mut r = kraftd::protocol::codec::Reader::new(&frame);
        assert_eq!(
            ResponseHeader::decode(&mut r, header_version)
                .unwrap()
                .correlation_id,
            corr
        );
        if corr % 2 == 1 {
            let body = DescribeClusterResponse::decode_exact(r.rest(), 1).unwrap();
            assert_eq!(body.cluster_id, CLUSTER_ID);
            assert_eq!(body.endpoint_type, 2);
            assert_eq!(body.brokers.len(), 1);
            assert_eq!(body.brokers[0].port, k.port as i32);
        }
    }
}

#[test]
fn bad_input_closes_the_connection_and_the_process_keeps_serving() {
    let mut k = Kraftd::start("bad-input");

    // 1. The 9-byte Vote body that aborts kafka-protocol 0.18: Vote v2 header, then 9 bytes
    //    whose counts claim far more than is present.
    let mut vote = Vec::new();
    vote.extend_from_slice(&52i16.to_be_bytes());
    vote.extend_from_slice(&2i16.to_be_bytes());
    vote.extend_from_slice(&1i32.to_be_bytes());
    vote.extend_from_slice(&(-1i16).to_be_bytes()); // client id: null
    vote.push(0); // header tagged fields
    vote.extend_from_slice(&[0x01, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00, 0x00, 0x01]);
    let mut s = k.connect();
    s.write_all(&frame_with_size(vote.len() as i32, &vote))
        .unwrap();
    k.assert_closed(s, "9-byte Vote body");
    k.wait_for_log("Vote");
    k.assert_serving();

    // 2. A truncated frame: 100 bytes promised, 10 sent, then the client goes away.
    let mut s = k.connect();
    s.write_all(&frame_with_size(100, &[0, 18, 0, 3, 0, 0, 0, 1, 0, 0]))
        .unwrap();
    drop(s);
    k.wait_for_log("after 10 of a 100-byte request");
    k.assert_serving();

    // 3. A frame claiming 2 GiB, and one with a negative size.
    for size in [i32::MAX, i32::MIN] {
        let mut s = k.connect();
        s.write_all(&size.to_be_bytes()).unwrap();
        k.assert_closed(s, "2 GiB frame");
    }
    k.wait_for_log("larger than the maximum 1048576 (socket.request.max.bytes)");
    k.wait_for_log("invalid request size -2147483648");
    k.assert_serving();

    // 4. A header shorter than 8 bytes.
    let mut s = k.connect();
    s.write_all(&frame_with_size(5, &[0, 18, 0, 3, 0])).unwrap();
    k.assert_closed(s, "short header");
    k.wait_for_log("shorter than the 8-byte minimum");
    k.assert_serving();

    // 5. An unknown API key, and a known one a controller does not serve (Produce).
    let mut s = k.connect();
    s.write_all(&frame_with_size(
        10,
        &[0x7f, 0x11, 0, 0, 0, 0, 0, 5, 0xff, 0xff],
    ))
    .unwrap();
    k.assert_closed(s, "unknown api key");
    k.wait_for_log("unknown api key 32529");
    let mut s = k.connect();
    s.write_all(&frame_with_size(10, &[0, 0, 0, 9, 0, 0, 0, 6, 0xff, 0xff]))
        .unwrap();
    k.assert_closed(s, "produce");
    k.wait_for_log("api key 0 (Produce) version 9 (correlation id 6) is not served");
    k.assert_serving();

    // 6. An unsupported version of a served API other than ApiVersions.
    let mut s = k.connect();
    let dc = encode_request(60, 2, 3, None, &DescribeClusterRequest::default()).unwrap();
    let mut bumped = dc.clone();
    bumped[6..8].copy_from_slice(&9i16.to_be_bytes());
    s.write_all(&bumped).unwrap();
    k.assert_closed(s, "DescribeCluster v9");
    k.wait_for_log("unsupported DescribeCluster version 9");
    k.assert_serving();

    // 7. Random garbage, in several shapes, from a fixed seed.
    let mut seed: u64 = 0x5eed_cafe;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..50 {
        let len = (next() % 300) as usize;
        let garbage: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let mut s = k.connect();
        // Half the rounds get a plausible size prefix so the garbage reaches the parser.
        let bytes = if round % 2 == 0 {
            frame_with_size(len as i32, &garbage)
        } else {
            garbage
        };
        let _ = s.write_all(&bytes);
        drop(s);
    }
    k.assert_serving();
    assert!(
        k.child.try_wait().unwrap().is_none(),
        "kraftd died:\n{}",
        k.log()
    );
}

/// A valid request of raft api `key` at `version` (capped at the highest kraftd speaks; the
/// caller patches the header version for the one beyond).
fn raft_request_frame(
    key: i16,
    version: i16,
) -> Result<Vec<u8>, kraftd::protocol::codec::EncodeError> {
    use kraftd::raft::msg::*;
    use kraftd::raft::{Endpoints, OffsetAndEpoch, ReplicaKey};
    let api = raft::raft_api_by_key(key)
        .unwrap_or_else(|| panic!("kraftd advertises api {key}, which this test does not know"));
    let at = version.min(api.max_version);
    if api.kind == ApiKind::Fetch && at < 13 {
        // Below v13 a Fetch names its topic (the raft layer never sends one).
        use kraftd::protocol::messages::fetch_request as f;
        let request = kraftd::protocol::messages::FetchRequest {
            replica_id: 9,
            topics: vec![f::FetchTopic {
                topic: "__cluster_metadata".into(),
                partitions: vec![f::FetchPartition::default()],
                ..Default::default()
            }],
            ..Default::default()
        };
        return encode_request(key, at, 77, Some("v"), &request);
    }
    let cluster_id = Some(CLUSTER_ID.to_string());
    let request = match api.kind {
        ApiKind::Vote => Request::Vote(VoteRequest {
            cluster_id,
            voter_id: 1,
            voter_directory_id: None,
            partition_ok: true,
            candidate_epoch: 0,
            candidate_key: ReplicaKey::of_id(9),
            last_offset_epoch: 0,
            last_offset: 0,
            pre_vote: false,
        }),
        ApiKind::BeginQuorumEpoch => Request::BeginQuorumEpoch(BeginQuorumEpochRequest {
            cluster_id,
            voter_id: 1,
            voter_directory_id: None,
            partition_ok: true,
            leader_id: 9,
            leader_epoch: 0,
            leader_endpoints: Endpoints::empty(),
        }),
        ApiKind::EndQuorumEpoch => Request::EndQuorumEpoch(EndQuorumEpochRequest {
            cluster_id,
            partition_ok: true,
            leader_id: 9,
            leader_epoch: 0,
            preferred_candidates: vec![],
            leader_endpoints: Endpoints::empty(),
        }),
        ApiKind::Fetch => Request::Fetch(FetchRequest {
            cluster_id,
            replica_key: ReplicaKey::of_id(9),
            max_wait_ms: 0,
            max_bytes: 1 << 16,
            partition_ok: true,
            current_leader_epoch: 0,
            fetch_offset: 0,
            last_fetched_epoch: 0,
            high_watermark: None,
        }),
        ApiKind::FetchSnapshot => Request::FetchSnapshot(FetchSnapshotRequest {
            cluster_id,
            replica_key: ReplicaKey::of_id(9),
            max_bytes: 1 << 16,
            partition_ok: true,
            current_leader_epoch: 0,
            snapshot_id: OffsetAndEpoch::new(0, 0),
            position: 0,
        }),
        ApiKind::DescribeQuorum => {
            Request::DescribeQuorum(DescribeQuorumRequest { partition_ok: true })
        }
        ApiKind::AddRaftVoter => Request::AddRaftVoter(AddVoterRequest {
            cluster_id,
            timeout_ms: 1000,
            voter: ReplicaKey::new(9, Some(kraftd::protocol::codec::Uuid::ONE)),
            listeners: Endpoints::empty(),
            ack_when_committed: true,
        }),
        ApiKind::RemoveRaftVoter => Request::RemoveRaftVoter(RemoveVoterRequest {
            cluster_id,
            voter: ReplicaKey::new(9, Some(kraftd::protocol::codec::Uuid::ONE)),
        }),
        ApiKind::UpdateRaftVoter => Request::UpdateRaftVoter(UpdateVoterRequest {
            cluster_id,
            current_leader_epoch: 0,
            voter: ReplicaKey::new(9, Some(kraftd::protocol::codec::Uuid::ONE)),
            listeners: Endpoints::empty(),
            supported_kraft_version: (0, 1),
        }),
        ApiKind::ApiVersions => Request::ApiVersions,
    };
    let body = raft::encode_request_body(&request, at)?;
    encode_request(
        key,
        at,
        77,
        Some("v"),
        &kraftd::protocol::codec::RawBody(body),
    )
}
