//! AlterClientQuotas: the same requests, in the same order, to a Java 4.4 controller and to
//! kraftd (no brokers), and the answers compared entry by entry, in the order each lists them:
//! error codes, messages and the entities as echoed.

use kraftd::protocol::codec::Message;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kraftd::protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};

use super::assert_same_answers;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

type Entity<'a> = &'a [(&'a str, Option<&'a str>)];
/// A quota op: key and value, or the key's removal (`None`).
type Op<'a> = (&'a str, Option<f64>);

fn entry(entity: Entity, ops: &[Op]) -> EntryData {
    EntryData {
        entity: entity
            .iter()
            .map(|(t, n)| EntityData {
                entity_type: t.to_string(),
                entity_name: n.map(str::to_string),
                ..Default::default()
            })
            .collect(),
        ops: ops
            .iter()
            .map(|(k, v)| OpData {
                key: k.to_string(),
                value: v.unwrap_or(0.0),
                remove: v.is_none(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn request(entries: Vec<EntryData>, validate_only: bool) -> AlterClientQuotasRequest {
    AlterClientQuotasRequest {
        entries,
        validate_only,
        ..Default::default()
    }
}

/// (case, request, Java's error code of the first entry).
fn cases() -> Vec<(&'static str, AlterClientQuotasRequest, ErrorCode)> {
    use ErrorCode as E;
    let alice: Entity = &[("user", Some("alice"))];
    let one = |e: Entity, ops: &[Op]| request(vec![entry(e, ops)], false);
    vec![
        (
            "set a user quota",
            one(alice, &[("producer_byte_rate", Some(1024.0))]),
            E::NONE,
        ),
        (
            "the same again",
            one(alice, &[("producer_byte_rate", Some(1024.0))]),
            E::NONE,
        ),
        (
            "remove a key never set",
            one(alice, &[("consumer_byte_rate", None)]),
            E::NONE,
        ),
        (
            "an empty entity",
            one(&[], &[("producer_byte_rate", Some(1.0))]),
            E::INVALID_REQUEST,
        ),
        (
            "an unknown entity type",
            one(&[("group", Some("g"))], &[]),
            E::INVALID_REQUEST,
        ),
        (
            "an empty user name",
            one(&[("user", Some(""))], &[]),
            E::INVALID_REQUEST,
        ),
        (
            "ip with user",
            one(&[("ip", Some("10.0.0.1")), ("user", None)], &[]),
            E::INVALID_REQUEST,
        ),
        (
            "an ip that does not resolve",
            one(&[("ip", Some("no-such-host.invalid"))], &[]),
            E::INVALID_REQUEST,
        ),
        (
            "a user key on an ip",
            one(
                &[("ip", Some("10.0.0.1"))],
                &[("producer_byte_rate", Some(1.0))],
            ),
            E::INVALID_REQUEST,
        ),
        (
            "an unknown key",
            one(alice, &[("fetch_rate", Some(1.0))]),
            E::INVALID_REQUEST,
        ),
        (
            "zero",
            one(alice, &[("consumer_byte_rate", Some(0.0))]),
            E::INVALID_REQUEST,
        ),
        (
            "negative",
            one(alice, &[("request_percentage", Some(-5.0))]),
            E::INVALID_REQUEST,
        ),
        (
            "a fraction of a byte",
            one(alice, &[("consumer_byte_rate", Some(1.5))]),
            E::INVALID_REQUEST,
        ),
        (
            "too large for a long",
            one(alice, &[("consumer_byte_rate", Some(1e19))]),
            E::INVALID_REQUEST,
        ),
        (
            "too large for an int",
            one(&[("ip", None)], &[("connection_creation_rate", Some(3e9))]),
            E::INVALID_REQUEST,
        ),
        (
            "a duplicate key",
            one(
                &[("user", Some("b"))],
                &[
                    ("producer_byte_rate", Some(1.0)),
                    ("producer_byte_rate", Some(2.0)),
                ],
            ),
            E::INVALID_REQUEST,
        ),
        (
            "a duplicate entity",
            request(
                vec![
                    entry(
                        &[("client-id", Some("c"))],
                        &[("request_percentage", Some(10.0))],
                    ),
                    entry(
                        &[("client-id", Some("c"))],
                        &[("request_percentage", Some(20.0))],
                    ),
                ],
                false,
            ),
            E::INVALID_REQUEST,
        ),
        (
            "a type twice in one entity",
            one(
                &[("user", Some("x")), ("user", Some("y"))],
                &[("producer_byte_rate", Some(5.0))],
            ),
            E::NONE,
        ),
        (
            "many entities, some refused",
            request(
                vec![
                    entry(
                        &[("user", Some("alice")), ("client-id", Some("app"))],
                        &[
                            ("consumer_byte_rate", Some(2048.0)),
                            ("controller_mutation_rate", Some(1.5)),
                            ("request_percentage", Some(33.3)),
                        ],
                    ),
                    entry(&[("user", None)], &[("producer_byte_rate", Some(100.0))]),
                    entry(&[("client-id", None)], &[("producer_byte_rate", Some(0.5))]),
                    entry(
                        &[("ip", Some("127.0.0.1"))],
                        &[("connection_creation_rate", Some(10.0))],
                    ),
                    entry(
                        &[("ip", Some("localhost"))],
                        &[("connection_creation_rate", Some(7.0))],
                    ),
                    entry(
                        &[("user", Some("bob")), ("client-id", None)],
                        &[("bogus", Some(1.0))],
                    ),
                    entry(
                        alice,
                        &[
                            ("producer_byte_rate", None),
                            ("consumer_byte_rate", Some(4096.0)),
                        ],
                    ),
                ],
                false,
            ),
            E::NONE,
        ),
        (
            "validate only",
            request(
                vec![
                    entry(
                        &[("user", Some("carol"))],
                        &[("producer_byte_rate", Some(64.0))],
                    ),
                    entry(
                        &[("user", Some("dave"))],
                        &[("producer_byte_rate", Some(-64.0))],
                    ),
                ],
                true,
            ),
            // Java lists dave first.
            E::INVALID_REQUEST,
        ),
        ("no entries", request(vec![], false), E::NONE),
    ]
}

fn render(r: &AlterClientQuotasResponse) -> String {
    let mut lines = vec![format!("throttle {}", r.throttle_time_ms)];
    for e in &r.entries {
        let entity: Vec<String> = e
            .entity
            .iter()
            .map(|d| format!("{}={:?}", d.entity_type, d.entity_name))
            .collect();
        lines.push(format!(
            "[{}]: {} {:?}",
            entity.join(", "),
            ErrorCode(e.error_code).name(),
            e.error_message
        ));
    }
    lines.join("\n      ")
}

fn run_all(kind: Kind, dir: &TestDir) -> Vec<(String, i16)> {
    let mut c = TopicCluster::start(dir, kind, &[]);
    let answers = cases()
        .into_iter()
        .map(|(_, request, _)| match c.send(1, &request) {
            Ok(body) => {
                let r = AlterClientQuotasResponse::decode_exact(&body, 1)
                    .expect("an AlterClientQuotas response");
                (render(&r), r.entries.first().map_or(0, |e| e.error_code))
            }
            Err(e) => (format!("no answer: {e}"), -1),
        })
        .collect();
    c.stop();
    answers
}

#[test]
fn alter_client_quotas_gets_javas_answers() {
    let dir = TestDir::new();
    let java = run_all(Kind::Java, &dir);
    let kraftd = run_all(Kind::Kraftd, &dir);
    let cases: Vec<(&str, i16)> = cases().iter().map(|c| (c.0, c.2 .0)).collect();
    assert_same_answers("AlterClientQuotas", &cases, &java, &kraftd);
}
