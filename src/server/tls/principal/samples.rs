//! Certificates with any subject, for tests: a fixed X.509 v3 certificate (a P-256 key, an
//! unverifiable signature, which neither Java's `CertificateFactory` nor a subject reader checks)
//! around a subject built attribute by attribute, with any OID, any tag and any bytes.

/// One attribute of a subject: OID (dotted), DER tag of the value, value contents.
#[derive(Clone, Debug)]
pub struct Attribute {
    pub oid: String,
    pub tag: u8,
    pub value: Vec<u8>,
}

pub const UTF8: u8 = 0x0c;
pub const PRINTABLE: u8 = 0x13;
pub const TELETEX: u8 = 0x14;
pub const IA5: u8 = 0x16;
pub const BMP: u8 = 0x1e;

/// An attribute whose value is `text` as a UTF8String.
pub fn utf8(oid: &str, text: &str) -> Attribute {
    raw(oid, UTF8, text.as_bytes())
}

/// An attribute whose value is `text` as a PrintableString (no check of its characters).
pub fn printable(oid: &str, text: &str) -> Attribute {
    raw(oid, PRINTABLE, text.as_bytes())
}

/// An attribute whose value is `text` in UTF-16BE as a BMPString.
pub fn bmp(oid: &str, text: &str) -> Attribute {
    let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    raw(oid, BMP, &bytes)
}

/// An attribute of any tag and contents.
pub fn raw(oid: &str, tag: u8, value: &[u8]) -> Attribute {
    Attribute {
        oid: oid.to_string(),
        tag,
        value: value.to_vec(),
    }
}

/// A DER element: `tag`, minimal length, `content`.
pub fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|&b| b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// The DER contents of a dotted OID (panics on a malformed one: test input).
pub fn oid_contents(dotted: &str) -> Vec<u8> {
    let arcs: Vec<u128> = dotted
        .split('.')
        .map(|a| a.parse().expect("OID arc"))
        .collect();
    assert!(arcs.len() >= 2, "an OID has two arcs or more: {dotted}");
    let mut out = Vec::new();
    let mut push = |mut v: u128| {
        let mut groups = vec![(v & 0x7f) as u8];
        v >>= 7;
        while v > 0 {
            groups.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        out.extend(groups.into_iter().rev());
    };
    push(arcs[0] * 40 + arcs[1]);
    for &arc in &arcs[2..] {
        push(arc);
    }
    out
}

/// The DER of a Name: `rdns` in DER order (the first is the most significant, printed last),
/// each a SET of its attributes in the order given (not sorted, as DER would want).
pub fn name(rdns: &[Vec<Attribute>]) -> Vec<u8> {
    let mut seq = Vec::new();
    for rdn in rdns {
        let mut set = Vec::new();
        for a in rdn {
            let mut ava = der(0x06, &oid_contents(&a.oid));
            ava.extend(der(a.tag, &a.value));
            set.extend(der(0x30, &ava));
        }
        seq.extend(der(0x31, &set));
    }
    der(0x30, &seq)
}

/// A P-256 public key (SubjectPublicKeyInfo); its private half is not kept anywhere.
const SPKI: &str = "3059301306072a8648ce3d020106082a8648ce3d03010703420004a1af1485bd0ff19f6899d3\
                    93beca225b4d38378068fc4ca80893825164a8d9ec1d96b11ae83d912c453f0f366575dd2dcd\
                    12a5465e87537da2cb91e27ff8e910";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A certificate whose subject is the DER Name `subject` (see [`name`]).
pub fn certificate_with_subject_der(subject: &[u8]) -> Vec<u8> {
    let ecdsa_sha256 = der(0x30, &der(0x06, &oid_contents("1.2.840.10045.4.3.2")));
    let mut tbs = der(0xa0, &der(0x02, &[2]));
    tbs.extend(der(0x02, &[0x01, 0x23, 0x45, 0x67]));
    tbs.extend(&ecdsa_sha256);
    tbs.extend(name(&[vec![utf8("2.5.4.3", "kraftd test issuer")]]));
    let mut validity = der(0x17, b"250101000000Z");
    validity.extend(der(0x17, b"450101000000Z"));
    tbs.extend(der(0x30, &validity));
    tbs.extend_from_slice(subject);
    tbs.extend(unhex(SPKI));
    let mut cert = der(0x30, &tbs);
    cert.extend(&ecdsa_sha256);
    let signature = der(0x30, &[der(0x02, &[1]), der(0x02, &[1])].concat());
    cert.extend(der(0x03, &[&[0u8][..], &signature].concat()));
    der(0x30, &cert)
}

/// A certificate whose subject has `rdns` (see [`name`]).
pub fn certificate(rdns: &[Vec<Attribute>]) -> Vec<u8> {
    certificate_with_subject_der(&name(rdns))
}
