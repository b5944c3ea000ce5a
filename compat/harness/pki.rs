//! The compat suite's certificate authority: one CA per test binary, and a key pair and
//! certificate per node name (`controller-1`, `broker-101`, `harness`), made with openssl and
//! keytool as an operator makes them, in every key store format Kafka reads.
//!
//! Every certificate names `localhost` and `127.0.0.1` (so hostname verification passes on
//! loopback), serves as both server and client (mutual TLS), and has the subject
//! `CN=<name>,O=kraftd compat`.
//!
//! For refusal tests: [`Pki::other_authority`], a second CA nobody trusts, and
//! [`Validity::Expired`] certificates (keytool's `-gencert -startdate`).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use super::testdir::runs_root;

/// Key store password (every format), and the JKS stores' own key password. Test values: these
/// stores protect nothing.
pub const STORE_PASSWORD: &str = "store-pass";
pub const JKS_KEY_PASSWORD: &str = "key-pass";
pub const TRUST_PASSWORD: &str = "trust-pass";
/// The organization in every subject the CA issues.
pub const ORGANIZATION: &str = "kraftd compat";

/// The key store formats Kafka reads (`ssl.keystore.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFormat {
    /// Kafka's default type.
    Jks,
    Pkcs12,
    /// A file with the PKCS#8 key and the certificate chain.
    Pem,
}

impl StoreFormat {
    /// Every format Kafka reads.
    pub const ALL: [StoreFormat; 3] = [StoreFormat::Jks, StoreFormat::Pkcs12, StoreFormat::Pem];

    pub fn kafka_type(self) -> &'static str {
        match self {
            StoreFormat::Jks => "JKS",
            StoreFormat::Pkcs12 => "PKCS12",
            StoreFormat::Pem => "PEM",
        }
    }
}

/// A node's key and certificate, issued by the suite's CA.
#[derive(Debug)]
pub struct Identity {
    pub name: String,
    dir: PathBuf,
    jks: OnceLock<PathBuf>,
}

impl Identity {
    /// The unencrypted PKCS#8 private key.
    pub fn key_pem(&self) -> PathBuf {
        self.dir.join("key.pem")
    }

    /// The certificate followed by the CA's.
    pub fn chain_pem(&self) -> PathBuf {
        self.dir.join("chain.pem")
    }

    /// Its subject as Java's `X500Principal` prints it (RFC 2253).
    pub fn subject(&self) -> String {
        format!("CN={},O={ORGANIZATION}", self.name)
    }

    /// The key store file in `format` (password [`STORE_PASSWORD`]; a JKS key entry's own
    /// password is [`JKS_KEY_PASSWORD`]).
    pub fn keystore(&self, format: StoreFormat) -> PathBuf {
        match format {
            StoreFormat::Pem => self.dir.join("keystore.pem"),
            StoreFormat::Pkcs12 => self.dir.join("keystore.p12"),
            StoreFormat::Jks => self
                .jks
                .get_or_init(|| {
                    let jks = self.dir.join("keystore.jks");
                    keytool(&[
                        "-importkeystore",
                        "-noprompt",
                        "-srckeystore",
                        path(&self.keystore(StoreFormat::Pkcs12)),
                        "-srcstoretype",
                        "PKCS12",
                        "-srcstorepass",
                        STORE_PASSWORD,
                        "-srcalias",
                        &self.name,
                        "-destkeystore",
                        path(&jks),
                        "-deststoretype",
                        "JKS",
                        "-deststorepass",
                        STORE_PASSWORD,
                        "-destkeypass",
                        JKS_KEY_PASSWORD,
                    ]);
                    jks
                })
                .clone(),
        }
    }
}

/// How long a certificate the CA issues is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// From now on, for ten years (openssl).
    Current,
    /// It was valid for a day, a month ago (keytool's `-gencert -startdate`).
    Expired,
}

/// The suite's CA and the identities issued so far.
pub struct Pki {
    dir: PathBuf,
    /// The CA's subject common name.
    ca_name: &'static str,
    issued: Mutex<HashMap<String, Arc<Identity>>>,
    trust_jks: OnceLock<PathBuf>,
    trust_p12: OnceLock<PathBuf>,
}

impl Pki {
    /// The CA of this test binary, made on first use under `target/compat-runs/.pki-<pid>`.
    pub fn get() -> &'static Pki {
        static PKI: OnceLock<Pki> = OnceLock::new();
        PKI.get_or_init(|| Pki::make("", "kraftd compat CA"))
    }

    /// Another authority, trusted by nobody in the suite: its certificates have the same kind
    /// of subjects as [`Pki::get`]'s, and a node of the suite refuses them.
    pub fn other_authority() -> &'static Pki {
        static OTHER: OnceLock<Pki> = OnceLock::new();
        OTHER.get_or_init(|| Pki::make("-other", "other compat CA"))
    }

    fn make(suffix: &str, ca_name: &'static str) -> Pki {
        let dir = runs_root().join(format!(".pki-{}{suffix}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        make_authority(&dir, ca_name);
        Pki {
            dir,
            ca_name,
            issued: Mutex::new(HashMap::new()),
            trust_jks: OnceLock::new(),
            trust_p12: OnceLock::new(),
        }
    }

    /// The CA's subject, as Java prints it.
    pub fn ca_subject(&self) -> String {
        format!("CN={},O={ORGANIZATION}", self.ca_name)
    }

    /// The CA certificate (a PEM trust store).
    pub fn ca_pem(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// The identity `name`, issued on first use.
    pub fn identity(&self, name: &str) -> Arc<Identity> {
        self.identity_valid(name, Validity::Current)
    }

    /// The identity `name` with this validity, issued on first use (a name is issued once,
    /// with the validity first asked for).
    pub fn identity_valid(&self, name: &str, validity: Validity) -> Arc<Identity> {
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        issued
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(self.issue(name, validity)))
            .clone()
    }

    /// The trust store holding the CA in `format` (password [`TRUST_PASSWORD`] for JKS and
    /// PKCS12; made by keytool, as Java trusts only entries keytool marks as trusted).
    pub fn truststore(&self, format: StoreFormat) -> PathBuf {
        let (cell, file, kind) = match format {
            StoreFormat::Pem => return self.ca_pem(),
            StoreFormat::Jks => (&self.trust_jks, "truststore.jks", "JKS"),
            StoreFormat::Pkcs12 => (&self.trust_p12, "truststore.p12", "PKCS12"),
        };
        cell.get_or_init(|| {
            let store = self.dir.join(file);
            keytool(&[
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-file",
                path(&self.ca_pem()),
                "-keystore",
                path(&store),
                "-storetype",
                kind,
                "-storepass",
                TRUST_PASSWORD,
            ]);
            store
        })
        .clone()
    }

    /// Kafka's `ssl.*` settings for `identity`'s key store and the CA's trust store, both in
    /// `format`, each key prefixed with `prefix` (e.g. `listener.name.controller.`, or empty).
    pub fn ssl_props(
        &self,
        prefix: &str,
        identity: &Identity,
        format: StoreFormat,
    ) -> Vec<(String, String)> {
        let mut props = vec![
            ("ssl.keystore.type", format.kafka_type().to_string()),
            ("ssl.keystore.location", display(&identity.keystore(format))),
            ("ssl.truststore.type", format.kafka_type().to_string()),
            ("ssl.truststore.location", display(&self.truststore(format))),
        ];
        if format != StoreFormat::Pem {
            props.push(("ssl.keystore.password", STORE_PASSWORD.to_string()));
            props.push(("ssl.truststore.password", TRUST_PASSWORD.to_string()));
        }
        if format == StoreFormat::Jks {
            props.push(("ssl.key.password", JKS_KEY_PASSWORD.to_string()));
        }
        props
            .into_iter()
            .map(|(k, v)| (format!("{prefix}{k}"), v))
            .collect()
    }

    fn issue(&self, name: &str, validity: Validity) -> Identity {
        let dir = self.dir.join(name);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let (key, csr, cert, ext) = (
            dir.join("key.pem"),
            dir.join("request.csr"),
            dir.join("cert.pem"),
            dir.join("ext.cnf"),
        );
        openssl(&[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            path(&key),
            "-subj",
            &format!("/O={ORGANIZATION}/CN={name}"),
            "-out",
            path(&csr),
        ]);
        match validity {
            Validity::Current => {
                // Every node's address: 127.0.0.1, or a network namespace's link (`netns.rs`).
                let ips: String = super::netns::link_addresses()
                    .map(|ip| format!(",IP:{ip}"))
                    .collect();
                write(
                    &ext,
                    &format!(
                        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
                         extendedKeyUsage=serverAuth,clientAuth\n\
                         subjectAltName=DNS:localhost,IP:127.0.0.1{ips}\n"
                    ),
                );
                openssl(&[
                    "x509",
                    "-req",
                    "-in",
                    path(&csr),
                    "-CA",
                    path(&self.ca_pem()),
                    "-CAkey",
                    path(&self.dir.join("ca-key.pem")),
                    "-set_serial",
                    &serial(),
                    "-days",
                    "3650",
                    "-extfile",
                    path(&ext),
                    "-out",
                    path(&cert),
                ]);
            }
            Validity::Expired => keytool(&[
                "-gencert",
                "-keystore",
                path(&self.signer()),
                "-storetype",
                "PKCS12",
                "-storepass",
                STORE_PASSWORD,
                "-alias",
                "ca",
                "-infile",
                path(&csr),
                "-outfile",
                path(&cert),
                "-rfc",
                "-startdate",
                "-30d",
                "-validity",
                "1",
                "-ext",
                "san=dns:localhost,ip:127.0.0.1",
                "-ext",
                "eku=serverAuth,clientAuth",
                "-ext",
                "ku=digitalSignature,keyEncipherment",
            ]),
        }
        let ca = read(&self.ca_pem());
        let leaf = read(&cert);
        write(&dir.join("chain.pem"), &format!("{leaf}{ca}"));
        write(
            &dir.join("keystore.pem"),
            &format!("{}{leaf}{ca}", read(&key)),
        );
        openssl(&[
            "pkcs12",
            "-export",
            "-inkey",
            path(&key),
            "-in",
            path(&cert),
            "-certfile",
            path(&self.ca_pem()),
            "-name",
            name,
            "-passout",
            &format!("pass:{STORE_PASSWORD}"),
            "-out",
            path(&dir.join("keystore.p12")),
        ]);
        Identity {
            name: name.to_string(),
            dir,
            jks: OnceLock::new(),
        }
    }
}

impl Pki {
    /// The CA's key and certificate as a PKCS12 store, for keytool to sign with.
    fn signer(&self) -> PathBuf {
        let store = self.dir.join("ca-signer.p12");
        if !store.exists() {
            let tmp = self
                .dir
                .join(format!("ca-signer.{}.p12", rand::random::<u32>()));
            openssl(&[
                "pkcs12",
                "-export",
                "-inkey",
                path(&self.dir.join("ca-key.pem")),
                "-in",
                path(&self.ca_pem()),
                "-name",
                "ca",
                "-passout",
                &format!("pass:{STORE_PASSWORD}"),
                "-out",
                path(&tmp),
            ]);
            fs::rename(&tmp, &store)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", store.display()));
        }
        store
    }
}

/// A self-signed CA `ca.pem` with its key `ca-key.pem` in `dir`.
fn make_authority(dir: &Path, name: &str) {
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        path(&dir.join("ca-key.pem")),
        "-out",
        path(&dir.join("ca.pem")),
        "-days",
        "3650",
        "-subj",
        &format!("/O={ORGANIZATION}/CN={name}"),
    ]);
}

/// A random positive certificate serial number, in hex.
fn serial() -> String {
    format!("0x{:016x}", rand::random::<u64>() >> 1)
}

fn openssl(args: &[&str]) {
    run("openssl", args);
}

/// keytool from the JDK that runs Kafka (next to its `java`), else the one on PATH.
fn keytool(args: &[&str]) {
    let beside_java = std::env::var_os("JAVA_HOME")
        .map(|home| PathBuf::from(home).join("bin").join("keytool"))
        .filter(|k| k.exists());
    let keytool = beside_java.unwrap_or_else(|| PathBuf::from("keytool"));
    run(path(&keytool), args);
}

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (the compat suite's CA needs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {} failed ({}):\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn path(p: &Path) -> &str {
    p.to_str().expect("the compat suite's paths are UTF-8")
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn write(p: &Path, text: &str) {
    fs::write(p, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
}
