//! The one table of API messages the oracle compares. kraftd and kafka-protocol name their types
//! after the same Kafka schemas, so one name gives both. `the_table_lists_every_kraftd_api`
//! keeps it equal to kraftd's registry.

use std::ops::RangeInclusive;

use kafka_protocol::protocol::Message as KafkaProtocolMessage;
use kraftd::protocol::codec::{ApiMessage, Message};

use crate::compare::{check_bytes, check_generated};

pub struct OracleMessage {
    pub name: &'static str,
    pub api_key: i16,
    pub kraftd_versions: RangeInclusive<i16>,
    pub kafka_protocol_versions: RangeInclusive<i16>,
    /// `compare::check_bytes` for this message's two types.
    pub check_bytes: fn(&[u8], i16) -> Result<(), String>,
    /// `compare::check_generated` for this message's two types (seed, version): bytes compared.
    pub check_generated: fn(u64, i16) -> Result<usize, String>,
}

impl OracleMessage {
    /// The versions both codecs know, which are the ones compared.
    pub fn shared_versions(&self) -> RangeInclusive<i16> {
        let lo = *self
            .kraftd_versions
            .start()
            .max(self.kafka_protocol_versions.start());
        let hi = *self
            .kraftd_versions
            .end()
            .min(self.kafka_protocol_versions.end());
        lo..=hi
    }
}

macro_rules! oracle_messages {
    ($($name:ident),* $(,)?) => {
        pub fn oracle_messages() -> Vec<OracleMessage> {
            vec![$({
                type K = kraftd::protocol::messages::$name;
                type P = kafka_protocol::messages::$name;
                OracleMessage {
                    name: stringify!($name),
                    api_key: <K as ApiMessage>::API_KEY,
                    kraftd_versions: K::LOWEST_VERSION..=K::HIGHEST_VERSION,
                    kafka_protocol_versions: P::VERSIONS.min..=P::VERSIONS.max,
                    check_bytes: check_bytes::<K, P>,
                    check_generated: check_generated::<K, P>,
                }
            }),*]
        }
    };
}

oracle_messages! {
    ApiVersionsRequest, ApiVersionsResponse,
    DescribeClusterRequest, DescribeClusterResponse,
    VoteRequest, VoteResponse,
    BeginQuorumEpochRequest, BeginQuorumEpochResponse,
    EndQuorumEpochRequest, EndQuorumEpochResponse,
    DescribeQuorumRequest, DescribeQuorumResponse,
    FetchRequest, FetchResponse,
    FetchSnapshotRequest, FetchSnapshotResponse,
    AddRaftVoterRequest, AddRaftVoterResponse,
    RemoveRaftVoterRequest, RemoveRaftVoterResponse,
    UpdateRaftVoterRequest, UpdateRaftVoterResponse,
    BrokerRegistrationRequest, BrokerRegistrationResponse,
    BrokerHeartbeatRequest, BrokerHeartbeatResponse,
    ControllerRegistrationRequest, ControllerRegistrationResponse,
    UnregisterBrokerRequest, UnregisterBrokerResponse,
    CreateTopicsRequest, CreateTopicsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse,
    CreatePartitionsRequest, CreatePartitionsResponse,
    AllocateProducerIdsRequest, AllocateProducerIdsResponse,
    AlterPartitionRequest, AlterPartitionResponse,
    UpdateFeaturesRequest, UpdateFeaturesResponse,
    AssignReplicasToDirsRequest, AssignReplicasToDirsResponse,
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
    AlterConfigsRequest, AlterConfigsResponse,
    DescribeConfigsRequest, DescribeConfigsResponse,
    MetadataRequest, MetadataResponse,
    SaslHandshakeRequest, SaslHandshakeResponse,
    SaslAuthenticateRequest, SaslAuthenticateResponse,
    EnvelopeRequest, EnvelopeResponse,
    CreateAclsRequest, CreateAclsResponse,
    DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse,
    ElectLeadersRequest, ElectLeadersResponse,
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
    AlterClientQuotasRequest, AlterClientQuotasResponse,
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
    CreateDelegationTokenRequest, CreateDelegationTokenResponse,
    RenewDelegationTokenRequest, RenewDelegationTokenResponse,
    ExpireDelegationTokenRequest, ExpireDelegationTokenResponse,
    DescribeDelegationTokenRequest, DescribeDelegationTokenResponse,
}
