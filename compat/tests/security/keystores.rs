//! Key and trust stores: fresh ones made by openssl and by the resolved JDK's keytool, loaded
//! by Kafka 4.4's `DefaultSslEngineFactory` (`compat/java/KeyStoreProbe.java`, which also runs
//! keytool, all in one JVM) and by kraftd's `server::tls::keystore`. For a key store, the chain
//! Java's default key manager would serve must be the one kraftd reads (or, when Java would
//! serve several, kraftd refuses the store naming as many); for a trust store, the same set of
//! trusted certificates; when Kafka refuses a store, kraftd refuses it too.

use std::path::Path;
use std::process::Command;

use kraftd::server::config::Password;
use kraftd::server::tls::keystore::{
    pem_certificates, pem_key_material, read_key_store, read_trust_store, KeystoreError, StoreType,
};
use rustls_pki_types::CertificateDer;
use sha2::{Digest, Sha256};

use crate::harness::java_probe::{java_command, probe_classes};
use crate::harness::{run_command, TestDir};

const SP: &str = "store-pass";
const KP: &str = "key-pass";
const TP: &str = "trust-pass";

/// Runs openssl in `dir`; `args` split at spaces.
fn openssl(dir: &Path, args: &str) {
    let out = Command::new("openssl")
        .args(args.split(' '))
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("openssl (needed to make PEM and openssl stores): {e}"));
    assert!(
        out.status.success(),
        "openssl {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn cat(dir: &Path, out: &str, parts: &[&str]) {
    let text: String = parts
        .iter()
        .map(|p| std::fs::read_to_string(dir.join(p)).unwrap())
        .collect();
    std::fs::write(dir.join(out), text).unwrap();
}

/// openssl's stores: a CA (EC), a server key (RSA, PKCS#8) and certificate it signed; PKCS12
/// (default and -legacy), PEM stores (plain, PBES2- and PKCS#12-3DES-encrypted key, reversed
/// chain, Ed25519), an openssl "trust store".
fn openssl_stores(dir: &Path) {
    for command in [
        "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout oca.key -out oca.pem \
         -days 3650 -subj /CN=openssl-CA",
        "req -newkey rsa:2048 -nodes -keyout o.key -out o.csr -subj /CN=localhost",
        "x509 -req -in o.csr -CA oca.pem -CAkey oca.key -CAcreateserial -days 3650 -out o.pem",
        "pkcs12 -export -inkey o.key -in o.pem -certfile oca.pem -name server -passout pass:store-pass \
         -out o.p12",
        "pkcs12 -export -legacy -inkey o.key -in o.pem -certfile oca.pem -name server \
         -passout pass:store-pass -out o-legacy.p12",
        "pkcs12 -export -nokeys -in oca.pem -passout pass:trust-pass -out otrust.p12",
        "pkcs8 -topk8 -in o.key -v2 aes-256-cbc -passout pass:key-pass -out o-enc.key",
        "pkcs8 -topk8 -in o.key -v1 PBE-SHA1-3DES -passout pass:key-pass -out o-3des.key",
        "genpkey -algorithm ed25519 -out ed.key",
        "req -new -x509 -key ed.key -out ed.pem -days 3650 -subj /CN=ed25519",
    ] {
        openssl(dir, &command.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    cat(dir, "ochain.pem", &["o.pem", "oca.pem"]);
    cat(dir, "o-keystore.pem", &["o.key", "ochain.pem"]);
    cat(dir, "o-keystore-enc.pem", &["o-enc.key", "ochain.pem"]);
    cat(dir, "o-keystore-3des.pem", &["o-3des.key", "ochain.pem"]);
    cat(
        dir,
        "o-keystore-reversed.pem",
        &["o.key", "oca.pem", "o.pem"],
    );
    cat(dir, "ed-keystore.pem", &["ed.key", "ed.pem"]);
}

/// keytool's stores (run inside the probe): a CA, a server key pair in JKS with its own key
/// password, signed by the CA, the same as PKCS12; trust stores; a JKS with two keys. Each
/// command's arguments are split at spaces.
const KEYTOOL: [&str; 12] = [
    "-genkeypair -keystore ca.p12 -storetype PKCS12 -storepass store-pass -alias ca -keyalg EC \
     -groupname secp256r1 -dname CN=keytool-CA -ext bc:c -validity 3650",
    "-genkeypair -keystore k.jks -storetype JKS -storepass store-pass -keypass key-pass \
     -alias server -keyalg RSA -keysize 2048 -dname CN=localhost,O=kraftd -validity 3650",
    "-certreq -keystore k.jks -storepass store-pass -keypass key-pass -alias server -file k.csr",
    "-gencert -keystore ca.p12 -storepass store-pass -alias ca -infile k.csr -outfile k.crt -rfc \
     -ext san=dns:localhost -validity 3650",
    "-exportcert -keystore ca.p12 -storepass store-pass -alias ca -rfc -file kca.pem",
    "-importcert -noprompt -keystore k.jks -storepass store-pass -alias ca -file kca.pem",
    "-importcert -noprompt -keystore k.jks -storepass store-pass -keypass key-pass -alias server \
     -file k.crt",
    "-importkeystore -noprompt -srckeystore k.jks -srcstorepass store-pass -srckeypass key-pass \
     -srcalias server -destkeystore k.p12 -deststoretype PKCS12 -deststorepass store-pass \
     -destkeypass store-pass",
    "-importcert -noprompt -keystore ktrust.jks -storetype JKS -storepass trust-pass -alias ca \
     -file kca.pem",
    "-importcert -noprompt -keystore ktrust.p12 -storetype PKCS12 -storepass trust-pass -alias ca \
     -file kca.pem",
    "-genkeypair -keystore two.jks -storetype JKS -storepass store-pass -keypass key-pass -alias a \
     -keyalg EC -groupname secp256r1 -dname CN=a -validity 3650",
    "-genkeypair -keystore two.jks -storetype JKS -storepass store-pass -keypass key-pass -alias b \
     -keyalg EC -groupname secp384r1 -dname CN=b -validity 3650",
];

fn keytool_lines() -> Vec<String> {
    KEYTOOL
        .iter()
        .map(|c| {
            format!(
                "keytool\t{}",
                c.split_whitespace().collect::<Vec<_>>().join("\t")
            )
        })
        .collect()
}

enum Case {
    Key(&'static str, &'static str, &'static str, &'static str),
    InlineKey(&'static str, &'static str, &'static str),
    Trust(&'static str, &'static str, &'static str),
    InlineTrust(&'static str),
}

fn cases() -> Vec<(&'static str, Case)> {
    use Case::*;
    vec![
        ("JKS, own key password", Key("JKS", "k.jks", SP, KP)),
        ("JKS, no ssl.key.password", Key("JKS", "k.jks", SP, "-")),
        (
            "JKS, wrong store password",
            Key("JKS", "k.jks", "wrong", KP),
        ),
        ("JKS, wrong key password", Key("JKS", "k.jks", SP, "wrong")),
        ("JKS, no store password", Key("JKS", "k.jks", "-", KP)),
        (
            "JKS type, keytool PKCS12 file",
            Key("JKS", "k.p12", SP, "-"),
        ),
        ("PKCS12 type, JKS file", Key("PKCS12", "k.jks", SP, KP)),
        ("pkcs12 in lower case", Key("pkcs12", "k.p12", SP, "-")),
        ("PKCS12 (keytool)", Key("PKCS12", "k.p12", SP, "-")),
        (
            "PKCS12 (keytool), wrong store password",
            Key("PKCS12", "k.p12", "wrong", "-"),
        ),
        (
            "PKCS12 (keytool), other key password",
            Key("PKCS12", "k.p12", SP, KP),
        ),
        ("PKCS12 (openssl)", Key("PKCS12", "o.p12", SP, "-")),
        (
            "PKCS12 (openssl -legacy)",
            Key("PKCS12", "o-legacy.p12", SP, "-"),
        ),
        (
            "PKCS12 (openssl), wrong store password",
            Key("PKCS12", "o.p12", "wrong", "-"),
        ),
        ("JKS, two key entries", Key("JKS", "two.jks", SP, KP)),
        (
            "JKS trust store as key store",
            Key("JKS", "ktrust.jks", TP, "-"),
        ),
        ("PEM", Key("PEM", "o-keystore.pem", "-", "-")),
        ("PEM, store password", Key("PEM", "o-keystore.pem", SP, "-")),
        (
            "PEM, key password, key not encrypted",
            Key("PEM", "o-keystore.pem", "-", KP),
        ),
        ("PEM, PBES2 key", Key("PEM", "o-keystore-enc.pem", "-", KP)),
        (
            "PEM, PBES2 key, no password",
            Key("PEM", "o-keystore-enc.pem", "-", "-"),
        ),
        (
            "PEM, PBES2 key, wrong password",
            Key("PEM", "o-keystore-enc.pem", "-", "wrong"),
        ),
        (
            "PEM, PKCS12-3DES key",
            Key("PEM", "o-keystore-3des.pem", "-", KP),
        ),
        (
            "PEM, PKCS12-3DES key, wrong password",
            Key("PEM", "o-keystore-3des.pem", "-", "wrong"),
        ),
        (
            "PEM, PKCS12-3DES key, no password",
            Key("PEM", "o-keystore-3des.pem", "-", "-"),
        ),
        (
            "PEM, chain reversed",
            Key("PEM", "o-keystore-reversed.pem", "-", "-"),
        ),
        ("PEM, Ed25519 key", Key("PEM", "ed-keystore.pem", "-", "-")),
        ("pem in lower case", Key("pem", "o-keystore.pem", "-", "-")),
        ("inline PEM", InlineKey("o.key", "ochain.pem", "-")),
        (
            "inline PEM, PBES2 key",
            InlineKey("o-enc.key", "ochain.pem", KP),
        ),
        (
            "inline PEM, PKCS12-3DES key",
            InlineKey("o-3des.key", "ochain.pem", KP),
        ),
        (
            "inline PEM, no certificate",
            InlineKey("o.key", "o.key", "-"),
        ),
        ("JKS trust store", Trust("JKS", "ktrust.jks", TP)),
        (
            "JKS trust store, no password",
            Trust("JKS", "ktrust.jks", "-"),
        ),
        (
            "JKS trust store, wrong password",
            Trust("JKS", "ktrust.jks", "wrong"),
        ),
        (
            "PKCS12 trust store (keytool)",
            Trust("PKCS12", "ktrust.p12", TP),
        ),
        (
            "PKCS12 trust store (keytool), no password",
            Trust("PKCS12", "ktrust.p12", "-"),
        ),
        (
            "PKCS12 trust store (keytool), wrong password",
            Trust("PKCS12", "ktrust.p12", "wrong"),
        ),
        (
            "PKCS12 trust store (openssl)",
            Trust("PKCS12", "otrust.p12", TP),
        ),
        (
            "PKCS12 trust store (openssl), no password",
            Trust("PKCS12", "otrust.p12", "-"),
        ),
        ("JKS key store as trust store", Trust("JKS", "k.jks", SP)),
        (
            "PKCS12 key store (openssl) as trust store",
            Trust("PKCS12", "o.p12", SP),
        ),
        (
            "PKCS12 key store (keytool) as trust store, no password",
            Trust("PKCS12", "k.p12", "-"),
        ),
        ("PEM trust store", Trust("PEM", "ochain.pem", "-")),
        ("PEM trust store, password", Trust("PEM", "oca.pem", TP)),
        (
            "PEM trust store, no certificate",
            Trust("PEM", "o.key", "-"),
        ),
        ("inline PEM trust", InlineTrust("ochain.pem")),
    ]
}

fn pass(s: &str) -> Option<Password> {
    (s != "-").then(|| Password::new(s))
}

fn fp(c: &CertificateDer<'_>) -> String {
    Sha256::digest(c.as_ref())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn store_type(name: &str) -> Result<StoreType, KeystoreError> {
    name.parse()
}

/// kraftd's reading of a case, in the probe's terms; a refusal as "error" and kraftd's message.
fn kraftd(dir: &Path, case: &Case) -> String {
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let text = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let key = |r: Result<kraftd::server::tls::keystore::KeyMaterial, KeystoreError>| match r {
        Ok(m) => format!(
            "chains\t{}",
            m.chain.iter().map(fp).collect::<Vec<_>>().join(",")
        ),
        Err(KeystoreError::NoKeyEntry) => "chains".to_string(),
        Err(KeystoreError::SeveralKeyEntries(aliases)) => format!("several\t{}", aliases.len()),
        Err(e) => format!("error\t{e}"),
    };
    let trust = |r: Result<Vec<CertificateDer<'static>>, KeystoreError>| match r {
        Ok(certs) => {
            let mut fps: Vec<String> = certs.iter().map(fp).collect();
            fps.sort();
            ["trusted".to_string()]
                .into_iter()
                .chain(fps)
                .collect::<Vec<_>>()
                .join("\t")
        }
        Err(e) => format!("error\t{e}"),
    };
    match *case {
        Case::Key(t, f, sp, kp) => key(store_type(t)
            .and_then(|t| read_key_store(&read(f), t, pass(sp).as_ref(), pass(kp).as_ref()))),
        Case::InlineKey(k, c, kp) => key(pem_key_material(&text(k), &text(c), pass(kp).as_ref())),
        Case::Trust(t, f, p) => {
            trust(store_type(t).and_then(|t| read_trust_store(&read(f), t, pass(p).as_ref())))
        }
        Case::InlineTrust(f) => trust(pem_certificates(&text(f))),
    }
}

fn probe_line(dir: &Path, case: &Case) -> String {
    let p = |f: &str| dir.join(f).display().to_string();
    match *case {
        Case::Key(t, f, sp, kp) => format!("key\t{t}\t{}\t{sp}\t{kp}", p(f)),
        Case::InlineKey(k, c, kp) => format!("inline-key\t{}\t{}\t{kp}", p(k), p(c)),
        Case::Trust(t, f, pw) => format!("trust\t{t}\t{}\t{pw}", p(f)),
        Case::InlineTrust(f) => format!("inline-trust\t{}", p(f)),
    }
}

/// Java's line and kraftd's agree: the same chain or trusted set, both refusing, or Java serving
/// several keys where kraftd refuses as many.
fn agree(java: &str, kraftd: &str) -> bool {
    if java.starts_with("error") || kraftd.starts_with("error") {
        return java.starts_with("error") && kraftd.starts_with("error");
    }
    if let Some(n) = kraftd.strip_prefix("several\t") {
        return java.starts_with("chains\t")
            && java.split('\t').count() - 1 == n.parse::<usize>().unwrap();
    }
    java == kraftd
}

#[test]
fn stores_read_as_kafka_reads_them() {
    let dir = TestDir::new();
    let work = dir.subdir("stores");
    openssl_stores(&work);
    let cases = cases();
    let mut stdin: Vec<String> = keytool_lines();
    stdin.extend(cases.iter().map(|(_, c)| probe_line(&work, c)));
    let stdin = stdin.join("\n") + "\n";

    let classes = probe_classes(dir.path());
    let mut cmd = java_command(&classes, "KeyStoreProbe", "256m", &[]);
    cmd.current_dir(&work);
    // keytool runs in the probe's JVM: its package is not exported.
    cmd.env(
        "JDK_JAVA_OPTIONS",
        "--add-exports=java.base/sun.security.tools.keytool=ALL-UNNAMED",
    );
    let out = run_command(
        cmd,
        "java KeyStoreProbe".into(),
        Some(stdin.as_bytes()),
        std::time::Duration::from_secs(300),
        dir.path(),
    );
    assert!(out.success(), "{out}");
    let java: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(java.len(), cases.len(), "one answer a case:\n{out}");

    let mut failures = Vec::new();
    let (mut refused, mut read) = (0, 0);
    for ((name, case), java) in cases.iter().zip(&java) {
        let ours = kraftd(&work, case);
        eprintln!("{name}:\n  java:   {java}\n  kraftd: {ours}");
        if java.starts_with("error") {
            refused += 1;
        } else {
            read += 1;
        }
        if !agree(java, &ours) {
            failures.push(format!("{name}:\n  java:   {java}\n  kraftd: {ours}"));
        }
    }
    // The cases test what they say: Java reads some stores and refuses others.
    assert!(
        read >= 20 && refused >= 12,
        "{read} read, {refused} refused"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
