//! Fuzz body of the SASL/SCRAM messages: the four parsers, and a server and a client fed the
//! bytes at each step.

use std::sync::{Arc, OnceLock};

use crate::server::config::Password;
use crate::server::sasl::scram::messages::{ClientFinal, ClientFirst, ServerFinal, ServerFirst};
use crate::server::sasl::scram::{
    credential_for, ScramClient, ScramCredentials, ScramMechanism, ScramServer,
};

const SHA256: ScramMechanism = ScramMechanism::Sha256;

/// User "user" (password "pencil") for SCRAM-SHA-256, salted once.
fn credentials() -> Arc<ScramCredentials> {
    static CREDENTIALS: OnceLock<Arc<ScramCredentials>> = OnceLock::new();
    CREDENTIALS
        .get_or_init(|| {
            let c = credential_for(SHA256, "pencil", b"salt", 4096).expect("a password");
            Arc::new(ScramCredentials::default().with(SHA256, "user", c))
        })
        .clone()
}

/// Any bytes as each SCRAM message: parsed or refused, never a panic; what parses writes back
/// to a message that parses to the same thing. Then as a client's first and final messages
/// to a server, and as a server's first and final messages to a client: an answer or an
/// error, never a panic.
pub fn scram_messages(data: &[u8]) {
    if let Ok(m) = ClientFirst::parse(data) {
        let again = ClientFirst::parse(m.to_message().as_bytes());
        assert_eq!(again.as_ref(), Ok(&m), "client-first round trip");
    }
    if let Ok(m) = ServerFirst::parse(data) {
        let again = ServerFirst::parse(m.to_message().as_bytes());
        assert_eq!(again.as_ref(), Ok(&m), "server-first round trip");
    }
    if let Ok(m) = ClientFinal::parse(data) {
        let again = ClientFinal::parse(m.to_message().as_bytes());
        assert!(again.as_ref() == Ok(&m), "client-final round trip");
    }
    if let Ok(m) = ServerFinal::parse(data) {
        let again = ServerFinal::parse(m.to_message().as_bytes());
        assert_eq!(again.as_ref(), Ok(&m), "server-final round trip");
    }

    let server = || ScramServer::new(SHA256, credentials(), "srv".into());
    let _ = server().step(data);
    let mut s = server();
    if s.step(b"n,,n=user,r=cli").is_ok() {
        let _ = s.step(data);
    }

    let client = || ScramClient::new(SHA256, "user", Password::new("pencil"), "cli".into());
    // A server-first message with an acceptable nonce costs a Hi of up to 16384 iterations.
    let _ = client().handle_server_first(data);
    let _ = answered().clone().handle_server_final(data);
}

/// A client that has answered a server-first message (salted once), awaiting the final one.
fn answered() -> &'static ScramClient {
    static ANSWERED: OnceLock<ScramClient> = OnceLock::new();
    ANSWERED.get_or_init(|| {
        let mut c = ScramClient::new(SHA256, "user", Password::new("pencil"), "cli".into());
        c.handle_server_first(b"r=clisrv,s=c2FsdA==,i=4096")
            .expect("a well-formed server-first message");
        c
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Text made of SCRAM's pieces, so that inputs get past the first checks.
    fn scram_like() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just("n,".to_string()),
            Just(",".to_string()),
            Just("n=user".to_string()),
            Just("a=user".to_string()),
            Just("m=x".to_string()),
            Just("r=cli".to_string()),
            Just("r=clisrv".to_string()),
            Just("s=c2FsdA==".to_string()),
            Just("i=4096".to_string()),
            Just("c=biws".to_string()),
            Just("p=dGVzdA==".to_string()),
            Just("v=dGVzdA==".to_string()),
            Just("e=oops".to_string()),
            Just("tokenauth=true".to_string()),
            Just("=2C".to_string()),
            Just("=".to_string()),
            "[ -~]{0,6}",
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat().into_bytes())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_scram_messages(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            super::scram_messages(&data);
        }

        #[test]
        fn scram_shaped_text_as_scram_messages(data in scram_like()) {
            super::scram_messages(&data);
        }
    }
}
