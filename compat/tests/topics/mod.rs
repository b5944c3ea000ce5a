//! Topics: CreateTopics, DeleteTopics and CreatePartitions served by kraftd as a Java 4.4
//! controller serves them.
//! - `probes`: the topic config schema and the replica placer against Kafka's own classes;
//! - `workload`: `kafka-topics` against kraftd and three stock brokers, through a broker and
//!   straight to kraftd, then Java's image of kraftd's log against kraftd's.

mod bad_requests;
pub mod cluster;
mod probes;
mod requests;
pub mod workload;
