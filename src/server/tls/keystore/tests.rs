//! Tests over the stores `tests/fixtures/keystores/make-fixtures.sh` made with keytool 17 and
//! openssl 3. Expected certificates come from the PEM files through rustls's own PEM parser,
//! and a key is checked against its leaf certificate by rustls (`with_single_cert`).

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/keystores/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn pem_certs(name: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(&fixture(name))
        .collect::<Result<_, _>>()
        .unwrap()
}

fn pw(s: &str) -> Password {
    Password::new(s)
}

const SECRETS: [&str; 3] = ["store-pass", "key-pass", "trust-pass"];

/// An error, checked to name no password.
fn err<T: fmt::Debug>(r: Result<T, KeystoreError>) -> KeystoreError {
    let e = r.expect_err("an error");
    let shown = format!("{e} {e:?}");
    for s in SECRETS {
        assert!(!shown.contains(s), "{shown}");
    }
    e
}

/// The chain is server.pem then ca.pem, and rustls accepts the key as the leaf's.
fn assert_server_material(m: &KeyMaterial) {
    let server = pem_certs("server.pem");
    let ca = pem_certs("ca.pem");
    assert_eq!(m.chain.len(), 2, "leaf and CA");
    assert_eq!(m.chain[0], server[0], "the leaf");
    assert_eq!(m.chain[1], ca[0], "the CA");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(m.chain.clone(), m.key.clone_key())
        .expect("the key is the leaf's");
}

#[test]
fn store_type_names_as_kafka() {
    assert_eq!("JKS".parse::<StoreType>(), Ok(StoreType::Jks));
    assert_eq!("jks".parse::<StoreType>(), Ok(StoreType::Jks));
    assert_eq!("pkcs12".parse::<StoreType>(), Ok(StoreType::Pkcs12));
    assert_eq!("PEM".parse::<StoreType>(), Ok(StoreType::Pem));
    assert!(matches!(
        "pem".parse::<StoreType>(),
        Err(KeystoreError::UnknownStoreType(_))
    ));
    assert!(matches!(
        "JCEKS".parse::<StoreType>(),
        Err(KeystoreError::UnsupportedStoreType(_))
    ));
}

#[test]
fn jks_key_store_with_its_own_key_password() {
    let m = read_key_store(
        &fixture("server.jks"),
        StoreType::Jks,
        Some(&pw("store-pass")),
        Some(&pw("key-pass")),
    )
    .unwrap();
    assert_server_material(&m);
    // Without ssl.key.password the store password opens the key: not this one.
    let e = err(read_key_store(
        &fixture("server.jks"),
        StoreType::Jks,
        Some(&pw("store-pass")),
        None,
    ));
    assert_eq!(e, KeystoreError::KeyNotRecoverable);
    let e = err(read_key_store(
        &fixture("server.jks"),
        StoreType::Jks,
        Some(&pw("wrong")),
        Some(&pw("key-pass")),
    ));
    assert_eq!(
        e,
        KeystoreError::IntegrityCheckFailed {
            role: Role::KeyStore
        }
    );
    assert_eq!(
        err(read_key_store(
            &fixture("server.jks"),
            StoreType::Jks,
            None,
            None
        )),
        KeystoreError::PasswordRequired
    );
}

#[test]
fn pkcs12_key_stores_from_keytool_and_openssl() {
    for name in [
        "server-keytool.p12",
        "server-openssl.p12",
        "server-openssl-legacy.p12",
    ] {
        let bytes = fixture(name);
        let m = read_key_store(&bytes, StoreType::Pkcs12, Some(&pw("store-pass")), None).unwrap();
        assert_server_material(&m);
        // ssl.key.password equal to the store password changes nothing; another one fails.
        read_key_store(
            &bytes,
            StoreType::Pkcs12,
            Some(&pw("store-pass")),
            Some(&pw("store-pass")),
        )
        .unwrap();
        let e = err(read_key_store(
            &bytes,
            StoreType::Pkcs12,
            Some(&pw("store-pass")),
            Some(&pw("key-pass")),
        ));
        assert_eq!(e, KeystoreError::KeyNotRecoverable, "{name}");
        let e = err(read_key_store(
            &bytes,
            StoreType::Pkcs12,
            Some(&pw("wrong")),
            None,
        ));
        assert_eq!(
            e,
            KeystoreError::IntegrityCheckFailed {
                role: Role::KeyStore
            },
            "{name}"
        );
    }
}

#[test]
fn jks_and_pkcs12_types_read_each_others_files() {
    let m = read_key_store(
        &fixture("server.jks"),
        StoreType::Pkcs12,
        Some(&pw("store-pass")),
        Some(&pw("key-pass")),
    )
    .unwrap();
    assert_server_material(&m);
    let m = read_key_store(
        &fixture("server-keytool.p12"),
        StoreType::Jks,
        Some(&pw("store-pass")),
        None,
    )
    .unwrap();
    assert_server_material(&m);
}

#[test]
fn pem_key_stores() {
    let plain = fixture("server-keystore.pem");
    let m = read_key_store(&plain, StoreType::Pem, None, None).unwrap();
    assert_server_material(&m);
    let expected_key = PrivateKeyDer::from_pem_slice(&fixture("server-key.pem")).unwrap();
    assert_eq!(m.key.secret_der(), expected_key.secret_der());
    assert_eq!(
        err(read_key_store(
            &plain,
            StoreType::Pem,
            None,
            Some(&pw("key-pass"))
        )),
        KeystoreError::PemKeyNotEncrypted
    );
    assert_eq!(
        err(read_key_store(
            &plain,
            StoreType::Pem,
            Some(&pw("store-pass")),
            None
        )),
        KeystoreError::PemStorePassword(Role::KeyStore)
    );

    let encrypted = fixture("server-keystore-encrypted.pem");
    let m = read_key_store(&encrypted, StoreType::Pem, None, Some(&pw("key-pass"))).unwrap();
    assert_server_material(&m);
    assert_eq!(m.key.secret_der(), expected_key.secret_der());
    assert_eq!(
        err(read_key_store(&encrypted, StoreType::Pem, None, None)),
        KeystoreError::PemKeyEncrypted
    );
    assert_eq!(
        err(read_key_store(
            &encrypted,
            StoreType::Pem,
            None,
            Some(&pw("wrong"))
        )),
        KeystoreError::KeyNotRecoverable
    );
}

#[test]
fn inline_pem_key_and_chain() {
    let key = String::from_utf8(fixture("server-key.pem")).unwrap();
    let chain = String::from_utf8(fixture("chain.pem")).unwrap();
    assert_server_material(&pem_key_material(&key, &chain, None).unwrap());
    let encrypted = String::from_utf8(fixture("server-key-encrypted.pem")).unwrap();
    assert_server_material(&pem_key_material(&encrypted, &chain, Some(&pw("key-pass"))).unwrap());
    let pbes2 = String::from_utf8(fixture("server-key-pbes2.pem")).unwrap();
    assert_eq!(
        err(pem_key_material(&pbes2, &chain, Some(&pw("key-pass")))),
        KeystoreError::PemKeyPbes2
    );
    assert_eq!(
        err(pem_key_material(&pbes2, &chain, None)),
        KeystoreError::PemKeyEncrypted
    );
    assert_eq!(
        err(pem_key_material(&chain, &chain, None)),
        KeystoreError::PemNoKey
    );
    assert_eq!(
        err(pem_key_material(&key, &key, None)),
        KeystoreError::PemNoCertificate
    );
    assert_eq!(
        err(pem_key_material(&format!("{key}{key}"), &chain, None)),
        KeystoreError::PemSeveralKeys(2)
    );
    // The CA first: Java's PKCS12 setKeyEntry refuses the chain.
    let reversed = format!(
        "{}{}",
        String::from_utf8(fixture("ca.pem")).unwrap(),
        String::from_utf8(fixture("server.pem")).unwrap()
    );
    assert_eq!(
        err(pem_key_material(&key, &reversed, None)),
        KeystoreError::ChainOutOfOrder
    );
}

#[test]
fn several_key_entries_are_refused_by_name() {
    let e = err(read_key_store(
        &fixture("two-keys.jks"),
        StoreType::Jks,
        Some(&pw("store-pass")),
        Some(&pw("key-pass")),
    ));
    let KeystoreError::SeveralKeyEntries(mut aliases) = e else {
        panic!("{e:?}")
    };
    aliases.sort();
    assert_eq!(aliases, ["other", "server"]);
}

#[test]
fn trust_stores() {
    let ca = pem_certs("ca.pem");
    let tp = pw("trust-pass");
    assert_eq!(
        read_trust_store(&fixture("truststore.jks"), StoreType::Jks, Some(&tp)).unwrap(),
        ca
    );
    // JKS without a password: no integrity check, the same certificates.
    assert_eq!(
        read_trust_store(&fixture("truststore.jks"), StoreType::Jks, None).unwrap(),
        ca
    );
    assert_eq!(
        read_trust_store(
            &fixture("truststore-keytool.p12"),
            StoreType::Pkcs12,
            Some(&tp)
        )
        .unwrap(),
        ca
    );
    // PKCS12 without a password: keytool encrypted the certificate, Java skips it.
    assert!(
        read_trust_store(&fixture("truststore-keytool.p12"), StoreType::Pkcs12, None)
            .unwrap()
            .is_empty()
    );
    // openssl's certificate bags lack Oracle's trusted-key-usage attribute: nothing trusted.
    assert!(read_trust_store(
        &fixture("truststore-openssl.p12"),
        StoreType::Pkcs12,
        Some(&tp)
    )
    .unwrap()
    .is_empty());
    assert_eq!(
        read_trust_store(&fixture("truststore.pem"), StoreType::Pem, None).unwrap(),
        ca
    );
    assert_eq!(
        pem_certificates(&String::from_utf8(fixture("chain.pem")).unwrap())
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        err(read_trust_store(
            &fixture("truststore.pem"),
            StoreType::Pem,
            Some(&tp)
        )),
        KeystoreError::PemStorePassword(Role::TrustStore)
    );
    for name in ["truststore.jks", "truststore-keytool.p12"] {
        let e = err(read_trust_store(
            &fixture(name),
            StoreType::Jks,
            Some(&pw("wrong")),
        ));
        assert_eq!(
            e,
            KeystoreError::IntegrityCheckFailed {
                role: Role::TrustStore
            },
            "{name}"
        );
    }
}

#[test]
fn a_key_store_as_trust_store_trusts_its_certificates_and_key_entries_leaves() {
    let mut trusted = read_trust_store(
        &fixture("server.jks"),
        StoreType::Jks,
        Some(&pw("store-pass")),
    )
    .unwrap();
    trusted.sort_by(|a, b| a.as_ref().cmp(b.as_ref()));
    let mut expected = [pem_certs("ca.pem"), pem_certs("server.pem")].concat();
    expected.sort_by(|a, b| a.as_ref().cmp(b.as_ref()));
    assert_eq!(trusted, expected);
    // A PKCS12 key store's key entry: its leaf only (the CA is no trusted entry there).
    let trusted = read_trust_store(
        &fixture("server-openssl.p12"),
        StoreType::Pkcs12,
        Some(&pw("store-pass")),
    )
    .unwrap();
    assert_eq!(trusted, pem_certs("server.pem"));
}

/// Every store, cut short anywhere and with bytes flipped: an error or (where Java would
/// accept what is left) a result, never a panic.
#[test]
fn damaged_stores_are_errors_not_panics() {
    let stores: [(&str, StoreType, Option<&str>, Option<&str>); 7] = [
        (
            "server.jks",
            StoreType::Jks,
            Some("store-pass"),
            Some("key-pass"),
        ),
        (
            "server-keytool.p12",
            StoreType::Pkcs12,
            Some("store-pass"),
            None,
        ),
        (
            "server-openssl.p12",
            StoreType::Pkcs12,
            Some("store-pass"),
            None,
        ),
        (
            "server-openssl-legacy.p12",
            StoreType::Pkcs12,
            Some("store-pass"),
            None,
        ),
        (
            "server-keystore-encrypted.pem",
            StoreType::Pem,
            None,
            Some("key-pass"),
        ),
        ("truststore.jks", StoreType::Jks, Some("trust-pass"), None),
        (
            "truststore-keytool.p12",
            StoreType::Pkcs12,
            Some("trust-pass"),
            None,
        ),
    ];
    for (name, kind, store_pw, key_pw) in stores {
        let bytes = fixture(name);
        let store_pw = store_pw.map(pw);
        let key_pw = key_pw.map(pw);
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let r = read_key_store(&bytes[..cut], kind, store_pw.as_ref(), key_pw.as_ref());
            if kind != StoreType::Pem {
                // Any cut loses the JKS digest or the PKCS12 MAC (or the structure): refused.
                err(r);
            }
            let _ = read_trust_store(
                &bytes[..cut],
                kind,
                store_pw.as_ref().filter(|_| kind != StoreType::Pem),
            );
            let _ = read_trust_store(&bytes[..cut], kind, None);
        }
        for at in (0..bytes.len()).step_by(step) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x5a;
            let r = read_key_store(&damaged, kind, store_pw.as_ref(), key_pw.as_ref());
            if kind != StoreType::Pem {
                // The digest and the MAC cover every byte but their own.
                let _ = r.map(|_| ()).map_err(|e| err::<()>(Err(e)));
            }
            let _ = read_trust_store(&damaged, kind, None);
        }
    }
}

#[test]
fn a_damaged_jks_is_an_integrity_failure() {
    let mut bytes = fixture("truststore.jks");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    let r = read_trust_store(&bytes, StoreType::Jks, Some(&pw("trust-pass")));
    assert!(r.is_err());
    assert_eq!(
        err(read_trust_store(
            &[0xce, 0xce, 0xce, 0xce, 0, 0, 0, 2],
            StoreType::Jks,
            None
        )),
        KeystoreError::Jceks {
            role: Role::TrustStore
        }
    );
    assert!(matches!(
        err(read_trust_store(b"not a store", StoreType::Pkcs12, None)),
        KeystoreError::Malformed { .. }
    ));
}

#[test]
fn key_material_debug_hides_the_key() {
    let m = read_key_store(&fixture("server-keystore.pem"), StoreType::Pem, None, None).unwrap();
    assert_eq!(
        format!("{m:?}"),
        "KeyMaterial { chain: 2 certificates, key: [hidden] }"
    );
}
