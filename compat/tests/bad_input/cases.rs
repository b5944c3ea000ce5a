//! The targeted cases: a wrong cluster id, stale and unknown broker epochs, unknown topic ids
//! and names, partition counts above the limit. Each is one request whose answer is rendered
//! whole (Debug of the decoded response, topic ids and epochs masked by [`Ctx::mask`]).

use std::fmt::Debug;
use std::time::Duration;

use kraftd::protocol::codec::{ApiMessage, Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kraftd::protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kraftd::protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic,
};
use kraftd::protocol::messages::elect_leaders_request::TopicPartitions;
use kraftd::protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use kraftd::protocol::messages::{
    AllocateProducerIdsRequest, AllocateProducerIdsResponse, AlterPartitionRequest,
    AlterPartitionResponse, BrokerHeartbeatRequest, BrokerHeartbeatResponse,
    BrokerRegistrationRequest, BrokerRegistrationResponse, CreatePartitionsRequest,
    CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse, ElectLeadersRequest,
    ElectLeadersResponse, ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
    UnregisterBrokerRequest, UnregisterBrokerResponse,
};

use super::{exchange, Ctx};
use crate::security::producer_ids::registration;
use crate::topics::cluster::TopicCluster;

/// An id no topic has, the same for both.
const UNKNOWN_ID: Uuid = Uuid([7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
const NO_SUCH_BROKER: i32 = 77;

type Send = Box<dyn Fn(&TopicCluster, &Ctx) -> String>;

pub(super) struct Case {
    pub name: &'static str,
    /// The error code Kafka's code leads us to expect in Java's answer (the test checks it).
    pub expected: Option<i16>,
    pub send: Send,
}

/// A case sending what `build` makes at `version`, its answer decoded as `A`; `epochs`: the
/// answer may name the fake brokers' epochs.
fn case<Q, A>(
    name: &'static str,
    version: i16,
    expected: ErrorCode,
    epochs: bool,
    build: impl Fn(&Ctx) -> Q + 'static,
) -> Case
where
    Q: Message + ApiMessage + 'static,
    A: Message + Debug + 'static,
{
    Case {
        name,
        expected: Some(expected.0),
        send: Box::new(move |c, ctx| {
            match exchange::<Q, A>(c, version, &build(ctx), Duration::from_secs(30)) {
                Ok(a) => ctx.mask(&format!("{a:?}"), epochs),
                Err(e) => format!("no answer: {e}"),
            }
        }),
    }
}

fn heartbeat(broker_id: i32, broker_epoch: i64) -> BrokerHeartbeatRequest {
    BrokerHeartbeatRequest {
        broker_id,
        broker_epoch,
        current_metadata_offset: 1_000_000,
        ..Default::default()
    }
}

fn alter(broker_id: i32, broker_epoch: i64, topics: Vec<TopicData>) -> AlterPartitionRequest {
    AlterPartitionRequest {
        broker_id,
        broker_epoch,
        topics,
        ..Default::default()
    }
}

/// Partition `p` of topic `id` back to ISR [11, 12] at the given leader and partition epochs.
fn isr_of(ctx: &Ctx, id: Uuid, p: i32, leader_epoch: i32, partition_epoch: i32) -> TopicData {
    TopicData {
        topic_id: id,
        partitions: vec![PartitionData {
            partition_index: p,
            leader_epoch,
            new_isr_with_epochs: [11, 12]
                .iter()
                .map(|b| BrokerState {
                    broker_id: *b,
                    broker_epoch: ctx.epoch(*b),
                    ..Default::default()
                })
                .collect(),
            partition_epoch,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn elect(election_type: i8, topics: Option<&[(&str, &[i32])]>) -> ElectLeadersRequest {
    ElectLeadersRequest {
        election_type,
        topic_partitions: topics.map(|t| {
            t.iter()
                .map(|(topic, partitions)| TopicPartitions {
                    topic: topic.to_string(),
                    partitions: partitions.to_vec(),
                    ..Default::default()
                })
                .collect()
        }),
        timeout_ms: 30_000,
        ..Default::default()
    }
}

fn creatable(name: &str, partitions: i32, rf: i16) -> CreatableTopic {
    CreatableTopic {
        name: name.into(),
        num_partitions: partitions,
        replication_factor: rf,
        ..Default::default()
    }
}

fn create(topics: Vec<CreatableTopic>, validate_only: bool) -> CreateTopicsRequest {
    CreateTopicsRequest {
        topics,
        timeout_ms: 30_000,
        validate_only,
        ..Default::default()
    }
}

fn grow(name: &str, count: i32) -> CreatePartitionsRequest {
    CreatePartitionsRequest {
        topics: vec![CreatePartitionsTopic {
            name: name.into(),
            count,
            assignments: None,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        validate_only: false,
        ..Default::default()
    }
}

pub(super) fn cases() -> Vec<Case> {
    use ErrorCode as E;
    type Reg = BrokerRegistrationRequest;
    type RegA = BrokerRegistrationResponse;
    type Hb = BrokerHeartbeatRequest;
    type HbA = BrokerHeartbeatResponse;
    type Ap = AlterPartitionRequest;
    type ApA = AlterPartitionResponse;
    type El = ElectLeadersRequest;
    type ElA = ElectLeadersResponse;
    type Ct = CreateTopicsRequest;
    type CtA = CreateTopicsResponse;
    type Cp = CreatePartitionsRequest;
    type CpA = CreatePartitionsResponse;
    type Lr = ListPartitionReassignmentsRequest;
    type LrA = ListPartitionReassignmentsResponse;
    vec![
        // A wrong cluster id. No other API these brokers and tools send names the cluster.
        case::<Reg, RegA>(
            "registration with a wrong cluster id",
            4,
            E::INCONSISTENT_CLUSTER_ID,
            false,
            |_| BrokerRegistrationRequest {
                cluster_id: "notTheClusterIdAtAll00".into(),
                ..registration("x", 13)
            },
        ),
        case::<Reg, RegA>(
            "registration with an empty cluster id",
            4,
            E::INCONSISTENT_CLUSTER_ID,
            false,
            |_| registration("", 13),
        ),
        case::<Reg, RegA>(
            "a registered broker with a wrong cluster id",
            4,
            E::INCONSISTENT_CLUSTER_ID,
            false,
            |_| registration("notTheClusterIdAtAll00", 11),
        ),
        case::<Reg, RegA>(
            "a live broker's id from another incarnation",
            4,
            E::DUPLICATE_BROKER_REGISTRATION,
            true,
            |ctx| BrokerRegistrationRequest {
                incarnation_id: Uuid([99; 16]),
                ..registration(&ctx.cluster_id, 11)
            },
        ),
        case::<Reg, RegA>(
            "a registration without metadata.version support",
            4,
            E::INVALID_REGISTRATION,
            false,
            |ctx| {
                let mut r = registration(&ctx.cluster_id, 13);
                r.features.retain(|f| f.name != "metadata.version");
                r
            },
        ),
        // Stale and unknown broker epochs.
        case::<Hb, HbA>(
            "heartbeat with the previous epoch",
            1,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| heartbeat(11, ctx.epoch(11) - 1),
        ),
        case::<Hb, HbA>(
            "heartbeat with the next epoch",
            1,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| heartbeat(11, ctx.epoch(11) + 1),
        ),
        case::<Hb, HbA>(
            "heartbeat with epoch -1",
            1,
            E::STALE_BROKER_EPOCH,
            true,
            |_| heartbeat(12, -1),
        ),
        case::<Hb, HbA>(
            "heartbeat from an unknown broker",
            1,
            E::STALE_BROKER_EPOCH,
            true,
            |_| heartbeat(NO_SUCH_BROKER, 5),
        ),
        case::<Hb, HbA>(
            "heartbeat from broker -1",
            1,
            E::STALE_BROKER_EPOCH,
            true,
            |_| heartbeat(-1, 5),
        ),
        case::<Hb, HbA>(
            "a shutdown heartbeat with a stale epoch",
            1,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| BrokerHeartbeatRequest {
                want_shut_down: true,
                ..heartbeat(12, ctx.epoch(12) - 1)
            },
        ),
        case::<Ap, ApA>(
            "AlterPartition with a stale broker epoch",
            3,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| {
                alter(
                    11,
                    ctx.epoch(11) - 1,
                    vec![isr_of(ctx, ctx.id("t"), 0, 0, 0)],
                )
            },
        ),
        case::<Ap, ApA>(
            "AlterPartition from an unknown broker",
            3,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| alter(NO_SUCH_BROKER, 0, vec![isr_of(ctx, ctx.id("t"), 0, 0, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition with broker epoch -1",
            3,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| alter(11, -1, vec![isr_of(ctx, ctx.id("t"), 0, 0, 0)]),
        ),
        case::<UnregisterBrokerRequest, UnregisterBrokerResponse>(
            "UnregisterBroker of an unknown broker",
            0,
            E::BROKER_ID_NOT_REGISTERED,
            false,
            |_| UnregisterBrokerRequest {
                broker_id: NO_SUCH_BROKER,
                ..Default::default()
            },
        ),
        case::<AllocateProducerIdsRequest, AllocateProducerIdsResponse>(
            "AllocateProducerIds with a stale epoch",
            0,
            E::STALE_BROKER_EPOCH,
            true,
            |ctx| AllocateProducerIdsRequest {
                broker_id: 12,
                broker_epoch: ctx.epoch(12) - 1,
                ..Default::default()
            },
        ),
        // Unknown topic ids and names.
        case::<Ap, ApA>(
            "AlterPartition of an unknown topic id",
            3,
            E::UNKNOWN_TOPIC_ID,
            true,
            |ctx| alter(11, ctx.epoch(11), vec![isr_of(ctx, UNKNOWN_ID, 0, 0, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition of the zero topic id",
            3,
            E::UNKNOWN_TOPIC_ID,
            true,
            |ctx| alter(11, ctx.epoch(11), vec![isr_of(ctx, Uuid::ZERO, 0, 0, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition v2 of an unknown topic id",
            2,
            E::UNKNOWN_TOPIC_ID,
            true,
            |ctx| {
                let mut r = alter(11, ctx.epoch(11), vec![isr_of(ctx, UNKNOWN_ID, 0, 0, 0)]);
                let p = &mut r.topics[0].partitions[0];
                p.new_isr = vec![11, 12];
                p.new_isr_with_epochs.clear();
                r
            },
        ),
        case::<Ap, ApA>(
            "AlterPartition of an unknown partition",
            3,
            E::UNKNOWN_TOPIC_OR_PARTITION,
            true,
            |ctx| alter(11, ctx.epoch(11), vec![isr_of(ctx, ctx.id("t"), 99, 0, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition of partition -1",
            3,
            E::UNKNOWN_TOPIC_OR_PARTITION,
            true,
            |ctx| alter(11, ctx.epoch(11), vec![isr_of(ctx, ctx.id("t"), -1, 0, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition from a broker that does not lead",
            3,
            E::INVALID_REQUEST,
            true,
            |ctx| alter(12, ctx.epoch(12), vec![isr_of(ctx, ctx.id("t"), 0, 0, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition with a newer leader epoch",
            3,
            E::NOT_CONTROLLER,
            true,
            |ctx| alter(11, ctx.epoch(11), vec![isr_of(ctx, ctx.id("t"), 0, 5, 0)]),
        ),
        case::<Ap, ApA>(
            "AlterPartition with an ISR member's stale epoch",
            3,
            E::INELIGIBLE_REPLICA,
            true,
            |ctx| {
                let mut r = alter(11, ctx.epoch(11), vec![isr_of(ctx, ctx.id("t"), 0, 0, 0)]);
                r.topics[0].partitions[0].new_isr_with_epochs[1].broker_epoch -= 1;
                r
            },
        ),
        case::<Ap, ApA>(
            "AlterPartition naming an unknown broker in the ISR",
            3,
            E::INVALID_REQUEST,
            true,
            |ctx| {
                let mut r = alter(11, ctx.epoch(11), vec![isr_of(ctx, ctx.id("t"), 0, 0, 0)]);
                r.topics[0].partitions[0].new_isr_with_epochs[1] = BrokerState {
                    broker_id: NO_SUCH_BROKER,
                    broker_epoch: 0,
                    ..Default::default()
                };
                r
            },
        ),
        case::<El, ElA>(
            "ElectLeaders of an unknown topic",
            2,
            E::UNKNOWN_TOPIC_OR_PARTITION,
            false,
            |_| elect(0, Some(&[("nope", &[0, 1])])),
        ),
        case::<El, ElA>(
            "ElectLeaders of an unknown partition",
            2,
            E::UNKNOWN_TOPIC_OR_PARTITION,
            false,
            |_| elect(0, Some(&[("t", &[99, -1])])),
        ),
        case::<El, ElA>(
            "ElectLeaders of an unknown election type",
            2,
            E::INVALID_REQUEST,
            false,
            |_| elect(5, Some(&[("t", &[0])])),
        ),
        case::<El, ElA>(
            "ElectLeaders of a partition twice",
            2,
            E::ELECTION_NOT_NEEDED,
            false,
            |_| elect(0, Some(&[("t", &[0, 0]), ("t", &[1])])),
        ),
        case::<El, ElA>(
            "unclean ElectLeaders of a led partition",
            2,
            E::ELECTION_NOT_NEEDED,
            false,
            |_| elect(1, Some(&[("u", &[0])])),
        ),
        case::<Lr, LrA>(
            "ListPartitionReassignments of unknown topics",
            0,
            E::NONE,
            false,
            |_| ListPartitionReassignmentsRequest {
                timeout_ms: 30_000,
                topics: Some(vec![
                    ListPartitionReassignmentsTopics {
                        name: "nope".into(),
                        partition_indexes: vec![0],
                        ..Default::default()
                    },
                    ListPartitionReassignmentsTopics {
                        name: "t".into(),
                        partition_indexes: vec![99, -1],
                        ..Default::default()
                    },
                ]),
                ..Default::default()
            },
        ),
        // Partition counts above the limit.
        case::<Ct, CtA>(
            "a topic of 2^31-1 partitions",
            7,
            E::POLICY_VIOLATION,
            false,
            |_| create(vec![creatable("huge", i32::MAX, 1)], false),
        ),
        case::<Ct, CtA>(
            "two topics of 2^31-1 partitions, validate only",
            7,
            E::POLICY_VIOLATION,
            false,
            |_| {
                create(
                    vec![
                        creatable("huge", i32::MAX, 1),
                        creatable("huge2", i32::MAX, 1),
                    ],
                    true,
                )
            },
        ),
        case::<Ct, CtA>("10,001 partitions", 7, E::POLICY_VIOLATION, false, |_| {
            create(vec![creatable("big", 10_001, 1)], false)
        }),
        case::<Ct, CtA>(
            "10,001 assigned partitions",
            7,
            E::POLICY_VIOLATION,
            false,
            |_| {
                let mut t = creatable("assigned", -1, -1);
                t.assignments = (0..10_001)
                    .map(|p| CreatableReplicaAssignment {
                        partition_index: p,
                        broker_ids: vec![11],
                        ..Default::default()
                    })
                    .collect();
                create(vec![t], false)
            },
        ),
        case::<Ct, CtA>(
            "replication factor 32767",
            7,
            E::INVALID_REPLICATION_FACTOR,
            false,
            |_| create(vec![creatable("wide", 1, i16::MAX)], false),
        ),
        case::<Ct, CtA>(
            "replication factor -32768",
            7,
            E::INVALID_REPLICATION_FACTOR,
            false,
            |_| create(vec![creatable("narrow", 1, i16::MIN)], false),
        ),
        case::<Cp, CpA>(
            "grow to 2^31-1 partitions",
            3,
            E::POLICY_VIOLATION,
            false,
            |_| grow("u", i32::MAX),
        ),
        case::<Cp, CpA>(
            "grow by 10,001 partitions",
            3,
            E::POLICY_VIOLATION,
            false,
            |_| grow("u", 10_002),
        ),
        case::<Cp, CpA>(
            "grow to -2^31 partitions",
            3,
            E::INVALID_PARTITIONS,
            false,
            |_| grow("u", i32::MIN),
        ),
    ]
}
