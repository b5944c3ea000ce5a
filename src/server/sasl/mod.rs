//! SASL on controller listeners (SASL_PLAINTEXT and SASL_SSL) and on the connections kraftd
//! opens, with Kafka 4.4's semantics:
//!
//! - `jaas`: `sasl.jaas.config` values, parsed as Kafka's `JaasConfig` parses them;
//! - `plain`: the PLAIN mechanism, server and client;
//! - `settings`: the `sasl.*` keys of each listener and of outbound connections;
//! - `server`: one connection's authentication, a pure state machine (frames in, replies and
//!   actions out, time as an argument) with Kafka's `SaslServerAuthenticator` semantics, and
//!   KIP-368 re-authentication;
//! - `client`: the client side, for raft and the controller channel.
//!
//! - `scram`: SCRAM-SHA-256 and SCRAM-SHA-512, server (against the committed credentials of
//!   the metadata image) and client.
//!
//! Mechanisms are dispatched through [`Mechanism`], [`server::Exchange`] and
//! [`client::ClientExchange`].

pub mod client;
pub mod jaas;
pub mod plain;
pub mod scram;
pub mod server;
pub mod settings;

#[cfg(test)]
mod server_tests;

use std::fmt;

/// A SASL mechanism by its IANA name, as `sasl.enabled.mechanisms` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

/// Mechanisms Kafka has that kraftd does not: naming one is a start-up error.
pub const UNSUPPORTED_MECHANISMS: &[&str] = &["GSSAPI", "OAUTHBEARER"];

impl Mechanism {
    pub const ALL: [Mechanism; 3] = [
        Mechanism::Plain,
        Mechanism::ScramSha256,
        Mechanism::ScramSha512,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism of this exact (case-sensitive, as in Java) name.
    pub fn from_name(name: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The login module whose JAAS options configure this mechanism.
    pub fn login_module(self) -> &'static str {
        match self {
            Mechanism::Plain => plain::PLAIN_LOGIN_MODULE,
            Mechanism::ScramSha256 | Mechanism::ScramSha512 => SCRAM_LOGIN_MODULE,
        }
    }

    /// The SCRAM variant this mechanism is (`None`: PLAIN).
    pub fn scram(self) -> Option<scram::ScramMechanism> {
        match self {
            Mechanism::Plain => None,
            Mechanism::ScramSha256 => Some(scram::ScramMechanism::Sha256),
            Mechanism::ScramSha512 => Some(scram::ScramMechanism::Sha512),
        }
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `org.apache.kafka.common.security.scram.ScramLoginModule`.
pub const SCRAM_LOGIN_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";

/// Java's `String.hashCode` (over UTF-16 code units).
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The order `new ArrayList<>(new HashSet<>(names))` lists `names` in: Kafka's server keeps
/// its enabled mechanisms so, and sends them in that order in SaslHandshake answers.
/// Duplicates go; the rest are ordered by hash bucket of a table sized for them, then by
/// insertion within a bucket.
pub fn java_hash_set_order(names: &[String]) -> Vec<String> {
    let mut unique: Vec<&String> = Vec::new();
    for n in names {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    // HashSet(Collection): capacity max(size / .75 + 1, 16), rounded up to a power of two.
    let wanted = ((names.len() as f32 / 0.75) as usize + 1).max(16);
    let buckets = wanted.next_power_of_two();
    let bucket = |s: &str| {
        let h = java_string_hash(s) as u32;
        ((h ^ (h >> 16)) as usize) & (buckets - 1)
    };
    let mut ordered: Vec<(usize, usize, &String)> = unique
        .into_iter()
        .enumerate()
        .map(|(i, n)| (bucket(n), i, n))
        .collect();
    ordered.sort();
    ordered.into_iter().map(|(.., n)| n.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hashes() {
        // Values from Java's "PLAIN".hashCode() etc.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("PLAIN"), 76_210_602);
        assert_eq!(java_string_hash("a"), 97);
    }

    #[test]
    fn hash_set_order_is_javas() {
        // Each expectation printed by `new ArrayList<>(new HashSet<>(List.of(...)))` on Java 17.
        let order = |v: &[&str]| {
            let names: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            java_hash_set_order(&names)
        };
        assert_eq!(order(&["PLAIN", "PLAIN"]), ["PLAIN"]);
        assert_eq!(
            order(&["SCRAM-SHA-512", "PLAIN", "SCRAM-SHA-256"]),
            ["SCRAM-SHA-512", "PLAIN", "SCRAM-SHA-256"]
        );
        // PLAIN and SCRAM-SHA-512 share a bucket: the order given decides between them.
        assert_eq!(
            order(&["SCRAM-SHA-256", "PLAIN", "SCRAM-SHA-512"]),
            ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]
        );
        assert_eq!(
            order(&[
                "PLAIN",
                "GSSAPI",
                "OAUTHBEARER",
                "SCRAM-SHA-256",
                "SCRAM-SHA-512"
            ]),
            [
                "PLAIN",
                "SCRAM-SHA-512",
                "GSSAPI",
                "SCRAM-SHA-256",
                "OAUTHBEARER"
            ]
        );
        let letters: Vec<&str> = vec![
            "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q",
            "R",
        ];
        assert_eq!(order(&letters), letters);
        assert_eq!(order(&["BB", "Aa", "x"]), ["BB", "Aa", "x"]);
    }

    #[test]
    fn mechanism_names() {
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::from_name(m.name()), Some(m));
        }
        assert_eq!(Mechanism::from_name("plain"), None);
    }
}
