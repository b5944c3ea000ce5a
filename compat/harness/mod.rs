//! The real-Kafka compat harness: resolves Apache Kafka (see `compat/resolve-kafka`), runs its
//! tools and servers, and runs kraftd next to them.
//!
//! Rules the harness enforces:
//! - Compat tests never skip: if Java or Kafka cannot be resolved, [`Kafka::get`] panics saying why.
//! - No process outlives its test: every child is owned by a [`ChildGuard`] (killed with its
//!   process group on drop, and by the kernel if the test binary dies); every wait has a timeout.
//! - Failures are diagnosable: each test's processes log into its [`TestDir`], whose tails are
//!   printed when the test panics.
//!
//! Each JVM needs ~1-2 s of CPU to start and the test machine has 2 cores: run the suite with
//! `cargo test --features testkit --test compat -- --test-threads=2`.
//!
//! Environment: `KAFKA_VERSION` (default 4.4.0), `JAVA_HOME` (default: `java` on PATH),
//! `KRAFTD_COMPAT_KEEP=1` keeps the directories of passing tests too.

// Each test module uses a different part of the harness.
#![allow(dead_code, unused_imports)]

pub mod cases;
mod cds;
pub mod disk_replacement;
pub mod doctor;
pub mod dynamic_quorum;
pub mod elections;
pub mod faketime;
pub mod image_compare;
mod image_dumper;
pub mod java_probe;
mod java_server;
mod kafka;
mod kraftd;
pub mod kraftd_quorum;
pub mod metrics;
pub mod mixed_quorum;
pub mod netns;
pub mod pki;
mod ports;
mod process;
pub mod prometheus;
mod props;
pub mod quorum_probe;
mod server_builder;
mod testdir;
mod tool_server;
mod tools;
pub mod transport;
pub mod verifying;
pub mod workload;

pub use image_dumper::{
    describe_configs_offline, dump_java_image, dump_java_image_from_snapshot, dump_java_snapshot,
    run_image_dumper,
};
pub use java_server::{JavaBroker, JavaController, JavaServer};
pub use kafka::{Kafka, Tool, ToolOptions, DEFAULT_KAFKA_VERSION, TOOL_TIMEOUT};
pub use kraftd::{KraftdProcess, KRAFTD_COMMAND_TIMEOUT};
pub use ports::free_port;
pub use process::{describe_status, run_command, ChildGuard, Output};
pub use props::Properties;
pub use server_builder::{voters, Quorum, ServerBuilder, Voter};
pub use testdir::{runs_root, TestDir, KEEP_ENV};
pub use tools::{parse_finalized_features, random_kafka_uuid, FormatFlag, QuorumStatus};

/// The number in environment variable `var`, or `default` when it is unset; a bench knob. Panics
/// (the run cannot mean anything) when it is set to something else.
/// A comma-separated list from the environment (`default` when unset), items trimmed.
pub fn env_list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .collect()
}

pub fn env_number<T: std::str::FromStr>(var: &str, default: T) -> T {
    match std::env::var(var) {
        Err(_) => default,
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{var} must be a number, not {v:?}")),
    }
}
