//! One representative request per API answered here, at any version of its schema: what the
//! wire tests and the compat tests send to kraftd and to a Java controller to compare their
//! answers. Each names one topic, resource, user or broker, as a broker or admin tool would.

use crate::protocol::codec::{EncodeError, Message, Uuid};
use crate::protocol::messages::*;

/// A request body for api `key` at `version` naming `topic` (and topic id `topic_id` where
/// the request takes ids), or `None` if `key` is not answered here.
pub fn sample_request(
    key: i16,
    version: i16,
    topic: &str,
    topic_id: Uuid,
) -> Option<Result<Vec<u8>, EncodeError>> {
    let t = topic.to_string();
    let body = match key {
        19 => CreateTopicsRequest {
            topics: vec![create_topics_request::CreatableTopic {
                name: t,
                num_partitions: 1,
                replication_factor: 1,
                ..Default::default()
            }],
            timeout_ms: 5000,
            ..Default::default()
        }
        .encode_to_vec(version),
        20 => DeleteTopicsRequest {
            topic_names: if version < 6 { vec![t.clone()] } else { vec![] },
            topics: if version >= 6 {
                vec![delete_topics_request::DeleteTopicState {
                    name: Some(t),
                    topic_id: Uuid::ZERO,
                    ..Default::default()
                }]
            } else {
                vec![]
            },
            timeout_ms: 5000,
            ..Default::default()
        }
        .encode_to_vec(version),
        29 => DescribeAclsRequest {
            resource_type_filter: 2,
            resource_name_filter: Some(t),
            pattern_type_filter: 3,
            operation: 1,
            permission_type: 1,
            ..Default::default()
        }
        .encode_to_vec(version),
        30 => CreateAclsRequest {
            creations: vec![create_acls_request::AclCreation {
                resource_type: 2,
                resource_name: t,
                resource_pattern_type: 3,
                principal: "User:alice".into(),
                host: "*".into(),
                operation: 3,
                permission_type: 3,
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        31 => DeleteAclsRequest {
            filters: vec![delete_acls_request::DeleteAclsFilter {
                resource_type_filter: 2,
                resource_name_filter: Some(t),
                pattern_type_filter: 3,
                principal_filter: Some("User:alice".into()),
                host_filter: Some("*".into()),
                operation: 3,
                permission_type: 3,
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        33 => AlterConfigsRequest {
            resources: vec![alter_configs_request::AlterConfigsResource {
                resource_type: 2,
                resource_name: t,
                configs: vec![alter_configs_request::AlterableConfig {
                    name: "retention.ms".into(),
                    value: Some("3600000".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        37 => CreatePartitionsRequest {
            topics: vec![create_partitions_request::CreatePartitionsTopic {
                name: t,
                count: 4,
                assignments: None,
                ..Default::default()
            }],
            timeout_ms: 5000,
            ..Default::default()
        }
        .encode_to_vec(version),
        38 => CreateDelegationTokenRequest {
            max_lifetime_ms: -1,
            ..Default::default()
        }
        .encode_to_vec(version),
        39 => RenewDelegationTokenRequest {
            hmac: vec![1, 2, 3],
            renew_period_ms: -1,
            ..Default::default()
        }
        .encode_to_vec(version),
        40 => ExpireDelegationTokenRequest {
            hmac: vec![1, 2, 3],
            expiry_time_period_ms: -1,
            ..Default::default()
        }
        .encode_to_vec(version),
        43 => ElectLeadersRequest {
            election_type: 0,
            topic_partitions: Some(vec![elect_leaders_request::TopicPartitions {
                topic: t,
                partitions: vec![0],
                ..Default::default()
            }]),
            timeout_ms: 5000,
            ..Default::default()
        }
        .encode_to_vec(version),
        44 => IncrementalAlterConfigsRequest {
            resources: vec![incremental_alter_configs_request::AlterConfigsResource {
                resource_type: 2,
                resource_name: t,
                configs: vec![incremental_alter_configs_request::AlterableConfig {
                    name: "retention.ms".into(),
                    config_operation: 0,
                    value: Some("3600000".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        45 => AlterPartitionReassignmentsRequest {
            timeout_ms: 5000,
            topics: vec![alter_partition_reassignments_request::ReassignableTopic {
                name: t,
                partitions: vec![
                    alter_partition_reassignments_request::ReassignablePartition {
                        partition_index: 0,
                        replicas: Some(vec![101]),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        46 => ListPartitionReassignmentsRequest {
            timeout_ms: 5000,
            topics: Some(vec![
                list_partition_reassignments_request::ListPartitionReassignmentsTopics {
                    name: t,
                    partition_indexes: vec![0],
                    ..Default::default()
                },
            ]),
            ..Default::default()
        }
        .encode_to_vec(version),
        49 => AlterClientQuotasRequest {
            entries: vec![alter_client_quotas_request::EntryData {
                entity: vec![alter_client_quotas_request::EntityData {
                    entity_type: "client-id".into(),
                    entity_name: Some("sample-client".into()),
                    ..Default::default()
                }],
                ops: vec![alter_client_quotas_request::OpData {
                    key: "producer_byte_rate".into(),
                    value: 1024.0,
                    remove: false,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        41 => DescribeDelegationTokenRequest {
            owners: Some(vec![
                describe_delegation_token_request::DescribeDelegationTokenOwner {
                    principal_type: "User".into(),
                    principal_name: "alice".into(),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        }
        .encode_to_vec(version),
        50 => DescribeUserScramCredentialsRequest {
            users: Some(vec![describe_user_scram_credentials_request::UserName {
                name: "alice".into(),
                ..Default::default()
            }]),
            ..Default::default()
        }
        .encode_to_vec(version),
        51 => AlterUserScramCredentialsRequest {
            upsertions: vec![
                alter_user_scram_credentials_request::ScramCredentialUpsertion {
                    name: "alice".into(),
                    mechanism: 1,
                    iterations: 8192,
                    salt: vec![7; 16],
                    salted_password: vec![9; 32],
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
        .encode_to_vec(version),
        56 => AlterPartitionRequest {
            broker_id: 101,
            broker_epoch: 5,
            topics: vec![alter_partition_request::TopicData {
                topic_id,
                partitions: vec![alter_partition_request::PartitionData {
                    partition_index: 0,
                    leader_epoch: 0,
                    new_isr_with_epochs: if version >= 3 {
                        vec![alter_partition_request::BrokerState {
                            broker_id: 101,
                            broker_epoch: 5,
                            ..Default::default()
                        }]
                    } else {
                        vec![]
                    },
                    new_isr: if version < 3 { vec![101] } else { vec![] },
                    partition_epoch: 0,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        57 => UpdateFeaturesRequest {
            timeout_ms: 5000,
            feature_updates: vec![update_features_request::FeatureUpdateKey {
                feature: "group.version".into(),
                max_version_level: 1,
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        62 => BrokerRegistrationRequest {
            broker_id: 101,
            cluster_id: "sample-cluster".into(),
            incarnation_id: Uuid([3; 16]),
            listeners: vec![broker_registration_request::Listener {
                name: "PLAINTEXT".into(),
                host: "localhost".into(),
                port: 9092,
                security_protocol: 0,
                ..Default::default()
            }],
            features: vec![broker_registration_request::Feature {
                name: "metadata.version".into(),
                min_supported_version: 7,
                max_supported_version: 33,
                ..Default::default()
            }],
            log_dirs: if version >= 2 {
                vec![Uuid([4; 16])]
            } else {
                vec![]
            },
            previous_broker_epoch: -1,
            ..Default::default()
        }
        .encode_to_vec(version),
        63 => BrokerHeartbeatRequest {
            broker_id: 101,
            broker_epoch: 5,
            current_metadata_offset: 100,
            want_fence: false,
            want_shut_down: false,
            ..Default::default()
        }
        .encode_to_vec(version),
        64 => UnregisterBrokerRequest {
            broker_id: 109,
            ..Default::default()
        }
        .encode_to_vec(version),
        94 => UnregisterControllerRequest {
            controller_id: 3,
            ..Default::default()
        }
        .encode_to_vec(version),
        67 => AllocateProducerIdsRequest {
            broker_id: 101,
            broker_epoch: 5,
            ..Default::default()
        }
        .encode_to_vec(version),
        73 => AssignReplicasToDirsRequest {
            broker_id: 101,
            broker_epoch: 5,
            directories: vec![assign_replicas_to_dirs_request::DirectoryData {
                id: Uuid([4; 16]),
                topics: vec![assign_replicas_to_dirs_request::TopicData {
                    topic_id,
                    partitions: vec![assign_replicas_to_dirs_request::PartitionData {
                        partition_index: 0,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
        .encode_to_vec(version),
        // An API without a representative request of its own: its default one.
        _ => return super::default_request(key, version),
    };
    Some(body)
}

/// The principal a broker forwards for a PLAINTEXT client: `DefaultKafkaPrincipalBuilder`'s
/// serialization of User:ANONYMOUS (an int16 version, then `DefaultPrincipalData`).
pub fn anonymous_principal() -> Vec<u8> {
    let mut bytes = 0i16.to_be_bytes().to_vec();
    let data = DefaultPrincipalData {
        type_: "User".into(),
        name: "ANONYMOUS".into(),
        token_authenticated: false,
        ..Default::default()
    };
    bytes.extend(
        data.encode_to_vec(0)
            .expect("DefaultPrincipalData v0 encodes"),
    );
    bytes
}

/// An Envelope body forwarding `inner` (a request frame without its size prefix) from
/// client address 127.0.0.1.
pub fn envelope(inner: Vec<u8>) -> Result<Vec<u8>, EncodeError> {
    EnvelopeRequest {
        request_data: inner,
        request_principal: Some(anonymous_principal()),
        client_host_address: vec![127, 0, 0, 1],
        ..Default::default()
    }
    .encode_to_vec(0)
}
