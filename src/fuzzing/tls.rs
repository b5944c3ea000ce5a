//! Fuzz bodies of the TLS decoders: key and trust stores, and client principals.

/// Any bytes as a key store and a trust store of each type (with the fixtures' passwords and
/// without), and as inline PEM: read or refused with an error, never a panic; what reads holds
/// a certificate.
pub fn keystore_bytes(data: &[u8]) {
    use crate::server::config::Password;
    use crate::server::tls::keystore::{
        pem_certificates, pem_key_material, read_key_store, read_trust_store, StoreType,
    };
    let store = Password::new("store-pass");
    let key = Password::new("key-pass");
    let trust = Password::new("trust-pass");
    for kind in [StoreType::Jks, StoreType::Pkcs12, StoreType::Pem] {
        for (s, k) in [
            (Some(&store), Some(&key)),
            (Some(&store), None),
            (None, Some(&key)),
        ] {
            if let Ok(m) = read_key_store(data, kind, s, k) {
                assert!(!m.chain.is_empty(), "key material without a certificate");
            }
        }
        for p in [None, Some(&trust)] {
            let _ = read_trust_store(data, kind, p);
        }
    }
    let text = String::from_utf8_lossy(data);
    for k in [None, Some(&key)] {
        if let Ok(m) = pem_key_material(&text, &text, k) {
            assert!(
                !m.chain.is_empty(),
                "PEM key material without a certificate"
            );
        }
    }
    if let Ok(certs) = pem_certificates(&text) {
        assert!(!certs.is_empty(), "PEM certificates read as none");
    }
}

#[cfg(test)]
mod keystore_tests {
    use proptest::prelude::*;

    macro_rules! fixture {
        ($name:literal) => {
            (
                $name,
                &include_bytes!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/keystores/",
                    $name
                ))[..],
            )
        };
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_key_and_trust_stores(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            super::keystore_bytes(&data);
        }

        #[test]
        fn pem_shaped_text_as_stores(
            blocks in proptest::collection::vec(
                ("[A-Z ]{0,12}(CERTIFICATE|PRIVATE KEY|PRIVATE  KEY)", "[A-Za-z0-9+/= \n:-]{0,80}"),
                0..4,
            )
        ) {
            let text: String = blocks
                .iter()
                .map(|(name, body)| format!("-----BEGIN {name}-----\n{body}\n-----END {name}-----\n"))
                .collect();
            super::keystore_bytes(text.as_bytes());
        }
    }

    /// The real stores, cut short and with a byte changed at many places (each store's
    /// passwords are the fuzz body's, so the changes reach the entries and the crypto).
    #[test]
    fn mutations_of_real_stores() {
        for (name, input) in [
            fixture!("server.jks"),
            fixture!("truststore.jks"),
            fixture!("server-keytool.p12"),
            fixture!("server-openssl-legacy.p12"),
            fixture!("truststore-keytool.p12"),
            fixture!("server-keystore-encrypted.pem"),
        ] {
            assert!(!input.is_empty(), "{name}");
            super::keystore_bytes(input);
            let step = (input.len() / 40).max(1);
            for i in (0..input.len()).step_by(step) {
                let mut m = input.to_vec();
                m[i] ^= 0x41;
                super::keystore_bytes(&m);
                super::keystore_bytes(&input[..i]);
            }
        }
    }
}

// ---- TLS client principals (src/server/tls/principal) ----

/// `ssl.principal.mapping.rules` and certificate subjects from any bytes. The first byte picks:
/// rules (up to the first NUL) and names (NUL-separated after it) through `PrincipalMapper`;
/// the bytes as a certificate through `subject_name`; or a certificate whose subject is built
/// from the bytes (OID arc, tag and value per attribute). None may panic; a mapper that parses
/// maps every name to a name or an error, and `DEFAULT` maps a name to itself.
pub fn principal_rules(data: &[u8]) {
    use crate::server::tls::principal::{samples, subject_name, PrincipalMapper};
    use rustls_pki_types::CertificateDer;
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let mut parts = rest.split(|&b| b == 0);
            let rules = String::from_utf8_lossy(parts.next().unwrap_or_default());
            let names: Vec<String> = parts
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            if let Ok(mapper) = PrincipalMapper::parse(&rules) {
                for name in &names {
                    let _ = mapper.map(name);
                }
            }
            let default = PrincipalMapper::default();
            for name in &names {
                assert_eq!(default.map(name).as_deref(), Ok(name.as_str()));
            }
        }
        1 => {
            let _ = subject_name(&CertificateDer::from(rest));
        }
        _ => {
            // Attributes of (arc, tag, length, value) under 1.2.<arc>, or a keyword's OID.
            const OIDS: &[&str] = &["2.5.4.3", "2.5.4.11", "0.9.2342.19200300.100.1.25"];
            let mut rdns = Vec::new();
            let mut bytes = rest;
            while let [arc, tag, len, tail @ ..] = bytes {
                let len = usize::from(*len).min(tail.len());
                let oid = match OIDS.get(usize::from(*arc)) {
                    Some(oid) => oid.to_string(),
                    None => format!("1.2.{arc}"),
                };
                let attribute = samples::raw(&oid, *tag & 0x1f | *tag & 0xc0, &tail[..len]);
                match rdns.last_mut() {
                    Some(rdn) if arc % 2 == 1 => Vec::push(rdn, attribute),
                    _ => rdns.push(vec![attribute]),
                }
                bytes = &tail[len..];
            }
            let _ = subject_name(&CertificateDer::from(samples::certificate(&rdns)));
        }
    }
}

#[cfg(test)]
mod principal_rules_tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_rules_names_and_certificates(
            data in proptest::collection::vec(any::<u8>(), 0..300)
        ) {
            super::principal_rules(&data);
        }

        /// Rule-shaped text: Java regex syntax, replacements and flags, and DN-like names.
        #[test]
        fn rule_shaped_rules_and_names(
            rules in proptest::collection::vec(
                ("[\\^$.*+?()\\[\\]{}|\\\\a-cA-C0-9=,:<>!pPQEdDsSwWbBkxu&-]{0,24}",
                 "[$\\\\0-9a-c{}]{0,8}", "(L|U|)"),
                1..4,
            ),
            names in proptest::collection::vec("[a-cA-C=,\\\\+ \n\u{3a3}\u{1f600}]{0,16}", 0..4),
        ) {
            let rules: Vec<String> = rules
                .iter()
                .map(|(p, r, f)| format!("RULE:{}/{r}/{f}", p.replace('/', "\\/")))
                .collect();
            let mut data = vec![0u8];
            data.extend(rules.join(",").as_bytes());
            for name in &names {
                data.push(0);
                data.extend(name.as_bytes());
            }
            super::principal_rules(&data);
        }
    }
}
