//! Compat tests against real Apache Kafka (resolved by `compat/resolve-kafka`; see
//! `compat/harness/mod.rs`). Run with limited parallelism, JVMs are CPU-hungry:
//! `cargo test --test compat -- --test-threads=2`.

#[path = "../harness/mod.rs"]
mod harness;

mod front_end;
mod harness_selftest;
mod mixed;
mod not_controller;
mod quorum;
mod storage;
mod tools;
