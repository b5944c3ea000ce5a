//! Kafka's tools with `--bootstrap-controller` over mutual TLS (the harness adds its client
//! settings in `--command-config`, see `harness::transport`), pointed at the Java controller and
//! at kraftd: `kafka-metadata-quorum describe --status`, `kafka-features describe`, and
//! `kafka-configs` altering the cluster-wide broker default and describing it back. Both give
//! the same answers.

use std::time::Duration;

use super::{eventually, SslController};
use crate::harness::{Kafka, Tool};

/// What the tools print through `c`, in the parts both kinds must agree on.
fn answers(kafka: &Kafka, c: &SslController) -> Vec<String> {
    let via = format!("127.0.0.1:{}", c.port());
    let status = kafka
        .quorum_status(&via)
        .unwrap_or_else(|out| panic!("describe --status through {}:\n{out}", c.kind()));
    let features = kafka.finalized_features(&via);
    let configs = |args: &[&str]| {
        let out = kafka.run(
            Tool::Configs,
            &[&["--bootstrap-controller", via.as_str()][..], args].concat(),
        );
        out.assert_success();
        out.stdout
    };
    let default = ["--entity-type", "brokers", "--entity-default"];
    configs(
        &[
            &["--alter", "--add-config", "log.cleaner.threads=2"][..],
            &default,
        ]
        .concat(),
    );
    let mut described = String::new();
    let shown = eventually(Duration::from_secs(60), || {
        described = configs(&[&["--describe"][..], &default].concat());
        described.contains("log.cleaner.threads=2")
    });
    assert!(
        shown,
        "{}: the altered default was not described: {described}",
        c.kind()
    );
    vec![
        format!(
            "leader {} of {} voters",
            status.leader_id,
            status.fields["CurrentVoters"].matches("\"id\"").count()
        ),
        format!(
            "metadata.version finalized: {}",
            features.contains_key("metadata.version")
        ),
        described.trim().to_string(),
    ]
}

pub(super) fn compare(java: &SslController, kraftd: &SslController) {
    let kafka = Kafka::get();
    let (j, k) = (answers(kafka, java), answers(kafka, kraftd));
    eprintln!("Kafka's tools over mutual TLS:\n  java:   {j:?}\n  kraftd: {k:?}");
    assert_eq!(
        j, k,
        "the tools' answers through Java and through kraftd differ"
    );
}
