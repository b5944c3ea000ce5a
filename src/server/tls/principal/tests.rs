//! Every expected answer here was printed by Java 17 with Kafka 4.4's classes
//! (`compat/java/PrincipalMappingProbe.java`: `X500Principal.getName()` of the certificate,
//! `SslPrincipalMapper.fromRules(rules).getName(name)`); the compat test
//! `security::principal_mapping` asks Java again for these and many more.

use super::samples::{self, bmp, printable, raw, utf8};
use super::*;
use rustls_pki_types::CertificateDer;

const CN: &str = "2.5.4.3";
const O: &str = "2.5.4.10";
const OU: &str = "2.5.4.11";
const C: &str = "2.5.4.6";
const L: &str = "2.5.4.7";
const ST: &str = "2.5.4.8";

fn name_of(rdns: &[Vec<samples::Attribute>]) -> Result<String, CertificateNameError> {
    subject_name(&CertificateDer::from(samples::certificate(rdns)))
}

#[test]
fn subjects_as_java_prints_them() {
    let one = |a| vec![a];
    let cases: Vec<(Vec<Vec<samples::Attribute>>, &str)> = vec![
        (vec![], ""),
        (
            vec![
                one(printable(C, "US")),
                one(utf8(ST, "CA")),
                one(utf8(L, "Palo Alto")),
                one(utf8(O, "Acme")),
                one(utf8(OU, "Eng")),
                one(utf8(CN, "alice")),
            ],
            "CN=alice,OU=Eng,O=Acme,L=Palo Alto,ST=CA,C=US",
        ),
        // A multi-valued RDN keeps its DER order, sorted or not.
        (
            vec![
                one(utf8(O, "Acme")),
                vec![utf8(OU, "zeta"), utf8(CN, "bob"), utf8(OU, "alpha")],
            ],
            "OU=zeta+CN=bob+OU=alpha,O=Acme",
        ),
        (
            vec![
                one(raw("0.9.2342.19200300.100.1.25", samples::IA5, b"com")),
                one(raw("0.9.2342.19200300.100.1.25", samples::IA5, b"example")),
                one(utf8("2.5.4.9", "1 Main St")),
                one(utf8("0.9.2342.19200300.100.1.1", "bob")),
            ],
            "UID=bob,STREET=1 Main St,DC=example,DC=com",
        ),
        // emailAddress and serialNumber have no RFC 2253 keyword.
        (
            vec![
                one(raw(
                    "1.2.840.113549.1.9.1",
                    samples::IA5,
                    b"alice@example.com",
                )),
                one(printable("2.5.4.5", "1234")),
                one(utf8(CN, "alice")),
            ],
            "CN=alice,2.5.4.5=#130431323334,\
             1.2.840.113549.1.9.1=#1611616c696365406578616d706c652e636f6d",
        ),
        (
            vec![
                one(utf8("1.2.340282366920938463463374607431768211455", "z")),
                one(utf8("2.999.3", "y")),
            ],
            "2.999.3=#0c0179,1.2.340282366920938463463374607431768211455=#0c017a",
        ),
        (
            vec![
                one(utf8(CN, "a,b+c=d<e>f#g;h\"i\\j")),
                one(utf8(OU, "#leading hash")),
                one(utf8(O, " lead and trail ")),
                one(utf8(L, "   ")),
                one(utf8(ST, "\r cr \r")),
            ],
            "ST=\\\r\\ cr\\ \\\r,L=\\ \\ \\ ,O=\\ lead and trail\\ ,OU=\\#leading hash,\
             CN=a\\,b\\+c\\=d\\<e\\>f\\#g\\;h\\\"i\\\\j",
        ),
        (
            vec![
                one(utf8(CN, "nul\0here")),
                one(utf8(OU, "tab\tnl\nend")),
                one(utf8(L, "\u{1}\u{7f}\u{85}")),
            ],
            "L=\u{1}\u{7f}\u{85},OU=tab\tnl\nend,CN=nul\\00here",
        ),
        (
            vec![
                one(utf8(CN, "Ünïcødé ☃ 日本語")),
                one(utf8(OU, "emoji 😀 outside the BMP")),
            ],
            "OU=emoji 😀 outside the BMP,CN=Ünïcødé ☃ 日本語",
        ),
        (
            vec![
                one(bmp(CN, "bmp ☃ é")),
                one(raw(OU, samples::TELETEX, b"teletex \xe9\xff")),
                one(raw(O, samples::PRINTABLE, b"printable_not@valid*")),
                one(raw(L, 0x1b, b"general")),
                one(raw(ST, 0x1c, b"\0\0\0A")),
                one(raw(C, 0x12, b"123")),
            ],
            // Java 17.0.15 (Debian) reads TeletexString and BMPString as UTF-8.
            "C=#1203313233,ST=#1c0400000041,L=general,O=printable_not@valid*,\
             OU=teletex \u{fffd}\u{fffd},CN=\\00b\\00m\\00p\\00 &\u{3}\\00 \\00\u{fffd}",
        ),
        (vec![one(raw(CN, samples::BMP, b"\0a\0"))], "CN=\\00a\\00"),
        (
            vec![one(raw(CN, samples::BMP, b"\xd8\x3d\xde\x00"))],
            "CN=\u{fffd}\\=\u{fffd}\\00",
        ),
        (
            vec![
                one(raw(CN, samples::UTF8, b"a\xffb")),
                one(raw(OU, samples::UTF8, b"\xc0\x80")),
                one(raw(O, samples::UTF8, b"\xed\xa0\x80")),
                one(raw(L, samples::UTF8, b"\xe2\x82")),
                one(raw(ST, samples::UTF8, b"\xf0\x9f\x98")),
                one(raw(C, samples::UTF8, b"\xf4\x90\x80\x80")),
            ],
            "C=\u{fffd}\u{fffd}\u{fffd}\u{fffd},ST=\u{fffd},L=\u{fffd},O=\u{fffd},\
             OU=\u{fffd}\u{fffd},CN=a\u{fffd}b",
        ),
        (
            vec![
                one(raw(CN, 0x02, b"\x01\x02")),
                one(raw(OU, 0x04, b"octets")),
                one(raw(O, 0x30, &[0x0c, 0x01, b'x'])),
                one(raw(L, 0x2c, &[0x0c, 0x01, b'y'])),
                one(raw(ST, 0x80, b"ctx")),
                one(raw("2.5.4.9", 0x05, b"")),
            ],
            "STREET=#0500,ST=#8003637478,L=#2c030c0179,O=#30030c0178,OU=#04066f6374657473,\
             CN=#02020102",
        ),
        (vec![one(utf8(CN, "")), one(utf8(OU, ""))], "OU=,CN="),
    ];
    for (rdns, java) in cases {
        assert_eq!(name_of(&rdns).unwrap(), java, "{rdns:?}");
    }
    let long = name_of(&[vec![raw("1.2.3.4", samples::UTF8, &[b'v'; 300])]]).unwrap();
    assert_eq!(long, format!("1.2.3.4=#0c82012c{}", "76".repeat(300)));
}

#[test]
fn subjects_java_refuses() {
    // Java: CertificateParsingException for each.
    let mut ava = samples::der(0x06, &[0x55, 0x80, 0x04]);
    ava.extend(samples::der(0x0c, b"x"));
    let subject = samples::der(0x30, &samples::der(0x31, &samples::der(0x30, &ava)));
    let cert = samples::certificate_with_subject_der(&subject);
    assert!(matches!(
        subject_name(&CertificateDer::from(cert)),
        Err(CertificateNameError::InvalidOid(_))
    ));
    assert!(subject_name(&CertificateDer::from(&b"not a certificate"[..])).is_err());
}

const N1: &str = "CN=alice,OU=ServiceUsers,O=Acme,L=Palo Alto,ST=CA,C=US";
const N2: &str = "CN=Bob Smith,OU=People,O=Acme,L=Paris,ST=IDF,C=FR";
const N3: &str = "CN=svc-kafka,OU=ServiceUsers,O=Acme";
const N4: &str = "CN=x\\,y,O=a\\+b";

/// `Some(name)`, or `None` for Kafka's NoMatchingRule.
fn map(rules: &str, name: &str) -> Option<String> {
    let mapper = PrincipalMapper::parse(rules).unwrap_or_else(|e| panic!("{rules:?}: {e}"));
    match mapper.map(name) {
        Ok(mapped) => Some(mapped),
        Err(MapError::NoMatchingRule { .. }) => None,
        Err(e) => panic!("{rules:?} on {name:?}: {e}"),
    }
}

#[test]
fn rules_map_as_kafka_maps() {
    let some = |s: &str| Some(s.to_string());
    let cases: &[(&str, &str, Option<String>)] = &[
        ("DEFAULT", N1, some(N1)),
        ("", N1, None),
        (" , DEFAULT , ", N1, some(N1)),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", N1, some("alice")),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", N2, some(N2)),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", N3, some("svc-kafka")),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", N2, None),
        (
            "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,DEFAULT",
            N2,
            some("bob smith@people"),
        ),
        (
            "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U",
            N1,
            some("ALICE@SERVICEUSERS"),
        ),
        (
            "RULE:^CN=([^,]*).*$/$1/L,DEFAULT",
            "CN=İstanbul ß ﬁ",
            some("i\u{307}stanbul ß ﬁ"),
        ),
        ("RULE:^CN=([^,]*).*$/$1/L,DEFAULT", N4, some("x\\")),
        (
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,\n  RULE:^CN=(.*?),OU=People.*$/user-$1/L ,\t DEFAULT",
            N2,
            some("user-bob smith"),
        ),
        // A line break not after a comma drops what precedes it on its line.
        ("DEFAULT\nRULE:^CN=(.*?),.*$/$1/", N1, some("alice")),
        ("DEFAULT\nRULE:^CN=(.*?),.*$/$1/", "a", None),
        ("RULE:^CN=(.*?),.*$/$1/\u{2028}", N2, some("Bob Smith")),
        // Java's `.` stops at U+0085, so this RULE never ends and is dropped.
        ("RULE:x/y/\u{85},DEFAULT", N1, some(N1)),
        // Replacement: missing groups, $0, leading zeros, Kafka's digit dropping.
        ("RULE:^CN=([a-z]+),(.*)$/$12/", N1, some("alice2")),
        ("RULE:^CN=([a-z]+),(.*)$/$21/", N1, some("OU=ServiceUsers,O=Acme,L=Palo Alto,ST=CA,C=US1")),
        ("RULE:^CN=([a-z]+),(.*)$/$123/", N1, some("alice23")),
        ("RULE:^CN=([a-z]+),(.*)$/$3-$1/", N1, some("$3-alice")),
        ("RULE:^CN=([a-z]+),(.*)$/$0:$1/", N1, some(&format!("{N1}:alice"))),
        ("RULE:^CN=([a-z]+),(.*)$/$01/", N1, some("alice")),
        ("RULE:^CN=(alice),.*$/$09999999999/", N1, some(&format!("{N1}9999999999"))),
        ("RULE:^CN=(?<user>[a-z]+),.*$/${user}/", N1, some("alice")),
        // replaceAll: every match, empty ones too.
        ("RULE:CN=(.*?)/[$1]/", N1, some(&format!("[]{}", &N1[3..]))),
        ("RULE:.*/x/", N1, some("xx")),
        ("RULE:.*/x/", "", some("x")),
        ("RULE:(.*)/<$1>/", N1, some(&format!("<{N1}><>"))),
        // Java regex corners.
        ("RULE:(?i)^CN=([A-Z]+).*$/$1/", "cn=lower,ou=case", some("lower")),
        ("RULE:(?i)^CN=([^A-Z]+).*$/$1/", N1, None),
        ("RULE:^CN=(\\S+)\\s(\\S+),.*$/$2.$1/L", N1, some("alto,st=ca.alice,ou=serviceusers,o=acme,l=palo")),
        ("RULE:^CN=([]a-z]+).*$/$1/", N1, some("alice")),
        ("RULE:^CN=([]a-z]+).*$/$1/", N2, None),
        ("RULE:^CN=([^]a-z]+).*$/$1/", N2, some("B")),
        ("RULE:^CN=([a-z[A-Z]]+).*$/$1/", N2, some("Bob")),
        ("RULE:^CN=([^a-z[A-Z]]+).*$/$1/", N1, None),
        ("RULE:^CN=([a-]+).*$/$1/", N1, some("a")),
        ("RULE:^\\QCN=\\E(.*?),.*$/$1/", N4, some("x\\")),
        ("RULE:^\\x{43}N=(.*?),.*$/$1/", N1, some("alice")),
        ("RULE:^CN=(.{2,3}).*$/$1/", N4, some("x\\,")),
        ("RULE:^CN=(.{2,}?).*$/$1/", N1, some("al")),
        ("RULE:^CN=(a{0}|b)(.*)$/[$1|$2]/", N3, some(&format!("[|{}]", &N3[3..]))),
        ("RULE:^{2}CN=(.*?),.*$/$1/", N1, some("alice")),
        ("RULE:^CN=(Bob|Bob Smith),.*$/$1/", N2, some("Bob Smith")),
        ("RULE:^(\\p{Upper}{2})=.*$/$1/", N1, some("CN")),
        ("RULE:^CN=(\\h*\\H+).*$/$1/", N1, some("alice,OU=ServiceUsers,O=Acme,L=Palo")),
        ("RULE:\\A.*\\Z/x/", N1, some("x")),
    ];
    for (rules, name, java) in cases {
        assert_eq!(&map(rules, name), java, "rules {rules:?} on {name:?}");
    }
}

#[test]
fn rules_java_refuses_at_start_up() {
    // Java: IllegalArgumentException from SslPrincipalMapper's rule parser.
    for rules in [
        "default",
        "DEFAULTX",
        "RULE:^CN=(.*)$/$1",
        "RULE:^CN=(.*)$/$1/Lx",
        "RULE:^CN=(.*)$/$1/X",
        "RULE:/",
        "RULE:a/b/c/",
        "DEFAULT, RULE:",
        "RULE:^CN=(alice),.*$/x\\/",
    ] {
        assert!(
            matches!(
                PrincipalMapper::parse(rules),
                Err(MappingRulesError::InvalidRule { .. })
            ),
            "{rules:?}"
        );
    }
    // Java: PatternSyntaxException.
    for rules in [
        "RULE:^CN=(.*$/$1/",
        "RULE:^CN=[a-/$1/",
        "RULE:*/x/",
        "RULE:a{2,1}/x/",
        "RULE:a{x}/x/",
        "RULE:(?<1a>x)/x/",
        "RULE:\\q/x/",
        "RULE:[b-a]/x/",
        "RULE:(?z)/x/",
        "RULE:a)/x/",
    ] {
        assert!(
            matches!(
                PrincipalMapper::parse(rules),
                Err(MappingRulesError::InvalidRegex { .. })
            ),
            "{rules:?}"
        );
    }
}

#[test]
fn rules_kraftd_refuses_where_java_starts() {
    // Java starts, then throws for every name these rules match (N1 here).
    for (rules, java) in [
        (
            "RULE:^CN=([a-z]+),(.*)$/$5$6/",
            "java.lang.IndexOutOfBoundsException",
        ),
        (
            "RULE:^CN=([a-z]+),(.*)$/$5x$6/",
            "java.lang.IndexOutOfBoundsException",
        ),
        (
            "RULE:^CN=alice,.*$/$1/",
            "java.lang.IndexOutOfBoundsException",
        ),
        (
            "RULE:^CN=(alice),.*$/x$/",
            "java.lang.IllegalArgumentException",
        ),
        (
            "RULE:^CN=(alice),.*$/$x/",
            "java.lang.IllegalArgumentException",
        ),
        (
            "RULE:^CN=(?<user>[a-z]+),.*$/${nobody}/",
            "java.lang.IllegalArgumentException",
        ),
        (
            "RULE:^CN=(alice),.*$/$99999999999/",
            "java.lang.NumberFormatException",
        ),
    ] {
        match PrincipalMapper::parse(rules) {
            Err(MappingRulesError::Replacement { java_exception, .. }) => {
                assert_eq!(java_exception, java, "{rules:?}")
            }
            other => panic!("{rules:?}: {other:?}"),
        }
    }
    // Java runs these; kraftd's engine cannot with Java's meaning.
    for rules in [
        "RULE:^CN=(\\w+),OU=\\1$/$1/",
        "RULE:^CN=(?=a)(.*)$/$1/",
        "RULE:^(?<=x)CN=(.*)$/$1/",
        "RULE:^CN=(?>.*)$/x/",
        "RULE:^CN=(.*+)$/$1/",
        "RULE:^CN=\\b(.*)$/$1/",
        "RULE:^CN=(\\p{L}+).*$/$1/",
        "RULE:^CN=([a-z&&[^b]]+).*$/$1/",
        "RULE:(?m)^CN=(.*)$/$1/",
        "RULE:(?x)^CN = (.*)$/$1/",
        // Java leaves group 1 empty after `(a|)*` reads "a"; this engine would say "a".
        "RULE:(a|)*.*/[$1]/",
    ] {
        let err = PrincipalMapper::parse(rules).unwrap_err();
        assert!(
            matches!(err, MappingRulesError::UnsupportedRegex { .. }),
            "{rules:?}: {err:?}"
        );
        assert!(
            err.to_string().contains(rules),
            "the message names the rule: {err}"
        );
    }
}

#[test]
fn names_kraftd_cannot_follow_java_on_fail_authentication() {
    // Java: "alice\n" (its `$` also matches before the final line terminator).
    let mapper = PrincipalMapper::parse("RULE:^CN=([^,]*).*$/$1/L,DEFAULT").unwrap();
    assert!(matches!(
        mapper.map("CN=alice\n"),
        Err(MapError::Unrepresentable { .. })
    ));
    // Java lowercases a capital sigma by word breaks ("ou=abσ-cn=" here).
    let mapper = PrincipalMapper::parse("RULE:(.*)/$1/L").unwrap();
    assert!(matches!(
        mapper.map("OU=abΣ-CN="),
        Err(MapError::Unrepresentable { .. })
    ));
}

#[test]
fn anonymous_without_a_certificate() {
    let mapper = PrincipalMapper::default();
    assert_eq!(principal_name(None, &mapper).unwrap(), ANONYMOUS);
    let cert = samples::certificate(&[vec![utf8(O, "Acme")], vec![utf8(CN, "alice")]]);
    assert_eq!(
        principal_name(Some(&CertificateDer::from(cert)), &mapper).unwrap(),
        "CN=alice,O=Acme"
    );
}

#[test]
fn messages_say_what_to_do() {
    let err = PrincipalMapper::parse("RULE:^CN=(.*)$/$1/Lx")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`Lx`") || err.contains("`x`"), "{err}");
    let err = PrincipalMapper::parse("RULE:^CN=(.*)$/$1/")
        .unwrap()
        .map("O=x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("DEFAULT") && err.contains("O=x"), "{err}");
}
