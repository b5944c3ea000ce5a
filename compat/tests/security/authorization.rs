//! Authorization of every API a controller serves: the same requests, in the same order, to a
//! Java 4.4 controller and to kraftd, both running StandardAuthorizer with the same ACLs, the
//! answers compared as Kafka's JSON form of each response.
//!
//! - No brokers (a stock broker does not start beside a Java controller running an authorizer
//!   in this harness: its raft client fails on the first fetch answer; so topics are refused
//!   for want of brokers once authorized), this test's connection (User:ANONYMOUS on
//!   PLAINTEXT) a super user, so it may forward: requests in Envelopes naming User:alice (no ACLs, then CREATE on the topics
//!   prefixed `alice-`) and User:admin (a super user).
//! - Without brokers, `allow.everyone.if.no.acl.found` on and only User:admin a super user:
//!   broker RPCs and an Envelope from this connection pass while no ACL names the cluster, and
//!   are refused once one does (it then lacks CLUSTER_ACTION).
//!
//! Java's "Request <request> needs OP permission." names the request by its connection dump,
//! kraftd by the api and principal: that part is blanked. Created topics' random ids too.

use std::io::Write;
use std::time::Duration;

use kraftd::protocol::codec::{ApiMessage, Message, RawBody};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kraftd::protocol::messages::alter_user_scram_credentials_request::ScramCredentialDeletion;
use kraftd::protocol::messages::create_acls_request::AclCreation;
use kraftd::protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kraftd::protocol::messages::create_topics_request::CreatableTopic;
use kraftd::protocol::messages::delete_topics_request::DeleteTopicState;
use kraftd::protocol::messages::elect_leaders_request::TopicPartitions;
use kraftd::protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kraftd::protocol::messages::{
    AllocateProducerIdsRequest, AlterClientQuotasRequest, AlterUserScramCredentialsRequest,
    CreateAclsRequest, CreateDelegationTokenRequest, CreatePartitionsRequest, CreateTopicsRequest,
    DefaultPrincipalData, DeleteTopicsRequest, ElectLeadersRequest, EnvelopeRequest,
    EnvelopeResponse, IncrementalAlterConfigsRequest, ListPartitionReassignmentsRequest,
    ResponseHeader, UnregisterBrokerRequest, UpdateFeaturesRequest,
};
use kraftd::server::api::not_controller::response_json;
use serde_json::Value;

use super::assert_same_answers;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::pki::Pki;
use crate::harness::quorum_probe::{round_trip, try_read_response};
use crate::harness::transport::{client_config_as, ProbeStream};
use crate::harness::TestDir;
use crate::topics::cluster::{TopicCluster, START_TIMEOUT};

const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

/// How a request reaches the controller.
#[derive(Clone, Copy)]
pub(super) enum Via {
    /// From this test's connection (User:ANONYMOUS).
    Direct,
    /// In an Envelope naming this user.
    As(&'static str),
    /// On a mutual-TLS connection presenting the certificate the suite's CA issued to this
    /// name (the listener's `ssl.principal.mapping.rules` name the principal).
    Cert(&'static str),
}

pub(super) struct Case {
    pub(super) name: &'static str,
    via: Via,
    pub(super) key: i16,
    version: i16,
    body: Vec<u8>,
    /// Java's first error code (the Envelope's, else the answer's first).
    pub(super) expected: ErrorCode,
}

pub(super) fn case<M: Message + ApiMessage>(
    name: &'static str,
    via: Via,
    version: i16,
    request: M,
    expected: ErrorCode,
) -> Case {
    Case {
        name,
        via,
        key: M::API_KEY,
        version,
        body: request.encode_to_vec(version).unwrap(),
        expected,
    }
}

fn create_topics(names: &[&str]) -> CreateTopicsRequest {
    CreateTopicsRequest {
        topics: names
            .iter()
            .map(|n| CreatableTopic {
                name: n.to_string(),
                num_partitions: 1,
                replication_factor: 1,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 30_000,
        ..Default::default()
    }
}

/// One resource (type id, name) setting one config.
fn alter_configs(ty: i8, name: &str, key: &str, value: &str) -> IncrementalAlterConfigsRequest {
    IncrementalAlterConfigsRequest {
        resources: vec![AlterConfigsResource {
            resource_type: ty,
            resource_name: name.into(),
            configs: vec![AlterableConfig {
                name: key.into(),
                config_operation: 0,
                value: Some(value.into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A token owned by `owner` (the requester when `None`).
fn token_for(owner: Option<&str>) -> CreateDelegationTokenRequest {
    CreateDelegationTokenRequest {
        owner_principal_type: owner.map(|_| "User".to_string()),
        owner_principal_name: owner.map(str::to_string),
        max_lifetime_ms: -1,
        ..Default::default()
    }
}

/// (resource type, name, pattern type, principal, operation): ALLOW from any host.
pub(super) fn create_acl(spec: (i8, &str, i8, &str, i8)) -> CreateAclsRequest {
    create_acl_with(spec, 3)
}

/// [`create_acl`] with this permission type (2 DENY, 3 ALLOW).
pub(super) fn create_acl_with(spec: (i8, &str, i8, &str, i8), permission: i8) -> CreateAclsRequest {
    let (rt, name, pt, principal, op) = spec;
    CreateAclsRequest {
        creations: vec![AclCreation {
            resource_type: rt,
            resource_name: name.into(),
            resource_pattern_type: pt,
            principal: principal.into(),
            host: "*".into(),
            operation: op,
            permission_type: permission,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn forwarded() -> Vec<Case> {
    use ErrorCode as E;
    use Via::{As, Direct};
    let alice = As("alice");
    let admin = As("admin");
    vec![
        case(
            "alice creates a topic",
            alice,
            7,
            create_topics(&["alice-1"]),
            E::TOPIC_AUTHORIZATION_FAILED,
        ),
        case(
            "admin creates a topic (allowed; no broker to place it)",
            admin,
            7,
            create_topics(&["shared"]),
            E::INVALID_REPLICATION_FACTOR,
        ),
        case(
            "alice alters the topic's configs",
            alice,
            1,
            alter_configs(2, "shared", "retention.ms", "1000"),
            E::TOPIC_AUTHORIZATION_FAILED,
        ),
        case(
            "alice alters a broker's configs",
            alice,
            1,
            alter_configs(4, "", "log.cleaner.threads", "2"),
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice alters a group's configs",
            alice,
            1,
            alter_configs(32, "g1", "consumer.session.timeout.ms", "50000"),
            E::GROUP_AUTHORIZATION_FAILED,
        ),
        case(
            "alice sets a logger level",
            alice,
            1,
            alter_configs(8, "1", "root", "INFO"),
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice adds a partition",
            alice,
            3,
            CreatePartitionsRequest {
                topics: vec![CreatePartitionsTopic {
                    name: "shared".into(),
                    count: 2,
                    assignments: None,
                    ..Default::default()
                }],
                timeout_ms: 30_000,
                ..Default::default()
            },
            E::TOPIC_AUTHORIZATION_FAILED,
        ),
        case(
            "alice deletes a topic and one that does not exist",
            alice,
            6,
            DeleteTopicsRequest {
                topics: ["shared", "missing"]
                    .iter()
                    .map(|n| DeleteTopicState {
                        name: Some(n.to_string()),
                        ..Default::default()
                    })
                    .collect(),
                timeout_ms: 30_000,
                ..Default::default()
            },
            E::TOPIC_AUTHORIZATION_FAILED,
        ),
        case(
            "alice alters a client quota",
            alice,
            1,
            AlterClientQuotasRequest {
                entries: vec![EntryData {
                    entity: vec![EntityData {
                        entity_type: "user".into(),
                        entity_name: Some("bob".into()),
                        ..Default::default()
                    }],
                    ops: vec![OpData {
                        key: "producer_byte_rate".into(),
                        value: 1024.0,
                        remove: false,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice updates a feature",
            alice,
            1,
            UpdateFeaturesRequest {
                timeout_ms: 30_000,
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        alice_lists_reassignments(E::CLUSTER_AUTHORIZATION_FAILED),
        case(
            "alice elects leaders",
            alice,
            2,
            ElectLeadersRequest {
                election_type: 0,
                topic_partitions: Some(vec![TopicPartitions {
                    topic: "shared".into(),
                    partitions: vec![0],
                    ..Default::default()
                }]),
                timeout_ms: 30_000,
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice deletes a SCRAM credential",
            alice,
            0,
            AlterUserScramCredentialsRequest {
                deletions: vec![ScramCredentialDeletion {
                    name: "bob".into(),
                    mechanism: 1,
                    ..Default::default()
                }],
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice allocates producer ids",
            alice,
            0,
            AllocateProducerIdsRequest {
                broker_id: 1,
                broker_epoch: 0,
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice unregisters a broker",
            alice,
            0,
            UnregisterBrokerRequest {
                broker_id: 7,
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "alice asks a token for bob",
            alice,
            3,
            token_for(Some("bob")),
            E::DELEGATION_TOKEN_AUTHORIZATION_FAILED,
        ),
        case(
            "alice asks a token for herself (allowed; tokens are disabled)",
            alice,
            3,
            token_for(None),
            E::DELEGATION_TOKEN_AUTH_DISABLED,
        ),
        case(
            "admin asks a token for bob (allowed; tokens are disabled)",
            admin,
            3,
            token_for(Some("bob")),
            E::DELEGATION_TOKEN_AUTH_DISABLED,
        ),
        case(
            "an ACL lets alice create topics prefixed alice-",
            Direct,
            3,
            create_acl((2, "alice-", 4, "User:alice", 5)),
            E::NONE,
        ),
        case(
            "alice creates her topic (allowed; no broker to place it)",
            alice,
            7,
            create_topics(&["alice-1"]),
            E::INVALID_REPLICATION_FACTOR,
        ),
        case(
            "alice creates one of hers and one not",
            alice,
            7,
            create_topics(&["alice-2", "other"]),
            E::INVALID_REPLICATION_FACTOR,
        ),
        case(
            "admin alters the topic's configs",
            admin,
            1,
            alter_configs(2, "shared", "retention.ms", "1000"),
            E::UNKNOWN_TOPIC_OR_PARTITION,
        ),
    ]
}

fn without_brokers() -> Vec<Case> {
    use ErrorCode as E;
    use Via::{As, Direct};
    let producer_ids = || AllocateProducerIdsRequest {
        broker_id: 1,
        broker_epoch: 0,
        ..Default::default()
    };
    vec![
        case(
            "a broker RPC while no ACL names the cluster",
            Direct,
            0,
            producer_ids(),
            E::STALE_BROKER_EPOCH,
        ),
        case(
            "an Envelope while no ACL names the cluster",
            As("admin"),
            0,
            producer_ids(),
            E::STALE_BROKER_EPOCH,
        ),
        case(
            "an ACL names the cluster (for admin)",
            Direct,
            3,
            create_acl((4, "kafka-cluster", 3, "User:admin", 2)),
            E::NONE,
        ),
        case(
            "a broker RPC without CLUSTER_ACTION",
            Direct,
            0,
            producer_ids(),
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "an unregistration without ALTER",
            Direct,
            0,
            UnregisterBrokerRequest {
                broker_id: 7,
                ..Default::default()
            },
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
        case(
            "an Envelope from a connection without CLUSTER_ACTION",
            As("admin"),
            7,
            create_topics(&["t"]),
            E::CLUSTER_AUTHORIZATION_FAILED,
        ),
    ]
}

fn principal(name: &str) -> Vec<u8> {
    let mut bytes = 0i16.to_be_bytes().to_vec();
    let data = DefaultPrincipalData {
        type_: "User".into(),
        name: name.into(),
        ..Default::default()
    };
    bytes.extend(data.encode_to_vec(0).unwrap());
    bytes
}

/// Blanks what differs by design: Java's connection dump in "Request ... needs", random
/// topic ids, the controllers' ports, and the offsets each log has reached (each writes its
/// own NoOpRecords); -1 ("none") stays.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(fields) => {
            for (k, x) in fields.iter_mut() {
                let offset = ["highWatermark", "logEndOffset"].contains(&k.as_str());
                if k == "topicId" && x.as_str() != Some("AAAAAAAAAAAAAAAAAAAAAA") {
                    *x = Value::String("<random>".into());
                } else if k == "port" || (offset && x.as_i64().is_some_and(|o| o >= 0)) {
                    *x = Value::String("<differs>".into());
                } else if let Value::String(s) = x {
                    if let (Some(start), Some(end)) = (s.find("Request "), s.find(" needs ")) {
                        if start == 0 && end > start {
                            *s = format!("Request <request>{}", &s[end..]);
                        }
                    }
                } else {
                    normalize(x);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// The answer as Kafka's JSON (normalized), and its first error code.
fn render(key: i16, version: i16, body: &[u8]) -> (String, i16) {
    let mut json = response_json(key, version, body)
        .or_else(|| super::raft_authorization::response_json(key, version, body))
        .expect("a controller API")
        .expect("the response decodes");
    normalize(&mut json);
    if key == DeleteTopicsRequest::API_KEY {
        // Java shuffles DeleteTopics' results (`Collections.shuffle`, its own randomness).
        if let Some(Value::Array(results)) = json.get_mut("responses") {
            results.sort_by_key(|r| r.to_string());
        }
    }
    (json.to_string(), first_code(&json).unwrap_or(0))
}

/// The first nonzero `errorCode` in the answer, depth first; 0 if none.
fn first_code(v: &Value) -> Option<i16> {
    match v {
        Value::Object(fields) => fields.iter().find_map(|(k, x)| match x {
            Value::Number(n) if k == "errorCode" => {
                n.as_i64().filter(|c| *c != 0).map(|c| c as i16)
            }
            other => first_code(other),
        }),
        Value::Array(items) => items.iter().find_map(first_code),
        _ => None,
    }
}

pub(super) fn ask(port: u16, c: &Case) -> (String, i16) {
    match c.via {
        Via::Direct => match round_trip(port, c.key, c.version, &RawBody(c.body.clone())) {
            Some(body) => render(c.key, c.version, &body),
            None => ("no answer".into(), i16::MIN),
        },
        Via::Cert(name) => {
            let frame = encode_request(
                c.key,
                c.version,
                7,
                Some("compat-tls"),
                &RawBody(c.body.clone()),
            )
            .expect("the request encodes");
            let config = client_config_as(Some(&Pki::get().identity(name)));
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            let answer = ProbeStream::connect_tls(addr, Duration::from_secs(10), config)
                .and_then(|mut s| s.write_all(&frame).map(|_| s))
                .map_err(|e| e.to_string())
                .and_then(|mut s| {
                    try_read_response(&mut s, c.key, c.version, Duration::from_secs(10))
                });
            match answer {
                Ok(body) => render(c.key, c.version, &body),
                Err(e) => (format!("no answer: {e}"), i16::MIN),
            }
        }
        Via::As(name) => {
            let inner = encode_request(
                c.key,
                c.version,
                41,
                Some("broker-1"),
                &RawBody(c.body.clone()),
            )
            .unwrap()[4..]
                .to_vec();
            let envelope = EnvelopeRequest {
                request_data: inner,
                request_principal: Some(principal(name)),
                client_host_address: vec![127, 0, 0, 1],
                ..Default::default()
            };
            let Some(answer) = round_trip(port, 58, 0, &envelope) else {
                return ("no answer".into(), i16::MIN);
            };
            let e = EnvelopeResponse::decode_exact(&answer, 0).unwrap();
            let Some(data) = e.response_data else {
                let code = ErrorCode(e.error_code);
                return (format!("Envelope {code}"), e.error_code);
            };
            let mut reader = kraftd::protocol::codec::Reader::new(&data);
            let header = ResponseHeader::decode(&mut reader, 1).unwrap();
            let (json, code) = render(c.key, c.version, reader.rest());
            let corr = header.correlation_id;
            (format!("Envelope NONE, inner #{corr}: {json}"), code)
        }
    }
}

fn run(
    kind: Kind,
    brokers: &[i32],
    props: &[(&str, String)],
    cases: &[Case],
) -> Vec<(String, i16)> {
    let dir = TestDir::new();
    let mut c = TopicCluster::start_with(&dir, kind, brokers, props);
    wait_until_authorizer_loaded(kind, c.controller.port);
    let answers = cases
        .iter()
        .map(|x| {
            let answer = ask(c.controller.port, x);
            if x.key == CreateAclsRequest::API_KEY {
                // Java's authorizer sees the new ACL once its image is published, a moment
                // after the answer.
                std::thread::sleep(std::time::Duration::from_millis(1000));
            }
            answer
        })
        .collect();
    c.stop();
    answers
}

/// ListPartitionReassignments of every partition, forwarded for alice: read-only, and needing
/// DESCRIBE on the cluster.
fn alice_lists_reassignments(expected: ErrorCode) -> Case {
    case(
        "alice lists reassignments",
        Via::As("alice"),
        0,
        ListPartitionReassignmentsRequest {
            timeout_ms: 30_000,
            topics: None,
            ..Default::default()
        },
        expected,
    )
}

/// Leading is not yet answering: until its authorizer has loaded the ACLs, StandardAuthorizer
/// refuses every principal but the super users with UNKNOWN_SERVER_ERROR, and kraftd does the
/// same. A read-only request forwarded for alice (no super user in either configuration) tells
/// when that is over, so the cases see a loaded authorizer on both controllers.
fn wait_until_authorizer_loaded(kind: Kind, port: u16) {
    let probe = alice_lists_reassignments(ErrorCode::NONE);
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    loop {
        let (answer, code) = ask(port, &probe);
        if code != ErrorCode::UNKNOWN_SERVER_ERROR.0 && code != i16::MIN {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{kind}: the authorizer did not load within {START_TIMEOUT:?}: {answer}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn compare(what: &str, brokers: &[i32], props: &[(&str, String)], cases: Vec<Case>) {
    let java = run(Kind::Java, brokers, props, &cases);
    let kraftd = run(Kind::Kraftd, brokers, props, &cases);
    let named: Vec<(&str, i16)> = cases.iter().map(|c| (c.name, c.expected.0)).collect();
    assert_same_answers(what, &named, &java, &kraftd);
}

#[test]
fn every_api_is_authorized_as_a_java_controller_authorizes_it() {
    let authorizer = ("authorizer.class.name", STANDARD_AUTHORIZER.to_string());
    compare(
        "A non-super user and a super user, forwarded by a super user's connection",
        &[],
        &[
            authorizer.clone(),
            ("super.users", "User:ANONYMOUS;User:admin".to_string()),
        ],
        forwarded(),
    );
    compare(
        "A connection that is not a super user",
        &[],
        &[
            authorizer,
            ("super.users", "User:admin".to_string()),
            ("allow.everyone.if.no.acl.found", "true".to_string()),
        ],
        without_brokers(),
    );
}
