//! Fuzz bodies of SASL: `sasl.jaas.config` values, PLAIN tokens, and a SASL listener's
//! connection fed any frames.

use std::sync::Arc;

use crate::server::sasl::jaas::JaasConfig;
use crate::server::sasl::plain::{parse_token, PlainUsers};
use crate::server::sasl::server::{Action, ApiVersionsAnswer, Exchange, Services, Session};
use crate::server::sasl::settings::{EnabledMechanism, ListenerSasl, DEFAULT_MAX_RECEIVE_SIZE};
use crate::server::sasl::Mechanism;

/// Any bytes as a JAAS value: parsed or refused, never a panic; what parses has a module
/// name that is not empty and each option once; parsing is deterministic.
pub fn jaas_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match JaasConfig::parse(&text) {
        Ok(config) => {
            assert!(!config.entries.is_empty(), "a parsed value has a module");
            for e in &config.entries {
                assert!(!e.login_module.is_empty(), "module names are never empty");
                for (i, (k, _)) in e.options.iter().enumerate() {
                    assert!(
                        e.options[..i].iter().all(|(other, _)| other != k),
                        "an option name appears once"
                    );
                }
            }
            assert_eq!(JaasConfig::parse(&text), Ok(config));
        }
        Err(e) => assert_eq!(JaasConfig::parse(&text), Err(e)),
    }
}

struct FuzzServices(Arc<PlainUsers>);

impl Services for FuzzServices {
    fn api_versions(&self, frame: &[u8]) -> ApiVersionsAnswer {
        match frame.get(3) {
            Some(0) => ApiVersionsAnswer::Refused(vec![0; 10]),
            Some(1) => ApiVersionsAnswer::Close("fuzz".into()),
            _ => ApiVersionsAnswer::Accepted(vec![0; 10]),
        }
    }
    fn exchange(&self, mechanism: Mechanism) -> Option<Exchange> {
        (mechanism == Mechanism::Plain).then(|| Exchange::Plain(self.0.clone()))
    }
}

/// Any bytes as PLAIN tokens and as a SASL connection's frames (split at 0xff 0xfe; a frame
/// `0xfd` then four bytes is an oversized size prefix): no panic; a PLAIN token parses into
/// three parts or is refused; a connection that failed or closed asks for nothing more, and
/// once authenticated it has a user.
pub fn sasl_frames(data: &[u8]) {
    if let Ok(t) = parse_token(data) {
        assert!(!t.username.contains('\0') && !t.password.expose().contains('\0'));
    }
    let users = JaasConfig::parse(
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"p\";",
    )
    .expect("a fixed JAAS value parses");
    let users = Arc::new(PlainUsers::from_jaas(&users.entries[0]));
    let _ = users.authenticate(data);
    let config = ListenerSasl {
        listener: "CONTROLLER".into(),
        protocol: crate::server::config::SecurityProtocol::SaslPlaintext,
        mechanisms: vec![EnabledMechanism {
            mechanism: Mechanism::Plain,
            reauth_ms: 1000,
            plain_users: Some(users.clone()),
        }],
        max_receive_size: DEFAULT_MAX_RECEIVE_SIZE as usize,
    };
    let services = FuzzServices(users);
    let mut session = Session::new(Arc::new(config));
    let mut now = 0;
    let mut frames = Vec::new();
    let mut rest = data;
    while let Some(i) = rest.windows(2).position(|w| w == [0xff, 0xfe]) {
        frames.push(&rest[..i]);
        rest = &rest[i + 2..];
    }
    frames.push(rest);
    for frame in frames {
        now += 400;
        let action = match frame {
            [0xfd, a, b, c, d] if session.authenticating() => {
                session.oversized(i32::from_be_bytes([*a, *b, *c, *d]).into())
            }
            _ => session.receive(frame, now, &services),
        };
        match action {
            Action::Fail { .. } | Action::Close(_) => return,
            Action::Serve => assert!(session.authenticated().is_some()),
            Action::Reply(r) => assert!(r.len() >= 4, "a reply carries its size"),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_a_jaas_value(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            super::jaas_config(&data);
        }

        /// JAAS-shaped text: words, quotes, escapes, comments and separators.
        #[test]
        fn jaas_shaped_values(text in "([a-zA-Z.$_-]{1,6}|[ \\n\\r\\t=;'\"/*\\\\0-9]|\u{e9}|\u{1f600}){0,40}") {
            super::jaas_config(text.as_bytes());
        }

        #[test]
        fn any_bytes_as_sasl_frames(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            super::sasl_frames(&data);
        }
    }

    #[test]
    fn a_whole_exchange_in_one_input() {
        use crate::protocol::codec::ApiMessage;
        use crate::protocol::frame::encode_request;
        use crate::protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
        let handshake = SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
            ..Default::default()
        };
        let token = SaslAuthenticateRequest {
            auth_bytes: b"\0a\0p".to_vec(),
            ..Default::default()
        };
        let mut data = encode_request(SaslHandshakeRequest::API_KEY, 1, 1, None, &handshake)
            .unwrap()[4..]
            .to_vec();
        data.extend([0xff, 0xfe]);
        data.extend(
            &encode_request(SaslAuthenticateRequest::API_KEY, 2, 2, None, &token).unwrap()[4..],
        );
        super::sasl_frames(&data);
    }
}
