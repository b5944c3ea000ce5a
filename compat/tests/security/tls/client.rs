//! The test's side of a connection to an SSL listener: raw TCP (to send what a TLS client would
//! not), or rustls as a given certificate or as none; and what it saw of the listener's answer.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::ApiVersionsRequest;
use rustls::pki_types::ServerName;
use rustls::{AlertDescription, ClientConnection, StreamOwned};

use crate::harness::pki::Identity;
use crate::harness::transport::client_config_as;

/// How a connection ended, as a client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seen {
    /// A TLS alert record, then the connection closed.
    Alert(String),
    /// Bytes that are no TLS alert (a Kafka answer, say), then the connection closed.
    Bytes(Vec<u8>),
    /// Closed without a word (FIN).
    Closed,
    /// Reset (RST).
    Reset,
    /// Still open when the client stopped waiting.
    Open,
    /// The request was answered: the connection was not refused.
    Answered,
}

/// A connection the test opened, and its local port (which both controllers' log lines name).
pub(super) struct Opened {
    pub(super) local_port: u16,
    tcp: TcpStream,
}

/// The ApiVersions v3 request frame a Kafka client sends first.
pub(super) fn api_versions_frame() -> Vec<u8> {
    let request = ApiVersionsRequest {
        client_software_name: "compat-tls".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    encode_request(18, 3, 1, Some("compat-tls"), &request).expect("encodes")
}

/// The first `len` bytes of the ClientHello a rustls client (the harness's certificate) sends.
pub(super) fn client_hello_prefix(len: usize) -> Vec<u8> {
    let config = client_config_as(None);
    let mut conn = ClientConnection::new(config, ServerName::IpAddress(loopback(0).ip().into()))
        .expect("a client connection");
    let mut hello = Vec::new();
    conn.write_tls(&mut hello).expect("a ClientHello");
    hello.truncate(len);
    hello
}

pub(super) fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

impl Opened {
    pub(super) fn connect(port: u16) -> Opened {
        let tcp = TcpStream::connect_timeout(&loopback(port), Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("cannot connect to port {port}: {e}"));
        let local_port = tcp.local_addr().expect("a local address").port();
        Opened { local_port, tcp }
    }

    /// Sends `bytes` as they are.
    pub(super) fn send(&mut self, bytes: &[u8]) -> &mut Self {
        self.tcp
            .write_all(bytes)
            .expect("the listener takes the bytes");
        self
    }

    /// What the listener sends back and how it ends the connection, within `wait`.
    pub(super) fn seen(&mut self, wait: Duration) -> Seen {
        let deadline = Instant::now() + wait;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Seen::Open;
            }
            self.tcp
                .set_read_timeout(Some(left))
                .expect("a read timeout");
            match self.tcp.read(&mut buf) {
                Ok(0) => return ended_with(got, Seen::Closed),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    return ended_with(got, Seen::Reset)
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Seen::Open
                }
                Err(e) => panic!("reading from the listener: {e}"),
            }
        }
    }

    /// Whether the listener has closed the connection (without waiting).
    pub(super) fn is_closed(&mut self) -> bool {
        self.tcp.set_nonblocking(true).expect("non-blocking");
        let mut buf = [0u8; 512];
        let closed = loop {
            match self.tcp.read(&mut buf) {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                Err(_) => break true,
            }
        };
        self.tcp.set_nonblocking(false).expect("blocking");
        closed
    }

    /// A TLS handshake as `identity` (or with no certificate), then an ApiVersions request:
    /// what the client saw. TLS 1.3 clients finish their side before the server has checked
    /// their certificate, so a refusal shows as the request's answer.
    pub(super) fn tls_request(self, identity: Option<&Identity>, wait: Duration) -> Seen {
        let config = client_config_as(identity);
        let name = ServerName::IpAddress(loopback(0).ip().into());
        let conn = ClientConnection::new(Arc::clone(&config), name).expect("a client");
        self.tcp
            .set_read_timeout(Some(wait))
            .expect("a read timeout");
        let mut tls = StreamOwned::new(conn, self.tcp);
        while tls.conn.is_handshaking() {
            if let Err(e) = tls.conn.complete_io(&mut tls.sock) {
                return from_error(&e);
            }
        }
        if let Err(e) = tls.write_all(&api_versions_frame()) {
            return from_error(&e);
        }
        let mut size = [0u8; 4];
        match tls.read_exact(&mut size) {
            Ok(()) => Seen::Answered,
            Err(e) => from_error(&e),
        }
    }
}

fn ended_with(got: Vec<u8>, end: Seen) -> Seen {
    match got.as_slice() {
        [] => end,
        // An alert record: content type 21, version, length 2, level, description.
        [0x15, 0x03, _, 0x00, 0x02, _, description] => {
            Seen::Alert(format!("{:?}", AlertDescription::from(*description)))
        }
        _ => Seen::Bytes(got),
    }
}

fn from_error(e: &std::io::Error) -> Seen {
    if let Some(rustls::Error::AlertReceived(alert)) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return Seen::Alert(format!("{alert:?}"));
    }
    match e.kind() {
        ErrorKind::UnexpectedEof => Seen::Closed,
        ErrorKind::ConnectionReset | ErrorKind::BrokenPipe => Seen::Reset,
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Seen::Open,
        _ => panic!("unexpected client error: {e}"),
    }
}
