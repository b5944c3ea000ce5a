//! PEM stores as Kafka's `DefaultSslEngineFactory.PemStore` reads them.
//!
//! Kafka finds blocks with a regular expression of its own (`PemParser`), not a PEM library:
//!
//! ```text
//! -+BEGIN\s*.*NAME[^-]*-+\s+(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*([a-zA-Z0-9/+=\s]*)-+END\s*.*NAME[^-]*-+\s+
//! ```
//!
//! with NAME `CERTIFICATE` or `PRIVATE\s+KEY`, searched (`Matcher.find`) through the text with
//! a newline appended. So text around blocks is skipped, `ENCRYPTED PRIVATE KEY` and `RSA
//! PRIVATE KEY` blocks are key blocks too, header lines with a colon are skipped, and a block
//! that does not match (a stray character in its base64, say) is silently passed over. The
//! body is decoded by `Base64.getDecoder()` once whitespace is removed (padding optional, a
//! dangling character an error). This module runs that same expression with a backtracking
//! matcher of the same leftmost-first semantics (bounded: each instruction and position is
//! visited once per search), over Java's `\s` (`[ \t\n\x0B\f\r]`) and `.` (no line
//! terminator).
//!
//! The key: exactly one block. Without `ssl.key.password` it must be an unencrypted PKCS#8 key
//! of an algorithm among Kafka's key factories (RSA, DSA, EC: so not Ed25519); with one, an
//! `EncryptedPrivateKeyInfo` (Java then fails on an unencrypted key, as this does) in a
//! PBES1-style scheme: Kafka on Java 17 cannot decrypt PBES2 (openssl 3's default), see
//! [`refuse_pbes2`]. The chain:
//! every certificate block, in order; Java's PKCS12 `setKeyEntry` (where Kafka puts them)
//! refuses a chain in which a certificate's issuer is not the next one's subject, or with a
//! repeat.

use rustls_pki_types::CertificateDer;

use super::der;
use super::pbe::{self, PbeError};
use super::{certificate, key_material, KeyMaterial, KeystoreError, Role};
use crate::controller::java::base64;
use crate::server::config::Password;

#[derive(Clone, Copy)]
enum Class {
    Char(char),
    /// `\s`
    Space,
    /// `.`
    Dot,
    /// `[^\r\n]`
    NotNewline,
    /// `[\r\n]`
    Newline,
    /// `[^-]`
    NotDash,
    /// `[a-zA-Z0-9/+=\s]`
    Base64,
}

impl Class {
    fn matches(self, c: char) -> bool {
        let space = matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
        match self {
            Class::Char(x) => c == x,
            Class::Space => space,
            Class::Dot => !matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'),
            Class::NotNewline => !matches!(c, '\r' | '\n'),
            Class::Newline => matches!(c, '\r' | '\n'),
            Class::NotDash => c != '-',
            Class::Base64 => c.is_ascii_alphanumeric() || matches!(c, '/' | '+' | '=') || space,
        }
    }
}

enum Inst {
    Class(Class),
    /// Try the first, then the second.
    Split(usize, usize),
    Jump(usize),
    Save(usize),
    Match,
}

struct Program(Vec<Inst>);

impl Program {
    fn one(&mut self, c: Class) {
        self.0.push(Inst::Class(c));
    }

    fn literal(&mut self, s: &str) {
        s.chars().for_each(|c| self.one(Class::Char(c)));
    }

    /// `c*`, greedy.
    fn star(&mut self, c: Class) {
        let at = self.0.len();
        self.0.push(Inst::Split(at + 1, at + 3));
        self.one(c);
        self.0.push(Inst::Jump(at));
    }

    fn plus(&mut self, c: Class) {
        self.one(c);
        self.star(c);
    }

    /// `NAME`: `CERTIFICATE` or `PRIVATE\s+KEY`.
    fn name(&mut self, name: &str) {
        for (i, word) in name.split(' ').enumerate() {
            if i > 0 {
                self.plus(Class::Space);
            }
            self.literal(word);
        }
    }

    /// `-+KIND\s*.*NAME[^-]*-+\s+`
    fn boundary(&mut self, kind: &str, name: &str) {
        self.plus(Class::Char('-'));
        self.literal(kind);
        self.star(Class::Space);
        self.star(Class::Dot);
        self.name(name);
        self.star(Class::NotDash);
        self.plus(Class::Char('-'));
        self.plus(Class::Space);
    }

    fn kafka_pem(name: &str) -> Program {
        let mut p = Program(Vec::new());
        p.boundary("BEGIN", name);
        // (?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*
        let at = p.0.len();
        p.0.push(Inst::Split(at + 1, usize::MAX));
        p.star(Class::Space);
        p.star(Class::NotNewline);
        p.one(Class::Char(':'));
        p.star(Class::NotNewline);
        p.plus(Class::Newline);
        p.0.push(Inst::Jump(at));
        let after = p.0.len();
        p.0[at] = Inst::Split(at + 1, after);
        p.0.push(Inst::Save(0));
        p.star(Class::Base64);
        p.0.push(Inst::Save(1));
        p.boundary("END", name);
        p.0.push(Inst::Match);
        p
    }

    /// `Matcher.find()` from `from`: the leftmost match's end and group 1. `visited` is cleared
    /// here, so that a search costs what it visits, not the text's length.
    fn find(
        &self,
        text: &[char],
        from: usize,
        visited: &mut Visited,
    ) -> Option<(usize, usize, usize)> {
        enum Frame {
            Explore(usize, usize),
            Restore(usize, Option<usize>),
        }
        let width = text.len() + 1;
        visited.clear();
        let mut stack = Vec::new();
        for start in from..text.len() {
            if text[start] != '-' {
                continue;
            }
            let mut groups: [Option<usize>; 2] = [None; 2];
            stack.clear();
            stack.push(Frame::Explore(0, start));
            while let Some(frame) = stack.pop() {
                let (mut pc, mut pos) = match frame {
                    Frame::Restore(slot, value) => {
                        groups[slot] = value;
                        continue;
                    }
                    Frame::Explore(pc, pos) => (pc, pos),
                };
                loop {
                    if !visited.insert(pc * width + pos) {
                        break;
                    }
                    match self.0[pc] {
                        Inst::Class(c) => {
                            if pos < text.len() && c.matches(text[pos]) {
                                pc += 1;
                                pos += 1;
                            } else {
                                break;
                            }
                        }
                        Inst::Split(first, second) => {
                            stack.push(Frame::Explore(second, pos));
                            pc = first;
                        }
                        Inst::Jump(to) => pc = to,
                        Inst::Save(slot) => {
                            stack.push(Frame::Restore(slot, groups[slot]));
                            groups[slot] = Some(pos);
                            pc += 1;
                        }
                        Inst::Match => {
                            let (Some(a), Some(b)) = (groups[0], groups[1]) else {
                                return None;
                            };
                            return Some((pos, a, b));
                        }
                    }
                }
            }
        }
        None
    }
}

/// The (instruction, position) pairs a search has been through: a bit set sized once per text,
/// cleared by the words it touched.
struct Visited {
    bits: Vec<u64>,
    touched: Vec<usize>,
}

impl Visited {
    fn new(states: usize) -> Visited {
        Visited {
            bits: vec![0; states.div_ceil(64)],
            touched: Vec::new(),
        }
    }

    /// Marks `state`; false if it was marked already.
    fn insert(&mut self, state: usize) -> bool {
        let (word, bit) = (state / 64, 1u64 << (state % 64));
        if self.bits[word] & bit != 0 {
            return false;
        }
        if self.bits[word] == 0 {
            self.touched.push(word);
        }
        self.bits[word] |= bit;
        true
    }

    fn clear(&mut self) {
        for word in self.touched.drain(..) {
            self.bits[word] = 0;
        }
    }
}

/// Every NAME block of `pem`, decoded, as Kafka's `PemParser.pemEntries`.
fn entries(pem: &str, name: &str) -> Result<Vec<Vec<u8>>, KeystoreError> {
    let program = Program::kafka_pem(name);
    let text: Vec<char> = pem.chars().chain(std::iter::once('\n')).collect();
    let mut out = Vec::new();
    let mut visited = Visited::new(program.0.len() * (text.len() + 1));
    let mut from = 0;
    while let Some((end, a, b)) = program.find(&text, from, &mut visited) {
        let body: String = text[a..b]
            .iter()
            .copied()
            .filter(|&c| !Class::Space.matches(c))
            .collect();
        out.push(base64::decode(&body).map_err(|_| KeystoreError::PemBase64)?);
        from = end;
    }
    Ok(out)
}

/// The certificates of a PEM text (`ssl.truststore.certificates`, a PEM trust store file):
/// each once, in order.
pub fn pem_certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, KeystoreError> {
    let mut certs: Vec<CertificateDer<'static>> = Vec::new();
    for cert in chain(pem, Role::TrustStore)? {
        if !certs.contains(&cert) {
            certs.push(cert);
        }
    }
    Ok(certs)
}

fn chain(pem: &str, role: Role) -> Result<Vec<CertificateDer<'static>>, KeystoreError> {
    let blocks = entries(pem, "CERTIFICATE")?;
    if blocks.is_empty() {
        return Err(KeystoreError::PemNoCertificate);
    }
    blocks
        .iter()
        .enumerate()
        .map(|(i, der)| certificate(der, role, i + 1))
        .collect()
}

/// The OIDs of Kafka's PEM key factories: RSA, DSA, EC.
const KEY_ALGORITHMS: [&str; 3] = [
    "1.2.840.113549.1.1.1",
    "1.2.840.10040.4.1",
    "1.2.840.10045.2.1",
];

fn kafka_key_algorithm(pkcs8: &[u8]) -> Result<(), KeystoreError> {
    let info =
        pkcs8::PrivateKeyInfoRef::try_from(pkcs8).map_err(|_| KeystoreError::PemKeyFormat)?;
    let oid = info.algorithm.oid.to_string();
    if KEY_ALGORITHMS.contains(&oid.as_str()) {
        Ok(())
    } else {
        Err(KeystoreError::PemKeyFormat)
    }
}

/// Whether `der` has the shape Java's `EncryptedPrivateKeyInfo` constructor takes: an
/// algorithm identifier and an OCTET STRING, nothing else.
fn is_encrypted_key_info(der: &[u8]) -> bool {
    let Ok(info) = der::single(der, true, "encrypted private key") else {
        return false;
    };
    let mut fields = info.reader();
    info.tag == der::SEQUENCE
        && fields.expect(der::SEQUENCE, "algorithm").is_ok()
        && fields.expect(der::OCTET_STRING, "data").is_ok()
        && fields.is_empty()
}

/// Kafka decrypts the key with `SecretKeyFactory.getInstance(EncryptedPrivateKeyInfo
/// .getAlgName())`: Java 17 names a PBES2 key "PBES2", for which it has no factory ("PBES2
/// SecretKeyFactory not available"), so only PBES1-style keys read (of which kraftd decrypts
/// the PKCS#12 3DES and RC2-40 ones, `openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES`).
fn refuse_pbes2(der: &[u8]) -> Result<(), KeystoreError> {
    let algorithm = der::single(der, true, "encrypted private key")
        .and_then(|info| info.reader().expect(der::SEQUENCE, "algorithm"))
        .map_err(|_| KeystoreError::PemKeyFormat)?;
    match pbe::scheme(algorithm.raw) {
        Ok(pbe::Scheme::Pbes2) => Err(KeystoreError::PemKeyPbes2),
        _ => Ok(()),
    }
}

/// The inline `ssl.keystore.key` and `ssl.keystore.certificate.chain` (or a PEM key store
/// file, passed as both): the key, opened with `key_password` if given, and its chain.
pub fn pem_key_material(
    key_pem: &str,
    chain_pem: &str,
    key_password: Option<&Password>,
) -> Result<KeyMaterial, KeystoreError> {
    let mut keys = entries(key_pem, "PRIVATE KEY")?;
    let der = match keys.len() {
        0 => return Err(KeystoreError::PemNoKey),
        1 => keys.pop().expect("one key"),
        n => return Err(KeystoreError::PemSeveralKeys(n)),
    };
    let pkcs8 = match key_password {
        None => {
            if is_encrypted_key_info(&der) {
                return Err(KeystoreError::PemKeyEncrypted);
            }
            der
        }
        Some(password) => {
            if !is_encrypted_key_info(&der) {
                return Err(
                    if pkcs8::PrivateKeyInfoRef::try_from(der.as_slice()).is_ok() {
                        KeystoreError::PemKeyNotEncrypted
                    } else {
                        KeystoreError::PemKeyFormat
                    },
                );
            }
            refuse_pbes2(&der)?;
            pbe::decrypt_key_info(&der, password.expose()).map_err(|e| match e {
                PbeError::Malformed(_) => KeystoreError::PemKeyFormat,
                PbeError::Unsupported(what) => KeystoreError::UnsupportedProtection {
                    role: Role::KeyStore,
                    what,
                },
                PbeError::Failed => KeystoreError::KeyNotRecoverable,
            })?
        }
    };
    kafka_key_algorithm(&pkcs8)?;
    let chain = chain(chain_pem, Role::KeyStore)?;
    check_chain_order(&chain)?;
    key_material(chain, pkcs8)
}

/// `PKCS12KeyStore.validateChain`: each certificate's issuer is the next one's subject, and no
/// certificate twice.
fn check_chain_order(chain: &[CertificateDer<'static>]) -> Result<(), KeystoreError> {
    let parsed: Vec<_> = chain
        .iter()
        .map(|c| {
            let (_, cert) = x509_parser::parse_x509_certificate(c).expect("parsed before");
            (
                cert.subject().as_raw().to_vec(),
                cert.issuer().as_raw().to_vec(),
            )
        })
        .collect();
    let ordered = parsed.windows(2).all(|w| w[0].1 == w[1].0);
    let distinct = chain
        .iter()
        .enumerate()
        .all(|(i, c)| !chain[..i].contains(c));
    if ordered && distinct {
        Ok(())
    } else {
        Err(KeystoreError::ChainOutOfOrder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_as_kafka_finds_them() {
        let text = "Bag Attributes\n    friendlyName: x\n-----BEGIN CERTIFICATE-----\nTWFu\n-----END CERTIFICATE-----\n\
                    junk -----BEGIN TRUSTED CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\nTWE=\n-----END TRUSTED CERTIFICATE-----";
        assert_eq!(
            entries(text, "CERTIFICATE").unwrap(),
            vec![b"Man".to_vec(), b"Ma".to_vec()]
        );
        // A block with a character outside base64 is passed over, not an error.
        let skipped = "-----BEGIN CERTIFICATE-----\nTW!u\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nTQ\n-----END CERTIFICATE-----";
        assert_eq!(
            entries(skipped, "CERTIFICATE").unwrap(),
            vec![b"M".to_vec()]
        );
        let keys = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nTWFu\n-----END ENCRYPTED PRIVATE KEY-----\n-----BEGIN RSA PRIVATE  KEY-----\nTWFu\n-----END RSA PRIVATE KEY-----";
        assert_eq!(entries(keys, "PRIVATE KEY").unwrap().len(), 2);
        assert!(entries(
            "-----BEGIN CERTIFICATE-----TWFu-----END CERTIFICATE-----",
            "CERTIFICATE"
        )
        .unwrap()
        .is_empty());
        assert!(entries("", "CERTIFICATE").unwrap().is_empty());
    }
}
