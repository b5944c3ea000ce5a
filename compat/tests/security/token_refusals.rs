//! Delegation-token refusals: the same requests, in the same order, to a Java 4.4 controller
//! and to kraftd (no brokers), forwarded in Envelopes with a principal as a broker forwards
//! them, or sent directly (PLAINTEXT), the answers compared as Kafka's JSON form of each
//! response. With a `delegation.token.secret.key` (the checks past the key) and without it
//! (DELEGATION_TOKEN_AUTH_DISABLED). Successful creations draw a random id at the current
//! time, so `tokens.rs` covers those end to end instead.

use kraftd::protocol::codec::{ApiMessage, Message, RawBody};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::create_delegation_token_request::CreatableRenewers;
use kraftd::protocol::messages::{
    CreateDelegationTokenRequest, DefaultPrincipalData, DescribeDelegationTokenRequest,
    EnvelopeRequest, EnvelopeResponse, ExpireDelegationTokenRequest, RenewDelegationTokenRequest,
    ResponseHeader,
};
use kraftd::server::api::not_controller::response_json;

use super::assert_same_answers;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::quorum_probe::round_trip;
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

/// How a request reaches the controller.
enum Via {
    Direct,
    /// In an Envelope, from this principal (token-authenticated or not).
    Forwarded(&'static str, bool),
}

struct Case {
    name: &'static str,
    via: Via,
    key: i16,
    version: i16,
    body: Vec<u8>,
    /// Java's error code (inside the Envelope when forwarded).
    expected: ErrorCode,
}

fn principal(name: &str, token: bool) -> Vec<u8> {
    let mut bytes = 0i16.to_be_bytes().to_vec();
    let data = DefaultPrincipalData {
        type_: "User".into(),
        name: name.into(),
        token_authenticated: token,
        ..Default::default()
    };
    bytes.extend(data.encode_to_vec(0).unwrap());
    bytes
}

fn create(owner: Option<(Option<&str>, &str)>, renewers: &[(&str, &str)]) -> Vec<u8> {
    CreateDelegationTokenRequest {
        owner_principal_type: owner.and_then(|(t, _)| t.map(str::to_string)),
        owner_principal_name: owner.map(|(_, n)| n.to_string()),
        renewers: renewers
            .iter()
            .map(|(t, n)| CreatableRenewers {
                principal_type: t.to_string(),
                principal_name: n.to_string(),
                ..Default::default()
            })
            .collect(),
        max_lifetime_ms: -1,
        ..Default::default()
    }
    .encode_to_vec(3)
    .unwrap()
}

fn renew(hmac: &[u8]) -> Vec<u8> {
    RenewDelegationTokenRequest {
        hmac: hmac.to_vec(),
        renew_period_ms: -1,
        ..Default::default()
    }
    .encode_to_vec(2)
    .unwrap()
}

fn expire(hmac: &[u8], period: i64) -> Vec<u8> {
    ExpireDelegationTokenRequest {
        hmac: hmac.to_vec(),
        expiry_time_period_ms: period,
        ..Default::default()
    }
    .encode_to_vec(2)
    .unwrap()
}

fn case(name: &'static str, via: Via, key: i16, version: i16, body: Vec<u8>, e: ErrorCode) -> Case {
    Case {
        name,
        via,
        key,
        version,
        body,
        expected: e,
    }
}

fn cases_with_a_key() -> Vec<Case> {
    use ErrorCode as E;
    let create_key = <CreateDelegationTokenRequest as ApiMessage>::API_KEY;
    let renew_key = <RenewDelegationTokenRequest as ApiMessage>::API_KEY;
    let expire_key = <ExpireDelegationTokenRequest as ApiMessage>::API_KEY;
    let describe_key = <DescribeDelegationTokenRequest as ApiMessage>::API_KEY;
    let alice = || Via::Forwarded("alice", false);
    vec![
        case(
            "create, directly over PLAINTEXT, for bob",
            Via::Direct,
            create_key,
            3,
            create(Some((Some("User"), "bob")), &[]),
            E::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        ),
        case(
            "create, forwarded for a token-authenticated alice",
            Via::Forwarded("alice", true),
            create_key,
            3,
            create(None, &[]),
            E::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        ),
        case(
            "create with a Group renewer",
            alice(),
            create_key,
            3,
            create(None, &[("User", "bob"), ("Group", "ops")]),
            E::INVALID_PRINCIPAL_TYPE,
        ),
        case(
            "create for an owner without a type",
            alice(),
            create_key,
            3,
            create(Some((None, "bob")), &[]),
            E::UNKNOWN_SERVER_ERROR,
        ),
        case(
            "renew, directly",
            Via::Direct,
            renew_key,
            2,
            renew(b"whatever"),
            E::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        ),
        case(
            "renew an unknown HMAC",
            alice(),
            renew_key,
            2,
            renew(b"no such token"),
            E::DELEGATION_TOKEN_NOT_FOUND,
        ),
        case(
            "expire an unknown HMAC at once",
            alice(),
            expire_key,
            2,
            expire(b"no such token", -1),
            E::DELEGATION_TOKEN_NOT_FOUND,
        ),
        case(
            "expire, forwarded for a token-authenticated alice",
            Via::Forwarded("alice", true),
            expire_key,
            2,
            expire(b"x", 10),
            E::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        ),
        case(
            "describe tokens",
            Via::Direct,
            describe_key,
            3,
            DescribeDelegationTokenRequest {
                owners: None,
                ..Default::default()
            }
            .encode_to_vec(3)
            .unwrap(),
            E::UNKNOWN_SERVER_ERROR,
        ),
    ]
}

fn cases_without_a_key() -> Vec<Case> {
    use ErrorCode as E;
    let alice = || Via::Forwarded("alice", false);
    vec![
        case(
            "create without a secret key",
            alice(),
            <CreateDelegationTokenRequest as ApiMessage>::API_KEY,
            3,
            create(Some((Some("User"), "bob")), &[("User", "carol")]),
            E::DELEGATION_TOKEN_AUTH_DISABLED,
        ),
        case(
            "renew without a secret key",
            alice(),
            <RenewDelegationTokenRequest as ApiMessage>::API_KEY,
            2,
            renew(b"x"),
            E::DELEGATION_TOKEN_AUTH_DISABLED,
        ),
        case(
            "expire without a secret key",
            alice(),
            <ExpireDelegationTokenRequest as ApiMessage>::API_KEY,
            2,
            expire(b"x", -1),
            E::DELEGATION_TOKEN_AUTH_DISABLED,
        ),
    ]
}

/// The inner response rendered as Kafka's JSON, and its top-level error code.
fn render(key: i16, version: i16, body: &[u8]) -> (String, i16) {
    let json = response_json(key, version, body)
        .expect("a token API")
        .expect("the response decodes");
    let code = json["errorCode"].as_i64().unwrap_or(i64::MIN) as i16;
    (json.to_string(), code)
}

fn ask(port: u16, c: &Case) -> (String, i16) {
    match c.via {
        Via::Direct => match round_trip(port, c.key, c.version, &RawBody(c.body.clone())) {
            Some(body) => render(c.key, c.version, &body),
            None => ("no answer".into(), i16::MIN),
        },
        Via::Forwarded(name, token) => {
            let inner = encode_request(
                c.key,
                c.version,
                41,
                Some("broker-101"),
                &RawBody(c.body.clone()),
            )
            .unwrap()[4..]
                .to_vec();
            let envelope = EnvelopeRequest {
                request_data: inner,
                request_principal: Some(principal(name, token)),
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
            let envelope_code = ErrorCode(e.error_code);
            let corr = header.correlation_id;
            (
                format!("Envelope {envelope_code}, inner #{corr}: {json}"),
                code,
            )
        }
    }
}

fn run(kind: Kind, secret: bool, cases: &[Case]) -> Vec<(String, i16)> {
    let dir = TestDir::new();
    let props: Vec<(&str, String)> = if secret {
        vec![("delegation.token.secret.key", "refusals-secret".to_string())]
    } else {
        vec![]
    };
    let mut c = TopicCluster::controller_only(&dir, kind, &props, &[]);
    let answers = cases.iter().map(|x| ask(c.controller.port, x)).collect();
    c.stop();
    answers
}

fn compare(what: &str, secret: bool, cases: Vec<Case>) {
    let java = run(Kind::Java, secret, &cases);
    let kraftd = run(Kind::Kraftd, secret, &cases);
    let named: Vec<(&str, i16)> = cases.iter().map(|c| (c.name, c.expected.0)).collect();
    assert_same_answers(what, &named, &java, &kraftd);
}

#[test]
fn token_refusals_match_a_java_controller() {
    compare("Token requests refused", true, cases_with_a_key());
    compare(
        "Token requests without a secret key",
        false,
        cases_without_a_key(),
    );
}
