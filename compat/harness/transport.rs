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

use std::collections::BTreeSet;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use super::pki::{Pki, StoreFormat, ORGANIZATION};
use super::testdir::scratch_dir;

/// The name (and certificate common name) the harness's probes and tools present.
pub const HARNESS: &str = "harness";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Plaintext,
    /// SSL with required client certificates on every controller listener; kraftd's key and
    /// trust stores in this format.
    MutualTls {
        kraftd: StoreFormat,
    },
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
    /// The settings node `name` (e.g. `controller-1`, `broker-101`) gets over its others: the
    /// CONTROLLER listener's protocol and TLS, and `super_users` (the cluster's, if it sets
    /// any) extended by [`SUPER_USERS`]. `kraftd` says which key store format it reads.
    pub fn node_props(
        self,
        name: &str,
        kraftd: bool,
        super_users: Option<&str>,
    ) -> Vec<(String, String)> {
        let format = match self {
            Transport::Plaintext => return Vec::new(),
            Transport::MutualTls { kraftd: format } if kraftd => format,
            Transport::MutualTls { .. } => StoreFormat::Pkcs12,
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
        props.extend(pki.ssl_props(prefix, &pki.identity(name), format));
        if let Some(users) = super_users {
            let all: Vec<&str> = users.split(';').chain(SUPER_USERS).collect();
            props.push(("super.users".to_string(), all.join(";")));
        }
        props
    }

    /// The CONTROLLER listener's security protocol.
    pub fn controller_protocol(self) -> &'static str {
        match self {
            Transport::Plaintext => "PLAINTEXT",
            Transport::MutualTls { .. } => "SSL",
        }
    }

    /// Marks these controller ports as TLS for the harness's probes and tools.
    pub fn register(self, ports: impl IntoIterator<Item = u16>) {
        if self != Transport::Plaintext {
            let mut tls = tls_ports();
            tls.extend(ports);
        }
    }
}

fn tls_ports() -> std::sync::MutexGuard<'static, BTreeSet<u16>> {
    // Ports are never handed out twice by one test binary (see `free_port`), so a port
    // registered here never belongs to a later PLAINTEXT listener.
    static PORTS: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn is_tls(port: u16) -> bool {
    tls_ports().contains(&port)
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
        let tcp = TcpStream::connect_timeout(&addr, timeout).ok()?;
        if !is_tls(addr.port()) {
            return Some(ProbeStream::Plain(tcp));
        }
        tcp.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        let name = ServerName::IpAddress(addr.ip().into());
        let conn = rustls::ClientConnection::new(client_config(), name).ok()?;
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        // Finish the handshake now, so that a refusal shows as unreachable.
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock).ok()?;
        }
        Some(ProbeStream::Tls(Box::new(tls)))
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

/// The harness's TLS client: the suite's CA as the only root, its own certificate for mutual
/// TLS, hostname (IP) verification on.
pub fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let pki = Pki::get();
            let me = pki.identity(HARNESS);
            let mut roots = rustls::RootCertStore::empty();
            for ca in CertificateDer::pem_file_iter(pki.ca_pem()).expect("the CA file") {
                roots
                    .add(ca.expect("the CA certificate"))
                    .expect("a CA rustls accepts");
            }
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(me.chain_pem())
                .expect("the harness's chain")
                .collect::<Result<_, _>>()
                .expect("the harness's certificates");
            let key = PrivateKeyDer::from_pem_file(me.key_pem()).expect("the harness's key");
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("TLS 1.2 and 1.3")
                .with_root_certificates(roots)
                .with_client_auth_cert(chain, key)
                .expect("the harness's key matches its certificate");
            Arc::new(config)
        })
        .clone()
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

/// The admin-client settings (`--command-config`) that reach a TLS controller listener as the
/// harness, over `base`'s settings if given.
pub fn tool_config(base: Option<&Path>) -> PathBuf {
    let base_text = base.map(|b| {
        fs::read_to_string(b).unwrap_or_else(|e| panic!("cannot read {}: {e}", b.display()))
    });
    let pki = Pki::get();
    let mut text = base_text.unwrap_or_default();
    text.push_str("\nsecurity.protocol=SSL\n");
    for (k, v) in pki.ssl_props("", &pki.identity(HARNESS), StoreFormat::Pkcs12) {
        text.push_str(&format!("{k}={v}\n"));
    }
    let name = format!(
        "tls-admin-{}.properties",
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
    let secured = controllers.split(',').any(|hp| {
        hp.rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .is_some_and(is_tls)
    });
    if !secured {
        return None;
    }
    let mut out: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    match args.iter().position(|a| *a == "--command-config") {
        Some(c) => {
            let base = PathBuf::from(args.get(c + 1)?);
            out[c + 1] = tool_config(Some(&base)).display().to_string();
        }
        // Right after the controllers: argparse4j tools take it only before their subcommand.
        None => {
            let config = tool_config(None).display().to_string();
            out.splice(at + 2..at + 2, ["--command-config".to_string(), config]);
        }
    }
    Some(out)
}
