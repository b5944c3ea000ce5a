//! The four SCRAM messages (RFC 5802 §7) as Kafka's `ScramMessages` reads and writes them.
//!
//! Java matches each message whole against a regular expression over its UTF-8 text. Every
//! character class there is ASCII (`\x01`-`\x7F`), so a message with a NUL, a non-ASCII byte or
//! malformed UTF-8 never matches; the parsers below check the same grammar by hand, on bytes:
//!
//! - client-first: `n,[a=SASLNAME],[m=VALUE,]n=SASLNAME,r=PRINTABLE(,ALPHA=VALUE)*` (only the
//!   gs2 flag `n`: no channel binding);
//! - server-first: `[m=VALUE,]r=PRINTABLE,s=BASE64,i=[0-9]+(,ALPHA=VALUE)*`;
//! - client-final: `c=BASE64,r=PRINTABLE(,ALPHA=VALUE)*,p=BASE64`;
//! - server-final: `e=VALUE_SAFE`, or `v=BASE64(,ALPHA=VALUE)*`.
//!
//! BASE64 may be empty and must be padded; Java's decoder ignores non-zero bits after the last
//! character, and so does [`B64`]. Extensions are kept only from the client-first message (as a
//! map: a repeated key keeps its last value); Java rebuilds the `client-first-message-bare` of
//! the AuthMessage from the parsed parts (dropping `m=`), and the client-final part without its
//! extensions, and so does [`ClientFirst::bare`] and [`ClientFinal::without_proof`].

use base64::alphabet::STANDARD;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// Base64 as `java.util.Base64` encodes (padded) and decodes (non-zero trailing bits ignored).
pub const B64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// Which message did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    ClientFirst,
    ServerFirst,
    ClientFinal,
    ServerFinal,
}

impl MessageKind {
    /// As Java's messages name it ("client first", ...).
    pub fn java_name(self) -> &'static str {
        match self {
            MessageKind::ClientFirst => "client first",
            MessageKind::ServerFirst => "server first",
            MessageKind::ClientFinal => "client final",
            MessageKind::ServerFinal => "server final",
        }
    }
}

/// Why a message does not parse: the part of the grammar it breaks (kraftd's words; Java only
/// says the format is invalid), or the two iteration-count faults Java words apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("{0}")]
    Grammar(&'static str),
    /// Digits that do not fit an `int`.
    #[error("the iteration count is too large for a 32-bit integer")]
    IterationsOverflow,
    /// Zero.
    #[error("the iteration count {0} is not positive")]
    IterationsNotPositive(i32),
}

type Parsed<T> = Result<T, Malformed>;

fn grammar<T>(what: &'static str) -> Parsed<T> {
    Err(Malformed::Grammar(what))
}

/// The message as text, if every byte is in `\x01`-`\x7F` (no other text can match).
fn ascii(bytes: &[u8]) -> Parsed<&str> {
    if bytes.iter().any(|&b| b == 0 || b > 0x7F) {
        return grammar("it holds a NUL or non-ASCII byte");
    }
    std::str::from_utf8(bytes).or(grammar("it is not UTF-8"))
}

/// `[\x01-\x7F&&[^,]]+` (the caller has split at commas and checked ASCII).
fn is_value(s: &str) -> bool {
    !s.is_empty()
}

/// `[\x01-\x7F&&[^=,]]+`.
fn is_value_safe(s: &str) -> bool {
    !s.is_empty() && !s.contains('=')
}

/// `[\x21-\x7E&&[^,]]+`.
fn is_printable(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7E).contains(&b) && b != b',')
}

/// `(?:[\x01-\x7F&&[^=,]]|=2C|=3D)+`.
fn is_saslname(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'=' {
            match b.get(i + 1..i + 3) {
                Some(b"2C") | Some(b"3D") => i += 3,
                _ => return false,
            }
        } else {
            i += 1;
        }
    }
    true
}

/// `(?:X{4})*(?:X{3}=|X{2}==)?` with X in `[a-zA-Z0-9/+]` (empty allowed).
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return false;
    }
    let body = match b {
        [head @ .., x, b'=', b'='] if *x != b'=' => head,
        [head @ .., b'='] => head,
        _ => b,
    };
    body.iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'/' || *c == b'+')
}

fn decode_base64(s: &str, what: &'static str) -> Parsed<Vec<u8>> {
    if !is_base64(s) {
        return grammar(what);
    }
    B64.decode(s).or(grammar(what))
}

/// `ALPHA=VALUE` segments (each already free of commas), as a map in first-seen order whose
/// repeated keys keep their last value (Java's `Utils.parseMap`).
fn extensions<'a>(segments: impl Iterator<Item = &'a str>) -> Parsed<Vec<(String, String)>> {
    let mut map: Vec<(String, String)> = Vec::new();
    for segment in segments {
        let key_len = segment.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (key, rest) = segment.split_at(key_len);
        let Some(value) = rest.strip_prefix('=') else {
            return grammar("an extension is not letters, '=' and a value");
        };
        if key.is_empty() || !is_value(value) {
            return grammar("an extension is not letters, '=' and a value");
        }
        match map.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_string(),
            None => map.push((key.to_string(), value.to_string())),
        }
    }
    Ok(map)
}

/// `s` up to its first comma, and what follows the comma (`None` without a comma).
fn until_comma(s: &str) -> (&str, Option<&str>) {
    match s.split_once(',') {
        Some((head, tail)) => (head, Some(tail)),
        None => (s, None),
    }
}

/// A parsed client-first message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFirst {
    /// The gs2 header's `a=` as sent (still escaped; Java compares it so), or empty.
    pub authzid: String,
    /// The user name as sent, escaped (`=2C`, `=3D`).
    pub saslname: String,
    pub nonce: String,
    pub extensions: Vec<(String, String)>,
}

impl ClientFirst {
    pub fn parse(bytes: &[u8]) -> Parsed<ClientFirst> {
        let s = ascii(bytes)?;
        let Some(rest) = s.strip_prefix("n,") else {
            return grammar("the gs2 header does not start with \"n,\"");
        };
        let (authzid, rest) = match rest.strip_prefix("a=") {
            Some(r) => match until_comma(r) {
                (name, Some(after)) if is_saslname(name) => (name, after),
                _ => return grammar("the gs2 header's authorization id is not a saslname"),
            },
            None => match rest.strip_prefix(',') {
                Some(after) => ("", after),
                None => return grammar("the gs2 header is neither \"n,,\" nor \"n,a=...,\""),
            },
        };
        let rest = match rest.strip_prefix("m=") {
            Some(r) => match until_comma(r) {
                (value, Some(after)) if is_value(value) => after,
                _ => return grammar("the reserved m= attribute is empty or unterminated"),
            },
            None => rest,
        };
        let Some(rest) = rest.strip_prefix("n=") else {
            return grammar("the user name attribute n= is missing");
        };
        let (saslname, Some(rest)) = until_comma(rest) else {
            return grammar("the nonce attribute r= is missing");
        };
        if !is_saslname(saslname) {
            return grammar("the user name is not a saslname (an '=' must start =2C or =3D)");
        }
        let Some(rest) = rest.strip_prefix("r=") else {
            return grammar("the nonce attribute r= is missing");
        };
        let (nonce, tail) = until_comma(rest);
        if !is_printable(nonce) {
            return grammar("the nonce is empty or not printable ASCII");
        }
        let extensions = match tail {
            Some(t) => extensions(t.split(','))?,
            None => Vec::new(),
        };
        Ok(ClientFirst {
            authzid: authzid.to_string(),
            saslname: saslname.to_string(),
            nonce: nonce.to_string(),
            extensions,
        })
    }

    /// `client-first-message-bare` as Java rebuilds it for the AuthMessage.
    pub fn bare(&self) -> String {
        let mut s = format!("n={},r={}", self.saslname, self.nonce);
        for (k, v) in &self.extensions {
            s.push_str(&format!(",{k}={v}"));
        }
        s
    }

    /// The whole message: gs2 header and bare part.
    pub fn to_message(&self) -> String {
        format!("n,{},{}", self.authzid, self.bare())
    }

    /// Whether the `tokenauth` extension asks for delegation-token authentication
    /// (`Boolean.parseBoolean`: "true" in any case).
    pub fn token_authenticated(&self) -> bool {
        self.extensions
            .iter()
            .any(|(k, v)| k == "tokenauth" && v.eq_ignore_ascii_case("true"))
    }
}

/// A parsed or built server-first message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFirst {
    /// The client's nonce followed by the server's.
    pub nonce: String,
    pub salt: Vec<u8>,
    pub iterations: i32,
}

impl ServerFirst {
    pub fn parse(bytes: &[u8]) -> Parsed<ServerFirst> {
        let s = ascii(bytes)?;
        let mut segments = s.split(',').peekable();
        if let Some(reserved) = segments.peek().and_then(|f| f.strip_prefix("m=")) {
            if !is_value(reserved) {
                return grammar("the reserved m= attribute is empty");
            }
            segments.next();
        }
        let nonce = match segments.next().and_then(|x| x.strip_prefix("r=")) {
            Some(n) if is_printable(n) => n,
            _ => return grammar("the nonce attribute r= is missing, empty or not printable"),
        };
        let salt = match segments.next().and_then(|x| x.strip_prefix("s=")) {
            Some(salt) => decode_base64(salt, "the salt s= is not padded base64")?,
            None => return grammar("the salt attribute s= is missing"),
        };
        let digits = match segments.next().and_then(|x| x.strip_prefix("i=")) {
            Some(i) if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => i,
            _ => return grammar("the iteration count i= is missing or not decimal digits"),
        };
        extensions(segments)?;
        let iterations = digits
            .parse::<i32>()
            .map_err(|_| Malformed::IterationsOverflow)?;
        if iterations <= 0 {
            return Err(Malformed::IterationsNotPositive(iterations));
        }
        Ok(ServerFirst {
            nonce: nonce.to_string(),
            salt,
            iterations,
        })
    }

    pub fn to_message(&self) -> String {
        format!(
            "r={},s={},i={}",
            self.nonce,
            B64.encode(&self.salt),
            self.iterations
        )
    }
}

/// A parsed or built client-final message.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientFinal {
    pub channel_binding: Vec<u8>,
    pub nonce: String,
    pub proof: Vec<u8>,
}

/// Never shows the proof.
impl std::fmt::Debug for ClientFinal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFinal")
            .field("channel_binding", &self.channel_binding)
            .field("nonce", &self.nonce)
            .field("proof", &"[hidden]")
            .finish()
    }
}

impl ClientFinal {
    pub fn parse(bytes: &[u8]) -> Parsed<ClientFinal> {
        let s = ascii(bytes)?;
        let segments: Vec<&str> = s.split(',').collect();
        let [first, second, middle @ .., last] = segments.as_slice() else {
            return grammar("it is not c=...,r=...,p=...");
        };
        let channel_binding = match first.strip_prefix("c=") {
            Some(c) => decode_base64(c, "the channel binding c= is not padded base64")?,
            None => return grammar("the channel binding attribute c= is missing"),
        };
        let nonce = match second.strip_prefix("r=") {
            Some(n) if is_printable(n) => n,
            _ => return grammar("the nonce attribute r= is missing, empty or not printable"),
        };
        extensions(middle.iter().copied())?;
        let proof = match last.strip_prefix("p=") {
            Some(p) => decode_base64(p, "the proof p= is not padded base64")?,
            None => return grammar("the proof attribute p= is not last"),
        };
        Ok(ClientFinal {
            channel_binding,
            nonce: nonce.to_string(),
            proof,
        })
    }

    /// `client-final-message-without-proof` as Java rebuilds it (no extensions).
    pub fn without_proof(&self) -> String {
        format!("c={},r={}", B64.encode(&self.channel_binding), self.nonce)
    }

    pub fn to_message(&self) -> String {
        format!("{},p={}", self.without_proof(), B64.encode(&self.proof))
    }
}

/// A parsed or built server-final message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerFinal {
    /// `e=`: the server's error value.
    Error(String),
    /// `v=`: the ServerSignature.
    Verifier(Vec<u8>),
}

impl ServerFinal {
    pub fn parse(bytes: &[u8]) -> Parsed<ServerFinal> {
        let s = ascii(bytes)?;
        if let Some(error) = s.strip_prefix("e=") {
            if is_value_safe(error) && !error.contains(',') {
                return Ok(ServerFinal::Error(error.to_string()));
            }
            return grammar("the error e= is empty or holds ',' or '='");
        }
        let mut segments = s.split(',');
        let verifier = match segments.next().and_then(|x| x.strip_prefix("v=")) {
            Some(v) => decode_base64(v, "the verifier v= is not padded base64")?,
            None => return grammar("it is neither e=... nor v=..."),
        };
        extensions(segments)?;
        Ok(ServerFinal::Verifier(verifier))
    }

    pub fn to_message(&self) -> String {
        match self {
            ServerFinal::Error(e) => format!("e={e}"),
            ServerFinal::Verifier(v) => format!("v={}", B64.encode(v)),
        }
    }
}

/// `ScramFormatter.saslName`: '=' as `=3D`, then ',' as `=2C`.
pub fn escape_saslname(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// `ScramFormatter.username`: `=2C` as ',', then `=3D` as '='; `None` (Java's "Invalid
/// username") if another '=' remains.
pub fn unescape_saslname(saslname: &str) -> Option<String> {
    let user = saslname.replace("=2C", ",");
    if user.replace("=3D", "").contains('=') {
        return None;
    }
    Some(user.replace("=3D", "="))
}

/// A nonce as Java's `ScramFormatter.secureRandomString` makes one from the 17 bytes its
/// `SecureRandom` gives: `new BigInteger(130, random).toString(36)` (the first byte's top six
/// bits dropped, base 36, lower case, no leading zeros). The caller supplies the randomness.
pub fn java_nonce(random: [u8; 17]) -> String {
    let mut magnitude = random;
    magnitude[0] &= 0x03;
    let mut digits = Vec::new();
    while magnitude.iter().any(|&b| b != 0) {
        let mut remainder = 0u32;
        for byte in magnitude.iter_mut() {
            let acc = (remainder << 8) | u32::from(*byte);
            *byte = (acc / 36) as u8;
            remainder = acc % 36;
        }
        digits.push(char::from_digit(remainder, 36).expect("a base-36 digit"));
    }
    if digits.is_empty() {
        return "0".to_string();
    }
    digits.iter().rev().collect()
}

/// Whether `nonce` may stand in a SCRAM message (printable ASCII without a comma).
pub fn is_valid_nonce(nonce: &str) -> bool {
    is_printable(nonce)
}
