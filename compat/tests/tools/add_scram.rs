//! `kraftd format --add-scram` against Kafka 4.4.0's `kafka-storage format --add-scram`: the
//! same bootstrap checkpoint (record for record; only timestamps differ) for credentials given
//! salted, credentials from a password that verify it (kraftd's SCRAM server and client), the
//! same exit status and message for every refusal, and the metadata.version gate.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use kraftd::controller::scram::ScramCredential;
use kraftd::protocol::messages::UserScramCredentialRecord;
use kraftd::protocol::records::{split_batches, MetadataRecord, MetadataRecordAndVersion};
use kraftd::server::config::Password;
use kraftd::server::sasl::scram::{
    ScramClient, ScramCredentials, ScramMechanism, ScramServer, ScramStep,
};

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

/// One refusal: the arguments, Java's message (stderr, alone), and kraftd's when it differs
/// (a value that may be a secret shown as `[hidden]`).
struct Refusal {
    args: &'static [&'static str],
    java: &'static str,
    kraftd: Option<&'static str>,
}

const fn same(args: &'static [&'static str], java: &'static str) -> Refusal {
    Refusal {
        args,
        java,
        kraftd: None,
    }
}

const fn hidden(
    args: &'static [&'static str],
    java: &'static str,
    kraftd: &'static str,
) -> Refusal {
    Refusal {
        args,
        java,
        kraftd: Some(kraftd),
    }
}

const REFUSALS: &[Refusal] = &[
    same(
        &["-S", "SCRAM-SHA-256"],
        "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'",
    ),
    same(
        &["-S", "SCRAM-SHA-1=[name=a,password=b]"],
        "The add-scram mechanism SCRAM-SHA-1 is not supported.",
    ),
    same(
        &["-S", "scram-sha-512=[name=a,password=b]"],
        "The add-scram mechanism scram-sha-512 is not supported.",
    ),
    same(
        &["-S", "SCRAM-SHA-256=name=a,password=b]"],
        "Expected configuration string to start with [",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,password=b"],
        "Expected configuration string to end with ]",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[]"],
        "No equals sign found in SCRAM component: ",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,nokey,password=b]"],
        "No equals sign found in SCRAM component: nokey",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[,]"],
        "You must supply 'name' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[ name=a,password=b]"],
        "You must supply 'name' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a]"],
        "You must supply one of 'password' or 'saltedpassword' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,saltedpassword=YWJj]"],
        "You must supply 'salt' with 'saltedpassword' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,password=b,iterations=x]"],
        "Failed to parse iterations count: x",
    ),
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=b,iterations=2147483648]",
        ],
        "Failed to parse iterations count: 2147483648",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,password=b,iterations=4095]"],
        "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
    ),
    same(
        &["-S", "SCRAM-SHA-512=[name=a,password=b,iterations=16385]"],
        "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,foo=1,bar=2,password=b]"],
        "Unknown SCRAM configurations: bar, foo",
    ),
    // Each argument is parsed and made a record before the next is read.
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=p,iterations=1]",
            "-S",
            "SCRAM-SHA-256=[bogus]",
        ],
        "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
    ),
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=p]",
            "-S",
            "SCRAM-SHA-256=[bogus]",
        ],
        "No equals sign found in SCRAM component: bogus",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256=[name=a,salt=%%%,saltedpassword=YWJj]"],
        "Failed to decode given salt: %%%",
        "Failed to decode given salt: [hidden] (an illegal base64 character at position 0)",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256=[name=a,salt=YWJj,saltedpassword=YQ=]"],
        "Failed to decode given saltedPassword: YQ=",
        "Failed to decode given saltedPassword: [hidden] (an incomplete padding at the end)",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256=[name=a,password=pa,ss]"],
        "No equals sign found in SCRAM component: ss",
        "No equals sign found in SCRAM component: [hidden]",
    ),
    hidden(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=pa,ss=word,iterations=8192,foo=1]",
        ],
        "Unknown SCRAM configurations: foo, ss",
        "Unknown SCRAM configurations: foo, [hidden]",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256:[name:a;password:b]"],
        "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256:[name:a;password:b]'",
        "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256:[hidden]'",
    ),
    // The metadata.version gate, before any argument is read.
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=b]",
            "--release-version",
            "3.5-IV1",
        ],
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[bogus", "--release-version", "3.4"],
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.",
    ),
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=b]",
            "--feature",
            "metadata.version=10",
        ],
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.",
    ),
];

/// Java's stderr when it died of `IllegalArgumentException: Empty key` (an empty password or
/// salted password), and kraftd's message for it.
const EMPTY_KEYS: [(&str, &str); 2] = [
    (
        "SCRAM-SHA-256=[name=a,password=]",
        "Empty key: the password of add-scram user 'a' is empty",
    ),
    (
        "SCRAM-SHA-512=[name=a,salt=YWJj,saltedpassword=\"\"]",
        "Empty key: the saltedpassword of add-scram user 'a' is empty",
    ),
];

/// A one-line output without its newline (a message may end with a space).
fn line(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// kraftd's message: its stderr without the `kraftd format: ` prefix.
fn kraftd_message(out: &Output) -> &str {
    line(&out.stderr)
        .strip_prefix("kraftd format: ")
        .unwrap_or_else(|| panic!("one message line expected:\n{out}"))
}

fn refuse_both(kafka: &Kafka, cfg: &Path, args: &[&str]) -> (Output, Output) {
    let cluster = random_kafka_uuid();
    let ours = kraftd_format(cfg, &cluster, &FormatFlag::None, args);
    let java = kafka.storage_format(cfg, &cluster, &FormatFlag::None, args);
    assert_eq!(ours.code(), Some(1), "{ours}");
    assert_eq!(java.code(), Some(1), "{java}");
    assert!(!ours.stderr.contains("panicked"), "{ours}");
    (ours, java)
}

#[test]
fn add_scram_refusals_match_kafka_storage() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let cfg = config(
        &dir,
        "n",
        "controller.quorum.voters",
        &format!("1@127.0.0.1:{port}"),
        port,
    );
    // Two at a time: each Java run is a JVM start.
    let outputs: Vec<(Output, Output)> = std::thread::scope(|s| {
        REFUSALS
            .chunks(2)
            .flat_map(|pair| {
                let running: Vec<_> = pair
                    .iter()
                    .map(|r| s.spawn(|| refuse_both(kafka, &cfg, r.args)))
                    .collect();
                running
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    for (r, (ours, java)) in REFUSALS.iter().zip(&outputs) {
        assert_eq!(line(&java.stderr), r.java, "{:?}: Java\n{java}", r.args);
        assert_eq!(
            kraftd_message(ours),
            r.kraftd.unwrap_or(r.java),
            "{:?}: kraftd\n{ours}",
            r.args
        );
        assert!(
            java.stdout.is_empty() && ours.stdout.is_empty(),
            "{ours}\n{java}"
        );
    }
    for (arg, message) in EMPTY_KEYS {
        let (ours, java) = refuse_both(kafka, &cfg, &["--add-scram", arg]);
        assert!(
            java.stderr.starts_with(
                "Exception in thread \"main\" java.lang.IllegalArgumentException: Empty key"
            ),
            "{java}"
        );
        assert_eq!(kraftd_message(&ours), message);
    }
    // Java checks kraft.version before SCRAM.
    let dynamic = config(
        &dir,
        "d",
        "controller.quorum.bootstrap.servers",
        &format!("127.0.0.1:{port}"),
        port,
    );
    let args = [
        "--standalone",
        "--feature",
        "kraft.version=0",
        "--release-version",
        "3.4",
        "-S",
        "SCRAM-SHA-256=[bogus",
    ];
    let (ours, java) = refuse_both(kafka, &dynamic, &args);
    assert!(
        java.stderr.starts_with("Cannot set kraft.version to 0 if"),
        "{java}"
    );
    assert_eq!(kraftd_message(&ours), line(&java.stderr));
    assert!(
        !dir.join("n/meta").exists() && !dir.join("d/meta").exists(),
        "nothing written"
    );
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
