//! SASL/SCRAM exchanges against Kafka 4.4's own `ScramSaslClient` and `ScramSaslServer` on
//! Java 17 (`compat/java/ScramSaslProbe.java`, one JVM), their nonces fixed through their
//! `SecureRandom`s and kraftd's given the same randomness ([`java_nonce`]):
//!
//! - successful exchanges, both mechanisms, plain and escaped user names: Java's client with
//!   kraftd's server, Java's client with Java's server, kraftd's client with Java's server: the
//!   three transcripts are the same bytes, and each side accepts the other's;
//! - the server's failures (unknown user, wrong password, bad nonce, wrong-length proof,
//!   authorization id, delegation token, too few iterations, malformed messages) and what it
//!   accepts that RFC 5802 would not (any channel binding, extensions, `m=`): the same bytes to
//!   both servers, the same outcome, and the same exception class and message (a malformed
//!   client-final message only by its prefix: Java's message carries the proof, kraftd's not);
//! - the client's failures (server nonce, iterations, malformed messages, `e=`, a wrong
//!   signature): the same server messages to both clients, the same exception and message.
//!
//! One deliberate difference: a server asking for more than 16384 iterations, which Java's
//! client computes and kraftd's refuses.

use std::sync::Arc;
use std::time::Duration;

use kraftd::controller::scram::ScramCredential;
use kraftd::server::config::Password;
use kraftd::server::sasl::scram::messages::B64;
use kraftd::server::sasl::scram::{
    credential_for, java_nonce, FailureReply, ScramClient, ScramCredentials, ScramError,
    ScramMechanism, ScramServer, ScramStep,
};
use serde_json::Value;

use base64::Engine;

use crate::harness::java_probe::ProbeSession;
use crate::harness::TestDir;

const TIMEOUT: Duration = Duration::from_secs(60);
const CLIENT_RANDOM: [u8; 17] = [7; 17];
const SERVER_RANDOM: [u8; 17] = [0x5a; 17];
const SASL_EXCEPTION: &str = "javax.security.sasl.SaslException";
const SASL_AUTHENTICATION: &str = "org.apache.kafka.common.errors.SaslAuthenticationException";
const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("probe hex"))
        .collect()
}

/// What one step gave: the reply (`None`: none) or the exception's class and message.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Reply(Option<Vec<u8>>),
    Failed { class: String, text: String },
}

impl Outcome {
    fn of_java(answer: &Value) -> Outcome {
        match answer.get("error") {
            Some(class) => Outcome::Failed {
                class: class.as_str().unwrap_or_default().to_string(),
                text: answer["text"].as_str().unwrap_or_default().to_string(),
            },
            None => Outcome::Reply(answer["message"].as_str().map(unhex)),
        }
    }

    /// kraftd's error as the Java exception it stands for.
    fn of_kraftd(e: &ScramError) -> Outcome {
        let class = match e.reply() {
            FailureReply::InvalidCredentials => SASL_EXCEPTION,
            FailureReply::Message(_) => SASL_AUTHENTICATION,
            FailureReply::CloseConnection => ILLEGAL_ARGUMENT,
        };
        Outcome::Failed {
            class: class.to_string(),
            text: e
                .java_text()
                .unwrap_or_else(|| format!("(kraftd only) {e}")),
        }
    }

    fn show(&self) -> String {
        match self {
            Outcome::Reply(Some(m)) => format!("{:?}", String::from_utf8_lossy(m)),
            Outcome::Reply(None) => "(no reply)".to_string(),
            Outcome::Failed { class, text } => format!("{class}: {text}"),
        }
    }
}

struct Java {
    session: ProbeSession,
}

impl Java {
    fn ask(&mut self, fields: &[&str]) -> Value {
        self.session.ask(&fields.join("\t"), TIMEOUT)
    }

    fn client(&mut self, m: ScramMechanism, user: &str, password: &str, ext: &str) -> Vec<u8> {
        let (u, p, r, e) = (
            hex(user.as_bytes()),
            hex(password.as_bytes()),
            hex(&CLIENT_RANDOM),
            hex(ext.as_bytes()),
        );
        let answer = self.ask(&["client", m.name(), &u, &p, &r, &e]);
        match Outcome::of_java(&answer) {
            Outcome::Reply(Some(first)) => first,
            other => panic!("Java's client did not start: {}", other.show()),
        }
    }

    fn client_step(&mut self, message: &[u8]) -> Outcome {
        Outcome::of_java(&self.ask(&["client-step", &hex(message)]))
    }

    /// Java's server with `user`'s credential (`None`: no user at all).
    fn server(&mut self, m: ScramMechanism, user: Option<(&str, &ScramCredential)>) {
        let empty = ScramCredential {
            salt: vec![0],
            stored_key: vec![0],
            server_key: vec![0],
            iterations: 4096,
        };
        let (name, c) = user.unwrap_or(("", &empty));
        let iterations = c.iterations.to_string();
        let answer = self.ask(&[
            "server",
            m.name(),
            &hex(name.as_bytes()),
            &hex(&c.salt),
            &hex(&c.stored_key),
            &hex(&c.server_key),
            &iterations,
            &hex(&SERVER_RANDOM),
        ]);
        assert_eq!(answer["ok"], Value::Bool(true), "Java's server: {answer}");
    }

    fn server_step(&mut self, message: &[u8]) -> (Outcome, Option<String>) {
        let answer = self.ask(&["server-step", &hex(message)]);
        let authzid = answer["authzid"].as_str().map(str::to_string);
        (Outcome::of_java(&answer), authzid)
    }
}

fn kraftd_server(m: ScramMechanism, user: Option<(&str, &ScramCredential)>) -> ScramServer {
    let mut credentials = ScramCredentials::default();
    if let Some((name, c)) = user {
        credentials = credentials.with(m, name, c.clone());
    }
    ScramServer::new(m, Arc::new(credentials), java_nonce(SERVER_RANDOM))
}

fn kraftd_step(server: &mut ScramServer, message: &[u8]) -> (Outcome, Option<String>) {
    match server.step(message) {
        Ok(ScramStep::Challenge(c)) => (Outcome::Reply(Some(c)), None),
        Ok(ScramStep::Done { reply, user }) => (Outcome::Reply(Some(reply)), Some(user)),
        Err(e) => (Outcome::of_kraftd(&e), None),
    }
}

fn credential(m: ScramMechanism, password: &str, iterations: u32) -> ScramCredential {
    credential_for(m, password, b"kraftd-salt", iterations).expect("a password")
}

const MECHANISMS: [ScramMechanism; 2] = [ScramMechanism::Sha256, ScramMechanism::Sha512];

#[test]
fn scram_exchanges_against_kafkas_client_and_server() {
    let dir = TestDir::new();
    let mut java = Java {
        session: ProbeSession::start("ScramSaslProbe", &[], &dir, "scram-sasl-probe"),
    };
    successful_exchanges(&mut java);
    server_failures(&mut java);
    client_failures(&mut java);
}

/// Java client ↔ kraftd server, Java client ↔ Java server, kraftd client ↔ Java server: the
/// same four messages every time.
fn successful_exchanges(java: &mut Java) {
    for m in MECHANISMS {
        // The extension: Java's client sends it (ScramExtensionsCallback) and both servers
        // put it in the AuthMessage.
        for (user, iterations, ext) in [
            ("alice", 4096, ""),
            ("a,b=c", 8192, ""),
            ("bob", 4096, "foo=bar"),
        ] {
            let c = credential(m, "s3cret", iterations);
            let what = format!("{} {user:?} i={iterations} {ext}", m.name());

            let mut ours = kraftd_server(m, Some((user, &c)));
            let first = java.client(m, user, "s3cret", ext);
            let (server_first, _) = kraftd_step(&mut ours, &first);
            let Outcome::Reply(Some(server_first)) = server_first else {
                panic!(
                    "{what}: kraftd refused Java's client-first: {}",
                    server_first.show()
                );
            };
            let Outcome::Reply(Some(last)) = java.client_step(&server_first) else {
                panic!("{what}: Java's client refused kraftd's server-first");
            };
            let (server_final, who) = kraftd_step(&mut ours, &last);
            let Outcome::Reply(Some(server_final)) = server_final else {
                panic!(
                    "{what}: kraftd refused Java's proof: {}",
                    server_final.show()
                );
            };
            assert_eq!(who.as_deref(), Some(user), "{what}");
            let done = java.client_step(&server_final);
            assert_eq!(
                done,
                Outcome::Reply(None),
                "{what}: Java's client on kraftd's v="
            );
            let transcript = [first.clone(), server_first, last, server_final];

            // The same client against Java's server: the same bytes.
            java.server(m, Some((user, &c)));
            let again = java.client(m, user, "s3cret", ext);
            let mut javas = vec![again.clone()];
            let (answer, _) = java.server_step(&again);
            let Outcome::Reply(Some(server_first)) = answer else {
                panic!("{what}: Java's server: {}", answer.show());
            };
            let Outcome::Reply(Some(last)) = java.client_step(&server_first) else {
                panic!("{what}: Java's client refused Java's server-first");
            };
            let (answer, who) = java.server_step(&last);
            let Outcome::Reply(Some(server_final)) = answer else {
                panic!("{what}: Java's server: {}", answer.show());
            };
            assert_eq!(
                who.as_deref(),
                Some(user),
                "{what}: Java's authorization id"
            );
            assert_eq!(
                java.client_step(&server_final),
                Outcome::Reply(None),
                "{what}"
            );
            javas.extend([server_first, last, server_final]);
            assert_eq!(
                javas, transcript,
                "{what}: Java's transcript and kraftd's server's"
            );

            if !ext.is_empty() {
                eprintln!("{what}: the same four messages from Java's client to both servers");
                continue;
            }
            // kraftd's client against Java's server: the same bytes again.
            java.server(m, Some((user, &c)));
            let nonce = java_nonce(CLIENT_RANDOM);
            let mut client = ScramClient::new(m, user, Password::new("s3cret"), nonce);
            let first = client.first_message();
            let (server_first, _) = java.server_step(&first);
            let Outcome::Reply(Some(server_first)) = server_first else {
                panic!("{what}: Java's server refused kraftd's client-first");
            };
            let last = client.handle_server_first(&server_first).unwrap();
            let (server_final, who) = java.server_step(&last);
            let Outcome::Reply(Some(server_final)) = server_final else {
                panic!(
                    "{what}: Java's server refused kraftd's proof: {}",
                    server_final.show()
                );
            };
            assert_eq!(
                who.as_deref(),
                Some(user),
                "{what}: Java's authorization id"
            );
            client.handle_server_final(&server_final).unwrap();
            assert_eq!(
                [first, server_first, last, server_final],
                transcript,
                "{what}: kraftd's client's transcript"
            );
            eprintln!("{what}: the same four messages from all three pairings");
        }
    }
}

/// The client-final message for `bare` (client-first-message-bare as Java rebuilds it) and
/// `server_first`, with channel binding `cb` and `password`.
fn client_final(
    m: ScramMechanism,
    password: &str,
    c: &ScramCredential,
    bare: &str,
    server_first: &str,
    cb: &str,
) -> String {
    let nonce = server_first
        .split(',')
        .next()
        .unwrap()
        .trim_start_matches("r=");
    let without_proof = format!("c={cb},r={nonce}");
    let auth = format!("{bare},{server_first},{without_proof}");
    let salted = m
        .hi(password.as_bytes(), &c.salt, c.iterations as u32)
        .unwrap();
    let client_key = m.hmac(&salted, b"Client Key");
    let signature = m.hmac(&m.hash(&client_key), auth.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(a, b)| a ^ b)
        .collect();
    format!("{without_proof},p={}", B64.encode(proof))
}

/// Each case: a name, whether the server holds user "user"'s credential (and with how many
/// iterations), and the client messages; every step compared between the two servers.
fn server_failures(java: &mut Java) {
    let m = ScramMechanism::Sha256;
    let server_nonce = java_nonce(SERVER_RANDOM);
    let c = credential(m, "pencil", 4096);
    let low = credential(m, "pencil", 4000);
    let salt = B64.encode(&c.salt);
    let server_first =
        |client_nonce: &str| format!("r={client_nonce}{server_nonce},s={salt},i=4096");
    let good_final = |bare: &str, cb: &str| {
        let nonce = bare.split(",r=").nth(1).unwrap().split(',').next().unwrap();
        client_final(m, "pencil", &c, bare, &server_first(nonce), cb)
    };
    let wrong_password = client_final(
        m,
        "pencil!",
        &c,
        "n=user,r=abc",
        &server_first("abc"),
        "biws",
    );
    let empty_proof = good_final("n=user,r=abc", "biws")
        .split(",p=")
        .next()
        .unwrap()
        .to_string()
        + ",p=";
    // Java re-encodes c=bh== as c=bg== (the unused bits dropped) for the AuthMessage.
    let trailing_bits = good_final("n=user,r=abc", "bg==").replace("c=bg==", "c=bh==");
    let mut short_proof = good_final("n=user,r=abc", "biws");
    short_proof.truncate(short_proof.find(",p=").unwrap());
    short_proof.push_str(",p=dGVzdA==");

    type Case<'a> = (&'a str, Option<&'a ScramCredential>, Vec<String>);
    let first = "n,,n=user,r=abc".to_string();
    let cases: Vec<Case> = vec![
        ("unknown user", None, vec![first.clone()]),
        (
            "wrong password",
            Some(&c),
            vec![first.clone(), wrong_password],
        ),
        (
            "bad nonce",
            Some(&c),
            vec![
                first.clone(),
                good_final("n=user,r=abc", "biws").replace("r=abc", "r=abd"),
            ],
        ),
        (
            "nonce not echoed",
            Some(&c),
            vec![
                first.clone(),
                good_final("n=user,r=abc", "biws").replace(&server_nonce, "x"),
            ],
        ),
        ("short proof", Some(&c), vec![first.clone(), short_proof]),
        ("authzid", Some(&c), vec!["n,a=bob,n=user,r=abc".into()]),
        (
            "authzid escaped",
            Some(&c),
            vec!["n,a=us=2Cer,n=user,r=abc".into()],
        ),
        (
            "authzid equal",
            Some(&c),
            vec![
                "n,a=user,n=user,r=abc".into(),
                good_final("n=user,r=abc", "biws"),
            ],
        ),
        (
            "delegation token",
            Some(&c),
            vec!["n,,n=user,r=abc,tokenauth=true".into()],
        ),
        (
            "token TRUE",
            Some(&c),
            vec!["n,,n=user,r=abc,tokenauth=TRUE".into()],
        ),
        (
            "token no",
            Some(&c),
            vec![
                "n,,n=user,r=abc,tokenauth=no".into(),
                good_final("n=user,r=abc,tokenauth=no", "biws"),
            ],
        ),
        ("iterations 4000", Some(&low), vec![first.clone()]),
        (
            "extensions",
            Some(&c),
            vec![
                "n,,n=user,r=abc,foo=b=r".into(),
                good_final("n=user,r=abc,foo=b=r", "biws"),
            ],
        ),
        (
            "reserved m=",
            Some(&c),
            vec![
                "n,,m=x,n=user,r=abc".into(),
                good_final("n=user,r=abc", "biws"),
            ],
        ),
        (
            "channel binding y,,",
            Some(&c),
            vec![first.clone(), good_final("n=user,r=abc", "eSws")],
        ),
        (
            "final extension",
            Some(&c),
            vec![
                first.clone(),
                good_final("n=user,r=abc", "biws").replace(",p=", ",x=1,p="),
            ],
        ),
        ("empty", Some(&c), vec![String::new()]),
        ("gs2 y", Some(&c), vec!["y,,n=user,r=abc".into()]),
        ("bad saslname", Some(&c), vec!["n,,n=us=er,r=abc".into()]),
        ("trailing comma", Some(&c), vec!["n,,n=user,r=abc,".into()]),
        ("non-ASCII", Some(&c), vec!["n,,n=us\u{e9}r,r=abc".into()]),
        (
            "final malformed",
            Some(&c),
            vec![first.clone(), "c=biws,r=x".into()],
        ),
        ("empty proof", Some(&c), vec![first.clone(), empty_proof]),
        (
            "channel binding bits",
            Some(&c),
            vec![first.clone(), trailing_bits],
        ),
        (
            "final bad base64",
            Some(&c),
            vec![first.clone(), "c=biw,r=x,p=".into()],
        ),
    ];
    let mut differences = Vec::new();
    for (name, credential, messages) in &cases {
        let user = credential.map(|c| ("user", c));
        java.server(m, user);
        let mut ours = kraftd_server(m, user);
        for message in messages {
            let (j, jwho) = java.server_step(message.as_bytes());
            let (k, kwho) = kraftd_step(&mut ours, message.as_bytes());
            eprintln!(
                "{name}: {message:?}\n    java:   {}\n    kraftd: {}",
                j.show(),
                k.show()
            );
            let same = match (&j, &k) {
                (
                    Outcome::Failed {
                        class: jc,
                        text: jt,
                    },
                    Outcome::Failed {
                        class: kc,
                        text: kt,
                    },
                ) if kt.ends_with("[withheld]") => {
                    jc == kc && jt.starts_with(kt.trim_end_matches("[withheld]"))
                }
                _ => j == k && jwho == kwho,
            };
            if !same {
                differences.push(format!(
                    "{name}: {message:?}\n  java:   {}\n  kraftd: {}",
                    j.show(),
                    k.show()
                ));
            }
            if matches!(j, Outcome::Failed { .. }) {
                break;
            }
        }
    }
    assert!(
        differences.is_empty(),
        "servers differ:\n{}",
        differences.join("\n")
    );
}

/// The same server messages to Java's client and kraftd's (user "user", password "pencil").
fn client_failures(java: &mut Java) {
    let m = ScramMechanism::Sha256;
    let nonce = java_nonce(CLIENT_RANDOM);
    let c = credential(m, "pencil", 4096);
    let salt = B64.encode(&c.salt);
    let good_first = format!("r={nonce}srv,s={salt},i=4096");
    let firsts = [
        ("other nonce", "r=other,s=,i=4096".to_string()),
        ("iterations 4095", format!("r={nonce}x,s={salt},i=4095")),
        ("iterations 0", format!("r={nonce}x,s={salt},i=0")),
        (
            "iterations overflow",
            format!("r={nonce}x,s={salt},i=2147483648"),
        ),
        ("malformed first", "nonsense".to_string()),
        // Java rebuilds the server-first message for the AuthMessage: no m=, no extensions.
        (
            "reserved and extension",
            format!("m=x,r={nonce}x,s={salt},i=4096,ext=1"),
        ),
        // java.util.Base64 ignores the unused bits: s=bh== is the salt "n".
        ("salt trailing bits", format!("r={nonce}x,s=bh==,i=4096")),
        ("empty salt", format!("r={nonce}x,s=,i=4096")),
    ];
    // The right signature, from kraftd's server (same nonces, same credential).
    let verifier = {
        let creds = ScramCredentials::default().with(m, "user", c.clone());
        let mut server = ScramServer::new(m, Arc::new(creds), "srv".into());
        let client = ScramClient::new(m, "user", Password::new("pencil"), nonce.clone());
        let mut answering = client.clone();
        server.step(&client.first_message()).unwrap();
        let last = answering
            .handle_server_first(good_first.as_bytes())
            .unwrap();
        match server.step(&last).unwrap() {
            ScramStep::Done { reply, .. } => String::from_utf8(reply).unwrap(),
            other => panic!("{other:?}"),
        }
    };
    let finals = [
        ("server error", "e=invalid-proof".to_string()),
        ("wrong signature", format!("v={}", B64.encode([0u8; 32]))),
        ("malformed final", "v=abc".to_string()),
        ("right signature", verifier.clone()),
        ("signature and extension", format!("{verifier},x=1")),
    ];
    let mut differences = Vec::new();
    let mut compare = |name: &str, j: Outcome, k: Outcome| {
        eprintln!(
            "client, {name}:\n    java:   {}\n    kraftd: {}",
            j.show(),
            k.show()
        );
        if j != k {
            differences.push(format!(
                "{name}:\n  java:   {}\n  kraftd: {}",
                j.show(),
                k.show()
            ));
        }
    };
    let kraftd_client = || ScramClient::new(m, "user", Password::new("pencil"), nonce.clone());
    for (name, first) in &firsts {
        java.client(m, "user", "pencil", "");
        let j = java.client_step(first.as_bytes());
        let k = match kraftd_client().handle_server_first(first.as_bytes()) {
            Ok(reply) => Outcome::Reply(Some(reply)),
            Err(e) => Outcome::of_kraftd(&e),
        };
        compare(name, j, k);
    }
    for (name, last) in &finals {
        java.client(m, "user", "pencil", "");
        let j_final = java.client_step(good_first.as_bytes());
        let mut k = kraftd_client();
        let k_final = k.handle_server_first(good_first.as_bytes()).unwrap();
        assert_eq!(
            j_final,
            Outcome::Reply(Some(k_final)),
            "{name}: the client-final messages"
        );
        let j = java.client_step(last.as_bytes());
        let k = match k.handle_server_final(last.as_bytes()) {
            Ok(()) => Outcome::Reply(None),
            Err(e) => Outcome::of_kraftd(&e),
        };
        compare(name, j, k);
    }
    // Java's client computes 16385 iterations; kraftd's refuses above Kafka's maximum.
    java.client(m, "user", "pencil", "");
    let high = format!("r={nonce}x,s={salt},i=16385");
    assert!(matches!(
        java.client_step(high.as_bytes()),
        Outcome::Reply(Some(_))
    ));
    let e = kraftd_client()
        .handle_server_first(high.as_bytes())
        .unwrap_err();
    assert!(e.java_text().is_none(), "{e}");
    assert!(
        differences.is_empty(),
        "clients differ:\n{}",
        differences.join("\n")
    );
}
