//! Producer ids (and, as they come, ACLs, client quotas and SCRAM credentials) decided by an
//! active kraftd as a Java 4.4 controller decides them.
//! - `keystores`: key and trust stores (JKS, PKCS12, PEM; keytool and openssl) read by kraftd as
//!   Kafka's `DefaultSslEngineFactory` loads them: the same chain served, the same certificates
//!   trusted, the same stores refused;
//! - `authorization`: every API authorized as a Java controller does, the same bytes to both;
//! - `raft_authorization`: the raft APIs and DescribeCluster likewise, and what a controller
//!   answers before its authorizer has loaded the ACLs;
//! - `principal_mapping`: TLS client certificates' subjects as `X500Principal.getName()` prints
//!   them, and `ssl.principal.mapping.rules` as Kafka's `SslPrincipalMapper` applies them;
//! - `jaas`: `sasl.jaas.config` values parsed as Kafka's `JaasConfig` parses them;
//! - `sasl`: SASL/PLAIN on a SASL_PLAINTEXT controller listener, the same bytes from a Java
//!   controller and kraftd for failed, malformed and re-authentications;
//! - `producer_ids`: refused AllocateProducerIds requests, the same bytes to Java and kraftd;
//! - `quotas`: AlterClientQuotas, the same bytes to Java and kraftd;
//! - `quota_effect`: client quotas set through `kafka-configs` throttle clients on stock
//!   brokers, and stop once deleted;
//! - `scram`: Alter/DescribeUserScramCredentials, the same bytes to Java and kraftd, the
//!   credentials logged, and the derived keys against Kafka's `ScramFormatter`;
//! - `scram_clients`: SCRAM through `kafka-configs` and SASL_PLAINTEXT clients on stock brokers;
//! - `scram_sasl`: kraftd's SCRAM server and client against Kafka's `ScramSaslClient` and
//!   `ScramSaslServer`, the same bytes both ways, and the same failures;
//! - `token_refusals`: refused delegation-token requests, the same bytes to Java and kraftd;
//! - `tokens`: `kafka-delegation-tokens` and token-authenticated clients on stock brokers;
//! - `token_sweep`: expired tokens swept by a Java controller and by kraftd, the same scenario;
//! - `tls`: SSL controller listeners side by side with Java: refused connections, 1,000
//!   half-open handshakes, principals mapped from certificates; and certificate rotation;
//! - `workload`: stock tools through a stock broker on kraftd (idempotent and transactional
//!   producers), then Java's image of kraftd's log against kraftd's.

mod acls;
mod authorization;
mod jaas;
mod keystores;
mod principal_mapping;
pub(crate) mod producer_ids;
mod quota_effect;
mod quotas;
mod raft_authorization;
mod sasl;
mod scram;
mod scram_clients;
mod scram_sasl;
mod tls;
mod token_refusals;
mod token_sweep;
mod tokens;
mod workload;

/// Compares the rendered answers of the same cases from Java and kraftd, line by line, and
/// checks Java's first error code is the one each case expects (so a case tests what it says).
pub(crate) fn assert_same_answers(
    what: &str,
    cases: &[(&str, i16)],
    java: &[(String, i16)],
    kraftd: &[(String, i16)],
) {
    let mut failures = Vec::new();
    eprintln!("{what}, the same bytes to Java 4.4 and to kraftd:");
    for (((name, expected), (j, jc)), (k, _)) in cases.iter().zip(java).zip(kraftd) {
        eprintln!("  {name}:\n    java:   {j}");
        if jc != expected {
            failures.push(format!(
                "{name}: Java answered {j}, the test expects error code {expected}"
            ));
        }
        if j != k {
            eprintln!("    kraftd: {k}");
            failures.push(format!("{name}:\n    java:   {j}\n    kraftd: {k}"));
        }
    }
    assert_eq!(java.len(), cases.len(), "Java answered every case");
    assert_eq!(kraftd.len(), cases.len(), "kraftd answered every case");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
