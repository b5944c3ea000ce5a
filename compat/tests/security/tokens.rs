//! Delegation tokens end to end on kraftd: a stock Kafka 4.4 broker with a SASL_PLAINTEXT
//! listener (PLAIN for the admin, SCRAM-SHA-256 for tokens) runs on kraftd, both with a
//! `delegation.token.secret.key`. `kafka-delegation-tokens` creates a token as the admin
//! (forwarded to kraftd, which draws the id and signs it), the broker describes it from its
//! image, a client authenticating with the token (SCRAM, tokenauth=true) is served, the token
//! is renewed and then expired, after which it no longer authenticates. Last, Java's image of
//! kraftd's log equals kraftd's.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::{free_port, Kafka, Output, TestDir, Tool};
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 11;
const SECRET: &str = "token-test-secret";
/// How long the broker may take to learn of a committed change.
const PROPAGATION: Duration = Duration::from_secs(60);

pub(super) struct Clients<'a> {
    kafka: &'a Kafka,
    /// The broker's SASL_PLAINTEXT listener.
    sasl: String,
    dir: PathBuf,
}

impl Clients<'_> {
    fn config(&self, name: &str, mechanism: &str, jaas: &str) -> String {
        let path = self.dir.join(format!("{name}.properties"));
        let config = format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\nsasl.jaas.config={jaas}\n"
        );
        std::fs::write(&path, config).unwrap();
        path.display().to_string()
    }

    /// `kafka-delegation-tokens` as the admin (SASL/PLAIN).
    pub(super) fn tokens(&self, args: &[&str]) -> Output {
        let config = self.config(
            "admin",
            "PLAIN",
            "org.apache.kafka.common.security.plain.PlainLoginModule required \
             username=\"admin\" password=\"admin-secret\";",
        );
        let mut all = vec![
            "--bootstrap-server",
            self.sasl.as_str(),
            "--command-config",
            config.as_str(),
        ];
        all.extend_from_slice(args);
        self.kafka.run(Tool::DelegationTokens, &all)
    }

    /// `kafka-topics --list` authenticated with a token.
    pub(super) fn list_topics_with_token(&self, token_id: &str, hmac: &str) -> Output {
        let config = self.config(
            "token",
            "SCRAM-SHA-256",
            &format!(
                "org.apache.kafka.common.security.scram.ScramLoginModule required \
                 username=\"{token_id}\" password=\"{hmac}\" tokenauth=\"true\";"
            ),
        );
        let args = [
            "--bootstrap-server",
            self.sasl.as_str(),
            "--command-config",
            config.as_str(),
            "--list",
        ];
        self.kafka.run(Tool::Topics, &args)
    }

    /// `--describe` until its output satisfies `done`.
    pub(super) fn describe_until(&self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PROPAGATION;
        loop {
            // Without --owner-principal the tool sends an empty owner list, which a broker
            // answers with no tokens.
            let out = self.tokens(&["--describe", "--owner-principal", "User:admin"]);
            if out.success() && done(&out.stdout) {
                return out.stdout;
            }
            assert!(
                Instant::now() < deadline,
                "the broker describes tokens as:\n{out}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// The token rows of a `--create` or `--describe` output: a header line starting with
/// TOKENID, then TOKENID HMAC OWNER REQUESTER RENEWERS ISSUEDATE EXPIRYDATE MAXDATE.
pub(super) fn token_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .skip_while(|l| !l.starts_with("TOKENID"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// A `kind` controller with the token secret and `extra` properties, and one stock broker
/// with the secret and a SASL_PLAINTEXT listener (PLAIN for the admin, SCRAM-SHA-256 for
/// tokens); the clients' configurations are written under `dir`.
pub(super) fn start_token_cluster(
    dir: &TestDir,
    kind: Kind,
    extra: &[(&str, String)],
) -> (TopicCluster, Clients<'static>) {
    let (plaintext, sasl) = (free_port(), free_port());
    let mut props = vec![("delegation.token.secret.key", SECRET.to_string())];
    props.extend(extra.iter().cloned());
    let c = TopicCluster::start_configured(dir, kind, &[BROKER], &props, |b| {
        b.broker_port(plaintext)
            .prop(
                "listeners",
                format!("PLAINTEXT://127.0.0.1:{plaintext},SASL_PLAINTEXT://127.0.0.1:{sasl}"),
            )
            .prop(
                "listener.security.protocol.map",
                "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
            )
            .prop("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256")
            .prop(
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required \
                 user_admin=\"admin-secret\";",
            )
            .prop(
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            )
            .prop("delegation.token.secret.key", SECRET)
    });
    let clients = Clients {
        kafka: Kafka::get(),
        sasl: format!("127.0.0.1:{sasl}"),
        dir: dir.path().to_path_buf(),
    };
    (c, clients)
}

#[test]
fn delegation_tokens_are_created_renewed_and_expired_by_kraftd() {
    let dir = TestDir::new();
    let (mut c, clients) = start_token_cluster(&dir, Kind::Kraftd, &[]);

    let created = clients.tokens(&[
        "--create",
        "--max-life-time-period",
        "86400000",
        "--renewer-principal",
        "User:bob",
    ]);
    created.assert_success();
    let rows = token_rows(&created.stdout);
    assert_eq!(rows.len(), 1, "{created}");
    let (token_id, hmac) = (rows[0][0].clone(), rows[0][1].clone());
    assert_eq!(
        &rows[0][2..5],
        ["User:admin", "User:admin", "[User:bob]"],
        "{created}"
    );
    eprintln!("kraftd created token {token_id} for User:admin");

    let described = clients.describe_until(|o| o.contains(&token_id));
    let rows = token_rows(&described);
    assert_eq!(rows.len(), 1, "{described}");
    assert_eq!(
        rows[0][1], hmac,
        "the broker's HMAC of the token is kraftd's"
    );

    clients
        .list_topics_with_token(&token_id, &hmac)
        .assert_success();
    eprintln!("a client authenticated with the token");

    let renewed = clients.tokens(&["--renew", "--hmac", &hmac, "--renew-time-period", "3600000"]);
    renewed.assert_success();
    assert!(
        renewed.stdout.contains("Completed renew operation"),
        "{renewed}"
    );
    let unknown = clients.tokens(&[
        "--renew",
        "--hmac",
        "bm90IGEgdG9rZW4=",
        "--renew-time-period",
        "-1",
    ]);
    assert!(
        !unknown.success()
            && unknown
                .to_string()
                .contains("DelegationTokenNotFoundException"),
        "an unknown HMAC: {unknown}"
    );

    let expired = clients.tokens(&["--expire", "--hmac", &hmac, "--expiry-time-period", "-1"]);
    expired.assert_success();
    assert!(
        expired.stdout.contains("Completed expire operation"),
        "{expired}"
    );
    clients.describe_until(|o| !o.contains(&token_id));
    let refused = clients.list_topics_with_token(&token_id, &hmac);
    assert!(
        !refused.success() && refused.to_string().contains("Authentication failed"),
        "an expired token still authenticates:\n{refused}"
    );
    eprintln!("renewed, then expired: the token no longer authenticates");

    drop(clients);
    let log: PathBuf = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    assert_eq!(
        kraftd_image(&log, None)["delegationTokens"],
        serde_json::json!({})
    );
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}
