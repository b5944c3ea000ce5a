//! The client side of SASL, for the connections kraftd opens to other controllers (raft, the
//! controller channel, bootstrap and AddRaftVoter probes): after the ApiVersions exchange, a
//! SaslHandshake v1 naming `sasl.mechanism.controller.protocol`, then SaslAuthenticate
//! requests until the mechanism is done, as Kafka's `SaslClientAuthenticator` does.
//!
//! The exchange itself ([`ClientExchange`]) is pure; [`authenticate`] runs it on a stream.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::plain;
use super::scram::{java_nonce, ScramClient};
use super::settings::ClientSasl;
use super::Mechanism;
use crate::protocol::codec::{ApiMessage, Message, Reader};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame::{encode_request, response_header_version};
use crate::protocol::messages::{
    ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};

/// SASL answers are small; anything larger is not one.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Why a connection could not authenticate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("the peer does not serve {0}: its listener is not a SASL one; map it to SASL_PLAINTEXT or SASL_SSL on both sides")]
    NotServed(&'static str),
    #[error("the peer does not enable SASL mechanism {mechanism} (it enables {}); set sasl.mechanism.controller.protocol to one of them", enabled.join(","))]
    UnsupportedMechanism {
        mechanism: Mechanism,
        enabled: Vec<String>,
    },
    #[error("the peer refused the SaslHandshake with {0}")]
    Handshake(&'static str),
    #[error("authentication with {mechanism} failed: {message}; check username and password in the JAAS options")]
    Refused {
        mechanism: Mechanism,
        message: String,
    },
    #[error("the peer answered a {mechanism} exchange that was already complete")]
    Unexpected { mechanism: Mechanism },
    #[error("{0}")]
    Io(String),
}

/// A client's side of one mechanism's exchange.
pub enum ClientExchange {
    /// PLAIN: one token, then done.
    Plain { sent: bool, token: Vec<u8> },
    /// SCRAM: the client-first message, the answer to the server-first one, then the
    /// server's signature checked.
    Scram {
        sent_first: bool,
        client: Box<ScramClient>,
    },
}

impl ClientExchange {
    /// An exchange as `settings` say; `random`: fresh randomness for a SCRAM nonce.
    pub fn new(settings: &ClientSasl, random: [u8; 17]) -> ClientExchange {
        match settings.mechanism.scram() {
            None => ClientExchange::Plain {
                sent: false,
                token: plain::client_token(&settings.username, &settings.password),
            },
            Some(scram) => ClientExchange::Scram {
                sent_first: false,
                client: Box::new(ScramClient::new(
                    scram,
                    &settings.username,
                    settings.password.clone(),
                    java_nonce(random),
                )),
            },
        }
    }

    /// The next token to send given the server's last answer (`None` before the first); `None`
    /// once the exchange is complete.
    pub fn next(
        &mut self,
        mechanism: Mechanism,
        server: Option<&[u8]>,
    ) -> Result<Option<Vec<u8>>, ClientError> {
        match self {
            ClientExchange::Plain { sent, token } => match (server, *sent) {
                (None, false) => {
                    *sent = true;
                    Ok(Some(std::mem::take(token)))
                }
                (Some(_), true) => Ok(None),
                _ => Err(ClientError::Unexpected { mechanism }),
            },
            ClientExchange::Scram { sent_first, client } => match (server, *sent_first) {
                (None, false) => {
                    *sent_first = true;
                    Ok(Some(client.first_message()))
                }
                (Some(_), true) if client.is_complete() => {
                    Err(ClientError::Unexpected { mechanism })
                }
                (Some(answer), true) => {
                    let refused = |e: super::scram::ScramError| ClientError::Refused {
                        mechanism,
                        message: e.to_string(),
                    };
                    if client.awaits_server_final() {
                        client.handle_server_final(answer).map_err(refused)?;
                        Ok(None)
                    } else {
                        client
                            .handle_server_first(answer)
                            .map(Some)
                            .map_err(refused)
                    }
                }
                _ => Err(ClientError::Unexpected { mechanism }),
            },
        }
    }
}

/// The versions of SaslHandshake and SaslAuthenticate to send, from the peer's ApiVersions
/// ranges (`None`: not served).
pub fn versions(served: impl Fn(i16) -> Option<(i16, i16)>) -> Result<(i16, i16), ClientError> {
    let pick = |key: i16, ours: i16, name: &'static str| {
        served(key)
            .filter(|(min, max)| *min <= ours.min(*max))
            .map(|(_, max)| ours.min(max))
            .ok_or(ClientError::NotServed(name))
    };
    Ok((
        pick(
            SaslHandshakeRequest::API_KEY,
            SaslHandshakeRequest::HIGHEST_VERSION,
            "SaslHandshake",
        )?,
        pick(
            SaslAuthenticateRequest::API_KEY,
            SaslAuthenticateRequest::HIGHEST_VERSION,
            "SaslAuthenticate",
        )?,
    ))
}

/// What an authentication gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Session {
    /// The correlation id the connection's next request should use.
    pub next_correlation: i32,
    /// KIP-368: the server ends the session after this long (`None`: never).
    pub lifetime: Option<Duration>,
}

/// Authenticates a connection whose ApiVersions exchange is done; `versions` from
/// [`versions`]. Requests use correlation ids from `correlation` on.
pub async fn authenticate<R, W>(
    reader: &mut R,
    writer: &mut W,
    settings: &ClientSasl,
    (handshake_version, authenticate_version): (i16, i16),
    client_id: &str,
    mut correlation: i32,
) -> Result<Session, ClientError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mechanism = settings.mechanism;
    let handshake = SaslHandshakeRequest {
        mechanism: mechanism.name().to_string(),
        ..Default::default()
    };
    let answer: SaslHandshakeResponse = exchange(
        reader,
        writer,
        (handshake_version, correlation),
        client_id,
        &handshake,
    )
    .await?;
    correlation = correlation.wrapping_add(1);
    match ErrorCode(answer.error_code) {
        ErrorCode::NONE => {}
        ErrorCode::UNSUPPORTED_SASL_MECHANISM => {
            return Err(ClientError::UnsupportedMechanism {
                mechanism,
                enabled: answer.mechanisms,
            })
        }
        other => return Err(ClientError::Handshake(other.name())),
    }
    let mut client = ClientExchange::new(settings, rand::random());
    let mut server: Option<Vec<u8>> = None;
    let mut lifetime = 0;
    while let Some(token) = client.next(mechanism, server.as_deref())? {
        let request = SaslAuthenticateRequest {
            auth_bytes: token,
            ..Default::default()
        };
        let answer: SaslAuthenticateResponse = exchange(
            reader,
            writer,
            (authenticate_version, correlation),
            client_id,
            &request,
        )
        .await?;
        correlation = correlation.wrapping_add(1);
        if answer.error_code != ErrorCode::NONE.0 {
            return Err(ClientError::Refused {
                mechanism,
                message: answer
                    .error_message
                    .unwrap_or_else(|| ErrorCode(answer.error_code).name().to_string()),
            });
        }
        lifetime = answer.session_lifetime_ms;
        server = Some(answer.auth_bytes);
    }
    Ok(Session {
        next_correlation: correlation,
        lifetime: (lifetime > 0).then(|| Duration::from_millis(lifetime as u64)),
    })
}

/// Sends `request` and reads its answer.
async fn exchange<Req, Resp, R, W>(
    reader: &mut R,
    writer: &mut W,
    (version, correlation): (i16, i32),
    client_id: &str,
    request: &Req,
) -> Result<Resp, ClientError>
where
    Req: Message + ApiMessage,
    Resp: Message,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let io = |e: std::io::Error| ClientError::Io(format!("SASL exchange: {e}"));
    let frame = encode_request(Req::API_KEY, version, correlation, Some(client_id), request)
        .map_err(|e| ClientError::Io(e.to_string()))?;
    writer.write_all(&frame).await.map_err(io)?;
    writer.flush().await.map_err(io)?;
    let size = reader.read_i32().await.map_err(io)?;
    let size = usize::try_from(size)
        .ok()
        .filter(|s| *s <= MAX_ANSWER_BYTES)
        .ok_or_else(|| ClientError::Io(format!("invalid SASL answer size {size}")))?;
    let mut answer = vec![0; size];
    reader.read_exact(&mut answer).await.map_err(io)?;
    let mut r = Reader::new(&answer);
    let header = ResponseHeader::decode(&mut r, response_header_version(Req::API_KEY, version))
        .map_err(|e| ClientError::Io(format!("bad SASL answer header: {e}")))?;
    if header.correlation_id != correlation {
        return Err(ClientError::Io(format!(
            "SASL answer has correlation id {}, not {correlation}",
            header.correlation_id
        )));
    }
    Resp::decode_exact(r.rest(), version)
        .map_err(|e| ClientError::Io(format!("malformed SASL answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::config::Password;

    fn settings() -> ClientSasl {
        ClientSasl {
            mechanism: Mechanism::Plain,
            username: "admin".into(),
            password: Password::new("pw"),
        }
    }

    #[test]
    fn plain_sends_one_token_then_is_done() {
        let mut c = ClientExchange::new(&settings(), [0; 17]);
        assert_eq!(
            c.next(Mechanism::Plain, None).unwrap(),
            Some(b"\0admin\0pw".to_vec())
        );
        assert_eq!(c.next(Mechanism::Plain, Some(b"")).unwrap(), None);
        assert!(c.next(Mechanism::Plain, None).is_err());
    }

    /// kraftd's SCRAM client against kraftd's SCRAM server, as the two run on a SASL listener:
    /// client-first, server-first, client-final, server-final, then done on both sides.
    fn scram_exchange(password: &str) -> Result<String, String> {
        use super::super::scram::{credential_for, ScramCredentials, ScramMechanism, ScramServer};
        use super::super::server::{Exchange, ExchangeStep};
        let credential = credential_for(
            ScramMechanism::Sha512,
            "controller-secret",
            b"salt-17",
            4096,
        )
        .unwrap();
        let credentials =
            ScramCredentials::default().with(ScramMechanism::Sha512, "controller", credential);
        let mut server = Exchange::Scram(Box::new(ScramServer::new(
            ScramMechanism::Sha512,
            std::sync::Arc::new(credentials),
            "servernonce".into(),
        )));
        let settings = ClientSasl {
            mechanism: Mechanism::ScramSha512,
            username: "controller".into(),
            password: Password::new(password),
        };
        let mechanism = Mechanism::ScramSha512;
        let mut client = ClientExchange::new(&settings, [7; 17]);
        let mut answer: Option<Vec<u8>> = None;
        let mut user = None;
        while let Some(token) = client
            .next(mechanism, answer.as_deref())
            .map_err(|e| e.to_string())?
        {
            match server.step(&token).map_err(|e| format!("{e:?}"))? {
                ExchangeStep::Challenge(c) => answer = Some(c),
                ExchangeStep::Done { reply, user: u, .. } => {
                    answer = Some(reply);
                    user = Some(u);
                }
            }
        }
        user.ok_or_else(|| "the client finished before the server".to_string())
    }

    #[test]
    fn scram_client_and_server_agree_on_the_password_and_only_on_it() {
        assert_eq!(scram_exchange("controller-secret"), Ok("controller".into()));
        let refused = scram_exchange("wrong").unwrap_err();
        assert!(refused.contains("InvalidCredentials"), "{refused}");
    }

    #[test]
    fn versions_are_the_highest_both_speak() {
        let served = |key| match key {
            17 => Some((0, 1)),
            36 => Some((0, 2)),
            _ => None,
        };
        assert_eq!(versions(served), Ok((1, 2)));
        assert_eq!(
            versions(|key| (key == 17).then_some((0, 1))),
            Err(ClientError::NotServed("SaslAuthenticate"))
        );
    }
}
