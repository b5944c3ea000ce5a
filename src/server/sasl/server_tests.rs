//! Transcripts of `server::Session`: the frames a client sends, in order, with the time, and
//! what the connection does with each.

use std::sync::Arc;

use super::plain::PlainUsers;
use super::server::{Action, ApiVersionsAnswer, Exchange, SaslFailure, Services, Session};
use super::settings::{EnabledMechanism, ListenerSasl};
use super::Mechanism;
use crate::protocol::codec::{ApiMessage, Message, Reader};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame::{encode_request, response_header_version};
use crate::protocol::messages::{
    ApiVersionsRequest, MetadataRequest, ResponseHeader, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use crate::server::config::SecurityProtocol;
use crate::server::sasl::jaas::JaasConfig;

struct Fake {
    users: Arc<PlainUsers>,
}

impl Services for Fake {
    fn api_versions(&self, frame: &[u8]) -> ApiVersionsAnswer {
        // Version 0 stands for a refused one (a version too new): the client may retry.
        if frame[3] == 0 {
            ApiVersionsAnswer::Refused(b"refused".to_vec())
        } else {
            ApiVersionsAnswer::Accepted(b"versions".to_vec())
        }
    }
    fn exchange(&self, mechanism: Mechanism) -> Option<Exchange> {
        (mechanism == Mechanism::Plain).then(|| Exchange::Plain(self.users.clone()))
    }
}

fn setup(reauth_ms: i64) -> (Session, Fake) {
    let jaas = JaasConfig::parse(
        "org.apache.kafka.common.security.plain.PlainLoginModule required \
         user_alice=\"a-pw\" user_bob=\"b-pw\";",
    )
    .unwrap();
    let users = Arc::new(PlainUsers::from_jaas(&jaas.entries[0]));
    let config = ListenerSasl {
        listener: "CONTROLLER".into(),
        protocol: SecurityProtocol::SaslPlaintext,
        mechanisms: vec![EnabledMechanism {
            mechanism: Mechanism::Plain,
            reauth_ms,
            plain_users: Some(users.clone()),
        }],
        max_receive_size: 524_288,
    };
    (Session::new(Arc::new(config)), Fake { users })
}

/// A request frame without its size prefix.
fn request<M: Message + ApiMessage>(version: i16, body: &M) -> Vec<u8> {
    encode_request(M::API_KEY, version, 7, Some("t"), body).unwrap()[4..].to_vec()
}

fn handshake(version: i16, mechanism: &str) -> Vec<u8> {
    request(
        version,
        &SaslHandshakeRequest {
            mechanism: mechanism.into(),
            ..Default::default()
        },
    )
}

fn authenticate(version: i16, token: &[u8]) -> Vec<u8> {
    request(
        version,
        &SaslAuthenticateRequest {
            auth_bytes: token.to_vec(),
            ..Default::default()
        },
    )
}

fn api_versions(version: i16) -> Vec<u8> {
    request(version, &ApiVersionsRequest::default())
}

/// The body of a response frame (size prefix included) to api `M` at `version`.
fn answer<M: Message, Req: ApiMessage>(frame: &[u8], version: i16) -> M {
    let mut r = Reader::new(&frame[4..]);
    let header =
        ResponseHeader::decode(&mut r, response_header_version(Req::API_KEY, version)).unwrap();
    assert_eq!(header.correlation_id, 7);
    M::decode_exact(r.rest(), version).unwrap()
}

fn reply(action: Action) -> Vec<u8> {
    match action {
        Action::Reply(r) => r,
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn handshake_ok(session: &mut Session, fake: &Fake, version: i16) {
    let r = reply(session.receive(&handshake(version, "PLAIN"), 0, fake));
    let h: SaslHandshakeResponse = answer::<_, SaslHandshakeRequest>(&r, version);
    assert_eq!((h.error_code, h.mechanisms), (0, vec!["PLAIN".to_string()]));
}

fn authenticate_ok(session: &mut Session, fake: &Fake, token: &[u8], now: i64) -> i64 {
    let r = reply(session.receive(&authenticate(2, token), now, fake));
    let a: SaslAuthenticateResponse = answer::<_, SaslAuthenticateRequest>(&r, 2);
    assert_eq!(a.error_code, 0, "{:?}", a.error_message);
    a.session_lifetime_ms
}

#[test]
fn api_versions_handshake_authenticate_then_serve() {
    let (mut s, fake) = setup(0);
    assert_eq!(
        s.receive(&api_versions(3), 0, &fake),
        Action::Reply(b"versions".to_vec())
    );
    handshake_ok(&mut s, &fake, 1);
    assert!(s.authenticating());
    assert_eq!(authenticate_ok(&mut s, &fake, b"\0alice\0a-pw", 10), 0);
    assert!(!s.authenticating());
    assert_eq!(s.authenticated().unwrap().user, "alice");
    assert_eq!(s.authenticated().unwrap().expires_at_ms, None);
    let metadata = request(12, &MetadataRequest::default());
    assert_eq!(s.receive(&metadata, 20, &fake), Action::Serve);
    // Without a session lifetime, a SaslHandshake is served (and refused by the API).
    assert_eq!(s.receive(&handshake(1, "PLAIN"), 30, &fake), Action::Serve);
}

#[test]
fn a_refused_api_versions_may_be_retried_but_not_repeated() {
    let (mut s, fake) = setup(0);
    assert_eq!(
        s.receive(&api_versions(0), 0, &fake),
        Action::Reply(b"refused".to_vec())
    );
    assert_eq!(
        s.receive(&api_versions(3), 0, &fake),
        Action::Reply(b"versions".to_vec())
    );
    assert_eq!(
        s.receive(&api_versions(3), 0, &fake),
        Action::Close(SaslFailure::RepeatedApiVersions)
    );
}

#[test]
fn a_request_before_authentication_closes_at_once() {
    let (mut s, fake) = setup(0);
    let metadata = request(12, &MetadataRequest::default());
    assert!(matches!(
        s.receive(&metadata, 0, &fake),
        Action::Close(SaslFailure::BeforeAuthentication { api_key: 3, .. })
    ));
    let (mut s, fake) = setup(0);
    assert!(matches!(
        s.receive(b"\x00", 0, &fake),
        Action::Close(SaslFailure::Malformed(_))
    ));
}

#[test]
fn an_unknown_mechanism_is_refused_with_the_enabled_ones() {
    let (mut s, fake) = setup(0);
    let Action::Fail {
        reply: Some(r),
        why,
    } = s.receive(&handshake(1, "SCRAM-SHA-256"), 0, &fake)
    else {
        panic!("not a failure");
    };
    let h: SaslHandshakeResponse = answer::<_, SaslHandshakeRequest>(&r, 1);
    assert_eq!(h.error_code, ErrorCode::UNSUPPORTED_SASL_MECHANISM.0);
    assert_eq!(h.mechanisms, ["PLAIN"]);
    assert!(why.to_string().contains("SCRAM-SHA-256"), "{why}");
}

#[test]
fn a_wrong_password_fails_with_javas_message() {
    let (mut s, fake) = setup(0);
    handshake_ok(&mut s, &fake, 1);
    let Action::Fail { reply: Some(r), .. } = s.receive(&authenticate(1, b"\0alice\0no"), 0, &fake)
    else {
        panic!("not a failure");
    };
    let a: SaslAuthenticateResponse = answer::<_, SaslAuthenticateRequest>(&r, 1);
    assert_eq!(a.error_code, ErrorCode::SASL_AUTHENTICATION_FAILED.0);
    assert_eq!(
        a.error_message.as_deref(),
        Some("Authentication failed: Invalid username or password")
    );
    let (mut s, fake) = setup(0);
    handshake_ok(&mut s, &fake, 1);
    let Action::Fail { reply: Some(r), .. } = s.receive(&authenticate(0, b"garbage"), 0, &fake)
    else {
        panic!("not a failure");
    };
    let a: SaslAuthenticateResponse = answer::<_, SaslAuthenticateRequest>(&r, 0);
    assert_eq!(
        a.error_message.as_deref(),
        Some("Invalid SASL/PLAIN response: expected 3 tokens, got 1")
    );
}

#[test]
fn handshake_v0_exchanges_bare_tokens() {
    let (mut s, fake) = setup(0);
    handshake_ok(&mut s, &fake, 0);
    // PLAIN's empty answer is still sent: a zero size.
    assert_eq!(
        s.receive(b"\0bob\0b-pw", 0, &fake),
        Action::Reply(vec![0, 0, 0, 0])
    );
    assert_eq!(s.authenticated().unwrap().user, "bob");
    let (mut s, fake) = setup(0);
    handshake_ok(&mut s, &fake, 0);
    assert!(matches!(
        s.receive(b"\0bob\0x", 0, &fake),
        Action::Fail { reply: None, .. }
    ));
}

#[test]
fn oversized_tokens_and_other_requests_during_authentication_fail() {
    let (mut s, fake) = setup(0);
    assert_eq!(s.max_frame(100 << 20), 524_288);
    handshake_ok(&mut s, &fake, 1);
    assert!(matches!(
        s.oversized(600_000),
        Action::Fail {
            reply: None,
            why: SaslFailure::OversizedToken { size: 600_000, .. }
        }
    ));
    let (mut s, fake) = setup(0);
    handshake_ok(&mut s, &fake, 1);
    let Action::Fail { reply: Some(r), .. } = s.receive(&handshake(1, "PLAIN"), 0, &fake) else {
        panic!("not a failure");
    };
    let h: SaslHandshakeResponse = answer::<_, SaslHandshakeRequest>(&r, 1);
    assert_eq!(h.error_code, ErrorCode::ILLEGAL_SASL_STATE.0);
}

#[test]
fn sessions_expire_and_re_authenticate_as_the_same_principal() {
    let (mut s, fake) = setup(5_000);
    handshake_ok(&mut s, &fake, 1);
    assert_eq!(
        authenticate_ok(&mut s, &fake, b"\0alice\0a-pw", 1_000),
        5_000
    );
    assert_eq!(s.authenticated().unwrap().expires_at_ms, Some(6_000));
    let metadata = request(12, &MetadataRequest::default());
    assert_eq!(s.receive(&metadata, 6_000, &fake), Action::Serve);
    // Re-authentication, as the same user, renews the session.
    let r = reply(s.receive(&handshake(1, "PLAIN"), 5_500, &fake));
    let h: SaslHandshakeResponse = answer::<_, SaslHandshakeRequest>(&r, 1);
    assert_eq!(h.error_code, 0);
    assert!(s.authenticating());
    assert_eq!(
        authenticate_ok(&mut s, &fake, b"\0alice\0a-pw", 5_600),
        5_000
    );
    assert_eq!(s.authenticated().unwrap().expires_at_ms, Some(10_600));
    // Not twice within a second: the handshake is then served (and refused by the API).
    assert_eq!(
        s.receive(&handshake(1, "PLAIN"), 6_000, &fake),
        Action::Serve
    );
    // Past the expiry, any other request closes the connection.
    assert!(matches!(
        s.receive(&metadata, 10_601, &fake),
        Action::Close(SaslFailure::SessionExpired { api_key: 3, .. })
    ));
}

#[test]
fn re_authentication_with_a_mechanism_not_enabled_closes_at_once() {
    let (mut s, fake) = setup(5_000);
    handshake_ok(&mut s, &fake, 1);
    authenticate_ok(&mut s, &fake, b"\0alice\0a-pw", 0);
    assert!(matches!(
        s.receive(&handshake(1, "SCRAM-SHA-512"), 100, &fake),
        Action::Close(SaslFailure::UnsupportedMechanism { .. })
    ));
}

#[test]
fn re_authentication_as_another_principal_fails() {
    let (mut s, fake) = setup(5_000);
    handshake_ok(&mut s, &fake, 1);
    authenticate_ok(&mut s, &fake, b"\0alice\0a-pw", 0);
    reply(s.receive(&handshake(1, "PLAIN"), 100, &fake));
    let Action::Fail { reply: Some(r), .. } =
        s.receive(&authenticate(2, b"\0bob\0b-pw"), 200, &fake)
    else {
        panic!("not a failure");
    };
    let a: SaslAuthenticateResponse = answer::<_, SaslAuthenticateRequest>(&r, 2);
    assert_eq!(
        a.error_message.as_deref(),
        Some("Cannot change principals during re-authentication from User.alice: User.bob")
    );
}
