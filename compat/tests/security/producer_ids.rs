//! AllocateProducerIds refused and granted: the same requests, in the same order, to a Java 4.4
//! controller and to kraftd (no brokers running; one registered by a raw BrokerRegistration,
//! which never heartbeats and so stays fenced), and the answers compared.

use kraftd::protocol::codec::{Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::{
    AllocateProducerIdsRequest, AllocateProducerIdsResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse,
};

use super::assert_same_answers;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::TestDir;
use crate::load::fleet::broker_registration;
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 99;

/// (case, broker id, broker epoch relative to the registered one; None: -1), Java's error.
fn cases() -> Vec<(&'static str, i32, Option<i64>, ErrorCode)> {
    use ErrorCode as E;
    vec![
        ("an unregistered broker", 98, Some(0), E::STALE_BROKER_EPOCH),
        ("an older epoch", BROKER, Some(-1), E::STALE_BROKER_EPOCH),
        ("a newer epoch", BROKER, Some(1), E::STALE_BROKER_EPOCH),
        ("epoch -1", BROKER, None, E::STALE_BROKER_EPOCH),
        ("the fenced broker's own epoch", BROKER, Some(0), E::NONE),
        ("again: the next block", BROKER, Some(0), E::NONE),
    ]
}

/// A raw BrokerRegistration v4 of `broker_id` with one log directory, as a Kafka 4.4 broker
/// sends it (its incarnation and directory ids derived from the id).
pub(crate) fn registration(cluster_id: &str, broker_id: i32) -> BrokerRegistrationRequest {
    let incarnation = Uuid([broker_id as u8; 16]);
    let log_dir = Uuid([broker_id as u8 ^ 0x80; 16]);
    broker_registration(cluster_id, broker_id, incarnation, vec![log_dir], 1)
}

fn run_all(kind: Kind, dir: &TestDir) -> Vec<(String, i16)> {
    let mut c = TopicCluster::start(dir, kind, &[]);
    let body = c
        .send(4, &registration(&c.cluster_id, BROKER))
        .expect("the controller answers BrokerRegistration");
    let registered = BrokerRegistrationResponse::decode_exact(&body, 4).unwrap();
    assert_eq!(registered.error_code, 0, "{kind}: {registered:?}");
    let epoch = registered.broker_epoch;
    let answers = cases()
        .into_iter()
        .map(|(_, broker_id, relative, _)| {
            let request = AllocateProducerIdsRequest {
                broker_id,
                broker_epoch: relative.map_or(-1, |d| epoch + d),
                ..Default::default()
            };
            let body = match c.send(0, &request) {
                Ok(b) => b,
                Err(e) => return (format!("no answer: {e}"), -1),
            };
            let r = AllocateProducerIdsResponse::decode_exact(&body, 0)
                .expect("an AllocateProducerIds response");
            (
                format!(
                    "throttle {} {} start {} len {}",
                    r.throttle_time_ms,
                    ErrorCode(r.error_code).name(),
                    r.producer_id_start,
                    r.producer_id_len
                ),
                r.error_code,
            )
        })
        .collect();
    c.stop();
    answers
}

#[test]
fn allocate_producer_ids_gets_javas_answers() {
    let dir = TestDir::new();
    let java = run_all(Kind::Java, &dir);
    let kraftd = run_all(Kind::Kraftd, &dir);
    let cases: Vec<(&str, i16)> = cases().iter().map(|c| (c.0, c.3 .0)).collect();
    assert_same_answers("AllocateProducerIds", &cases, &java, &kraftd);
}
