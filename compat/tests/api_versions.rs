//! ApiVersions, golden against a Java 4.4 controller: a broker intersects its own APIs with the
//! active controller's ApiVersions answer to decide what it may forward, and reads the finalized
//! features from it. The same requests (v0-v5, with and without a client software name, and in
//! an Envelope) go to a standalone Java controller and to a standalone kraftd, first alone and
//! then with a stock broker registered; the answers must agree field by field. Then
//! `kafka-broker-api-versions` through each cluster's broker must print the same ranges.

use std::path::Path;

use kraftd::protocol::codec::{Message, RawBody, Reader};
use kraftd::protocol::frame::{encode_request, response_header_version};
use kraftd::protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kraftd::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, EnvelopeResponse, FetchRequest, FetchResponse,
    ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kraftd::protocol::records::{split_batches, MetadataRecord, MetadataRecordAndVersion};
use kraftd::server::api::not_controller::samples;
use serde_json::Value;

use crate::harness::dynamic_quorum::Kind;
use crate::harness::quorum_probe::{read_log_batches, round_trip};
use crate::harness::{Kafka, TestDir, Tool};
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 101;

/// The ApiVersions request bodies sent, with a label: every version, and from v3 on with a
/// client software name, without one (Java rejects the empty name) and with a malformed one;
/// from v5 with a cluster id and node id (another cluster's: a controller does not check them),
/// and with only one of the two.
fn requests() -> Vec<(String, i16, ApiVersionsRequest)> {
    let named = |cluster_id: Option<&str>, node_id: i32| ApiVersionsRequest {
        client_software_name: "apache-kafka-java".into(),
        client_software_version: "4.4.0".into(),
        cluster_id: cluster_id.map(str::to_owned),
        node_id,
        ..Default::default()
    };
    let mut all = vec![
        (
            "v5 addressed".into(),
            5,
            named(Some("AAAAAAAAAAAAAAAAAAAAAA"), 1),
        ),
        (
            "v5 cluster id only".into(),
            5,
            named(Some("AAAAAAAAAAAAAAAAAAAAAA"), -1),
        ),
        ("v5 node id only".into(), 5, named(None, 1)),
    ];
    for v in 0..=5i16 {
        all.push((format!("v{v}"), v, ApiVersionsRequest::default()));
        if v >= 3 {
            all.push((
                format!("v{v} named"),
                v,
                ApiVersionsRequest {
                    client_software_name: "apache-kafka-java".into(),
                    client_software_version: "4.4.0".into(),
                    ..Default::default()
                },
            ));
            all.push((
                format!("v{v} badly named"),
                v,
                ApiVersionsRequest {
                    client_software_name: "-bad name".into(),
                    client_software_version: "1".into(),
                    ..Default::default()
                },
            ));
        }
    }
    all
}

/// One ApiVersions answer of the controller at `port`, as Kafka's JSON.
fn ask(port: u16, version: i16, request: &ApiVersionsRequest) -> Value {
    let body = round_trip(port, 18, version, request)
        .unwrap_or_else(|| panic!("no ApiVersions v{version} answer from port {port}"));
    ApiVersionsResponse::decode_exact(&body, version)
        .unwrap_or_else(|e| panic!("ApiVersions v{version} from port {port}: {e}"))
        .to_kafka_json(version)
}

/// The answer to ApiVersions forwarded in an Envelope: the envelope's error code and the inner
/// answer as JSON, if any.
fn ask_enveloped(port: u16, version: i16, request: &ApiVersionsRequest) -> (i16, Option<Value>) {
    let inner = encode_request(18, version, 5, Some("broker-101"), request).unwrap()[4..].to_vec();
    let envelope = samples::envelope(inner).unwrap();
    let answer = round_trip(port, 58, 0, &RawBody(envelope))
        .unwrap_or_else(|| panic!("no answer to an Envelope from port {port}"));
    let e = EnvelopeResponse::decode_exact(&answer, 0).unwrap();
    let inner = e.response_data.as_ref().map(|d| {
        let mut r = Reader::new(d);
        ResponseHeader::decode(&mut r, response_header_version(18, version)).unwrap();
        ApiVersionsResponse::decode_exact(r.rest(), version)
            .unwrap()
            .to_kafka_json(version)
    });
    (e.error_code, inner)
}

/// The fields in which two JSON values differ, as `path: kraftd | java` lines (arrays of
/// objects with an `apiKey` or `name` are matched by it, so one missing api is one line).
fn differences(path: &str, kraftd: &Value, java: &Value, out: &mut Vec<String>) {
    let key = |v: &Value| {
        v.get("apiKey")
            .or_else(|| v.get("name"))
            .map(|k| k.to_string())
    };
    match (kraftd, java) {
        (Value::Object(k), Value::Object(j)) => {
            for name in k.keys().chain(j.keys().filter(|n| !k.contains_key(*n))) {
                let (kv, jv) = (
                    k.get(name).unwrap_or(&Value::Null),
                    j.get(name).unwrap_or(&Value::Null),
                );
                differences(&format!("{path}.{name}"), kv, jv, out);
            }
        }
        (Value::Array(k), Value::Array(j))
            if k.iter().chain(j).all(|v| key(v).is_some()) && !(k.is_empty() && j.is_empty()) =>
        {
            let mut keys: Vec<String> = k.iter().chain(j).filter_map(key).collect();
            keys.sort();
            keys.dedup();
            for id in keys {
                let find = |a: &Vec<Value>| {
                    a.iter()
                        .find(|v| key(v).as_deref() == Some(&id))
                        .cloned()
                        .unwrap_or(Value::Null)
                };
                differences(&format!("{path}[{id}]"), &find(k), &find(j), out);
            }
        }
        _ if kraftd != java => out.push(format!("{path}: kraftd {kraftd} | java {java}")),
        _ => {}
    }
}

/// A raft Fetch of `__cluster_metadata-0` by name, at a version without topic ids (which
/// ApiVersions advertises and no KRaft peer sends), as Kafka's JSON.
fn fetch_by_name(port: u16, version: i16) -> Value {
    let request = FetchRequest {
        replica_id: 9,
        max_wait_ms: 0,
        max_bytes: 1 << 20,
        topics: vec![FetchTopic {
            topic: "__cluster_metadata".into(),
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let body = round_trip(port, 1, version, &request)
        .unwrap_or_else(|| panic!("no Fetch v{version} answer from port {port}"));
    FetchResponse::decode_exact(&body, version)
        .unwrap_or_else(|e| panic!("Fetch v{version} from port {port}: {e}"))
        .to_kafka_json(version)
}

/// The offsets where a controller's log settles its feature levels and where it ends: the last
/// offset of the batch holding the last FeatureLevelRecord (of the batch ending its
/// transaction, if it is in one), and the log's last offset.
fn features_settled(metadata_dir: &Path) -> (i64, i64) {
    let (mut settled, mut end) = (-1, -1);
    let (mut pending, mut in_transaction) = (false, false);
    for (_, _, bytes) in read_log_batches(metadata_dir) {
        for batch in split_batches(&bytes).batches {
            for r in batch.records().expect("a readable batch").iter() {
                let r = r.expect("a readable record");
                end = end.max(r.offset);
                if batch.is_control() {
                    continue;
                }
                let value = r.value.expect("a value");
                match MetadataRecordAndVersion::decode(value).unwrap().record {
                    MetadataRecord::FeatureLevel(_) => pending = true,
                    MetadataRecord::BeginTransaction(_) => in_transaction = true,
                    MetadataRecord::EndTransaction(_) | MetadataRecord::AbortTransaction(_) => {
                        in_transaction = false
                    }
                    _ => {}
                }
            }
            if pending && !in_transaction {
                (settled, pending) = (end, false);
            }
        }
    }
    (settled, end)
}

/// Takes FinalizedFeaturesEpoch out of `answer` and checks it against the node's own log.
/// The epoch is the offset of the image in which the controller first published the current
/// levels, so it depends on how committed batches were grouped when published (a Java
/// controller answers 11 or 12 after a standalone format, from run to run): it must lie
/// between where the log settles the levels and the log's end, not equal the other node's.
fn take_epoch(answer: &mut Value, metadata_dir: &Path, what: &str, diffs: &mut Vec<String>) {
    let Some(epoch) = answer
        .as_object_mut()
        .and_then(|o| o.remove("finalizedFeaturesEpoch"))
    else {
        return;
    };
    let epoch = epoch.as_i64().expect("a number");
    let (settled, end) = features_settled(metadata_dir);
    if !(settled >= 0 && settled <= epoch && epoch <= end) {
        diffs.push(format!(
            "{what}: finalizedFeaturesEpoch {epoch} is not within [{settled}, {end}] of its log"
        ));
    }
}

/// Every request of [`requests`], direct and enveloped, to both controllers: the differences.
/// SaslHandshake and SaslAuthenticate at every version, on a PLAINTEXT controller listener.
fn sasl_answers(port: u16) -> Vec<(String, Value)> {
    let mut answers = Vec::new();
    for v in 0..=1 {
        let request = SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
            ..Default::default()
        };
        let body = round_trip(port, 17, v, &request)
            .unwrap_or_else(|| panic!("no SaslHandshake v{v} answer from port {port}"));
        let answer = SaslHandshakeResponse::decode_exact(&body, v).unwrap();
        answers.push((format!("SaslHandshake v{v}"), answer.to_kafka_json(v)));
    }
    for v in 0..=2 {
        let request = SaslAuthenticateRequest {
            auth_bytes: b"\0alice\0secret".to_vec(),
            ..Default::default()
        };
        let body = round_trip(port, 36, v, &request)
            .unwrap_or_else(|| panic!("no SaslAuthenticate v{v} answer from port {port}"));
        let answer = SaslAuthenticateResponse::decode_exact(&body, v).unwrap();
        answers.push((format!("SaslAuthenticate v{v}"), answer.to_kafka_json(v)));
    }
    answers
}

fn compare(stage: &str, java_cluster: &TopicCluster, kraftd_cluster: &TopicCluster) -> Vec<String> {
    let (java, kraftd) = (java_cluster.controller.port, kraftd_cluster.controller.port);
    let mut diffs = Vec::new();
    for ((label, j), (_, k)) in sasl_answers(java).into_iter().zip(sasl_answers(kraftd)) {
        differences(&format!("{stage} {label}"), &k, &j, &mut diffs);
    }
    for v in [4, 12] {
        let (j, k) = (fetch_by_name(java, v), fetch_by_name(kraftd, v));
        differences(&format!("{stage} Fetch v{v}"), &k, &j, &mut diffs);
    }
    for (label, version, request) in requests() {
        let (mut j, mut k) = (ask(java, version, &request), ask(kraftd, version, &request));
        let what = format!("{stage} {label}");
        take_epoch(
            &mut j,
            &java_cluster.controller.metadata_dir(),
            &format!("java {what}"),
            &mut diffs,
        );
        take_epoch(
            &mut k,
            &kraftd_cluster.controller.metadata_dir(),
            &format!("kraftd {what}"),
            &mut diffs,
        );
        differences(&format!("{stage} {label}"), &k, &j, &mut diffs);
        let (je, ke) = (
            ask_enveloped(java, version, &request),
            ask_enveloped(kraftd, version, &request),
        );
        if label == "v4 named" {
            eprintln!("{stage}: ApiVersions v4 in an Envelope: java {je:?}, kraftd {ke:?}");
        }
        differences(
            &format!("{stage} Envelope({label})"),
            &serde_json::json!({"envelopeError": ke.0, "inner": ke.1}),
            &serde_json::json!({"envelopeError": je.0, "inner": je.1}),
            &mut diffs,
        );
    }
    diffs
}

/// `kafka-broker-api-versions` through the cluster's broker, its first line (address and id)
/// left out: the broker's ApiVersions, forwardable APIs intersected with the controller's.
fn broker_api_versions(c: &TopicCluster) -> Vec<String> {
    let out = Kafka::get().run(
        Tool::BrokerApiVersions,
        &["--bootstrap-server", &c.bootstrap_server()],
    );
    out.assert_success();
    out.stdout
        .lines()
        .skip_while(|l| !l.contains("(id: "))
        .skip(1)
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn api_versions_answers_as_a_java_controller_does() {
    let dir = TestDir::new();
    let mut java = TopicCluster::start(&dir, Kind::Java, &[]);
    let mut kraftd = TopicCluster::start(&dir, Kind::Kraftd, &[]);
    let mut diffs = compare("standalone", &java, &kraftd);
    java.add_brokers(&dir, &[BROKER]);
    kraftd.add_brokers(&dir, &[BROKER]);
    diffs.extend(compare("with a broker", &java, &kraftd));
    let (jb, kb) = (broker_api_versions(&java), broker_api_versions(&kraftd));
    for line in jb.iter().filter(|l| !kb.contains(l)) {
        diffs.push(format!("kafka-broker-api-versions: java prints {line}"));
    }
    for line in kb.iter().filter(|l| !jb.contains(l)) {
        diffs.push(format!("kafka-broker-api-versions: kraftd prints {line}"));
    }
    kraftd.stop();
    java.stop();
    assert!(
        diffs.is_empty(),
        "kraftd's ApiVersions differs from Java's:\n{}",
        diffs.join("\n")
    );
}
