//! Kafka's tools with `--bootstrap-controller` over mutual TLS (the harness adds its client
//! settings in `--command-config`, see `harness::transport`), pointed at the Java controller and
//! at kraftd: `kafka-metadata-quorum describe --status`, `kafka-features describe`, and
//! `kafka-configs` altering the cluster-wide broker default and describing it back. Both give
//! the same answers.

use super::SslController;
use crate::harness::Kafka;

/// What the tools print through `c`, in the parts both kinds must agree on.
fn answers(kafka: &Kafka, c: &SslController) -> Vec<String> {
    let via = format!("127.0.0.1:{}", c.port());
    let status = kafka
        .quorum_status(&via)
        .unwrap_or_else(|out| panic!("describe --status through {}:\n{out}", c.kind()));
    let features = kafka.finalized_features(&via);
    let described = kafka.alter_broker_default_through(&via, "log.cleaner.threads=2");
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
