//! The table of controller APIs: one row per [`ControllerRequest`](super::ControllerRequest)
//! variant, from which the request model, `handle`'s dispatch, the cluster authorization, the
//! listener's decoding and framing and the versions ApiVersions advertises are generated.
//!
//! A row reads
//!
//! ```text
//! Variant(PayloadType, fields..) => handler(args..) {
//!     key "Name" [Request as Wrap] => ReplyVariant(Response[, boxed]) {
//!         decode: decode_prefix | decode_exact,
//!         cluster: [] | [OPERATION, refusal],
//!         reports: [error_code, any(field), any(field.field), never],
//!         uncommitted: code | same,
//!         not_active: function | none,
//!     }
//! }
//! ```
//!
//! * `fields`: `version` (i16), then `forwarded` (bool, set when the request came in an
//!   Envelope); the payload is the decoded request (or, for the ACLs, an [`AclRequest`] of it).
//! * `args`: the handler's arguments, from `now`, `quorum`, `principal` (a `&RequestPrincipal`),
//!   `request` and the fields; the handler is a `QuorumController` method in the API's area.
//! * one API entry per Kafka API the variant carries (the ACLs group three): its api key,
//!   Kafka's name, and, when the variant groups several, the request type and the
//!   [`AclRequest`] variant wrapping it; the reply variant and its response type (`boxed` when
//!   the variant holds it in a `Box`);
//! * `decode`: whether bytes after the body are ignored (`decode_prefix`, as Kafka does) or
//!   refused (`decode_exact`);
//! * `cluster`: the operation `ControllerApis` requires on the cluster (`controller::acls::
//!   operation`), if any, and the shape of its refusal: `code` (the error code only), `message`
//!   (and the exception's message), `code_message` (and the code's own message) or
//!   `custom(f)`, `QuorumController::f(&request, version, &Denied) -> Response`;
//! * `reports`: where the response carries NOT_CONTROLLER (any of these), which fails an
//!   Envelope as a whole;
//! * `uncommitted`: the reply when its records never commit: `code` (the response with only
//!   that error code) or `same` (the handler built it already);
//! * `not_active`: the function of `not_active` answering as a non-active Java controller
//!   (`fn(&Request, version, &NonActive) -> Response`); `none` when the node loop answers in
//!   every state (ControllerRegistration, DescribeConfigs).
//!
//! The `@unhandled` section lists the APIs a Kafka 4.4 controller advertises without handling
//! them: the listener answers those as a non-active controller, whatever the node's state.
//!
//! [`AclRequest`]: super::AclRequest

/// Calls `$callback! { rows }` with the table of controller APIs (see the module's doc).
macro_rules! for_each_controller_api {
    ($callback:ident) => {
        $callback! {
            /// `CreateTopics` (key 19).
            CreateTopics(CreateTopicsRequest, version)
                => create_topics(quorum, version, request, principal) {
                19 "CreateTopics" => CreateTopics(CreateTopicsResponse) {
                    decode: decode_prefix, cluster: [], reports: [any(topics)],
                    uncommitted: same, not_active: create_topics,
                }
            }
            /// `DeleteTopics` (key 20).
            DeleteTopics(DeleteTopicsRequest, version)
                => delete_topics(quorum, version, request, principal) {
                20 "DeleteTopics" => DeleteTopics(DeleteTopicsResponse) {
                    decode: decode_prefix, cluster: [], reports: [any(responses)],
                    uncommitted: same, not_active: delete_topics,
                }
            }
            /// `CreateAcls` (30), `DeleteAcls` (31) and `DescribeAcls` (29, direct only).
            Acls(AclRequest, version) => acls(quorum, version, request, principal) {
                29 "DescribeAcls" DescribeAclsRequest as Describe
                    => DescribeAcls(DescribeAclsResponse) {
                    decode: decode_exact, cluster: [], reports: [error_code],
                    uncommitted: same, not_active: describe_acls,
                }
                30 "CreateAcls" CreateAclsRequest as Create => CreateAcls(CreateAclsResponse) {
                    decode: decode_exact, cluster: [], reports: [any(results)],
                    uncommitted: same, not_active: create_acls,
                }
                31 "DeleteAcls" DeleteAclsRequest as Delete => DeleteAcls(DeleteAclsResponse) {
                    decode: decode_exact, cluster: [], reports: [any(filter_results)],
                    uncommitted: same, not_active: delete_acls,
                }
            }
            /// `DescribeConfigs` (key 32), answered by every controller from its committed image.
            DescribeConfigs(DescribeConfigsRequest, version)
                => describe_configs(request, principal) {
                32 "DescribeConfigs" => DescribeConfigs(DescribeConfigsResponse) {
                    decode: decode_prefix, cluster: [], reports: [never],
                    uncommitted: same, not_active: none,
                }
            }
            /// `AlterConfigs` (key 33), and whether a broker forwarded it.
            AlterConfigs(AlterConfigsRequest, version, forwarded)
                => alter_configs(quorum, version, request, forwarded, principal) {
                33 "AlterConfigs" => AlterConfigs(AlterConfigsResponse) {
                    decode: decode_prefix, cluster: [], reports: [any(responses)],
                    uncommitted: same, not_active: alter_configs,
                }
            }
            /// `CreatePartitions` (key 37).
            CreatePartitions(CreatePartitionsRequest, version)
                => create_partitions(quorum, version, request, principal) {
                37 "CreatePartitions" => CreatePartitions(CreatePartitionsResponse) {
                    decode: decode_prefix, cluster: [], reports: [any(results)],
                    uncommitted: same, not_active: create_partitions,
                }
            }
            /// `CreateDelegationToken` (key 38), and whether a broker forwarded it.
            CreateDelegationToken(CreateDelegationTokenRequest, version, forwarded)
                => create_delegation_token(quorum, now, version, request, forwarded, principal) {
                // Boxed: the largest answer by far.
                38 "CreateDelegationToken"
                    => CreateDelegationToken(CreateDelegationTokenResponse, boxed) {
                    decode: decode_exact, cluster: [], reports: [error_code],
                    uncommitted: same, not_active: create_delegation_token,
                }
            }
            /// `RenewDelegationToken` (key 39), and whether a broker forwarded it.
            RenewDelegationToken(RenewDelegationTokenRequest, version, forwarded)
                => renew_delegation_token(quorum, now, version, request, forwarded, principal) {
                39 "RenewDelegationToken" => RenewDelegationToken(RenewDelegationTokenResponse) {
                    decode: decode_exact, cluster: [], reports: [error_code],
                    uncommitted: same, not_active: renew_delegation_token,
                }
            }
            /// `ExpireDelegationToken` (key 40), and whether a broker forwarded it.
            ExpireDelegationToken(ExpireDelegationTokenRequest, version, forwarded)
                => expire_delegation_token(quorum, now, version, request, forwarded, principal) {
                40 "ExpireDelegationToken"
                    => ExpireDelegationToken(ExpireDelegationTokenResponse) {
                    decode: decode_exact, cluster: [], reports: [error_code],
                    uncommitted: same, not_active: expire_delegation_token,
                }
            }
            /// `ElectLeaders` (key 43).
            ElectLeaders(ElectLeadersRequest, version)
                => elect_leaders(quorum, version, request) {
                43 "ElectLeaders" => ElectLeaders(ElectLeadersResponse) {
                    decode: decode_prefix,
                    cluster: [ALTER, custom(elect_leaders_refused)],
                    reports: [error_code, any(replica_election_results.partition_result)],
                    uncommitted: code, not_active: elect_leaders,
                }
            }
            /// `IncrementalAlterConfigs` (key 44), and whether a broker forwarded it.
            IncrementalAlterConfigs(IncrementalAlterConfigsRequest, version, forwarded)
                => incremental_alter_configs(quorum, version, request, forwarded, principal) {
                44 "IncrementalAlterConfigs"
                    => IncrementalAlterConfigs(IncrementalAlterConfigsResponse) {
                    decode: decode_prefix, cluster: [], reports: [any(responses)],
                    uncommitted: same, not_active: incremental_alter_configs,
                }
            }
            /// `AlterPartitionReassignments` (key 45).
            AlterPartitionReassignments(AlterPartitionReassignmentsRequest, version)
                => alter_partition_reassignments(quorum, version, request) {
                45 "AlterPartitionReassignments"
                    => AlterPartitionReassignments(AlterPartitionReassignmentsResponse) {
                    decode: decode_exact,
                    cluster: [ALTER, custom(alter_partition_reassignments_refused)],
                    reports: [error_code],
                    uncommitted: same, not_active: alter_partition_reassignments,
                }
            }
            /// `ListPartitionReassignments` (key 46), read from the committed image.
            ListPartitionReassignments(ListPartitionReassignmentsRequest, version)
                => list_partition_reassignments(request) {
                46 "ListPartitionReassignments"
                    => ListPartitionReassignments(ListPartitionReassignmentsResponse) {
                    decode: decode_prefix,
                    cluster: [DESCRIBE, custom(list_partition_reassignments_refused)],
                    reports: [error_code],
                    uncommitted: code, not_active: list_partition_reassignments,
                }
            }
            /// `AlterClientQuotas` (key 49).
            AlterClientQuotas(AlterClientQuotasRequest, version)
                => alter_client_quotas(quorum, version, request) {
                49 "AlterClientQuotas" => AlterClientQuotas(AlterClientQuotasResponse) {
                    decode: decode_prefix,
                    cluster: [ALTER_CONFIGS, custom(alter_client_quotas_refused)],
                    reports: [any(entries)],
                    uncommitted: same, not_active: alter_client_quotas,
                }
            }
            /// `AlterUserScramCredentials` (key 51).
            AlterUserScramCredentials(AlterUserScramCredentialsRequest, version)
                => alter_user_scram_credentials(quorum, version, request) {
                51 "AlterUserScramCredentials"
                    => AlterUserScramCredentials(AlterUserScramCredentialsResponse) {
                    decode: decode_exact,
                    cluster: [ALTER, custom(alter_user_scram_credentials_refused)],
                    reports: [any(results)],
                    uncommitted: same, not_active: alter_user_scram_credentials,
                }
            }
            /// `AlterPartition` (key 56), from partition leaders.
            AlterPartition(AlterPartitionRequest, version)
                => alter_partition(quorum, version, request) {
                56 "AlterPartition" => AlterPartition(AlterPartitionResponse) {
                    decode: decode_prefix, cluster: [CLUSTER_ACTION, code], reports: [error_code],
                    uncommitted: code, not_active: alter_partition,
                }
            }
            /// `UpdateFeatures` (key 57): its answer's shape depends on the version.
            UpdateFeatures(UpdateFeaturesRequest, version)
                => update_features(quorum, version, request) {
                57 "UpdateFeatures" => UpdateFeatures(UpdateFeaturesResponse) {
                    decode: decode_prefix, cluster: [ALTER, message], reports: [error_code],
                    uncommitted: code, not_active: update_features,
                }
            }
            /// `BrokerRegistration` (key 62) at its version (the non-active answer depends on it).
            BrokerRegistration(BrokerRegistrationRequest, version)
                => broker_registration(quorum, now, version, request) {
                62 "BrokerRegistration" => BrokerRegistration(BrokerRegistrationResponse) {
                    decode: decode_prefix, cluster: [CLUSTER_ACTION, code], reports: [error_code],
                    uncommitted: code, not_active: broker_registration,
                }
            }
            /// `BrokerHeartbeat` (key 63).
            BrokerHeartbeat(BrokerHeartbeatRequest, version)
                => broker_heartbeat(quorum, now, version, request) {
                63 "BrokerHeartbeat" => BrokerHeartbeat(BrokerHeartbeatResponse) {
                    decode: decode_prefix, cluster: [CLUSTER_ACTION, code], reports: [error_code],
                    uncommitted: code, not_active: broker_heartbeat,
                }
            }
            /// `UnregisterBroker` (key 64).
            UnregisterBroker(UnregisterBrokerRequest, version)
                => unregister_broker(quorum, version, request) {
                64 "UnregisterBroker" => UnregisterBroker(UnregisterBrokerResponse) {
                    decode: decode_prefix, cluster: [ALTER, message], reports: [error_code],
                    uncommitted: code, not_active: unregister_broker,
                }
            }
            /// `AllocateProducerIds` (key 67).
            AllocateProducerIds(AllocateProducerIdsRequest, version)
                => allocate_producer_ids(quorum, version, request) {
                67 "AllocateProducerIds" => AllocateProducerIds(AllocateProducerIdsResponse) {
                    decode: decode_prefix, cluster: [CLUSTER_ACTION, code], reports: [error_code],
                    uncommitted: code, not_active: allocate_producer_ids,
                }
            }
            /// `ControllerRegistration` (key 70), answered once its record is committed.
            Register(ControllerRegistrationRequest) => register_controller(quorum, request) {
                70 "ControllerRegistration" => Register(ControllerRegistrationResponse) {
                    decode: decode_exact, cluster: [CLUSTER_ACTION, code_message],
                    reports: [error_code], uncommitted: code, not_active: none,
                }
            }
            /// `AssignReplicasToDirs` (key 73), from brokers.
            AssignReplicasToDirs(AssignReplicasToDirsRequest, version)
                => assign_replicas_to_dirs(quorum, version, request) {
                73 "AssignReplicasToDirs" => AssignReplicasToDirs(AssignReplicasToDirsResponse) {
                    decode: decode_exact, cluster: [CLUSTER_ACTION, code], reports: [error_code],
                    uncommitted: code, not_active: assign_replicas_to_dirs,
                }
            }
            /// `UnregisterController` (key 94).
            UnregisterController(UnregisterControllerRequest, version)
                => unregister_controller(quorum, request) {
                94 "UnregisterController" => UnregisterController(UnregisterControllerResponse) {
                    decode: decode_exact, cluster: [ALTER, message], reports: [error_code],
                    uncommitted: code, not_active: unregister_controller,
                }
            }
            @unhandled {
                41 "DescribeDelegationToken" DescribeDelegationTokenRequest
                    => DescribeDelegationTokenResponse {
                    not_active: describe_delegation_token,
                }
                50 "DescribeUserScramCredentials" DescribeUserScramCredentialsRequest
                    => DescribeUserScramCredentialsResponse {
                    not_active: describe_user_scram_credentials,
                }
            }
        }
    };
}
pub(crate) use for_each_controller_api;

/// The payload of a request variant: the decoded request itself, or (`[Enum Variant]`) the
/// variant of a grouping enum holding it. Expands to a pattern or an expression.
macro_rules! api_payload {
    ([] $x:tt) => {
        $x
    };
    ([$group:ident $variant:ident] $x:tt) => {
        $group::$variant($x)
    };
}
pub(crate) use api_payload;

/// The request type of an API entry: its own when it names one, else its variant's payload
/// (the first of the variant's fields, `(Payload, fields..)`).
macro_rules! api_request_type {
    ([$request:ident] $fields:tt) => {
        $crate::protocol::messages::$request
    };
    ([] ($payload:ident $(, $field:ident)*)) => {
        $crate::protocol::messages::$payload
    };
}
pub(crate) use api_request_type;
