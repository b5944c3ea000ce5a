//! `kraftd format --add-scram` against Kafka 4.4.0's `kafka-storage format --add-scram`: the
//! same bootstrap checkpoint (record for record; only timestamps differ) for credentials given
//! salted, credentials from a password that verify it (kraftd's SCRAM server and client), the
//! metadata.version gate, and (add_scram/refusals.rs) the same exit status and message for
//! every refusal.

use std::fs;
use std::sync::Arc;

use kraftd::controller::scram::ScramCredential;
use kraftd::protocol::messages::UserScramCredentialRecord;
use kraftd::protocol::records::{split_batches, MetadataRecord, MetadataRecordAndVersion};
use kraftd::server::config::Password;
use kraftd::server::sasl::scram::{
    ScramClient, ScramCredentials, ScramMechanism, ScramServer, ScramStep,
};

mod refusals;

use super::{compare_checkpoints, config, kraftd_format, CHECKPOINT};
use crate::harness::{free_port, random_kafka_uuid, FormatFlag, Kafka, Output, TestDir};

/// The metadata records of a checkpoint file.
fn metadata_records(checkpoint: &[u8]) -> Vec<MetadataRecord> {
    let split = split_batches(checkpoint);
    assert!(split.end.is_clean());
    let mut out = Vec::new();
    for batch in split.batches.iter().filter(|b| !b.is_control()) {
        for r in batch.records().unwrap().iter() {
            let value = r.unwrap().value.unwrap();
            out.push(MetadataRecordAndVersion::decode(value).unwrap().record);
        }
    }
    out
}

fn scram_records(checkpoint: &[u8]) -> Vec<UserScramCredentialRecord> {
    metadata_records(checkpoint)
        .into_iter()
        .filter_map(|r| match r {
            MetadataRecord::UserScramCredential(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Whether a SCRAM exchange as `record.name` with `password` succeeds against the credential
/// `record` holds, with kraftd's server and client.
fn authenticates(record: &UserScramCredentialRecord, password: &str) -> bool {
    let mechanism = ScramMechanism::from_type(record.mechanism).expect("a known mechanism");
    let credential = ScramCredential {
        salt: record.salt.clone(),
        stored_key: record.stored_key.clone(),
        server_key: record.server_key.clone(),
        iterations: record.iterations,
    };
    let credentials = ScramCredentials::default().with(mechanism, &record.name, credential);
    let mut server = ScramServer::new(mechanism, Arc::new(credentials), "server-nonce".into());
    let mut client = ScramClient::new(
        mechanism,
        &record.name,
        Password::new(password),
        "client-nonce".into(),
    );
    let Ok(ScramStep::Challenge(first)) = server.step(&client.first_message()) else {
        return false;
    };
    let Ok(last) = client.handle_server_first(&first) else {
        return false;
    };
    match server.step(&last) {
        Ok(ScramStep::Done { reply, user }) => {
            user == record.name && client.handle_server_final(&reply).is_ok()
        }
        _ => false,
    }
}

/// Java's `secureRandomBytes`: a 130-bit number in base 36, as text.
fn is_java_random_salt(salt: &[u8]) -> bool {
    (1..=26).contains(&salt.len())
        && salt
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// A node to format: its quorum key and value, and the format flag.
struct Node {
    flag: FormatFlag,
    key: &'static str,
    quorum: String,
    port: u16,
}

impl Node {
    fn static_quorum(port: u16) -> Node {
        Node {
            flag: FormatFlag::None,
            key: "controller.quorum.voters",
            quorum: format!("1@127.0.0.1:{port}"),
            port,
        }
    }
}

/// Formats a fresh `node` with each tool (dirs `kraftd-<case>` and `java-<case>`).
fn format_both(
    kafka: &Kafka,
    dir: &TestDir,
    case: &str,
    node: &Node,
    extra: &[&str],
) -> (Output, Output) {
    let Node {
        flag,
        key,
        quorum,
        port,
    } = node;
    let ours = config(dir, &format!("kraftd-{case}"), key, quorum, *port);
    let java = config(dir, &format!("java-{case}"), key, quorum, *port);
    let cluster = random_kafka_uuid();
    (
        kraftd_format(&ours, &cluster, flag, extra),
        kafka.storage_format(&java, &cluster, flag, extra),
    )
}

fn checkpoint(dir: &TestDir, who: &str, case: &str) -> Vec<u8> {
    fs::read(dir.join(format!("{who}-{case}/meta")).join(CHECKPOINT)).unwrap()
}

/// Credentials given salted: the same records, after the features, in argument order.
const SALTED: [&str; 6] = [
    "SCRAM-SHA-256=[name=alice,salt=c2FsdA==,saltedpassword=c2FsdGVk,iterations=8192]",
    r#"SCRAM-SHA-512=[name="bob",salt="MTIzNDU2Nzg=",saltedpassword="cGVwcGVy",iterations=16384]"#,
    "  SCRAM-SHA-512=[name=,salt=,saltedpassword=YQ,iterations=4096,]  ",
    "SCRAM-SHA-256=[name=alice,salt=YR==,saltedpassword=YWJj,name=carol,iterations=+04097]",
    "SCRAM-SHA-256=[name=dave,salt=c2FsdA,password=dave-secret,saltedpassword=%]",
    "SCRAM-SHA-256=[name=alice,salt=c2FsdA==,saltedpassword=c2FsdGVk,iterations=8192]",
];

#[test]
fn add_scram_writes_the_records_kafka_storage_writes() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let mut extra = Vec::new();
    for a in SALTED {
        extra.extend(["--add-scram", a]);
    }
    let initial = format!("1@127.0.0.1:{port}:{}", random_kafka_uuid());
    let modes = [
        ("static", Node::static_quorum(port)),
        (
            "initial",
            Node {
                flag: FormatFlag::InitialControllers(initial),
                key: "controller.quorum.bootstrap.servers",
                quorum: format!("127.0.0.1:{port}"),
                port,
            },
        ),
    ];
    for (case, node) in &modes {
        let (ours, java) = format_both(kafka, &dir, case, node, &extra);
        ours.assert_success();
        java.assert_success();
        let (a, b) = (
            checkpoint(&dir, "kraftd", case),
            checkpoint(&dir, "java", case),
        );
        let described = compare_checkpoints(&a, &b, true);
        let features = 6;
        assert_eq!(
            described.iter().filter(|d| *d == "metadata").count(),
            features + SALTED.len(),
            "{case}: {described:?}"
        );
        // The SCRAM records come after every FeatureLevelRecord, in argument order.
        let records = metadata_records(&a);
        assert!(records[..features]
            .iter()
            .all(|r| matches!(r, MetadataRecord::FeatureLevel(_))));
        let shown: Vec<_> = scram_records(&a)
            .iter()
            .map(|r| (r.name.clone(), r.mechanism, r.iterations))
            .collect();
        let want = [
            ("alice", 1, 8192),
            ("bob", 2, 16384),
            ("", 2, 4096),
            ("carol", 1, 4097),
            ("dave", 1, 4096),
            ("alice", 1, 8192),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(n, m, i)| (n.to_string(), *m, *i))
            .collect();
        assert_eq!(shown, want, "{case}");
        assert!(authenticates(&scram_records(&a)[4], "dave-secret"));
        // Java prints the salts and keys in its "Bootstrap metadata" line; kraftd does not.
        assert!(java
            .stdout
            .contains("UserScramCredentialRecord(name='alice'"));
        assert!(ours
            .stdout
            .contains(r#""name":"alice","mechanism":1,"salt":"[hidden]""#));
        assert!(!ours.stdout.contains("c2FsdA"), "{ours}");
    }
}

/// The harness's credential (compat/harness/transport.rs) and one more: random salts of
/// Java's shape, keys that verify the password, on both sides.
#[test]
fn add_scram_with_a_password_stores_keys_that_verify_it() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let extra = [
        "--add-scram",
        "SCRAM-SHA-512=[name=broker,password=broker-secret]",
        "-S",
        r#"SCRAM-SHA-256=[name=alice,password="alice-secret",iterations=8192]"#,
    ];
    let want = [
        ("broker", 2, 4096, "broker-secret"),
        ("alice", 1, 8192, "alice-secret"),
    ];
    let mut salts = Vec::new();
    for case in ["one", "two"] {
        let (ours, java) = format_both(kafka, &dir, case, &Node::static_quorum(port), &extra);
        ours.assert_success();
        java.assert_success();
        for who in ["kraftd", "java"] {
            let records = scram_records(&checkpoint(&dir, who, case));
            assert_eq!(records.len(), want.len(), "{who}");
            for (r, (name, mechanism, iterations, password)) in records.iter().zip(want) {
                assert_eq!(
                    (r.name.as_str(), r.mechanism, r.iterations),
                    (name, mechanism, iterations),
                    "{who}"
                );
                assert!(is_java_random_salt(&r.salt), "{who}: {:?}", r.salt);
                assert!(authenticates(r, password), "{who}: {name}");
                assert!(!authenticates(r, "wrong"), "{who}: {name}");
                salts.push(r.salt.clone());
            }
        }
        assert!(!ours.stdout.contains("secret"), "{ours}");
    }
    salts.sort();
    salts.dedup();
    assert_eq!(salts.len(), 8, "every salt drawn afresh");
}

/// At the gate exactly (3.5-IV2), both tools write the records.
#[test]
fn add_scram_at_metadata_version_3_5_iv2() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let extra = [
        "--release-version",
        "3.5-IV2",
        "-S",
        SALTED[0],
        "-S",
        SALTED[1],
    ];
    let (ours, java) = format_both(kafka, &dir, "gate", &Node::static_quorum(port), &extra);
    ours.assert_success();
    java.assert_success();
    let (a, b) = (
        checkpoint(&dir, "kraftd", "gate"),
        checkpoint(&dir, "java", "gate"),
    );
    compare_checkpoints(&a, &b, true);
    assert_eq!(scram_records(&a).len(), 2);
    assert!(
        ours.stdout.contains("with metadata.version 3.5-IV2."),
        "{ours}"
    );
}
