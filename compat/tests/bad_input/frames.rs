//! Malformed bodies of each API served for brokers and tools: a well-formed frame whose body
//! is cut in half, replaced by a huge varint count, followed by a stray byte, or missing.
//! Each goes on a connection of its own; the answer is compared: closed, silent, or the
//! response's bytes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::messages::{
    AllocateProducerIdsRequest, AlterClientQuotasRequest, AlterConfigsRequest,
    AlterPartitionRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest,
    IncrementalAlterConfigsRequest, ListPartitionReassignmentsRequest, UnregisterBrokerRequest,
    UpdateFeaturesRequest,
};

use super::Answers;
use crate::topics::cluster::TopicCluster;

const CLIENT_ID: &str = "compat-bad-input";

/// (API name, key, version, a harmless body: refused, empty or changing nothing). Every one
/// of these versions is flexible, so the request header is v2.
fn bodies() -> Vec<(&'static str, i16, i16, Vec<u8>)> {
    fn body<M: Message + ApiMessage>(
        name: &'static str,
        v: i16,
        m: M,
    ) -> (&'static str, i16, i16, Vec<u8>) {
        (name, M::API_KEY, v, m.encode_to_vec(v).expect("encodes"))
    }
    vec![
        body(
            "BrokerRegistration",
            4,
            BrokerRegistrationRequest::default(),
        ),
        body("BrokerHeartbeat", 1, BrokerHeartbeatRequest::default()),
        body("UnregisterBroker", 0, UnregisterBrokerRequest::default()),
        body("CreateTopics", 7, CreateTopicsRequest::default()),
        body("DeleteTopics", 6, DeleteTopicsRequest::default()),
        body("CreatePartitions", 3, CreatePartitionsRequest::default()),
        body("AlterPartition", 3, AlterPartitionRequest::default()),
        body(
            "ElectLeaders",
            2,
            ElectLeadersRequest {
                topic_partitions: Some(vec![]),
                ..Default::default()
            },
        ),
        body(
            "AllocateProducerIds",
            0,
            AllocateProducerIdsRequest::default(),
        ),
        body("AlterConfigs", 2, AlterConfigsRequest::default()),
        body(
            "IncrementalAlterConfigs",
            1,
            IncrementalAlterConfigsRequest::default(),
        ),
        body("AlterClientQuotas", 1, AlterClientQuotasRequest::default()),
        body("UpdateFeatures", 1, UpdateFeaturesRequest::default()),
        body(
            "ListPartitionReassignments",
            0,
            ListPartitionReassignmentsRequest::default(),
        ),
    ]
}

/// A size-prefixed frame: request header v2 (correlation id 21), then `body`.
fn frame(key: i16, version: i16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&21i32.to_be_bytes());
    f.extend_from_slice(&(CLIENT_ID.len() as i16).to_be_bytes());
    f.extend_from_slice(CLIENT_ID.as_bytes());
    f.push(0); // no header tagged fields
    f.extend_from_slice(body);
    let mut framed = (f.len() as i32).to_be_bytes().to_vec();
    framed.extend(f);
    framed
}

/// What the server does with `bytes` sent on a fresh connection.
fn answer(port: u16, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    if let Err(e) = s.write_all(bytes) {
        return format!("closed while writing ({})", e.kind());
    }
    let mut size = [0u8; 4];
    match s.read_exact(&mut size) {
        Ok(()) => {}
        Err(e) => {
            return match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                    "no answer within 3 s, connection open".into()
                }
                _ => "closed".into(),
            }
        }
    }
    let mut frame = vec![0u8; i32::from_be_bytes(size).max(0) as usize];
    match s.read_exact(&mut frame) {
        Ok(()) => format!("answered {frame:02x?}"),
        Err(e) => format!("an answer cut short ({})", e.kind()),
    }
}

pub fn run(c: &TopicCluster, answers: &mut Answers) {
    for (name, key, version, body) in bodies() {
        let shapes: [(&str, Vec<u8>); 4] = [
            ("cut in half", body[..body.len() / 2].to_vec()),
            (
                "a count of 2^32-1",
                vec![0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0, 0, 0],
            ),
            ("a stray byte after it", [body.as_slice(), &[0]].concat()),
            ("no body", Vec::new()),
        ];
        for (shape, bytes) in shapes {
            let a = answer(c.controller.port, &frame(key, version, &bytes));
            answers.push((format!("{name} v{version}, body {shape}"), None, a));
        }
    }
}
