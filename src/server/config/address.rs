//! Network-shaped values: `NAME://host:port` listeners, `host:port` addresses, `id@host:port`
//! voters, and the `NAME:PROTOCOL` security protocol map. Host syntax follows Kafka's
//! (letters, digits, `-%._:`; IPv6 in brackets, or bare with the port after the last colon).

use std::collections::BTreeMap;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::error::ConfigError;
use super::values::{parse_list, trim_java};

/// A listener: where the node binds (`listeners`) or what it tells others (`advertised.listeners`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Upper-cased, as Kafka normalises listener names.
    pub listener_name: String,
    /// Empty means "all interfaces" when binding; IPv6 literals are stored without brackets.
    pub host: String,
    /// 0 means "any free port" when binding.
    pub port: u16,
}

/// A `host:port` address of another node (voters, bootstrap servers).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

/// One static voter from `controller.quorum.voters`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QuorumVoter {
    pub id: i32,
    pub address: HostPort,
}

/// Kafka's security protocols. kraftd serves only `Plaintext` so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecurityProtocol {
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    pub const ALL: [SecurityProtocol; 4] = [
        SecurityProtocol::Plaintext,
        SecurityProtocol::Ssl,
        SecurityProtocol::SaslPlaintext,
        SecurityProtocol::SaslSsl,
    ];

    /// Kafka's name, also its wire id order (0, 1, 2, 3).
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    /// Kafka's wire id (`SecurityProtocol.id`), used in broker registrations.
    pub fn id(self) -> i16 {
        self as i16
    }

    /// Case-insensitive, like Kafka's `SecurityProtocol.forName`.
    pub fn from_name(s: &str) -> Option<SecurityProtocol> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn fmt_host(f: &mut fmt::Formatter<'_>, host: &str) -> fmt::Result {
    if host.contains(':') {
        write!(f, "[{host}]")
    } else {
        f.write_str(host)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.listener_name)?;
        fmt_host(f, &self.host)?;
        write!(f, ":{}", self.port)
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_host(f, &self.host)?;
        write!(f, ":{}", self.port)
    }
}

impl fmt::Display for QuorumVoter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, self.address)
    }
}

fn valid_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '%' | '.' | '_' | ':')
}

/// Splits `host:port`, `[v6]:port` or bare `v6:port` (last colon) into host and port text.
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return host.contains(':').then_some((host, port));
    }
    let (host, port) = s.rsplit_once(':')?;
    Some((host, port))
}

fn parse_port(s: &str) -> Option<u16> {
    // Digits only: no sign, no blanks, so "+80" and "-1" are rejected.
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// One `NAME://host:port` entry of `listeners` or `advertised.listeners`.
pub fn parse_endpoint(key: &str, entry: &str) -> Result<Endpoint, ConfigError> {
    const EXPECTED: &str = "NAME://host:port with a port from 0 to 65535, e.g. \
        CONTROLLER://localhost:9093 (an empty host binds all interfaces; IPv6 in brackets)";
    let bad = || ConfigError::invalid(key, entry, EXPECTED);
    let (name, address) = entry.split_once("://").ok_or_else(bad)?;
    let (host, port) = split_host_port(address).ok_or_else(bad)?;
    if name.is_empty() || !host.chars().all(valid_host_char) {
        return Err(bad());
    }
    Ok(Endpoint {
        listener_name: name.to_ascii_uppercase(),
        host: host.to_owned(),
        port: parse_port(port).ok_or_else(bad)?,
    })
}

/// A `host:port` of a remote node: the host must be present and the port from 1 to 65535.
pub fn parse_host_port(key: &str, entry: &str, example: &str) -> Result<HostPort, ConfigError> {
    let expected = format!(
        "host:port with a non-empty host and a port from 1 to 65535, e.g. {example} \
         (IPv6 in brackets)"
    );
    let bad = || ConfigError::invalid(key, entry, expected.clone());
    let (host, port) = split_host_port(entry).ok_or_else(bad)?;
    if host.is_empty() || !host.chars().all(valid_host_char) {
        return Err(bad());
    }
    match parse_port(port) {
        Some(port) if port > 0 => Ok(HostPort {
            host: host.to_owned(),
            port,
        }),
        _ => Err(bad()),
    }
}

/// One `id@host:port` entry of `controller.quorum.voters`.
pub fn parse_voter(key: &str, entry: &str) -> Result<QuorumVoter, ConfigError> {
    const EXAMPLE: &str = "1@localhost:9093";
    let bad_shape = || {
        ConfigError::invalid(
            key,
            entry,
            format!("id@host:port with a non-negative id, e.g. {EXAMPLE}"),
        )
    };
    let mut parts = entry.split('@');
    let (Some(id), Some(address), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad_shape());
    };
    let id = match parse_port_like_id(id) {
        Some(id) => id,
        None => return Err(bad_shape()),
    };
    let address = parse_host_port(key, address, EXAMPLE).map_err(|_| {
        ConfigError::invalid(
            key,
            entry,
            format!(
                "id@host:port with a non-empty host and a port from 1 to 65535, e.g. {EXAMPLE}"
            ),
        )
    })?;
    // Java rejects the wildcard address for voters when it connects; say so up front.
    if address.host == "0.0.0.0" || address.host == "::" {
        return Err(ConfigError::invalid(
            key,
            entry,
            "a routable voter address: 0.0.0.0 and :: cannot be connected to",
        ));
    }
    Ok(QuorumVoter { id, address })
}

fn parse_port_like_id(s: &str) -> Option<i32> {
    let s = trim_java(s);
    s.parse::<i32>().ok().filter(|id| *id >= 0)
}

/// `listener.security.protocol.map`: `NAME:PROTOCOL,...`. Names are upper-cased; a name given
/// twice keeps the last protocol (as Kafka does).
pub fn parse_protocol_map(
    key: &str,
    raw: &str,
) -> Result<BTreeMap<String, SecurityProtocol>, ConfigError> {
    let mut map = BTreeMap::new();
    for item in parse_list(key, raw)? {
        let (name, proto) = item.split_once(':').ok_or_else(|| {
            ConfigError::invalid(
                key,
                raw,
                "a comma-separated list of NAME:PROTOCOL, e.g. CONTROLLER:PLAINTEXT",
            )
        })?;
        let (name, proto) = (trim_java(name), trim_java(proto));
        let proto = SecurityProtocol::from_name(proto).ok_or_else(|| {
            ConfigError::invalid(
                key,
                raw,
                format!("security protocols among PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL (got '{proto}')"),
            )
        })?;
        if name.is_empty() {
            return Err(ConfigError::invalid(
                key,
                raw,
                "a listener name before each ':'",
            ));
        }
        map.insert(name.to_ascii_uppercase(), proto);
    }
    Ok(map)
}

/// Two listeners may share a port only as an IPv4 + IPv6 pair (Kafka's rule).
pub fn ports_may_be_shared(a: &Endpoint, b: &Endpoint) -> bool {
    let v4 = |h: &str| h.parse::<Ipv4Addr>().is_ok();
    let v6 = |h: &str| h.parse::<Ipv6Addr>().is_ok();
    (v4(&a.host) && v6(&b.host)) || (v6(&a.host) && v4(&b.host))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg<T: fmt::Debug>(r: Result<T, ConfigError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn endpoints() {
        let e = parse_endpoint("listeners", "controller://127.0.0.1:9093").unwrap();
        assert_eq!(
            e,
            Endpoint {
                listener_name: "CONTROLLER".into(),
                host: "127.0.0.1".into(),
                port: 9093
            }
        );
        assert_eq!(e.to_string(), "CONTROLLER://127.0.0.1:9093");
        let any = parse_endpoint("listeners", "C://:0").unwrap();
        assert_eq!((any.host.as_str(), any.port), ("", 0));
        let v6 = parse_endpoint("listeners", "C://[::1]:9093").unwrap();
        assert_eq!(v6.host, "::1");
        assert_eq!(v6.to_string(), "C://[::1]:9093");
        assert_eq!(
            parse_endpoint("listeners", "C://::1:9093").unwrap().host,
            "::1"
        );
        assert_eq!(
            parse_endpoint("listeners", "C://my-host.example_x:1")
                .unwrap()
                .host,
            "my-host.example_x"
        );
        for bad in [
            "C:/h:1",
            "://h:1",
            "C://h",
            "C://h:",
            "C://h:70000",
            "C://h:-1",
            "C://a b:1",
            "C://[h:1",
            "C://[v4]:1",
        ] {
            let m = msg(parse_endpoint("listeners", bad));
            assert!(
                m.starts_with(&format!(
                    "invalid value '{bad}' for listeners: expected NAME://host:port"
                )),
                "{m}"
            );
        }
    }

    #[test]
    fn host_ports() {
        let hp = parse_host_port("b", "[::1]:9093", "h:1").unwrap();
        assert_eq!(hp.to_string(), "[::1]:9093");
        for bad in ["h", ":9093", "h:0", "h:65536", "h:x", ""] {
            assert!(parse_host_port("b", bad, "h:1").is_err(), "{bad}");
        }
    }

    #[test]
    fn voters() {
        let v = parse_voter("controller.quorum.voters", "3@host-3:19095").unwrap();
        assert_eq!(
            (v.id, v.address.host.as_str(), v.address.port),
            (3, "host-3", 19095)
        );
        assert_eq!(v.to_string(), "3@host-3:19095");
        assert_eq!(
            parse_voter("v", "1@[::1]:9093").unwrap().address.host,
            "::1"
        );
        for bad in [
            "x@h:1",
            "-1@h:1",
            "1@h",
            "1@h:0",
            "1@:1",
            "1@a@b:1",
            "h:1",
            "1@0.0.0.0:9093",
        ] {
            let m = msg(parse_voter("controller.quorum.voters", bad));
            assert!(
                m.starts_with(&format!(
                    "invalid value '{bad}' for controller.quorum.voters"
                )),
                "{m}"
            );
        }
    }

    #[test]
    fn protocol_map() {
        let m = parse_protocol_map("m", " controller : plaintext , SSL:SSL,CONTROLLER:SASL_SSL")
            .unwrap();
        assert_eq!(
            m["CONTROLLER"],
            SecurityProtocol::SaslSsl,
            "last duplicate wins"
        );
        assert_eq!(m["SSL"], SecurityProtocol::Ssl);
        assert!(msg(parse_protocol_map("m", "C:BOGUS")).contains("got 'BOGUS'"));
        assert!(parse_protocol_map("m", "CPLAINTEXT").is_err());
        assert!(parse_protocol_map("m", ":PLAINTEXT").is_err());
        assert_eq!(SecurityProtocol::SaslSsl.id(), 3);
    }

    #[test]
    fn shared_ports() {
        let e = |h: &str| Endpoint {
            listener_name: "A".into(),
            host: h.into(),
            port: 1,
        };
        assert!(ports_may_be_shared(&e("127.0.0.1"), &e("::1")));
        assert!(!ports_may_be_shared(&e(""), &e("::1")));
        assert!(!ports_may_be_shared(&e("127.0.0.1"), &e("127.0.0.2")));
    }
}
