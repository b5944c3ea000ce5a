//! Who sent a request, as the controller's authorizer sees it (Kafka's `KafkaPrincipal` plus
//! the client's address from the `AuthorizableRequestContext`). A forwarded request carries the
//! principal and address the broker put in its Envelope; a direct one is the connection's.

use std::fmt;
use std::net::IpAddr;

use crate::protocol::codec::{Message, Reader};
use crate::protocol::messages::DefaultPrincipalData;

/// The principal a request is authorized as, with the address it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPrincipal {
    /// `User` for every principal Kafka's default builder makes.
    pub principal_type: String,
    pub name: String,
    /// Authenticated with a delegation token (on the forwarding broker).
    pub token_authenticated: bool,
    /// The client's address (for ACL host matching).
    pub host: IpAddr,
}

impl RequestPrincipal {
    /// A PLAINTEXT connection's principal, and a TLS one's without a client certificate.
    pub fn anonymous(host: IpAddr) -> RequestPrincipal {
        RequestPrincipal::user("ANONYMOUS".to_string(), host)
    }

    /// `User:<name>`, as Kafka's default principal builder names an authenticated client.
    pub fn user(name: String, host: IpAddr) -> RequestPrincipal {
        RequestPrincipal {
            principal_type: "User".to_string(),
            name,
            token_authenticated: false,
            host,
        }
    }

    /// The principal a broker forwarded in an Envelope, from `host`.
    pub fn forwarded(data: DefaultPrincipalData, host: IpAddr) -> RequestPrincipal {
        RequestPrincipal {
            principal_type: data.type_,
            name: data.name,
            token_authenticated: data.token_authenticated,
            host,
        }
    }
}

/// An Envelope's `ClientHostAddress`: 4 or 16 bytes.
pub fn client_address(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?)),
        16 => Some(IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?)),
        _ => None,
    }
}

/// `type:name`, as ACLs name principals.
impl fmt::Display for RequestPrincipal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

/// Kafka's `DefaultKafkaPrincipalBuilder.deserialize`: an int16 version, then
/// `DefaultPrincipalData` at that version; bytes after it are ignored.
pub fn decode_principal(bytes: &[u8]) -> Option<DefaultPrincipalData> {
    let (version, rest) = bytes.split_first_chunk::<2>()?;
    let version = i16::from_be_bytes(*version);
    if !(DefaultPrincipalData::LOWEST_VERSION..=DefaultPrincipalData::HIGHEST_VERSION)
        .contains(&version)
    {
        return None;
    }
    DefaultPrincipalData::decode(&mut Reader::new(rest), version).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codec::Message;

    fn encoded(data: &DefaultPrincipalData) -> Vec<u8> {
        let mut bytes = 0i16.to_be_bytes().to_vec();
        bytes.extend(data.encode_to_vec(0).unwrap());
        bytes
    }

    /// What an Envelope carries, decoded as `envelope.rs` does.
    fn from_envelope(principal: Option<&[u8]>, address: &[u8]) -> Option<RequestPrincipal> {
        let data = decode_principal(principal?)?;
        Some(RequestPrincipal::forwarded(data, client_address(address)?))
    }

    #[test]
    fn an_envelope_names_the_client_principal_and_address() {
        let data = DefaultPrincipalData {
            type_: "User".into(),
            name: "alice".into(),
            token_authenticated: true,
            ..Default::default()
        };
        let p = from_envelope(Some(&encoded(&data)), &[10, 0, 0, 7]).unwrap();
        assert_eq!(p.to_string(), "User:alice");
        assert!(p.token_authenticated);
        assert_eq!(p.host, "10.0.0.7".parse::<IpAddr>().unwrap());
        let v6 = from_envelope(Some(&encoded(&data)), &[0; 16]).unwrap();
        assert_eq!(v6.host, "::".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn an_undecodable_principal_or_address_is_none() {
        let data = DefaultPrincipalData::default();
        assert_eq!(from_envelope(None, &[1, 2, 3, 4]), None);
        assert_eq!(from_envelope(Some(&[0]), &[1, 2, 3, 4]), None);
        let mut bad_version = encoded(&data);
        bad_version[1] = 9;
        assert_eq!(from_envelope(Some(&bad_version), &[1, 2, 3, 4]), None);
        assert_eq!(from_envelope(Some(&encoded(&data)), &[1, 2, 3]), None);
    }

    #[test]
    fn a_plaintext_connection_is_anonymous() {
        let p = RequestPrincipal::anonymous("127.0.0.1".parse().unwrap());
        assert_eq!(p.to_string(), "User:ANONYMOUS");
    }
}
