//! SASL/PLAIN (RFC 4616) as Kafka 4.4's `PlainSaslServer` and `PlainServerCallbackHandler`
//! check it: the client's token is `[authzid] NUL username NUL password`, the users are the
//! JAAS options `user_<name>="<password>"` of the listener's `PlainLoginModule` entry, and an
//! authorization id must be empty or the username. The client side sends
//! `NUL username NUL password`, as Kafka's client does (it sets no authorization id).

use std::collections::HashMap;
use std::fmt;

use super::jaas::JaasEntry;
use crate::server::config::Password;

/// `org.apache.kafka.common.security.plain.PlainLoginModule`.
pub const PLAIN_LOGIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";

/// The JAAS option prefix of a PLAIN user's password.
const USER_PREFIX: &str = "user_";

/// Why a PLAIN token was refused. The text of each is Java's message, which the client is
/// sent in its SaslAuthenticate answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlainError {
    #[error("Invalid SASL/PLAIN response: expected 3 tokens, got {0}")]
    TokenCount(usize),
    #[error("Authentication failed: username not specified")]
    NoUsername,
    #[error("Authentication failed: password not specified")]
    NoPassword,
    #[error("Authentication failed: Invalid username or password")]
    InvalidCredentials,
    #[error("Authentication failed: Client requested an authorization id that is different from username")]
    OtherAuthorizationId,
}

/// A client's PLAIN token, split.
pub struct PlainToken {
    pub authorization_id: String,
    pub username: String,
    pub password: Password,
}

/// Splits a token as `PlainSaslServer.extractTokens` does: the bytes are read as UTF-8 (bad
/// sequences become U+FFFD), then split at NULs into at most four parts, of which there must
/// be exactly three.
pub fn parse_token(bytes: &[u8]) -> Result<PlainToken, PlainError> {
    let text = String::from_utf8_lossy(bytes);
    let parts: Vec<&str> = text.splitn(4, '\0').collect();
    // Java stops after a fourth part whether or not more NULs follow.
    if parts.len() != 3 {
        return Err(PlainError::TokenCount(parts.len()));
    }
    Ok(PlainToken {
        authorization_id: parts[0].to_string(),
        username: parts[1].to_string(),
        password: Password::new(parts[2]),
    })
}

/// The token a client sends: no authorization id, then the username and password.
pub fn client_token(username: &str, password: &Password) -> Vec<u8> {
    let mut token = Vec::with_capacity(username.len() + password.expose().len() + 2);
    token.push(0);
    token.extend_from_slice(username.as_bytes());
    token.push(0);
    token.extend_from_slice(password.expose().as_bytes());
    token
}

/// The users a PLAIN listener accepts.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PlainUsers {
    users: HashMap<String, Password>,
}

/// User names only.
impl fmt::Debug for PlainUsers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.users.keys().collect();
        names.sort();
        write!(f, "PlainUsers{names:?}")
    }
}

impl PlainUsers {
    /// The `user_<name>` options of a `PlainLoginModule` entry (none from any other module,
    /// as Java looks only in that module's options).
    pub fn from_jaas(entry: &JaasEntry) -> PlainUsers {
        let users = if entry.login_module == PLAIN_LOGIN_MODULE {
            entry
                .options
                .iter()
                .filter_map(|(key, value)| {
                    let name = key.as_deref()?.strip_prefix(USER_PREFIX)?;
                    Some((name.to_string(), value.clone()))
                })
                .collect()
        } else {
            HashMap::new()
        };
        PlainUsers { users }
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Checks a client's token; the authenticated user's name.
    pub fn authenticate(&self, token: &[u8]) -> Result<String, PlainError> {
        let token = parse_token(token)?;
        if token.username.is_empty() {
            return Err(PlainError::NoUsername);
        }
        if token.password.expose().is_empty() {
            return Err(PlainError::NoPassword);
        }
        let known = self
            .users
            .get(&token.username)
            .is_some_and(|expected| constant_time_eq(expected.expose(), token.password.expose()));
        if !known {
            return Err(PlainError::InvalidCredentials);
        }
        if !token.authorization_id.is_empty() && token.authorization_id != token.username {
            return Err(PlainError::OtherAuthorizationId);
        }
        Ok(token.username)
    }
}

/// Equality whose time does not depend on where the first difference is.
fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::sasl::jaas::JaasConfig;

    fn users() -> PlainUsers {
        let c = JaasConfig::parse(&format!(
            "{PLAIN_LOGIN_MODULE} required user_alice=\"a-pw\" user_bob=\"b-pw\" username=\"x\";"
        ))
        .unwrap();
        PlainUsers::from_jaas(&c.entries[0])
    }

    #[test]
    fn tokens_split_as_java_splits_them() {
        assert_eq!(parse_token(b"").err(), Some(PlainError::TokenCount(1)));
        assert_eq!(parse_token(b"a\0b").err(), Some(PlainError::TokenCount(2)));
        assert_eq!(
            parse_token(b"a\0b\0c\0").err(),
            Some(PlainError::TokenCount(4))
        );
        assert_eq!(
            parse_token(b"\0\0\0\0\0\0").err(),
            Some(PlainError::TokenCount(4))
        );
        let t = parse_token(b"z\0alice\0p\xffw").unwrap();
        assert_eq!(
            (t.authorization_id.as_str(), t.username.as_str()),
            ("z", "alice")
        );
        assert_eq!(t.password.expose(), "p\u{fffd}w");
    }

    #[test]
    fn checks_in_javas_order() {
        let u = users();
        assert_eq!(u.authenticate(b"\0alice\0a-pw"), Ok("alice".to_string()));
        assert_eq!(
            u.authenticate(b"alice\0alice\0a-pw"),
            Ok("alice".to_string())
        );
        assert_eq!(u.authenticate(b"\0\0a-pw"), Err(PlainError::NoUsername));
        assert_eq!(u.authenticate(b"\0alice\0"), Err(PlainError::NoPassword));
        assert_eq!(
            u.authenticate(b"\0alice\0b-pw"),
            Err(PlainError::InvalidCredentials)
        );
        assert_eq!(
            u.authenticate(b"\0carol\0x"),
            Err(PlainError::InvalidCredentials)
        );
        // `username` is the client's option, not a user.
        assert_eq!(
            u.authenticate(b"\0name\0x"),
            Err(PlainError::InvalidCredentials)
        );
        assert_eq!(
            u.authenticate(b"bob\0alice\0a-pw"),
            Err(PlainError::OtherAuthorizationId)
        );
        // The credentials are checked before the authorization id.
        assert_eq!(
            u.authenticate(b"bob\0alice\0no"),
            Err(PlainError::InvalidCredentials)
        );
        assert_eq!(
            client_token("alice", &Password::new("a-pw")),
            b"\0alice\0a-pw"
        );
    }

    #[test]
    fn only_the_plain_module_holds_users() {
        let c = JaasConfig::parse("other.Module required user_alice=\"a\";").unwrap();
        assert!(PlainUsers::from_jaas(&c.entries[0]).is_empty());
        assert!(!format!("{:?}", users()).contains("pw"));
    }
}
