//! Whole exchanges: RFC 7677's SCRAM-SHA-256 transcript through the server and the client,
//! kraftd's client against kraftd's server, and each way an exchange fails.

use std::sync::Arc;

use super::error::{FailureReply, ScramErrorKind};
use super::messages::B64;
use super::{
    credential_for, ScramClient, ScramCredentials, ScramMechanism, ScramServer, ScramStep,
};
use crate::server::config::Password;
use base64::Engine;

const CLIENT_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
const SERVER_NONCE: &str = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
const CLIENT_FIRST: &str = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
const SERVER_FIRST: &str =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
const CLIENT_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                            p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
const SERVER_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

const SHA256: ScramMechanism = ScramMechanism::Sha256;

fn rfc_credentials() -> Arc<ScramCredentials> {
    let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
    let c = credential_for(SHA256, "pencil", &salt, 4096).unwrap();
    Arc::new(ScramCredentials::default().with(SHA256, "user", c))
}

fn server() -> ScramServer {
    ScramServer::new(SHA256, rfc_credentials(), SERVER_NONCE.into())
}

fn challenge(step: ScramStep) -> String {
    match step {
        ScramStep::Challenge(c) => String::from_utf8(c).unwrap(),
        done => panic!("a challenge expected, got {done:?}"),
    }
}

#[test]
fn rfc_7677_through_the_server() {
    let mut s = server();
    assert_eq!(
        challenge(s.step(CLIENT_FIRST.as_bytes()).unwrap()),
        SERVER_FIRST
    );
    assert!(!s.is_complete());
    match s.step(CLIENT_FINAL.as_bytes()).unwrap() {
        ScramStep::Done { reply, user } => {
            assert_eq!(String::from_utf8(reply).unwrap(), SERVER_FINAL);
            assert_eq!(user, "user");
        }
        other => panic!("{other:?}"),
    }
    assert!(s.is_complete());
    let again = s.step(CLIENT_FINAL.as_bytes()).unwrap_err();
    assert_eq!(
        again.java_text().unwrap(),
        "Unexpected challenge in Sasl server state COMPLETE"
    );
    assert_eq!(again.reply(), FailureReply::CloseConnection);
}

#[test]
fn rfc_7677_through_the_client() {
    let mut c = ScramClient::new(SHA256, "user", Password::new("pencil"), CLIENT_NONCE.into());
    assert_eq!(c.first_message(), CLIENT_FIRST.as_bytes());
    let last = c.handle_server_first(SERVER_FIRST.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(last).unwrap(), CLIENT_FINAL);
    c.handle_server_final(SERVER_FINAL.as_bytes()).unwrap();
    assert!(c.is_complete());
    assert!(!format!("{c:?}").contains("pencil"));
}

/// kraftd's client against kraftd's server, for both mechanisms and awkward user names.
#[test]
fn client_and_server_agree() {
    for mechanism in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
        for user in ["alice", "a,b=c", "=2C", "x=3D"] {
            let c = credential_for(mechanism, "secret", b"salty", 4096).unwrap();
            let creds = Arc::new(ScramCredentials::default().with(mechanism, user, c));
            let mut server = ScramServer::new(mechanism, creds, "srv".into());
            let mut client =
                ScramClient::new(mechanism, user, Password::new("secret"), "cli".into());
            let first = client.first_message();
            let server_first = challenge(server.step(&first).unwrap());
            let last = client.handle_server_first(server_first.as_bytes()).unwrap();
            let ScramStep::Done { reply, user: who } = server.step(&last).unwrap() else {
                panic!("not done");
            };
            assert_eq!(who, user);
            client.handle_server_final(&reply).unwrap();
        }
    }
}

fn fail_first(message: &str) -> super::ScramError {
    server().step(message.as_bytes()).unwrap_err()
}

fn fail_final(message: &str) -> super::ScramError {
    let mut s = server();
    s.step(CLIENT_FIRST.as_bytes()).unwrap();
    let e = s.step(message.as_bytes()).unwrap_err();
    // A failed exchange takes nothing more.
    assert!(matches!(
        s.step(CLIENT_FINAL.as_bytes()).unwrap_err().kind,
        ScramErrorKind::UnexpectedMessage {
            client: false,
            state: "FAILED"
        }
    ));
    e
}

#[test]
fn the_servers_failures_as_java_reports_them() {
    let e = fail_first("n,,n=nobody,r=abc");
    assert_eq!(
        e.java_text().unwrap(),
        "Authentication failed: Invalid user credentials"
    );
    assert_eq!(e.reply(), FailureReply::InvalidCredentials);
    assert!(e.to_string().contains("\"nobody\""), "{e}");

    let e = fail_first("n,a=other,n=user,r=abc");
    let text = "Authentication failed: Client requested an authorization id that is different \
                from username";
    assert_eq!(e.reply(), FailureReply::Message(text.into()));
    assert_eq!(e.java_text().unwrap(), text);
    // Java compares the authorization id as sent (escaped) with the unescaped user name.
    let escaped = ScramCredentials::default().with(
        SHA256,
        "a,b",
        credential_for(SHA256, "p", b"s", 4096).unwrap(),
    );
    let e = ScramServer::new(SHA256, Arc::new(escaped), "n".into())
        .step(b"n,a=a=2Cb,n=a=2Cb,r=abc")
        .unwrap_err();
    assert!(matches!(
        e.kind,
        ScramErrorKind::AuthorizationIdMismatch { .. }
    ));

    let e = fail_first("n,,n=user,r=abc,tokenauth=true");
    assert_eq!(
        e.java_text().unwrap(),
        "Token Authentication failed: Invalid tokenId : user"
    );
    assert_eq!(e.reply(), FailureReply::InvalidCredentials);

    let e = fail_first("n,,n=user");
    assert_eq!(
        e.java_text().unwrap(),
        "Invalid SCRAM client first message format: n,,n=user"
    );

    let wrong_nonce = CLIENT_FINAL.replace("k0,", "k1,");
    let e = fail_final(&wrong_nonce);
    assert_eq!(
        e.java_text().unwrap(),
        "Invalid client nonce in the final client message."
    );

    let wrong_proof = CLIENT_FINAL.replace("p=dHz", "p=dHy");
    let e = fail_final(&wrong_proof);
    assert_eq!(e.java_text().unwrap(), "Invalid client credentials");
    assert_eq!(e.reply(), FailureReply::InvalidCredentials);

    let short_proof = CLIENT_FINAL.split(",p=").next().unwrap().to_string() + ",p=dGVzdA==";
    let e = fail_final(&short_proof);
    assert_eq!(e.reply(), FailureReply::CloseConnection);
    assert_eq!(
        e.java_text().unwrap(),
        "Argument arrays must be of the same length"
    );

    let e = fail_final("c=biws,r=x,p");
    assert_eq!(
        e.java_text().unwrap(),
        "Invalid SCRAM client final message format: [withheld]"
    );
}

#[test]
fn an_authzid_equal_to_the_user_is_accepted() {
    let mut s = server();
    s.step(b"n,a=user,n=user,r=rOprNGfwEbeRWgbNEkqO").unwrap();
}

#[test]
fn a_credential_below_the_minimum_iterations_is_refused() {
    let c = credential_for(SHA256, "pencil", b"s", 4095).unwrap();
    let creds = Arc::new(ScramCredentials::default().with(SHA256, "user", c));
    let e = ScramServer::new(SHA256, creds, "n".into())
        .step(CLIENT_FIRST.as_bytes())
        .unwrap_err();
    assert_eq!(
        e.java_text().unwrap(),
        "Iterations 4095 is less than the minimum 4096 for SCRAM_SHA_256"
    );
}

#[test]
fn the_other_mechanisms_credential_does_not_serve() {
    let e = ScramServer::new(ScramMechanism::Sha512, rfc_credentials(), "n".into())
        .step(CLIENT_FIRST.as_bytes())
        .unwrap_err();
    assert!(matches!(e.kind, ScramErrorKind::UnknownUser { .. }));
}

#[test]
fn the_clients_failures_as_java_reports_them() {
    let client = || ScramClient::new(SHA256, "user", Password::new("pencil"), CLIENT_NONCE.into());
    let text = |r: Result<Vec<u8>, super::ScramError>| r.unwrap_err().java_text();
    assert_eq!(
        text(client().handle_server_first(b"r=other,s=,i=4096")).unwrap(),
        "Invalid server nonce: does not start with client nonce"
    );
    let low = format!("r={CLIENT_NONCE}x,s=,i=4095");
    assert_eq!(
        text(client().handle_server_first(low.as_bytes())).unwrap(),
        "Requested iterations 4095 is less than the minimum 4096 for SCRAM_SHA_256"
    );
    let high = format!("r={CLIENT_NONCE}x,s=,i=16385");
    assert!(text(client().handle_server_first(high.as_bytes())).is_none());
    assert_eq!(
        text(client().handle_server_first(b"r=x,s=,i=0")).unwrap(),
        "Invalid SCRAM server first message format: invalid iterations 0"
    );
    let mut empty = ScramClient::new(SHA256, "user", Password::new(""), CLIENT_NONCE.into());

    let e = empty
        .handle_server_first(SERVER_FIRST.as_bytes())
        .unwrap_err();
    assert_eq!(e.kind, ScramErrorKind::EmptyPassword);

    let finished = || {
        let mut c = client();
        c.handle_server_first(SERVER_FIRST.as_bytes()).unwrap();
        c
    };
    let e = finished()
        .handle_server_final(b"e=invalid-proof")
        .unwrap_err();
    assert_eq!(
        e.java_text().unwrap(),
        "Sasl authentication using SCRAM_SHA_256 failed with error: invalid-proof"
    );
    let e = finished()
        .handle_server_final(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
        .unwrap_err();
    assert_eq!(
        e.java_text().unwrap(),
        "Invalid server signature in server final message"
    );
    // The last character's two unused bits are ignored, as java.util.Base64 ignores them.
    finished()
        .handle_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G5=")
        .unwrap();
    let e = finished().handle_server_final(b"nonsense").unwrap_err();
    assert_eq!(
        e.java_text().unwrap(),
        "Invalid SCRAM server final message format: nonsense"
    );
    let e = client()
        .handle_server_final(SERVER_FINAL.as_bytes())
        .unwrap_err();
    assert_eq!(
        e.java_text().unwrap(),
        "Unexpected challenge in Sasl client state RECEIVE_SERVER_FIRST_MESSAGE"
    );
}

/// No error names a password, salted password, key or proof.
#[test]
fn errors_carry_no_secrets() {
    let proof = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    let malformed = format!("c=biws,r=x,p={proof},");
    let e = fail_final(&malformed);
    for text in [e.to_string(), format!("{e:?}"), e.java_text().unwrap()] {
        assert!(!text.contains(proof), "{text}");
    }
    let wrong = CLIENT_FINAL.replace("p=dHz", "p=dHy");
    let e = fail_final(&wrong);
    assert!(!format!("{e} {e:?}").contains("p=dHy"));
    let creds = rfc_credentials();
    let stored = B64.encode(&creds.get(SHA256, "user").unwrap().stored_key);
    assert!(!format!("{creds:?} {:?}", server()).contains(&stored));
}
