//! Compat tests against real Apache Kafka (resolved by `compat/resolve-kafka`; see
//! `compat/harness/mod.rs`). Run with limited parallelism, JVMs are CPU-hungry:
//! `cargo test --features testkit --test compat -- --test-threads=2`.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "../harness/mod.rs"]
mod harness;

// The controller load generator (issue #14), which lives with the benchmarks.
#[path = "../../bench/load/mod.rs"]
mod load;

mod api_versions;
mod bad_input;
mod brokers;
mod configs;
mod controller_bench;
mod controller_failover;
mod election_soak;
mod election_stall;
mod every_record;
mod failover_bench;
mod front_end;
mod full_disk;
mod harness_selftest;
mod image_dumper;
mod image_snapshots;
mod java_followers;
mod kafka40;
mod leadership;
mod load_generator;
mod mixed;
mod not_controller;
mod quorum;
mod reconfiguration;
mod registration_channel;
mod rolling_replacement;
mod rolling_soak;
mod security;
mod storage;
mod test_raft_server;
mod tls_bench;
mod tools;
mod topics;
mod unregister_controller;
