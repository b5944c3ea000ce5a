//! SCRAM credentials: the same AlterUserScramCredentials and DescribeUserScramCredentials
//! requests, in the same order, to a Java 4.4 controller and to kraftd (no brokers), the
//! answers compared result by result (users, codes, messages, in the order each lists them),
//! then the credentials each log holds (Java's image of either log), so the records count too:
//! the StoredKey and ServerKey kraftd derives must be the ones Java derives. Also the keys
//! against Kafka's `ScramFormatter` directly, and the metadata.version gate at 3.5-IV1.

use kraftd::controller::scram::keys::{derive, ScramMechanism};
use std::time::Duration;

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kraftd::protocol::messages::describe_user_scram_credentials_request::UserName;
use kraftd::protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use serde_json::Value;

use super::assert_same_answers;
use crate::harness::cases::Gen;
use crate::harness::dump_java_image;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, image_differences};
use crate::harness::java_probe::run_probe;
use crate::harness::quorum_probe::{describe_quorum, try_round_trip_frame};
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

const SHA256: i8 = 1;
const SHA512: i8 = 2;

fn delete(name: &str, mechanism: i8) -> ScramCredentialDeletion {
    ScramCredentialDeletion {
        name: name.to_string(),
        mechanism,
        ..Default::default()
    }
}

/// An upsertion whose salt and SaltedPassword are made from the name and `seed`.
fn upsert(name: &str, mechanism: i8, iterations: i32, seed: u8) -> ScramCredentialUpsertion {
    ScramCredentialUpsertion {
        name: name.to_string(),
        mechanism,
        iterations,
        salt: format!("salt-{name}-{seed}").into_bytes(),
        salted_password: (0..32u8).map(|i| i.wrapping_mul(seed) ^ 0x5a).collect(),
        ..Default::default()
    }
}

fn alter(
    deletions: Vec<ScramCredentialDeletion>,
    upsertions: Vec<ScramCredentialUpsertion>,
) -> Request {
    Request::Alter(AlterUserScramCredentialsRequest {
        deletions,
        upsertions,
        ..Default::default()
    })
}

fn describe(users: Option<&[&str]>) -> Request {
    Request::Describe(DescribeUserScramCredentialsRequest {
        users: users.map(|u| {
            u.iter()
                .map(|n| UserName {
                    name: n.to_string(),
                    ..Default::default()
                })
                .collect()
        }),
        ..Default::default()
    })
}

enum Request {
    Alter(AlterUserScramCredentialsRequest),
    Describe(DescribeUserScramCredentialsRequest),
}

/// (case, request, Java's first error code).
fn cases() -> Vec<(&'static str, Request, ErrorCode)> {
    use ErrorCode as E;
    let long_key = ScramCredentialUpsertion {
        // Longer than either hash's block: HMAC hashes such a key first.
        salted_password: (0..200u8).collect(),
        ..upsert("alice", SHA512, 16384, 3)
    };
    vec![
        (
            "add alice (SHA-256) and bob (SHA-512)",
            alter(
                vec![],
                vec![
                    upsert("alice", SHA256, 4096, 1),
                    upsert("bob", SHA512, 8192, 2),
                ],
            ),
            E::NONE,
        ),
        (
            "alice's SHA-512 too, at the most iterations, with a long key",
            alter(vec![], vec![long_key]),
            E::NONE,
        ),
        (
            "replace alice's SHA-256",
            alter(vec![], vec![upsert("alice", SHA256, 5000, 4)]),
            E::NONE,
        ),
        (
            "delete bob's SHA-512",
            alter(vec![delete("bob", SHA512)], vec![]),
            E::NONE,
        ),
        (
            "delete bob's SHA-512 again",
            alter(vec![delete("bob", SHA512)], vec![]),
            E::RESOURCE_NOT_FOUND,
        ),
        (
            "delete a user never added",
            alter(vec![delete("carol", SHA256)], vec![]),
            E::RESOURCE_NOT_FOUND,
        ),
        (
            "an empty user name",
            alter(vec![], vec![upsert("", SHA256, 4096, 5)]),
            E::UNACCEPTABLE_CREDENTIAL,
        ),
        (
            "mechanism 0",
            alter(vec![], vec![upsert("dave", 0, 4096, 6)]),
            E::UNSUPPORTED_SASL_MECHANISM,
        ),
        (
            "deleting mechanism 3",
            alter(vec![delete("alice", 3)], vec![]),
            E::UNSUPPORTED_SASL_MECHANISM,
        ),
        (
            "4095 iterations",
            alter(vec![], vec![upsert("dave", SHA512, 4095, 7)]),
            E::UNACCEPTABLE_CREDENTIAL,
        ),
        (
            "16385 iterations",
            alter(vec![], vec![upsert("dave", SHA256, 16385, 8)]),
            E::UNACCEPTABLE_CREDENTIAL,
        ),
        (
            "an empty SaltedPassword",
            alter(
                vec![],
                vec![ScramCredentialUpsertion {
                    salted_password: vec![],
                    ..upsert("dave", SHA256, 4096, 9)
                }],
            ),
            E::UNKNOWN_SERVER_ERROR,
        ),
        (
            "an empty salt",
            alter(
                vec![],
                vec![ScramCredentialUpsertion {
                    salt: vec![],
                    ..upsert("erin", SHA256, 4096, 10)
                }],
            ),
            E::NONE,
        ),
        (
            "one user, two mechanisms",
            alter(
                vec![],
                vec![
                    upsert("frank", SHA256, 4096, 11),
                    upsert("frank", SHA512, 4096, 12),
                ],
            ),
            E::DUPLICATE_RESOURCE,
        ),
        (
            "deleted and added at once",
            alter(
                vec![delete("erin", SHA256)],
                vec![upsert("erin", SHA512, 4096, 13)],
            ),
            E::DUPLICATE_RESOURCE,
        ),
        (
            "a missing credential deleted three times",
            alter(
                vec![
                    delete("gil", SHA256),
                    delete("gil", SHA256),
                    delete("gil", SHA256),
                ],
                vec![],
            ),
            E::RESOURCE_NOT_FOUND,
        ),
        (
            "many users, some refused",
            alter(
                vec![delete("alice", SHA256), delete("ghost", SHA512)],
                vec![
                    upsert("zoe", SHA256, 4096, 14),
                    upsert("kim", SHA256, 99, 15),
                    upsert("amy", SHA512, 4096, 16),
                    upsert("", SHA512, 4096, 17),
                    upsert("nobody", 9, 4096, 18),
                    upsert("ivan", SHA256, 12000, 19),
                    upsert("zoe", SHA512, 4096, 20),
                ],
            ),
            E::NONE,
        ),
        ("nothing", alter(vec![], vec![]), E::NONE),
        (
            "describe alice and a stranger",
            describe(Some(&["alice", "stranger"])),
            E::UNKNOWN_SERVER_ERROR,
        ),
        (
            "describe nobody",
            describe(Some(&[])),
            E::UNKNOWN_SERVER_ERROR,
        ),
    ]
}

fn message(m: &Option<String>) -> String {
    m.as_deref()
        .map_or("null".to_string(), |m| format!("{m:?}"))
}

fn render_alter(r: &AlterUserScramCredentialsResponse) -> String {
    let mut lines = vec![format!("throttle {}", r.throttle_time_ms)];
    for x in &r.results {
        lines.push(format!(
            "{:?}: {} {}",
            x.user,
            ErrorCode(x.error_code).name(),
            message(&x.error_message)
        ));
    }
    lines.join("\n      ")
}

fn render_describe(r: &DescribeUserScramCredentialsResponse) -> String {
    let mut lines = vec![format!(
        "throttle {}, {} {}",
        r.throttle_time_ms,
        ErrorCode(r.error_code).name(),
        message(&r.error_message)
    )];
    for x in &r.results {
        let infos: Vec<String> = x
            .credential_infos
            .iter()
            .map(|c| format!("{}/{}", c.mechanism, c.iterations))
            .collect();
        lines.push(format!(
            "{:?}: {} {} [{}]",
            x.user,
            ErrorCode(x.error_code).name(),
            message(&x.error_message),
            infos.join(", ")
        ));
    }
    lines.join("\n      ")
}

/// The rendered answer and its first error code (top-level for Describe).
fn ask(c: &TopicCluster, request: &Request) -> (String, i16) {
    let answer = match request {
        Request::Alter(r) => c.send(0, r).map(|body| {
            let r = AlterUserScramCredentialsResponse::decode_exact(&body, 0)
                .expect("an AlterUserScramCredentials response");
            (
                render_alter(&r),
                r.results.first().map_or(0, |x| x.error_code),
            )
        }),
        Request::Describe(r) => c.send(0, r).map(|body| {
            let r = DescribeUserScramCredentialsResponse::decode_exact(&body, 0)
                .expect("a DescribeUserScramCredentials response");
            (render_describe(&r), r.error_code)
        }),
    };
    answer.unwrap_or_else(|e| (format!("no answer: {e}"), i16::MIN))
}

/// DescribeUserScramCredentials for every user (a null list), waiting 5 s for an answer.
fn describe_everyone(c: &TopicCluster) -> String {
    let Request::Describe(request) = describe(None) else {
        unreachable!()
    };
    let key = <DescribeUserScramCredentialsRequest as ApiMessage>::API_KEY;
    let frame = encode_request(key, 0, 9, Some("compat-scram"), &request).unwrap();
    match try_round_trip_frame(c.controller.port, key, 0, &frame, Duration::from_secs(5)) {
        Ok(body) => render_describe(
            &DescribeUserScramCredentialsResponse::decode_exact(&body, 0)
                .expect("a DescribeUserScramCredentials response"),
        ),
        Err(e) => format!("no answer: {e}"),
    }
}

/// The answers, the answer to describing every user, and the credentials in the log once the
/// cases are done (Java's image of it).
fn run_all(kind: Kind, dir: &TestDir) -> (Vec<(String, i16)>, String, Value) {
    let mut c = TopicCluster::controller_only(dir, kind, &[], &[]);
    let answers = cases().iter().map(|(_, r, _)| ask(&c, r)).collect();
    let everyone = describe_everyone(&c);
    // Every answer was released after its records committed: the high watermark covers them.
    let cases_end = describe_quorum(c.controller.port)
        .expect("the controller describes its quorum")
        .high_watermark
        - 1;
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    let scram = dump_java_image(&log, Some(cases_end))["scram"].clone();
    if kind == Kind::Kraftd {
        let (offset, _, _) = assert_image_equals_javas(&log, None);
        eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
    }
    (answers, everyone, scram)
}

#[test]
fn scram_credentials_get_javas_answers_and_records() {
    let dir = TestDir::new();
    let (java, java_everyone, java_scram) = run_all(Kind::Java, &dir);
    let (kraftd, kraftd_everyone, kraftd_scram) = run_all(Kind::Kraftd, &dir);
    // Java's error response for a null user list throws, so Java never answers; kraftd answers
    // the error (see docs/notes/security.md).
    eprintln!("Describing every user:\n  java:   {java_everyone}\n  kraftd: {kraftd_everyone}");
    assert!(java_everyone.starts_with("no answer"), "{java_everyone}");
    assert_eq!(kraftd_everyone, "throttle 0, UNKNOWN_SERVER_ERROR null");
    eprintln!("Credentials after the cases (Java's image of Java's log):\n  {java_scram}");
    let diffs = image_differences(&java_scram, &kraftd_scram);
    assert!(
        diffs.is_empty(),
        "the logged credentials differ:\n  {}",
        diffs.join("\n  ")
    );
    let users = |mechanism: &str| -> Vec<String> {
        let users = java_scram[mechanism].as_object().into_iter().flatten();
        users.map(|(user, _)| user.clone()).collect()
    };
    assert_eq!(
        (users("1"), users("2")),
        (
            vec!["erin".into(), "ivan".into()],
            vec!["alice".into(), "amy".into()]
        ),
        "the credentials the cases leave: {java_scram}"
    );
    let cases: Vec<(&str, i16)> = cases().iter().map(|c| (c.0, c.2 .0)).collect();
    assert_same_answers("SCRAM credentials", &cases, &java, &kraftd);
}

#[test]
fn before_3_5_iv2_scram_is_refused_as_java_refuses_it() {
    let dir = TestDir::new();
    let requests = || {
        vec![
            alter(vec![], vec![upsert("alice", SHA256, 4096, 1)]),
            alter(
                vec![delete("", 7), delete("bob", SHA256)],
                vec![upsert("bob", SHA512, 1, 2)],
            ),
        ]
    };
    let run = |kind| {
        let format = ["--release-version", "3.5-IV1"];
        let mut c = TopicCluster::controller_only(&dir, kind, &[], &format);
        let answers: Vec<(String, i16)> = requests().iter().map(|r| ask(&c, r)).collect();
        c.stop();
        answers
    };
    let (java, kraftd) = (run(Kind::Java), run(Kind::Kraftd));
    let code = ErrorCode::UNSUPPORTED_VERSION.0;
    let cases = [
        ("a new credential", code),
        ("a bad deletion, a duplicate", code),
    ];
    assert_same_answers("SCRAM at 3.5-IV1", &cases, &java, &kraftd);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// kraftd's StoredKey and ServerKey against `ScramFormatter`'s for SaltedPasswords of many
/// lengths (around both hashes' block sizes), both mechanisms, and the empty one Java refuses.
#[test]
fn derived_keys_are_scram_formatters() {
    let dir = TestDir::new();
    let mut gen = Gen(0x5c4a_3d01);
    let mut inputs: Vec<(ScramMechanism, Vec<u8>)> = Vec::new();
    for mechanism in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        for len in [0usize, 1, 31, 32, 63, 64, 65, 127, 128, 129, 200, 1000] {
            inputs.push((mechanism, (0..len).map(|_| gen.below(256) as u8).collect()));
        }
    }
    let stdin: String = inputs
        .iter()
        .map(|(m, p)| format!("{}\t{}\n", m.name(), hex(p)))
        .collect();
    let java = run_probe("ScramProbe", &[], &stdin, dir.path());
    let lines: Vec<&str> = java.stdout.lines().collect();
    assert_eq!(lines.len(), inputs.len(), "{java}");
    for ((mechanism, password), line) in inputs.iter().zip(lines) {
        let ours = match derive(*mechanism, password) {
            Ok(k) => format!("{}\t{}", hex(&k.stored_key), hex(&k.server_key)),
            Err(_) => "error\tjava.lang.IllegalArgumentException".to_string(),
        };
        assert_eq!(
            ours,
            line,
            "{} of a {}-byte SaltedPassword",
            mechanism.name(),
            password.len()
        );
    }
}
