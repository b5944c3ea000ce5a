//! A certificate's subject as Java 17's `X500Principal.getName()` prints it (RFC 2253 form, as
//! `sun.security.x509.X500Name.getRFC2253Name` and `AVA.toRFC2253String` write it):
//!
//! - the RDNs last to first (the reverse of their DER order), joined by `,`; the attributes of a
//!   multi-valued RDN in their DER order (not sorted), joined by `+`;
//! - keywords for CN, C, L, ST, O, OU, STREET, DC and UID only; any other type (emailAddress,
//!   serialNumber, title, ...) as its dotted OID, and then its value as `#` and the lowercase hex
//!   of its DER encoding (tag, minimal length, content);
//! - string values (PrintableString, IA5String and GeneralString read as ISO-8859-1;
//!   UTF8String, and also TeletexString and BMPString, read as UTF-8 with malformed sequences
//!   replaced by U+FFFD, as Debian's Java 17.0.15 reads them: a BMPString's UTF-16 is not
//!   decoded as such) with `,=+<>#;"\` escaped by a backslash anywhere in the value, NUL written `\00`,
//!   each leading or trailing space or carriage return escaped by a backslash, and every other
//!   character, control characters and non-ASCII included, as it is; values of other types
//!   (INTEGER, OCTET STRING, ...) as `#` and hex.
//!
//! Subjects Java cannot read (a malformed OID) make
//! `CertificateFactory` refuse the certificate, so the TLS handshake fails there; here they are
//! an error, and the connection fails authentication.

use rustls_pki_types::CertificateDer;
use x509_parser::prelude::{FromDer, X509Certificate};

/// Why a client certificate's subject has no name.
#[derive(Debug, thiserror::Error)]
pub enum CertificateNameError {
    #[error(
        "the client certificate cannot be parsed ({0}); the client must present a valid X.509 \
         certificate"
    )]
    Certificate(String),
    #[error(
        "the client certificate's subject has an attribute type whose OID is not valid DER \
         ({0}); Java refuses such a certificate too: reissue it"
    )]
    InvalidOid(&'static str),
    #[error(
        "the client certificate's subject has a value with a multi-byte ASN.1 tag, which Java \
         cannot read; reissue the certificate"
    )]
    HighTagNumber,
}

// DER tags of the value types Java prints as strings (AVA.isDerString, non-canonical).
const UTF8_STRING: u8 = 0x0c;
const PRINTABLE_STRING: u8 = 0x13;
const T61_STRING: u8 = 0x14;
const IA5_STRING: u8 = 0x16;
const GENERAL_STRING: u8 = 0x1b;
const BMP_STRING: u8 = 0x1e;

/// The DER contents of the OIDs Java's RFC 2253 form names by keyword, with their keywords.
const KEYWORDS: &[(&[u8], &str)] = &[
    (&[0x55, 0x04, 0x03], "CN"),
    (&[0x55, 0x04, 0x06], "C"),
    (&[0x55, 0x04, 0x07], "L"),
    (&[0x55, 0x04, 0x08], "ST"),
    (&[0x55, 0x04, 0x0a], "O"),
    (&[0x55, 0x04, 0x0b], "OU"),
    (&[0x55, 0x04, 0x09], "STREET"),
    // 0.9.2342.19200300.100.1.25
    (
        &[0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19],
        "DC",
    ),
    // 0.9.2342.19200300.100.1.1
    (
        &[0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x01],
        "UID",
    ),
];

/// The certificate's subject exactly as Java 17's `X500Principal.getName()` prints it, which is
/// the name Kafka's SSL principal builder hands to `ssl.principal.mapping.rules`.
pub fn subject_name(cert: &CertificateDer<'_>) -> Result<String, CertificateNameError> {
    let (_, cert) = X509Certificate::from_der(cert.as_ref())
        .map_err(|e| CertificateNameError::Certificate(e.to_string()))?;
    let mut rdns = Vec::new();
    for rdn in cert.subject().iter() {
        let mut avas = Vec::new();
        for ava in rdn.iter() {
            let value = ava.attr_value();
            let tag = match value.header.raw_tag() {
                Some([tag]) => *tag,
                Some(_) => return Err(CertificateNameError::HighTagNumber),
                None => {
                    let number = value.header.tag().0;
                    if number >= 31 {
                        return Err(CertificateNameError::HighTagNumber);
                    }
                    ((value.header.class() as u8) << 6)
                        | if value.header.is_constructed() {
                            0x20
                        } else {
                            0
                        }
                        | number as u8
                }
            };
            avas.push(attribute(ava.attr_type().as_bytes(), tag, value.data)?);
        }
        rdns.push(avas.join("+"));
    }
    rdns.reverse();
    Ok(rdns.join(","))
}

/// One `type=value` as `AVA.toRFC2253String` writes it.
fn attribute(oid: &[u8], tag: u8, content: &[u8]) -> Result<String, CertificateNameError> {
    check_oid(oid)?;
    let keyword = KEYWORDS.iter().find(|(der, _)| *der == oid);
    let mut out = match keyword {
        Some((_, keyword)) => keyword.to_string(),
        None => oid_string(oid),
    };
    out.push('=');
    let text = match tag {
        _ if keyword.is_none() => None,
        UTF8_STRING | T61_STRING | BMP_STRING => Some(java_utf8(content)),
        PRINTABLE_STRING | IA5_STRING | GENERAL_STRING => {
            Some(content.iter().map(|&b| char::from(b)).collect())
        }
        _ => None,
    };
    match text {
        Some(text) => out.push_str(&escape(&text)),
        None => {
            out.push('#');
            out.push_str(&hex(&[tag]));
            out.push_str(&hex(&der_length(content.len())));
            out.push_str(&hex(content));
        }
    }
    Ok(out)
}

/// UTF-8 as Java 17's `new String(bytes, UTF_8)` decodes it (`String.decodeUTF8_UTF16`): each
/// malformed sequence becomes U+FFFD, but not in the same places as Rust's `from_utf8_lossy`
/// (an encoded surrogate is one U+FFFD, not three; a truncated sequence at the end is one).
fn java_utf8(src: &[u8]) -> String {
    const REPL: char = char::REPLACEMENT_CHARACTER;
    let cont = |b: u8| b & 0xc0 == 0x80;
    let mut out = String::with_capacity(src.len());
    let (mut sp, sl) = (0, src.len());
    while sp < sl {
        let b1 = src[sp];
        sp += 1;
        match b1 {
            0x00..=0x7f => out.push(char::from(b1)),
            0xc2..=0xdf => {
                if sp < sl {
                    let b2 = src[sp];
                    sp += 1;
                    if !cont(b2) {
                        out.push(REPL);
                        sp -= 1;
                    } else {
                        let c = (u32::from(b1 & 0x1f) << 6) | u32::from(b2 & 0x3f);
                        out.push(char::from_u32(c).unwrap_or(REPL));
                    }
                    continue;
                }
                out.push(REPL);
                break;
            }
            0xe0..=0xef => {
                let malformed_2 = |b2: u8| (b1 == 0xe0 && b2 & 0xe0 == 0x80) || !cont(b2);
                if sp + 1 < sl {
                    let (b2, b3) = (src[sp], src[sp + 1]);
                    sp += 2;
                    if malformed_2(b2) || !cont(b3) {
                        out.push(REPL);
                        sp -= 3;
                        // Java's malformed3: skip the lead byte, and the second if it fits.
                        sp += if malformed_2(src[sp + 1]) { 1 } else { 2 };
                    } else {
                        let c = (u32::from(b1 & 0x0f) << 12)
                            | (u32::from(b2 & 0x3f) << 6)
                            | u32::from(b3 & 0x3f);
                        // A surrogate is not a char: Java replaces the three bytes.
                        out.push(char::from_u32(c).unwrap_or(REPL));
                    }
                    continue;
                }
                if sp < sl && malformed_2(src[sp]) {
                    out.push(REPL);
                    continue;
                }
                out.push(REPL);
                break;
            }
            0xf0..=0xf7 => {
                let malformed_2 = |b2: u8| {
                    (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2))
                        || (b1 == 0xf4 && b2 & 0xf0 != 0x80)
                        || !cont(b2)
                };
                if sp + 2 < sl {
                    let (b2, b3, b4) = (src[sp], src[sp + 1], src[sp + 2]);
                    sp += 3;
                    let uc = (u32::from(b1 & 0x07) << 18)
                        | (u32::from(b2 & 0x3f) << 12)
                        | (u32::from(b3 & 0x3f) << 6)
                        | u32::from(b4 & 0x3f);
                    if !cont(b2) || !cont(b3) || !cont(b4) || !(0x10000..=0x10ffff).contains(&uc) {
                        out.push(REPL);
                        sp -= 4;
                        // Java's malformed4.
                        let (c1, c2) = (src[sp], src[sp + 1]);
                        sp += if c1 > 0xf4 || malformed_2(c2) {
                            1
                        } else if !cont(src[sp + 2]) {
                            2
                        } else {
                            3
                        };
                    } else {
                        out.push(char::from_u32(uc).unwrap_or(REPL));
                    }
                    continue;
                }
                if b1 > 0xf4 || (sp < sl && malformed_2(src[sp])) {
                    out.push(REPL);
                    continue;
                }
                sp += 1;
                out.push(REPL);
                if sp < sl && !cont(src[sp]) {
                    continue;
                }
                break;
            }
            _ => out.push(REPL),
        }
    }
    out
}

/// Java's escaping of a string value (RFC 2253 section 2.4, plus `=`, `#` anywhere and NUL).
fn escape(value: &str) -> String {
    const ESCAPED: &str = ",=+<>#;\"\\";
    let mut chars: Vec<char> = Vec::with_capacity(value.len() + 4);
    for c in value.chars() {
        if ESCAPED.contains(c) {
            chars.push('\\');
            chars.push(c);
        } else if c == '\0' {
            chars.extend(['\\', '0', '0']);
        } else {
            chars.push(c);
        }
    }
    // Leading and trailing spaces and carriage returns, counted on the escaped text.
    let blank = |c: &char| *c == ' ' || *c == '\r';
    let lead = chars.iter().take_while(|c| blank(c)).count();
    let trail = chars.len() - chars.iter().rev().take_while(|c| blank(c)).count();
    let mut out = String::with_capacity(chars.len() + 4);
    for (i, c) in chars.into_iter().enumerate() {
        if i < lead || i >= trail {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The checks Java's `ObjectIdentifier` makes of an encoded OID.
fn check_oid(oid: &[u8]) -> Result<(), CertificateNameError> {
    if oid.len() > 4096 {
        return Err(CertificateNameError::InvalidOid("longer than 4096 bytes"));
    }
    if oid.last().is_none_or(|b| b & 0x80 != 0) {
        return Err(CertificateNameError::InvalidOid("not ended"));
    }
    for (i, &b) in oid.iter().enumerate() {
        if b == 0x80 && (i == 0 || oid[i - 1] & 0x80 == 0) {
            return Err(CertificateNameError::InvalidOid(
                "a useless leading 0x80 octet",
            ));
        }
    }
    Ok(())
}

/// An OID's dotted form as Java's `ObjectIdentifier.toString` writes it, arcs of any size.
fn oid_string(oid: &[u8]) -> String {
    let mut out = String::new();
    let mut arc: Vec<u8> = Vec::new();
    let mut first = true;
    for &b in oid {
        arc.push(b & 0x7f);
        if b & 0x80 != 0 {
            continue;
        }
        let value = Decimal::from_base128(&arc);
        if first {
            match value.small() {
                Some(v) if v < 80 => out.push_str(&format!("{}.{}", v / 40, v % 40)),
                _ => {
                    out.push_str("2.");
                    out.push_str(&value.minus_80().to_string());
                }
            }
            first = false;
        } else {
            out.push('.');
            out.push_str(&value.to_string());
        }
        arc.clear();
    }
    out
}

/// An unsigned integer of any size, as base-10^9 limbs, least significant first.
struct Decimal(Vec<u32>);

impl Decimal {
    const BASE: u64 = 1_000_000_000;

    fn from_base128(digits: &[u8]) -> Decimal {
        let mut limbs = vec![0u32];
        for &d in digits {
            let mut carry = u64::from(d);
            for limb in limbs.iter_mut() {
                let v = u64::from(*limb) * 128 + carry;
                *limb = (v % Self::BASE) as u32;
                carry = v / Self::BASE;
            }
            while carry > 0 {
                limbs.push((carry % Self::BASE) as u32);
                carry /= Self::BASE;
            }
        }
        Decimal(limbs)
    }

    fn small(&self) -> Option<u64> {
        match self.0.as_slice() {
            [lo] => Some(u64::from(*lo)),
            _ => None,
        }
    }

    /// This less 80 (the first arc of an OID whose first component is 2); at least 80.
    fn minus_80(mut self) -> Decimal {
        let mut borrow = 80u64;
        for limb in self.0.iter_mut() {
            let v = u64::from(*limb);
            if v >= borrow {
                *limb = (v - borrow) as u32;
                break;
            }
            *limb = (v + Self::BASE - borrow) as u32;
            borrow = 1;
        }
        while self.0.len() > 1 && self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut limbs = self.0.iter().rev();
        write!(f, "{}", limbs.next().copied().unwrap_or(0))?;
        for limb in limbs {
            write!(f, "{limb:09}")?;
        }
        Ok(())
    }
}

/// A DER definite length in its minimal form.
fn der_length(len: usize) -> Vec<u8> {
    if len < 0x80 {
        return vec![len as u8];
    }
    let bytes: Vec<u8> = len
        .to_be_bytes()
        .into_iter()
        .skip_while(|&b| b == 0)
        .collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
