//! SCRAM and ACLs end to end on kraftd: a stock Kafka 4.4 broker with a SASL_PLAINTEXT listener
//! (SCRAM-SHA-256) and StandardAuthorizer (as has kraftd; User:ANONYMOUS, the PLAINTEXT
//! tools and the broker itself, is a super user) runs on kraftd; `kafka-configs` adds alice's
//! credential through the broker (an Envelope to kraftd, which derives the keys); alice is
//! authenticated but not authorized until `kafka-acls` allows her the topic and her group, and
//! then produces and consumes; once the ACLs are removed she is denied again. With a wrong
//! password she is refused, and once `kafka-configs` deletes the credential the right password
//! is refused too. Last, Java's image of kraftd's log equals kraftd's.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::{free_port, Kafka, Output, TestDir, Tool, ToolOptions};
use crate::topics::cluster::TopicCluster;

const BROKER: i32 = 11;
/// How long the broker may take to learn of a committed change.
const PROPAGATION: Duration = Duration::from_secs(60);
const ALICE: [&str; 4] = ["--entity-type", "users", "--entity-name", "alice"];
const REFUSED: &str = "Authentication failed during authentication due to invalid credentials \
                       with SASL mechanism SCRAM-SHA-256";

struct Clients<'a> {
    kafka: &'a Kafka,
    /// The broker's PLAINTEXT listener (admin tools).
    plaintext: String,
    /// The broker's SASL_PLAINTEXT listener.
    sasl: String,
    dir: PathBuf,
}

impl Clients<'_> {
    fn admin(&self, tool: Tool, args: &[&str]) -> Output {
        let mut all = vec!["--bootstrap-server", self.plaintext.as_str()];
        all.extend_from_slice(args);
        self.kafka.run(tool, &all)
    }

    /// A client config authenticating as alice with `password`.
    fn login(&self, password: &str) -> String {
        let path = self.dir.join(format!("alice-{password}.properties"));
        let config = format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"alice\" password=\"{password}\";\n"
        );
        std::fs::write(&path, config).unwrap();
        path.display().to_string()
    }

    /// `kafka-topics --list` on the SASL listener as alice.
    fn list_topics(&self, password: &str) -> Output {
        let config = self.login(password);
        let args = [
            "--bootstrap-server",
            self.sasl.as_str(),
            "--command-config",
            config.as_str(),
            "--list",
        ];
        self.kafka.run(Tool::Topics, &args)
    }

    /// `kafka-configs --describe` of alice through the broker until its output holds `done`.
    fn describe_until(&self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PROPAGATION;
        loop {
            let mut args = vec!["--describe"];
            args.extend_from_slice(&ALICE);
            let out = self.admin(Tool::Configs, &args);
            if out.success() && done(&out.stdout) {
                return out.stdout;
            }
            assert!(
                Instant::now() < deadline,
                "the broker describes alice as:\n{out}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn alter(&self, change: &[&str]) {
        let mut args = vec!["--alter"];
        args.extend_from_slice(&ALICE);
        args.extend_from_slice(change);
        self.admin(Tool::Configs, &args).assert_success();
    }

    /// Produces and consumes `lines` as alice over SASL_PLAINTEXT.
    fn produce_and_consume(&self, password: &str, lines: &[&str]) {
        let config = self.login(password);
        let options = ToolOptions {
            stdin: Some(format!("{}\n", lines.join("\n")).into_bytes()),
            ..ToolOptions::default()
        };
        let produce = [
            "--bootstrap-server",
            self.sasl.as_str(),
            "--topic",
            "secrets",
            "--command-config",
            config.as_str(),
        ];
        let main = self.kafka.main_class(Tool::ConsoleProducer);
        let produced = self.kafka.tool_with(main, &produce, &options);
        produced.assert_success();
        assert!(!produced.to_string().contains("Error"), "{produced}");
        let max = lines.len().to_string();
        let consume = [
            "--bootstrap-server",
            self.sasl.as_str(),
            "--topic",
            "secrets",
            "--command-config",
            config.as_str(),
            "--from-beginning",
            "--max-messages",
            max.as_str(),
            "--timeout-ms",
            "30000",
        ];
        let consumed = self.kafka.run(Tool::ConsoleConsumer, &consume);
        let got: Vec<&str> = consumed.stdout.lines().collect();
        assert_eq!(got, lines, "{consumed}");
    }
}

/// `kafka-acls` through the broker allowing (or no longer allowing) alice every operation on
/// the topic and on every group.
fn acls(c: &Clients, action: &str) -> Output {
    let mut args = vec![
        action,
        "--allow-principal",
        "User:alice",
        "--operation",
        "All",
        "--topic",
        "secrets",
        "--group",
        "*",
    ];
    if action == "--remove" {
        args.push("--force");
    }
    c.admin(Tool::Acls, &args)
}

/// A console producer as alice, which the broker must not authorize.
fn assert_produce_denied(c: &Clients, why: &str) {
    let config = c.login("alice-secret");
    let options = ToolOptions {
        stdin: Some(b"denied\n".to_vec()),
        ..ToolOptions::default()
    };
    let args = [
        "--bootstrap-server",
        c.sasl.as_str(),
        "--topic",
        "secrets",
        "--command-config",
        config.as_str(),
    ];
    let out = c
        .kafka
        .tool_with(c.kafka.main_class(Tool::ConsoleProducer), &args, &options);
    assert!(
        out.to_string()
            .contains("Not authorized to access topics: [secrets]"),
        "{why}: expected alice to be denied the topic:\n{out}"
    );
}

fn assert_refused(out: &Output, why: &str) {
    assert!(
        !out.success() && out.to_string().contains(REFUSED),
        "{why}: expected the broker to refuse alice:\n{out}"
    );
}

#[test]
fn scram_users_and_acls_take_effect_on_brokers_running_on_kraftd() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let (plaintext, sasl) = (free_port(), free_port());
    let authorizer = [
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer".to_string(),
        ),
        ("super.users", "User:ANONYMOUS".to_string()),
    ];
    let mut c = TopicCluster::start_configured(&dir, Kind::Kraftd, &[BROKER], &authorizer, |b| {
        b.broker_port(plaintext)
            .prop("authorizer.class.name", &authorizer[0].1)
            .prop("super.users", &authorizer[1].1)
            .prop(
                "listeners",
                format!("PLAINTEXT://127.0.0.1:{plaintext},SASL_PLAINTEXT://127.0.0.1:{sasl}"),
            )
            .prop(
                "listener.security.protocol.map",
                "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
            )
            .prop("sasl.enabled.mechanisms", "SCRAM-SHA-256")
            .prop(
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            )
    });
    let clients = Clients {
        kafka,
        plaintext: c.bootstrap_server(),
        sasl: format!("127.0.0.1:{sasl}"),
        dir: dir.path().to_path_buf(),
    };
    clients
        .admin(
            Tool::Topics,
            &["--create", "--topic", "secrets", "--partitions", "1"],
        )
        .assert_success();
    assert_refused(
        &clients.list_topics("alice-secret"),
        "before alice has a credential",
    );

    clients.alter(&["--add-config", "SCRAM-SHA-256=[password=alice-secret]"]);
    clients.describe_until(|o| o.contains("SCRAM-SHA-256=iterations=4096"));
    clients.list_topics("alice-secret").assert_success();
    assert_produce_denied(&clients, "before any ACL");
    acls(&clients, "--add").assert_success();
    let listed = clients.admin(Tool::Acls, &["--list", "--topic", "secrets"]);
    assert!(
        listed.success() && listed.stdout.contains("principal=User:alice"),
        "{listed}"
    );
    let deadline = Instant::now() + PROPAGATION;
    while !clients
        .list_topics("alice-secret")
        .stdout
        .contains("secrets")
    {
        assert!(Instant::now() < deadline, "alice never saw topic secrets");
        std::thread::sleep(Duration::from_millis(500));
    }
    clients.produce_and_consume("alice-secret", &["one", "two", "three"]);
    eprintln!("kafka-acls allowed alice the topic and her group: she produced and consumed");
    acls(&clients, "--remove").assert_success();
    let deadline = Instant::now() + PROPAGATION;
    while clients
        .list_topics("alice-secret")
        .stdout
        .contains("secrets")
    {
        assert!(Instant::now() < deadline, "alice still sees topic secrets");
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_produce_denied(&clients, "after the ACLs were removed");
    eprintln!("with the ACLs removed, alice is denied again");
    assert_refused(&clients.list_topics("not-her-secret"), "a wrong password");
    eprintln!("alice authenticated with SCRAM-SHA-256, produced and consumed; a wrong password was refused");

    // A credential the controller refuses comes back with its message (the tool itself
    // refuses too few iterations, not too many).
    let mut args = vec!["--alter"];
    args.extend_from_slice(&ALICE);
    args.extend([
        "--add-config",
        "SCRAM-SHA-256=[iterations=20000,password=x]",
    ]);
    let refused = clients.admin(Tool::Configs, &args);
    assert!(
        refused.to_string().contains("Too many iterations"),
        "{refused}"
    );

    clients.alter(&["--delete-config", "SCRAM-SHA-256"]);
    clients.describe_until(|o| !o.contains("SCRAM-SHA-256"));
    assert_refused(
        &clients.list_topics("alice-secret"),
        "after the credential's deletion",
    );
    eprintln!("once deleted, alice's credential no longer authenticates her");

    drop(clients);
    let log: PathBuf = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    assert_eq!(kraftd_image(&log, None)["scram"], serde_json::json!({}));
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}
