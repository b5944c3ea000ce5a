//! The principal a TLS client certificate maps to, against Kafka 4.4's own classes on Java 17
//! (`compat/java/PrincipalMappingProbe.java`, one JVM for every case):
//!
//! - certificate subjects: `X500Principal.getName()` of certificates built here attribute by
//!   attribute (multi-valued RDNs in unsorted order, every escape, BMP/Teletex/IA5/UTF-8 values,
//!   malformed UTF-8, emailAddress, DC, UID, unusual and huge OIDs, non-string values) and of
//!   certificates `openssl req` makes, against [`subject_name`];
//! - `ssl.principal.mapping.rules`: `SslPrincipalMapper.fromRules(rules).getName(name)` for a
//!   table of rule strings (flags, no match, malformed rules, Java regex corners, replacement
//!   corners) and for rule strings and names generated from a fixed seed, against
//!   [`PrincipalMapper`].
//!
//! kraftd must give Java's answer in every case, except where it refuses by design (see
//! `kraftd::server::tls::principal::rules`): a rule using a regex feature it does not support or
//! a replacement Java can never expand (a start-up error where Java starts), and a name it
//! reports as unrepresentable (a line terminator at its end under a `$` rule, an empty match
//! before a supplementary character); those cases are counted and listed.

use std::fmt::Write as _;
use std::process::Command;

use kraftd::server::tls::principal::samples::{self, bmp, printable, raw, utf8, Attribute};
use kraftd::server::tls::principal::{subject_name, MapError, MappingRulesError, PrincipalMapper};
use rustls_pki_types::CertificateDer;

use crate::harness::cases::Gen;
use crate::harness::java_probe::run_probe;
use crate::harness::TestDir;

const UNREPRESENTABLE: &str = "!(unrepresentable)";
const NO_MATCHING_RULE: &str =
    "org.apache.kafka.common.security.ssl.SslPrincipalMapper$NoMatchingRule";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A string the probe printed as UTF-16 code units, shown as Rust debug text (an unpaired
/// surrogate shown as `<U+D83D>`).
fn from_utf16_hex(h: &str) -> String {
    let units: Vec<u16> = (0..h.len())
        .step_by(4)
        .map(|i| u16::from_str_radix(&h[i..i + 4], 16).expect("probe hex"))
        .collect();
    let mut out = String::from("\"");
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => out.extend(c.escape_debug()),
            Err(e) => write!(out, "<U+{:04X}>", e.unpaired_surrogate()).unwrap(),
        }
    }
    out.push('"');
    out
}

/// `s` in the same rendering as [`from_utf16_hex`]'s.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}

const CN: &str = "2.5.4.3";
const O: &str = "2.5.4.10";
const OU: &str = "2.5.4.11";
const C: &str = "2.5.4.6";
const L: &str = "2.5.4.7";
const ST: &str = "2.5.4.8";
const STREET: &str = "2.5.4.9";
const DC: &str = "0.9.2342.19200300.100.1.25";
const UID: &str = "0.9.2342.19200300.100.1.1";
const EMAIL: &str = "1.2.840.113549.1.9.1";
const SERIAL: &str = "2.5.4.5";

/// Subjects built attribute by attribute: (what, RDNs in DER order).
fn built_subjects() -> Vec<(&'static str, Vec<Vec<Attribute>>)> {
    let one = |a: Attribute| vec![a];
    vec![
        ("empty subject", vec![]),
        ("CN only", vec![one(utf8(CN, "alice"))]),
        (
            "usual order, printed reversed",
            vec![
                one(printable(C, "US")),
                one(utf8(ST, "CA")),
                one(utf8(L, "Palo Alto")),
                one(utf8(O, "Acme")),
                one(utf8(OU, "Eng")),
                one(utf8(CN, "alice")),
            ],
        ),
        (
            "multi-valued RDN, unsorted",
            vec![
                one(utf8(O, "Acme")),
                vec![utf8(OU, "zeta"), utf8(CN, "bob"), utf8(OU, "alpha")],
            ],
        ),
        (
            "DC, UID, STREET",
            vec![
                one(raw(DC, samples::IA5, b"com")),
                one(raw(DC, samples::IA5, b"example")),
                one(utf8(STREET, "1 Main St")),
                one(utf8(UID, "bob")),
            ],
        ),
        (
            "emailAddress and serialNumber as OIDs",
            vec![
                one(raw(EMAIL, samples::IA5, b"alice@example.com")),
                one(printable(SERIAL, "1234")),
                one(utf8(CN, "alice")),
            ],
        ),
        (
            "unknown and huge OIDs",
            vec![
                one(utf8("1.3.6.1.4.1.99999.1", "x")),
                one(utf8("2.999.3", "y")),
                one(utf8("1.2.340282366920938463463374607431768211455", "z")),
                one(utf8("2.5.4.12", "title")),
                one(utf8("2.5.4.4", "surname")),
                one(utf8("2.5.4.42", "given")),
                one(utf8("2.5.4.46", "dnq")),
            ],
        ),
        (
            "special characters escaped",
            vec![
                one(utf8(CN, "a,b+c=d<e>f#g;h\"i\\j")),
                one(utf8(OU, "#leading hash")),
                one(utf8(O, " lead and trail ")),
                one(utf8(L, "   ")),
                one(utf8(ST, "\r cr \r")),
            ],
        ),
        (
            "NUL and control characters",
            vec![
                one(utf8(CN, "nul\0here")),
                one(utf8(OU, "tab\tnl\nend")),
                one(utf8(O, "ends with newline\n")),
                one(utf8(L, "\u{1}\u{7f}\u{85}")),
            ],
        ),
        (
            "unicode",
            vec![
                one(utf8(CN, "Ünïcødé ☃ 日本語")),
                one(utf8(OU, "emoji 😀 outside the BMP")),
                one(utf8(O, "\u{2028}sep\u{2029}")),
            ],
        ),
        (
            "BMP, Teletex and other string types",
            vec![
                one(bmp(CN, "bmp ☃ é")),
                one(raw(OU, samples::TELETEX, b"teletex \xe9\xff")),
                one(raw(O, samples::PRINTABLE, b"printable_not@valid*")),
                one(raw(L, 0x1b, b"general")),
                one(raw(ST, 0x1c, b"\0\0\0A")),
                one(raw(C, 0x12, b"123")),
            ],
        ),
        (
            "BMPString of odd length",
            vec![one(raw(CN, samples::BMP, b"\0a\0"))],
        ),
        (
            "BMPString with a surrogate pair",
            vec![one(raw(CN, samples::BMP, b"\xd8\x3d\xde\x00"))],
        ),
        (
            "malformed UTF-8",
            vec![
                one(raw(CN, samples::UTF8, b"a\xffb")),
                one(raw(OU, samples::UTF8, b"\xc0\x80")),
                one(raw(O, samples::UTF8, b"\xed\xa0\x80")),
                one(raw(L, samples::UTF8, b"\xe2\x82")),
                one(raw(ST, samples::UTF8, b"\xf0\x9f\x98")),
                one(raw(C, samples::UTF8, b"\xf4\x90\x80\x80")),
            ],
        ),
        (
            "non-string values",
            vec![
                one(raw(CN, 0x02, b"\x01\x02")),
                one(raw(OU, 0x04, b"octets")),
                one(raw(O, 0x30, &[0x0c, 0x01, b'x'])),
                one(raw(L, 0x2c, &[0x0c, 0x01, b'y'])),
                one(raw(ST, 0x80, b"ctx")),
                one(raw(STREET, 0x05, b"")),
            ],
        ),
        (
            "a long value (long-form DER length in the hex)",
            vec![one(raw("1.2.3.4", samples::UTF8, &[b'v'; 300]))],
        ),
        ("empty values", vec![one(utf8(CN, "")), one(utf8(OU, ""))]),
    ]
}

/// Certificates `openssl req` makes: (what, `-subj`, whether `-multivalue-rdn`).
const OPENSSL_SUBJECTS: &[(&str, &str, bool)] = &[
    (
        "a typical client certificate",
        "/C=US/ST=California/L=Palo Alto/O=Acme, Inc./OU=Engineering/CN=alice/emailAddress=alice@example.com",
        false,
    ),
    (
        "multi-valued RDN",
        "/O=Acme/OU=Ops+CN=bob+OU=Eng",
        true,
    ),
    ("domain components", "/DC=com/DC=example/UID=carol/CN=Carol Smith", false),
    ("unicode", "/CN=Zoë ☃ 日本/O=Ünïcødé", false),
    ("escapes", "/CN=#hash, plus+ \\\"quote\\\"/OU= lead/O=trail /L=semi;colon", false),
    ("serialNumber and title", "/serialNumber=12345/title=Boss/CN=dave", false),
];

fn openssl_certificate(dir: &std::path::Path, i: usize, subj: &str, multi: bool) -> Vec<u8> {
    let out = dir.join(format!("openssl-{i}.der"));
    let mut cmd = Command::new("openssl");
    cmd.args([
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
    ])
    .args([
        "-nodes",
        "-keyout",
        "/dev/null",
        "-days",
        "1",
        "-utf8",
        "-outform",
        "DER",
    ])
    .arg("-out")
    .arg(&out)
    .args(["-subj", subj]);
    if multi {
        cmd.arg("-multivalue-rdn");
    }
    let status = cmd.output().expect("openssl runs (openssl 3 is needed)");
    assert!(
        status.status.success(),
        "openssl req -subj {subj}: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    std::fs::read(&out).unwrap()
}

/// Certificates of every subject above, and a few that are not certificates at all.
fn certificates(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut certs: Vec<(String, Vec<u8>)> = built_subjects()
        .into_iter()
        .map(|(what, rdns)| (what.to_string(), samples::certificate(&rdns)))
        .collect();
    for (i, (what, subj, multi)) in OPENSSL_SUBJECTS.iter().enumerate() {
        certs.push((
            format!("openssl: {what}"),
            openssl_certificate(dir, i, subj, *multi),
        ));
    }
    // An OID Java refuses (a leading 0x80 octet in an arc).
    let mut bad_oid = samples::der(0x06, &[0x55, 0x80, 0x04]);
    bad_oid.extend(samples::der(0x0c, b"x"));
    let bad_oid = samples::der(0x30, &samples::der(0x31, &samples::der(0x30, &bad_oid)));
    certs.push((
        "an OID with a useless 0x80".into(),
        samples::certificate_with_subject_der(&bad_oid),
    ));
    certs.push(("not DER".into(), b"not a certificate".to_vec()));
    certs.push(("empty".into(), Vec::new()));
    certs
}

/// How a case may differ: `Same`, or kraftd refusing at start-up by design.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    Same,
    /// A regex feature kraftd does not run.
    Unsupported,
    /// A replacement Java throws on (the named exception) for every name the rule matches.
    Replacement(&'static str),
}

const IAE: &str = "java.lang.IllegalArgumentException";
const PSE: &str = "java.util.regex.PatternSyntaxException";

/// (rules, names, expectation).
fn rule_cases() -> Vec<(String, Vec<String>, Expect)> {
    use Expect::*;
    let dn = "CN=alice,OU=ServiceUsers,O=Acme,L=Palo Alto,ST=CA,C=US";
    let dns: Vec<String> = [
        dn,
        "CN=Bob Smith,OU=People,O=Acme,L=Paris,ST=IDF,C=FR",
        "CN=svc-kafka,OU=ServiceUsers,O=Acme",
        "CN=x\\,y,O=a\\+b",
        "1.2.840.113549.1.9.1=#1611616c69636540",
        "",
        "CN=Ünïcødé ☃,O=ΣΊΣΥΦΟΣ",
        "cn=lower,ou=case",
        "CN=İstanbul ß ﬁ",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let table: Vec<(&str, Expect)> = vec![
        ("DEFAULT", Same),
        ("", Same),
        ("   ", Same),
        (",,", Same),
        (" , DEFAULT , ", Same),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", Same),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", Same),
        (
            "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,DEFAULT",
            Same,
        ),
        ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U", Same),
        ("RULE:^cn=(.*?),(.*)$/$1/U, RULE:^(.*)$/$1/L", Same),
        ("RULE:^CN=([^,]*).*$/$1/L,DEFAULT", Same),
        (
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,\n  RULE:^CN=(.*?),OU=People.*$/user-$1/L ,\t DEFAULT",
            Same,
        ),
        ("DEFAULT\nRULE:^CN=(.*?),.*$/$1/", Same),
        ("DEFAULT,RULE:^CN=(.*?),.*$/$1/", Same),
        ("RULE:^CN=(.*?),.*$/$1/\u{2028}", Same),
        ("RULE:^CN=(.*?),.*$/$1/ \u{85}", Same),
        // Java's `.` stops at U+0085: the RULE before it never ends, and is dropped.
        ("RULE:x/y/\u{85},DEFAULT", Same),
        // Malformed rules.
        ("default", Same),
        ("DEFAULTX", Same),
        ("RULE:^CN=(.*)$/$1", Same),
        ("RULE:^CN=(.*)$/$1/Lx", Same),
        ("RULE:^CN=(.*)$/$1/X", Same),
        ("RULE:^CN=(.*)$/$1/LU", Same),
        ("RULE:/", Same),
        ("RULE://", Same),
        ("RULE:a/b/c/", Same),
        ("DEFAULT, RULE:", Same),
        ("RULE:^CN=(.*$/$1/", Same),
        ("RULE:^CN=[a-/$1/", Same),
        ("RULE:*/x/", Same),
        ("RULE:a{2,1}/x/", Same),
        ("RULE:a{x}/x/", Same),
        ("RULE:(?<1a>x)/x/", Same),
        ("RULE:\\/$1/", Same),
        ("RULE:\\q/x/", Same),
        ("RULE:[b-a]/x/", Same),
        ("RULE:(?z)/x/", Same),
        ("RULE:a)/x/", Same),
        // Escaped slashes and backslashes.
        ("RULE:^CN=(.*?)\\/(.*)$/$2\\/$1/,DEFAULT", Same),
        ("RULE:^(.*)$/\\$1 \\\\ $1/", Same),
        // Replacement corners.
        ("RULE:^CN=([a-z]+),(.*)$/$3-$1/", Same),
        ("RULE:^CN=([a-z]+),(.*)$/$12/", Same),
        ("RULE:^CN=([a-z]+),(.*)$/$21/", Same),
        ("RULE:^CN=([a-z]+),(.*)$/$123/", Same),
        ("RULE:^CN=([a-z]+),(.*)$/$0:$1/", Same),
        ("RULE:^CN=([a-z]+),(.*)$/$01/", Same),
        ("RULE:^CN=([a-z]+),(.*)$/$5$6/", Replacement("java.lang.IndexOutOfBoundsException")),
        // Kafka inserts the second backslash where the `$` was before the first insertion.
        ("RULE:^CN=([a-z]+),(.*)$/$5x$6/", Replacement("java.lang.IndexOutOfBoundsException")),
        ("RULE:^CN=([a-z]+),(.*)$/\\$5/", Replacement("java.lang.IndexOutOfBoundsException")),
        ("RULE:^CN=(?<user>[a-z]+),.*$/${user}/", Same),
        ("RULE:^CN=(?<user>[a-z]+),.*$/${nobody}/", Replacement(IAE)),
        ("RULE:^CN=(?<user>[a-z]+),.*$/${user/", Replacement(IAE)),
        ("RULE:^CN=(?<user>[a-z]+),.*$/${}/", Replacement(IAE)),
        ("RULE:^CN=(?<user>[a-z]+),.*$/${1a}/", Replacement(IAE)),
        ("RULE:^CN=alice,.*$/$1/", Replacement("java.lang.IndexOutOfBoundsException")),
        ("RULE:^CN=alice,.*$/$0!/", Same),
        ("RULE:^CN=(alice),.*$/x$/", Replacement(IAE)),
        ("RULE:^CN=(alice),.*$/$x/", Replacement(IAE)),
        ("RULE:^CN=(alice),.*$/x\\/", Same),
        ("RULE:^CN=(alice),.*$/x\\\\/", Same),
        ("RULE:^CN=(alice),.*$/x\\/,DEFAULT", Same),
        (
            "RULE:^CN=(alice),.*$/$99999999999/",
            Replacement("java.lang.NumberFormatException"),
        ),
        ("RULE:^CN=(alice),.*$/$09999999999/", Same),
        ("RULE:^CN=(nobody),.*$/x$/,DEFAULT", Replacement(IAE)),
        // replaceAll, not one replacement: patterns that also match elsewhere or empty.
        ("RULE:CN=(.*?)/[$1]/", Same),
        ("RULE:.*/x/", Same),
        ("RULE:(.*)/<$1>/", Same),
        ("RULE:[^,]*,?/($0)/", Same),
        ("RULE:(?s).*?/-/", Same),
        ("RULE:(a|)*.*/[$1]/", Unsupported),
        // Java regex corners.
        ("RULE:(?i)^cn=(.*?),ou=.*$/$1/", Same),
        ("RULE:^(?i:CN)=(\\w+).*$/$1/", Same),
        ("RULE:(?i)^CN=([A-Z]+).*$/$1/", Same),
        ("RULE:(?i)^CN=([^A-Z]+).*$/$1/", Same),
        ("RULE:(?i)^CN=(\\p{Lower}+).*$/$1/", Same),
        ("RULE:^CN=(\\p{Alpha}+)\\p{Punct}.*$/$1/", Same),
        ("RULE:^CN=([\\w-]+).*$/$1/", Same),
        ("RULE:^CN=(\\S+)\\s(\\S+),.*$/$2.$1/L", Same),
        ("RULE:^CN=([]a-z]+).*$/$1/", Same),
        ("RULE:^CN=([^]a-z]+).*$/$1/", Same),
        ("RULE:^CN=([a-z[A-Z]]+).*$/$1/", Same),
        ("RULE:^CN=([^a-z[A-Z]]+).*$/$1/", Same),
        ("RULE:^CN=([a-]+).*$/$1/", Same),
        ("RULE:^\\QCN=\\E(.*?),.*$/$1/", Same),
        ("RULE:^\\QCN=(.*?)\\E.*$/$0/", Same),
        ("RULE:^\\x43\\u004E\\0075=(.*?),.*$/$1/", Same),
        ("RULE:^\\x{43}N=(.*?),.*$/$1/", Same),
        ("RULE:^CN=(.{2,3}).*$/$1/", Same),
        ("RULE:^CN=(.{2,}?).*$/$1/", Same),
        ("RULE:^CN=(a{0}|b)(.*)$/[$1|$2]/", Same),
        ("RULE:^{2}CN=(.*?),.*$/$1/", Same),
        ("RULE:^CN=(.*?),.*$}/$1/", Same),
        ("RULE:^CN=(.*?)]/$1/", Same),
        ("RULE:^CN=(Bob|Bob Smith),.*$/$1/", Same),
        ("RULE:^CN=(.*)\\.(.*)$/$2/", Same),
        ("RULE:(?s)^CN=(.*)$/$1/", Same),
        ("RULE:(?i-i)^cn=(.*)$/$1/", Same),
        ("RULE:(?-m)^CN=(.*)$/$1/", Same),
        ("RULE:(?)^CN=(.*)$/$1/", Same),
        ("RULE:^CN=(\\d*)\\D.*$/[$1]/", Same),
        ("RULE:^(\\p{Upper}{2})=.*$/$1/", Same),
        ("RULE:^CN=(\\h*\\H+).*$/$1/", Same),
        ("RULE:^.*\\z/x/", Same),
        ("RULE:\\A.*\\Z/x/", Same),
        ("RULE:^CN=[\\x{1F600}-\\x{1F64F}]*.*$/emoji/", Same),
        // Unsupported Java regex features: kraftd refuses the rules at start-up.
        ("RULE:^CN=(\\w+),OU=\\1$/$1/", Unsupported),
        ("RULE:^CN=(?<u>\\w+),OU=\\k<u>$/$1/", Unsupported),
        ("RULE:^CN=(?=a)(.*)$/$1/", Unsupported),
        ("RULE:^CN=(?!a)(.*)$/$1/", Unsupported),
        ("RULE:^(?<=x)CN=(.*)$/$1/", Unsupported),
        ("RULE:^CN=(?>.*)$/x/", Unsupported),
        ("RULE:^CN=(.*+)$/$1/", Unsupported),
        ("RULE:^CN=\\b(.*)$/$1/", Unsupported),
        ("RULE:^CN=(\\p{L}+).*$/$1/", Unsupported),
        ("RULE:^CN=(\\p{IsLatin}+).*$/$1/", Unsupported),
        ("RULE:^CN=([a-z&&[^b]]+).*$/$1/", Unsupported),
        ("RULE:(?m)^CN=(.*)$/$1/", Unsupported),
        ("RULE:(?iu)^CN=(.*)$/$1/", Unsupported),
        ("RULE:(?x)^CN = (.*)$/$1/", Unsupported),
        ("RULE:^CN=(.*)\\R$/$1/", Unsupported),
    ];
    let mut cases = Vec::new();
    for (rules, expect) in table {
        let mut names = dns.clone();
        names.extend(["a", "aaa", "x/y", "CN=alice\n", "CN=a\u{2028}", "CN=😀x"].map(String::from));
        cases.push((rules.to_string(), names, expect));
    }
    cases
}

/// Rule strings and names from a fixed seed, over a small alphabet so that patterns match.
fn generated_cases(count: usize) -> Vec<(String, Vec<String>, Expect)> {
    let mut gen = Gen(0x9e37_79b9_7f4a_7c15);
    let mut cases = Vec::new();
    for _ in 0..count {
        let n = 1 + gen.below(3) as usize;
        let mut rules: Vec<String> = (0..n).map(|_| generated_rule(&mut gen)).collect();
        if gen.chance(3) {
            rules.push("DEFAULT".into());
        }
        let sep = [",", ", ", " ,\n", ",\t"][gen.below(4) as usize];
        let names = (0..4).map(|_| generated_name(&mut gen)).collect();
        cases.push((rules.join(sep), names, Expect::Same));
    }
    cases
}

fn pick<'a>(gen: &mut Gen, from: &[&'a str]) -> &'a str {
    from[gen.below(from.len() as u64) as usize]
}

fn generated_name(gen: &mut Gen) -> String {
    const PIECES: &[&str] = &[
        "a", "b", "A", "B", "CN=", "OU=", ",", "\\,", " ", ".", "=", "1", "_", "-", "é", "Σ", "😀",
        "\n", "x", "ab",
    ];
    let len = gen.below(8);
    (0..len).map(|_| pick(gen, PIECES)).collect()
}

/// A pattern, with the names of its named groups; `groups` counts its capturing groups.
fn generated_pattern(
    gen: &mut Gen,
    depth: u32,
    groups: &mut usize,
    names: &mut Vec<String>,
) -> String {
    const ATOMS: &[&str] = &[
        "a",
        "b",
        "A",
        "C",
        "N",
        "=",
        ",",
        "\\,",
        " ",
        ".",
        "\\.",
        "[ab]",
        "[^,]",
        "[a-c]",
        "[^a]",
        "\\w",
        "\\W",
        "\\d",
        "\\s",
        "\\S",
        "\\p{Alpha}",
        "\\p{Upper}",
        "[,=]",
        "é",
        "Σ",
        "\\Q.\\E",
        "[\\w,]",
        "x",
        "\\\\,",
        "😀",
    ];
    const QUANTIFIERS: &[&str] = &[
        "", "", "", "*", "+", "?", "*?", "+?", "??", "{1,2}", "{2}", "{0,1}?", "{0}",
    ];
    let items = 1 + gen.below(4);
    let mut out = String::new();
    for _ in 0..items {
        let atom = if depth < 2 && gen.chance(4) {
            match gen.below(6) {
                0 => format!("(?:{})", generated_pattern(gen, depth + 1, groups, names)),
                1 => format!("(?i:{})", generated_pattern(gen, depth + 1, groups, names)),
                2 => {
                    *groups += 1;
                    let name = format!("g{}", *groups);
                    names.push(name.clone());
                    format!(
                        "(?<{name}>{})",
                        generated_pattern(gen, depth + 1, groups, names)
                    )
                }
                3 => {
                    *groups += 1;
                    let left = generated_pattern(gen, depth + 1, groups, names);
                    format!(
                        "({left}|{})",
                        generated_pattern(gen, depth + 1, groups, names)
                    )
                }
                _ => {
                    *groups += 1;
                    format!("({})", generated_pattern(gen, depth + 1, groups, names))
                }
            }
        } else {
            pick(gen, ATOMS).to_string()
        };
        out.push_str(&atom);
        out.push_str(pick(gen, QUANTIFIERS));
    }
    if depth == 0 {
        if gen.chance(3) {
            out = format!("^{out}");
        }
        if gen.chance(3) {
            out.push('$');
        }
        if gen.chance(6) {
            out = format!("(?i){out}");
        }
        if gen.chance(6) {
            out = format!("(?s){out}");
        }
        if gen.chance(4) {
            out = format!("{out}|.*");
        }
    }
    out
}

fn generated_rule(gen: &mut Gen) -> String {
    // Now and then a replacement that may name groups the pattern lacks.
    const ANY_REPLACEMENT: &[&str] = &[
        "$1", "$2", "$12", "$3", "\\$1", "${g1}", "$1$1", "\\\\", "é$1", "\\/", "$9x$8",
    ];
    let (mut groups, mut names) = (0, Vec::new());
    let pattern = generated_pattern(gen, 0, &mut groups, &mut names);
    let replacement = if gen.chance(8) {
        pick(gen, ANY_REPLACEMENT).to_string()
    } else {
        let mut r = String::new();
        for _ in 0..gen.below(4) {
            match gen.below(6) {
                0 | 1 => write!(r, "${}", gen.below(groups as u64 + 1)).unwrap(),
                2 if !names.is_empty() => {
                    write!(r, "${{{}}}", names[gen.below(names.len() as u64) as usize]).unwrap()
                }
                3 => r.push_str(pick(gen, &["\\$", "\\\\", "\\/", "\\x"])),
                _ => r.push_str(pick(gen, &["-", "@", "x", "é", "1", "[", "]"])),
            }
        }
        r
    };
    let flag = pick(gen, &["", "", "L", "U"]);
    format!("RULE:{}/{replacement}/{flag}", pattern.replace('/', "\\/"))
}

/// kraftd's answer to one rules case, in the probe's rendering.
fn kraftd_answer(
    rules: &str,
    names: &[String],
) -> (String, Option<MappingRulesError>, Vec<String>) {
    let mapper = match PrincipalMapper::parse(rules) {
        Ok(m) => m,
        Err(e) => {
            let class = match &e {
                MappingRulesError::InvalidRule { .. } => IAE.to_string(),
                MappingRulesError::InvalidRegex { .. } => PSE.to_string(),
                MappingRulesError::UnsupportedRegex { feature, .. } => {
                    format!("(unsupported: {feature})")
                }
                MappingRulesError::Replacement { java_exception, .. } => {
                    format!("(replacement, Java throws {java_exception})")
                }
            };
            return (format!("parse-error {class}"), Some(e), Vec::new());
        }
    };
    let per_name: Vec<String> = names
        .iter()
        .map(|name| match mapper.map(name) {
            Ok(mapped) => format!("={}", quoted(&mapped)),
            Err(MapError::NoMatchingRule { .. }) => format!("!{NO_MATCHING_RULE}"),
            Err(MapError::Unrepresentable { .. }) => UNREPRESENTABLE.to_string(),
        })
        .collect();
    let mut out = String::from("ok");
    for answer in &per_name {
        write!(out, " {answer}").unwrap();
    }
    (out, None, per_name)
}

/// Java's answer to one rules case, from the probe's line.
fn java_answer(line: &str) -> (String, Vec<String>) {
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(fields[0], "map", "probe line {line:?}");
    if fields[1] == "parse-error" {
        return (format!("parse-error {}", fields[2]), Vec::new());
    }
    let mut out = String::from("ok");
    let mut per_name = Vec::new();
    for f in &fields[2..] {
        let answer = match f.strip_prefix('=') {
            Some(h) => format!("={}", from_utf16_hex(h)),
            None => f.to_string(),
        };
        write!(out, " {answer}").unwrap();
        per_name.push(answer);
    }
    (out, per_name)
}

/// Whether kraftd's answer is one of its documented refusals of what Java does, for this case.
fn allowed_refusal(
    expect: Expect,
    kraftd_error: &Option<MappingRulesError>,
    kraftd_names: &[String],
    java: &str,
    java_names: &[String],
) -> Option<&'static str> {
    let java_parsed = java.starts_with("ok");
    match kraftd_error {
        Some(MappingRulesError::UnsupportedRegex { .. }) if java_parsed => {
            Some("unsupported regex feature")
        }
        Some(MappingRulesError::Replacement { java_exception, .. }) if java_parsed => {
            // Java fails only with the exceptions of replacements it cannot expand (of this rule
            // or of others kraftd would refuse too), or finds no rule.
            let consistent = java_names.iter().all(|a| {
                a.starts_with('=')
                    || [
                        NO_MATCHING_RULE,
                        IAE,
                        "java.lang.IndexOutOfBoundsException",
                        "java.lang.NumberFormatException",
                    ]
                    .contains(&&a[1..])
            });
            let shown = match expect {
                Expect::Replacement(e) => e == *java_exception,
                _ => true,
            };
            (consistent && shown).then_some("replacement Java cannot expand")
        }
        None => {
            // Per name: kraftd's "unrepresentable" where Java answered something else, and the
            // same answers elsewhere.
            let same_elsewhere = kraftd_names.len() == java_names.len()
                && kraftd_names
                    .iter()
                    .zip(java_names)
                    .all(|(k, j)| k == j || k == UNREPRESENTABLE);
            (java_parsed && same_elsewhere).then_some("unrepresentable name")
        }
        _ => None,
    }
}

#[test]
fn subjects_and_rules_as_kafka_maps_them() {
    let dir = TestDir::new();
    let certs = certificates(dir.path());
    let mut cases = rule_cases();
    let table_len = cases.len();
    cases.extend(generated_cases(1500));

    let mut stdin = String::new();
    for (_, der) in &certs {
        writeln!(stdin, "cert\t{}", hex(der)).unwrap();
    }
    for (rules, names, _) in &cases {
        let names: Vec<String> = names.iter().map(|n| hex(n.as_bytes())).collect();
        writeln!(stdin, "map\t{}\t{}", hex(rules.as_bytes()), names.join(",")).unwrap();
    }
    let java = run_probe("PrincipalMappingProbe", &[], &stdin, dir.path());
    let lines: Vec<&str> = java.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        certs.len() + cases.len(),
        "one answer a question:\n{java}"
    );

    let mut failures = Vec::new();
    eprintln!("certificate subjects, X500Principal.getName() and kraftd's subject_name:");
    for ((what, der), line) in certs.iter().zip(&lines) {
        let fields: Vec<&str> = line.split('\t').collect();
        let java = match fields[1] {
            "ok" => format!("ok {}", from_utf16_hex(fields[2])),
            _ => "error".to_string(),
        };
        let ours = match subject_name(&CertificateDer::from(der.as_slice())) {
            Ok(name) => format!("ok {}", quoted(&name)),
            Err(_) => "error".to_string(),
        };
        eprintln!(
            "  {what}: {java}{}",
            if fields[1] == "ok" {
                String::new()
            } else {
                format!(" ({})", fields[2])
            }
        );
        if java != ours {
            failures.push(format!(
                "certificate {what}:\n    java:   {java}\n    kraftd: {ours}"
            ));
        }
    }

    let mut refusals = Vec::new();
    let mut compared = 0;
    for (i, ((rules, names, expect), line)) in cases.iter().zip(&lines[certs.len()..]).enumerate() {
        let (java, java_names) = java_answer(line);
        let (ours, error, our_names) = kraftd_answer(rules, names);
        let what = if i < table_len { "table" } else { "generated" };
        if i < table_len {
            eprintln!("  rules {rules:?}: {java}");
        }
        if java == ours {
            if *expect != Expect::Same {
                failures.push(format!(
                    "{what} rules {rules:?} expect {expect:?} but both answer {java}"
                ));
            }
            compared += 1;
            continue;
        }
        if let Some(why) = allowed_refusal(*expect, &error, &our_names, &java, &java_names) {
            let expected =
                *expect != Expect::Same || i >= table_len || why == "unrepresentable name";
            if expected {
                refusals.push(format!("{what} {why}: {rules:?}"));
                continue;
            }
        }
        failures.push(format!(
            "{what} rules {rules:?}, names {names:?}:\n    java:   {java}\n    kraftd: {ours}"
        ));
    }
    eprintln!(
        "{} certificates, {} rule cases ({compared} identical, {} refused by design):",
        certs.len(),
        cases.len(),
        refusals.len()
    );
    for r in &refusals {
        eprintln!("  {r}");
    }
    assert!(
        failures.is_empty(),
        "{} cases differ from Java:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
