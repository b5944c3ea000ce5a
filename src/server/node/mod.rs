//! The node runtime: one loop (on its own thread) owns the raft core and the metadata log; the
//! tokio side carries inbound requests to it and its outbound requests to peers.
//!
//! * `event`: the loop's single input channel and the handle other tasks hold.
//! * `runner`: the loop itself: events in, `Raft::step`, actions out.
//! * `clock`: wall-clock milliseconds that never go back.
//! * `activation`: what a new leader reads from its log to activate (the records are the
//!   controller's decision, `controller::activation`).
//! * `registration`, `registration_flow`: controller registration (KIP-919), both sides; the
//!   active controller's decision is `controller::controller_registration`.
//! * `pipeline`, `purgatory`: the active controller's decisions proposed, applied at once and
//!   answered once committed; parked replies fail with NOT_CONTROLLER when leadership is lost.
//! * `broker_flow`: BrokerRegistration, BrokerHeartbeat, UnregisterBroker through the pipeline.
//! * `feature_flow`: UpdateFeatures through the pipeline, kraft.version through raft.
//! * `topic_flow`: CreateTopics, DeleteTopics, CreatePartitions through the pipeline.
//! * `leadership_flow`: AlterPartition, ElectLeaders and the periodic elections through the
//!   pipeline.
//! * `producer_id_flow`: AllocateProducerIds through the pipeline.
//! * `quota_flow`: AlterClientQuotas through the pipeline.
//! * `reassign_flow`: AlterPartitionReassignments, AssignReplicasToDirs through the pipeline.
//! * `scram_flow`: AlterUserScramCredentials through the pipeline.
//! * `token_flow`: Create/Renew/ExpireDelegationToken through the pipeline.
//! * `config_flow`: AlterConfigs, IncrementalAlterConfigs through the pipeline.
//! * `authz_flow`: the authorizer's checks before a request is served (`ControllerApis`).
//! * `snapshots`: committed batches into the controller, and when to snapshot its image.
//! * `snapshot_job`: a snapshot of the image written on a thread of its own.
//! * `settings`: Kafka's property names to the node's settings.
//! * `storage`: the raft core's log and quorum-state traits over the files of `src/log`.

mod acl_flow;
mod activation;
mod authz_flow;
mod broker_flow;
mod clock;
mod config_flow;
mod describe_configs_flow;
pub mod event;
mod feature_flow;
mod leadership_flow;
mod pipeline;
mod producer_id_flow;
mod purgatory;
mod quota_flow;
mod reassign_flow;
mod registration;
mod registration_flow;
mod runner;
mod scram_flow;
mod settings;
mod snapshot_job;
mod snapshots;
pub mod storage;
mod token_flow;
mod topic_flow;
mod turn_budget;

pub use event::{Appended, LeaderView, NodeHandle};
pub use runner::{start, NodeSettings};
pub use settings::{log_config, node_settings};
