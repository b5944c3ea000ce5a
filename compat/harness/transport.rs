//! How a test cluster's controller listeners are secured, and the harness's own way in.
//!
//! A cluster on [`Transport::MutualTls`] runs its `CONTROLLER` listeners on SSL with
//! `ssl.client.auth=required`: every controller and broker presents a certificate of the suite's
//! CA ([`Pki`]), Java nodes from PKCS12 stores and kraftd from the format the test names. The
//! brokers' client listener stays PLAINTEXT (it is not under test). Principals are mapped to the
//! certificate's common name (`User:controller-1`, `User:broker-101`, `User:harness`) and each
//! is a super user wherever the cluster sets `super.users`.
//!
//! The harness reaches such listeners transparently: its raw probes (see `quorum_probe`) speak
//! TLS to every port registered here, and a Kafka tool given `--bootstrap-controller` with a
//! registered port gets a `--command-config` carrying the harness's TLS client settings (merged
//! with any `--command-config` the test passed).

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use kraftd::protocol::codec::Message;
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};

use super::pki::{Identity, Pki, StoreFormat, ORGANIZATION};
use super::quorum_probe::try_read_response;
use super::testdir::scratch_dir;

/// The name (and certificate common name) the harness's probes and tools present.
pub const HARNESS: &str = "harness";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Plaintext,
    /// SSL with required client certificates on every controller listener; kraftd's key and
    /// trust stores in this format.
    MutualTls {
        kraftd: PerNode<StoreFormat>,
    },
    /// SASL_SSL on every controller listener, with client certificates required too (Kafka's
    /// KIP-684: the listener's own `ssl.client.auth`), so the TLS under SASL is mutual: the
    /// brokers authenticate with `brokers`, the controllers to each other with PLAIN, and every
    /// node is `User:<role>` (see [`SASL_USERS`]).
    SaslSsl {
        kraftd: PerNode<StoreFormat>,
        brokers: PerNode<SaslMechanism>,
    },
}

/// A setting that is the same on every node, or that takes each entry of a list in turn by node
/// id (node `id` gets entry `(id - 1) mod len`), so that one cluster of consecutive ids covers
/// every entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerNode<T: 'static> {
    Every(T),
    InTurn(&'static [T]),
}

impl<T: Copy + PartialEq> PerNode<T> {
    /// Node `id`'s entry.
    pub fn of(self, id: i32) -> T {
        match self {
            PerNode::Every(t) => t,
            PerNode::InTurn(list) => list[(id - 1).rem_euclid(list.len() as i32) as usize],
        }
    }

    /// Every entry some node may get, each once, in the list's order.
    pub fn entries(self) -> Vec<T> {
        let all: &[T] = match &self {
            PerNode::Every(t) => std::slice::from_ref(t),
            PerNode::InTurn(list) => list,
        };
        let mut out = Vec::new();
        for t in all {
            if !out.contains(t) {
                out.push(*t);
            }
        }
        out
    }
}

/// The SASL mechanisms the brokers use towards the controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    /// Against the users of the controllers' PLAIN JAAS config.
    Plain,
    /// Against the credentials in the metadata image, which `--add-scram` puts there at format.
    ScramSha256,
    ScramSha512,
}

impl SaslMechanism {
    /// Every mechanism a controller listener takes from brokers.
    pub const ALL: [SaslMechanism; 3] = [
        SaslMechanism::Plain,
        SaslMechanism::ScramSha256,
        SaslMechanism::ScramSha512,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    fn login_module(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "org.apache.kafka.common.security.plain.PlainLoginModule",
            SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
                "org.apache.kafka.common.security.scram.ScramLoginModule"
            }
        }
    }
}

/// Which side of the controller listener a node is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A voter; `kraftd` says whether kraftd runs it (its stores take the test's format).
    Controller {
        kraftd: bool,
    },
    Broker,
}

impl Role {
    /// Node `id`'s name in this role, its certificate's common name (`controller-1`).
    pub fn node_name(self, id: i32) -> String {
        match self {
            Role::Controller { .. } => format!("controller-{id}"),
            Role::Broker => format!("broker-{id}"),
        }
    }
}

/// The SASL users and their passwords (test values: they protect nothing): the controllers,
/// the brokers and the harness's probes and tools.
pub const SASL_USERS: [(&str, &str); 3] = [
    ("controller", "controller-secret"),
    ("broker", "broker-secret"),
    (HARNESS, "harness-secret"),
];

fn sasl_password(user: &str) -> &'static str {
    SASL_USERS
        .iter()
        .find(|(u, _)| *u == user)
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("{user} is not one of SASL_USERS"))
}

/// The principals the suite's certificates map to: `controller-<id>` and `broker-<id>` to
/// `User:controller` and `User:broker`, any other name (e.g. [`HARNESS`]) to itself.
pub fn principal_mapping_rules() -> String {
    format!(
        "RULE:^CN=([a-z]+)-[0-9]+,O={ORGANIZATION}$/$1/,RULE:^CN=([^,]*),O={ORGANIZATION}$/$1/,DEFAULT"
    )
}

/// The mapped principals of a cluster's nodes and of the harness: super users on TLS.
pub const SUPER_USERS: [&str; 3] = ["User:controller", "User:broker", "User:harness"];

impl Transport {
    /// The settings node `id` of `role` gets over its others: the CONTROLLER listener's
    /// protocol, TLS and SASL, and `super_users` (the cluster's, if it sets any) extended by
    /// [`SUPER_USERS`].
    pub fn node_props(
        self,
        id: i32,
        role: Role,
        super_users: Option<&str>,
    ) -> Vec<(String, String)> {
        let format = match (self, role) {
            (Transport::Plaintext, _) => return Vec::new(),
            (
                Transport::MutualTls { kraftd } | Transport::SaslSsl { kraftd, .. },
                Role::Controller { kraftd: true },
            ) => kraftd.of(id),
            _ => StoreFormat::Pkcs12,
        };
        let pki = Pki::get();
        let prefix = "listener.name.controller.";
        let mut props = vec![
            (
                "listener.security.protocol.map".to_string(),
                format!(
                    "CONTROLLER:{},PLAINTEXT:PLAINTEXT",
                    self.controller_protocol()
                ),
            ),
            (format!("{prefix}ssl.client.auth"), "required".to_string()),
            (
                format!("{prefix}ssl.principal.mapping.rules"),
                principal_mapping_rules(),
            ),
        ];
        props.extend(pki.ssl_props(prefix, &pki.identity(&role.node_name(id)), format));
        if let Transport::SaslSsl { brokers, .. } = self {
            props.extend(sasl_props(id, role, brokers));
        }
        if let Some(users) = super_users {
            let all: Vec<&str> = users.split(';').chain(SUPER_USERS).collect();
            props.push(("super.users".to_string(), all.join(";")));
        }
        props
    }

    /// What every controller's format adds: the brokers' SCRAM credentials, for each SCRAM
    /// mechanism a broker uses.
    pub fn format_args(self) -> Vec<String> {
        let Transport::SaslSsl { brokers, .. } = self else {
            return Vec::new();
        };
        brokers
            .entries()
            .into_iter()
            .filter(|m| *m != SaslMechanism::Plain)
            .flat_map(|m| {
                [
                    "--add-scram".to_string(),
                    format!(
                        "{}=[name=broker,password={}]",
                        m.name(),
                        sasl_password("broker")
                    ),
                ]
            })
            .collect()
    }

    /// The CONTROLLER listener's security protocol.
    pub fn controller_protocol(self) -> &'static str {
        match self {
            Transport::Plaintext => "PLAINTEXT",
            Transport::MutualTls { .. } => "SSL",
            Transport::SaslSsl { .. } => "SASL_SSL",
        }
    }

    /// Marks these controller ports as secured this way, for the harness's probes and tools.
    pub fn register(self, ports: impl IntoIterator<Item = u16>) {
        if self != Transport::Plaintext {
            let mut secured = secured_ports();
            secured.extend(ports.into_iter().map(|p| (p, self)));
        }
    }
}

/// The controller listener's SASL settings for node `id` of `role`, broker `b` using
/// `brokers.of(b)`.
fn sasl_props(id: i32, role: Role, brokers: PerNode<SaslMechanism>) -> Vec<(String, String)> {
    let prefix = "listener.name.controller.";
    let jaas_key =
        |m: SaslMechanism| format!("{prefix}{}.sasl.jaas.config", m.name().to_ascii_lowercase());
    let login = |user: &str| format!("username=\"{user}\" password=\"{}\"", sasl_password(user));
    let plain = SaslMechanism::Plain;
    match role {
        Role::Broker => {
            let mine = brokers.of(id);
            vec![
                (
                    "sasl.mechanism.controller.protocol".to_string(),
                    mine.name().to_string(),
                ),
                (
                    jaas_key(mine),
                    format!("{} required {};", mine.login_module(), login("broker")),
                ),
            ]
        }
        Role::Controller { .. } => {
            let users: Vec<String> = SASL_USERS
                .iter()
                .map(|(u, p)| format!("user_{u}=\"{p}\""))
                .collect();
            let mut enabled = vec![plain];
            enabled.extend(brokers.entries().into_iter().filter(|m| *m != plain));
            let mut props = vec![
                (
                    format!("{prefix}sasl.enabled.mechanisms"),
                    enabled
                        .iter()
                        .map(|m| m.name())
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                (
                    "sasl.mechanism.controller.protocol".to_string(),
                    plain.name().to_string(),
                ),
                (
                    jaas_key(plain),
                    format!(
                        "{} required {} {};",
                        plain.login_module(),
                        login("controller"),
                        users.join(" ")
                    ),
                ),
            ];
            for scram in &enabled[1..] {
                props.push((
                    jaas_key(*scram),
                    format!("{} required;", scram.login_module()),
                ));
            }
            props
        }
    }
}

fn secured_ports() -> std::sync::MutexGuard<'static, BTreeMap<u16, Transport>> {
    // Ports are never handed out twice by one test binary (see `free_port`), so a port
    // registered here never belongs to a later PLAINTEXT listener.
    static PORTS: Mutex<BTreeMap<u16, Transport>> = Mutex::new(BTreeMap::new());
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// How the listener on `port` is secured (PLAINTEXT unless registered).
pub fn transport_of(port: u16) -> Transport {
    secured_ports()
        .get(&port)
        .copied()
        .unwrap_or(Transport::Plaintext)
}

/// A probe's connection: plain TCP, or TLS as the harness to a registered port.
pub enum ProbeStream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl ProbeStream {
    /// Connects to `addr` within `timeout`, with TLS if its port is registered; `None` if
    /// unreachable or the handshake fails.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Option<ProbeStream> {
        let transport = transport_of(addr.port());
        if transport == Transport::Plaintext {
            let tcp = TcpStream::connect_timeout(&addr, timeout).ok()?;
            return Some(ProbeStream::Plain(tcp));
        }
        let mut stream = Self::connect_tls(addr, timeout, client_config()).ok()?;
        if let Transport::SaslSsl { .. } = transport {
            sasl_plain_login(&mut stream)?;
        }
        Some(stream)
    }

    /// Connects to `addr` with TLS as `config` says and finishes the client's side of the
    /// handshake; the error rustls or the socket gave if that fails.
    pub fn connect_tls(
        addr: SocketAddr,
        timeout: Duration,
        config: Arc<rustls::ClientConfig>,
    ) -> std::io::Result<ProbeStream> {
        let tcp = TcpStream::connect_timeout(&addr, timeout)?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        let name = ServerName::IpAddress(addr.ip().into());
        let conn = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        // Finish the handshake now, so that a refusal shows as unreachable.
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        Ok(ProbeStream::Tls(Box::new(tls)))
    }

    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.tcp().set_read_timeout(timeout)
    }

    pub fn tcp(&self) -> &TcpStream {
        match self {
            ProbeStream::Plain(s) => s,
            ProbeStream::Tls(s) => &s.sock,
        }
    }
}

impl Read for ProbeStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            ProbeStream::Plain(s) => s.read(buf),
            ProbeStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for ProbeStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            ProbeStream::Plain(s) => s.write(buf),
            ProbeStream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            ProbeStream::Plain(s) => s.flush(),
            ProbeStream::Tls(s) => s.flush(),
        }
    }
}

/// Logs in over `s` as the harness with SASL/PLAIN (SaslHandshake v1, SaslAuthenticate v2);
/// `None` if the server refuses.
fn sasl_plain_login(s: &mut ProbeStream) -> Option<()> {
    const HANDSHAKE: (i16, i16) = (17, 1);
    const AUTHENTICATE: (i16, i16) = (36, 2);
    let timeout = Duration::from_secs(10);
    let handshake = SaslHandshakeRequest {
        mechanism: SaslMechanism::Plain.name().to_string(),
        ..Default::default()
    };
    let frame = encode_request(
        HANDSHAKE.0,
        HANDSHAKE.1,
        1,
        Some("compat-probe"),
        &handshake,
    )
    .ok()?;
    s.write_all(&frame).ok()?;
    let body = try_read_response(s, HANDSHAKE.0, HANDSHAKE.1, timeout).ok()?;
    let answer = SaslHandshakeResponse::decode_exact(&body, HANDSHAKE.1).ok()?;
    (answer.error_code == 0).then_some(())?;
    let token = format!("\0{HARNESS}\0{}", sasl_password(HARNESS));
    let authenticate = SaslAuthenticateRequest {
        auth_bytes: token.into_bytes(),
        ..Default::default()
    };
    let frame = encode_request(
        AUTHENTICATE.0,
        AUTHENTICATE.1,
        2,
        Some("compat-probe"),
        &authenticate,
    )
    .ok()?;
    s.write_all(&frame).ok()?;
    let body = try_read_response(s, AUTHENTICATE.0, AUTHENTICATE.1, timeout).ok()?;
    let answer = SaslAuthenticateResponse::decode_exact(&body, AUTHENTICATE.1).ok()?;
    (answer.error_code == 0).then_some(())
}

/// The harness's TLS client: the suite's CA as the only root, its own certificate for mutual
/// TLS, hostname (IP) verification on.
pub fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| client_config_as(Some(&Pki::get().identity(HARNESS))))
        .clone()
}

/// A TLS client that trusts the suite's CA and presents `identity`'s certificate (of any
/// authority), or none.
pub fn client_config_as(identity: Option<&Identity>) -> Arc<rustls::ClientConfig> {
    let pki = Pki::get();
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_file_iter(pki.ca_pem()).expect("the CA file") {
        roots
            .add(ca.expect("the CA certificate"))
            .expect("a CA rustls accepts");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS 1.2 and 1.3")
        .with_root_certificates(roots);
    let config = match identity {
        None => builder.with_no_client_auth(),
        Some(me) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(me.chain_pem())
                .expect("the client's chain")
                .collect::<Result<_, _>>()
                .expect("the client's certificates");
            let key = PrivateKeyDer::from_pem_file(me.key_pem()).expect("the client's key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("the client's key matches its certificate")
        }
    };
    Arc::new(config)
}

/// The harness's TLS client as kraftd's own outbound client dials with it
/// (`kraftd::server::peer::PeerSettings::tls`): the harness's PKCS12 key store and the CA's
/// trust store, read by kraftd from Kafka's `ssl.*` settings, hostname (IP) verification on.
pub fn kraftd_client_tls() -> Arc<kraftd::server::tls::LiveTls> {
    static TLS: OnceLock<Arc<kraftd::server::tls::LiveTls>> = OnceLock::new();
    TLS.get_or_init(|| {
        let pki = Pki::get();
        let props = pki.ssl_props("", &pki.identity(HARNESS), StoreFormat::Pkcs12);
        let get = |key: &str| {
            props
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let settings = kraftd::server::tls::TlsSettings::read("CONTROLLER", get)
            .unwrap_or_else(|e| panic!("the harness's ssl.* settings: {e}"));
        kraftd::server::tls::LiveTls::load(&settings)
            .unwrap_or_else(|e| panic!("the harness's key and trust stores: {e}"))
    })
    .clone()
}

/// The admin-client settings (`--command-config`) that reach a controller listener secured as
/// `transport` as the harness, over `base`'s settings if given.
pub fn tool_config(transport: Transport, base: Option<&Path>) -> PathBuf {
    let base_text = base.map(|b| {
        fs::read_to_string(b).unwrap_or_else(|e| panic!("cannot read {}: {e}", b.display()))
    });
    let pki = Pki::get();
    let mut text = base_text.unwrap_or_default();
    text.push_str(&format!(
        "\nsecurity.protocol={}\n",
        transport.controller_protocol()
    ));
    for (k, v) in pki.ssl_props("", &pki.identity(HARNESS), StoreFormat::Pkcs12) {
        text.push_str(&format!("{k}={v}\n"));
    }
    if let Transport::SaslSsl { .. } = transport {
        text.push_str(&format!(
            "sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{HARNESS}\" password=\"{}\";\n",
            sasl_password(HARNESS)
        ));
    }
    let name = format!(
        "{}-admin-{}.properties",
        transport.controller_protocol().to_ascii_lowercase(),
        base.and_then(|b| b.file_stem())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "plain".to_string())
    );
    let file = scratch_dir().join(name);
    // Several tests may write the same file at once: write a private copy and rename it over.
    let tmp = file.with_extension(format!("{}.tmp", rand::random::<u32>()));
    fs::write(&tmp, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", tmp.display()));
    fs::rename(&tmp, &file).unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    file
}

/// `args` of a Kafka tool, with a TLS `--command-config` when `--bootstrap-controller` names a
/// registered port; unchanged otherwise.
pub fn secure_tool_args(args: &[&str]) -> Option<Vec<String>> {
    let at = args.iter().position(|a| *a == "--bootstrap-controller")?;
    let controllers = args.get(at + 1)?;
    let transport = controllers
        .split(',')
        .filter_map(|hp| hp.rsplit_once(':').and_then(|(_, p)| p.parse().ok()))
        .map(transport_of)
        .find(|t| *t != Transport::Plaintext)?;
    let mut out: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    match args.iter().position(|a| *a == "--command-config") {
        Some(c) => {
            let base = PathBuf::from(args.get(c + 1)?);
            out[c + 1] = tool_config(transport, Some(&base)).display().to_string();
        }
        // Right after the controllers: argparse4j tools take it only before their subcommand.
        None => {
            let config = tool_config(transport, None).display().to_string();
            out.splice(at + 2..at + 2, ["--command-config".to_string(), config]);
        }
    }
    Some(out)
}
