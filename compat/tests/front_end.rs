//! kraftd's wire front end judged by real Kafka: Kafka's own tools against kraftd, and the same
//! raw requests sent to a Java 4.4 controller and to kraftd, answered alike.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use kraftd::protocol::codec::{Message, Reader};
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeClusterRequest, DescribeClusterResponse,
    ResponseHeader,
};

use crate::harness::{
    free_port, FormatFlag, JavaController, Kafka, KraftdProcess, Properties, TestDir,
};

const START_TIMEOUT: Duration = Duration::from_secs(90);

/// A single kraftd controller on a free port, its data dir formatted by Java's
/// `kafka-storage format --standalone` (kraftd only reads its meta.properties for now).
fn start_kraftd_on_java_formatted_dir(dir: &TestDir) -> (KraftdProcess, u16, String) {
    let kafka = Kafka::get();
    let port = free_port();
    let data = dir.subdir("kraftd-1-data");
    let mut props = Properties::new();
    props
        .set("process.roles", "controller")
        .set("node.id", "1")
        .set("listeners", format!("CONTROLLER://127.0.0.1:{port}"))
        .set("controller.listener.names", "CONTROLLER")
        .set(
            "controller.quorum.bootstrap.servers",
            format!("127.0.0.1:{port}"),
        )
        .set("log.dirs", data.display().to_string());
    let config = KraftdProcess::write_config(dir, "kraftd-1", &props);
    let cluster_id = kafka.random_uuid();
    kafka
        .storage_format(&config, &cluster_id, &FormatFlag::Standalone, &[])
        .assert_success();
    let config_arg = config.display().to_string();
    let mut kraftd = KraftdProcess::start(dir, "kraftd-1", &["start", &config_arg], &[]);
    assert!(
        kraftd.wait_for_log("started", START_TIMEOUT),
        "kraftd did not start; see its log"
    );
    (kraftd, port, cluster_id)
}

#[test]
fn kafka_features_describe_against_kraftd_prints_its_supported_ranges() {
    let dir = TestDir::new();
    let (_kraftd, port, _) = start_kraftd_on_java_formatted_dir(&dir);
    // The pinned client sends ApiVersions at its latest version (v5), which kraftd serves.
    let out = Kafka::get().features_describe(&format!("127.0.0.1:{port}"));
    out.assert_success();
    let line = |feature: &str| {
        out.stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(feature))
            .unwrap_or_else(|| panic!("no {feature} line in:\n{out}"))
            .to_owned()
    };
    // Finalized levels come with the metadata log (the storage and consensus issues).
    let mv = line("metadata.version");
    assert!(mv.contains("SupportedMinVersion: 3.3-IV3"), "{mv}");
    assert!(mv.contains("SupportedMaxVersion: 4.4-IV2"), "{mv}");
    let kv = line("kraft.version");
    assert!(kv.contains("SupportedMinVersion: 0"), "{kv}");
    assert!(kv.contains("SupportedMaxVersion: 1"), "{kv}");
}

#[test]
fn kafka_metadata_quorum_describes_a_standalone_kraftd_on_a_java_formatted_dir() {
    // Java's `format --standalone` writes kraft.version 1 and the voter set (with this node's
    // directory id) into the bootstrap checkpoint; kraftd reads it, elects itself, and the
    // tool, after discovering the leader through DescribeCluster, describes it.
    let dir = TestDir::new();
    let (kraftd, port, cluster_id) = start_kraftd_on_java_formatted_dir(&dir);
    let kafka = Kafka::get();
    let status = kafka
        .quorum_status(&format!("127.0.0.1:{port}"))
        .unwrap_or_else(|out| panic!("describe --status failed:\n{out}"));
    assert_eq!(status.cluster_id, cluster_id);
    assert_eq!(
        (status.leader_id, status.leader_epoch),
        (1, 1),
        "{status:?}"
    );
    let meta = std::fs::read_to_string(dir.join("kraftd-1-data/meta.properties")).unwrap();
    let directory_id = meta
        .lines()
        .find_map(|l| l.strip_prefix("directory.id="))
        .expect("Java wrote a directory.id");
    assert_eq!(
        status.fields.get("CurrentVoters").map(String::as_str),
        Some(
            format!(
                "[{{\"id\": 1, \"directoryId\": \"{directory_id}\", \"endpoints\": [\"CONTROLLER://127.0.0.1:{port}\"]}}]"
            )
            .as_str()
        ),
        "{status:?}"
    );
    drop(kraftd);
}

/// Sends raw frames to a server and reads one answer or a close.
struct RawClient(TcpStream);

enum Answer {
    Frame(Vec<u8>),
    Closed,
}

impl RawClient {
    fn connect(port: u16) -> RawClient {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        RawClient(s)
    }

    fn send(&mut self, bytes: &[u8]) -> Answer {
        self.0.write_all(bytes).expect("write");
        let mut size = [0u8; 4];
        match self.0.read_exact(&mut size) {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
                ) =>
            {
                return Answer::Closed
            }
            Err(e) => panic!("reading an answer: {e}"),
        }
        let mut frame = vec![0u8; i32::from_be_bytes(size) as usize];
        self.0.read_exact(&mut frame).expect("frame body");
        Answer::Frame(frame)
    }
}

fn frame(api_key: i16, version: i16, corr: i32, body: &[u8], flexible_header: bool) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&api_key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&(-1i16).to_be_bytes());
    if flexible_header {
        f.push(0);
    }
    f.extend_from_slice(body);
    let mut out = (f.len() as i32).to_be_bytes().to_vec();
    out.extend(f);
    out
}

fn describe_cluster(version: i16, endpoint_type: i8, include_ops: bool) -> Vec<u8> {
    let body = DescribeClusterRequest {
        include_cluster_authorized_operations: include_ops,
        endpoint_type,
        ..Default::default()
    };
    encode_request(60, version, 5, Some("compat"), &body).unwrap()
}

fn decode_describe_cluster(frame: &[u8], version: i16) -> DescribeClusterResponse {
    let mut r = Reader::new(frame);
    ResponseHeader::decode(&mut r, 1).unwrap();
    DescribeClusterResponse::decode_exact(r.rest(), version).unwrap()
}

#[test]
fn kraftd_answers_raw_requests_as_a_java_controller_does() {
    let dir = TestDir::new();
    let mut java = JavaController::builder(1).start(&dir);
    java.wait_until_leader(START_TIMEOUT);
    let (_kraftd, kraftd_port, _) = start_kraftd_on_java_formatted_dir(&dir);
    let servers = [("java", java.port()), ("kraftd", kraftd_port)];

    // ApiVersions at a version neither serves: the KIP-511 v0 fallback, byte for byte apart
    // from the range each advertises for ApiVersions itself.
    let too_new = {
        let body = ApiVersionsRequest {
            client_software_name: "compat".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
        let mut f = encode_request(18, 4, 9, Some("compat"), &body).unwrap();
        f[6..8].copy_from_slice(&99i16.to_be_bytes());
        f
    };
    for (name, port) in servers {
        let Answer::Frame(f) = RawClient::connect(port).send(&too_new) else {
            panic!("{name} closed instead of answering ApiVersions v99");
        };
        let mut r = Reader::new(&f);
        assert_eq!(ResponseHeader::decode(&mut r, 0).unwrap().correlation_id, 9);
        let body = ApiVersionsResponse::decode_exact(r.rest(), 0).unwrap();
        assert_eq!(body.error_code, 35, "{name}: {body:?}");
        assert_eq!(body.api_keys.len(), 1, "{name}: {body:?}");
        assert_eq!(body.api_keys[0].api_key, 18, "{name}");
    }

    // An invalid client software name: INVALID_REQUEST from both.
    let bad_name = ApiVersionsRequest {
        client_software_name: "-bad name".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let bad_name = encode_request(18, 3, 4, Some("compat"), &bad_name).unwrap();
    for (name, port) in servers {
        let Answer::Frame(f) = RawClient::connect(port).send(&bad_name) else {
            panic!("{name} closed on an invalid software name");
        };
        let mut r = Reader::new(&f);
        ResponseHeader::decode(&mut r, 0).unwrap();
        let body = ApiVersionsResponse::decode_exact(r.rest(), 3).unwrap();
        assert_eq!(body.error_code, 42, "{name}: {body:?}");
    }

    // DescribeCluster: endpoint-type errors and the authorized-operations bit set.
    for (version, endpoint_type, include_ops) in [
        (0, 1, false),
        (1, 1, false),
        (1, 3, false),
        (2, 2, true),
        (2, 2, false),
    ] {
        let req = describe_cluster(version, endpoint_type, include_ops);
        let mut answers = Vec::new();
        for (name, port) in servers {
            let Answer::Frame(f) = RawClient::connect(port).send(&req) else {
                panic!("{name} closed on DescribeCluster v{version} type {endpoint_type}");
            };
            answers.push((name, decode_describe_cluster(&f, version)));
        }
        let (j, k) = (&answers[0].1, &answers[1].1);
        let what = format!("DescribeCluster v{version} type {endpoint_type} ops {include_ops}");
        assert_eq!(
            j.error_code, k.error_code,
            "{what}: java {j:?} kraftd {k:?}"
        );
        assert_eq!(j.error_message, k.error_message, "{what}");
        assert_eq!(j.endpoint_type, k.endpoint_type, "{what}");
        assert_eq!(
            j.cluster_authorized_operations, k.cluster_authorized_operations,
            "{what}"
        );
        if j.error_code == 0 {
            assert_eq!(k.brokers.len(), 1, "{what}: {k:?}");
            assert_eq!(k.brokers[0].port, kraftd_port as i32, "{what}");
            assert_eq!(j.brokers[0].port, java.port() as i32, "{what}");
        }
    }

    // Requests both must refuse by closing the connection.
    let refused: Vec<(&str, Vec<u8>)> = vec![
        ("unknown api key", frame(0x7f11, 0, 1, &[], false)),
        (
            "Produce on a controller",
            frame(0, 9, 1, &[0, 0, 0, 0], true),
        ),
        ("DescribeCluster v9", {
            let mut f = describe_cluster(2, 2, false);
            f[6..8].copy_from_slice(&9i16.to_be_bytes());
            f
        }),
        ("short header", {
            let mut f = 5i32.to_be_bytes().to_vec();
            f.extend_from_slice(&[0, 18, 0, 3, 0]);
            f
        }),
        (
            "truncated ApiVersions body",
            frame(18, 3, 1, &[0x10, b'a'], true),
        ),
    ];
    for (what, bytes) in &refused {
        for (name, port) in servers {
            match RawClient::connect(port).send(bytes) {
                Answer::Closed => {}
                Answer::Frame(f) => panic!("{name} answered {what} with {} bytes: {f:?}", f.len()),
            }
        }
    }
}
