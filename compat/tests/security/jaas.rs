//! `sasl.jaas.config` values parsed by Kafka 4.4's own `JaasConfig` (through
//! `compat/java/JaasProbe.java`, one JVM for every case) and by kraftd's
//! `kraftd::server::sasl::jaas`: the same login modules, flags and options, or the same
//! rejection with Java's message, for a table of corners (quotes and escapes, comments, numbers,
//! flags in any case, several modules, missing parts) and for values generated from a fixed seed.

use std::fmt::Write as _;

use kraftd::server::sasl::jaas::{JaasConfig, JaasError};

use crate::harness::cases::Gen;
use crate::harness::java_probe::run_probe;
use crate::harness::TestDir;

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Java's message for each of kraftd's rejections (`None`: Java's exception has none).
fn java_message(e: &JaasError) -> Option<String> {
    Some(match e {
        JaasError::NoLoginModule => "Login module not specified in JAAS config".into(),
        JaasError::NoControlFlag { .. } => {
            "Login module control flag not specified in JAAS config".into()
        }
        JaasError::ControlFlagNotAWord { .. } => {
            "Login module control flag is not available in the JAAS config".into()
        }
        JaasError::InvalidControlFlag { flag, .. } => {
            format!("Invalid login module control flag '{flag}' in JAAS config")
        }
        JaasError::NoValue { key, .. } => format!(
            "Value not specified for key '{}' in JAAS config",
            key.as_deref().unwrap_or("null")
        ),
        JaasError::NotTerminated { .. } => "JAAS config entry not terminated by semi-colon".into(),
        JaasError::EmptyLoginModule => return None,
    })
}

/// kraftd's parse in the probe's format.
fn render(text: &str) -> String {
    match JaasConfig::parse(text) {
        Ok(config) => {
            let mut out = String::from("ok");
            for e in &config.entries {
                let mut options: Vec<(Option<Vec<u16>>, String)> = e
                    .options
                    .iter()
                    .map(|(k, v)| {
                        let shown = format!(
                            "{}={}",
                            k.as_deref().map_or("null".to_string(), hex),
                            hex(v.expose())
                        );
                        (k.as_ref().map(|k| k.encode_utf16().collect()), shown)
                    })
                    .collect();
                // Java's String order: UTF-16 code units; the null key first.
                options.sort();
                let pairs: Vec<String> = options.into_iter().map(|(_, s)| s).collect();
                write!(
                    out,
                    "\t{},{},{}",
                    hex(&e.login_module),
                    e.flag.name(),
                    pairs.join(";")
                )
                .unwrap();
            }
            out
        }
        Err(e) => format!(
            "error\tjava.lang.IllegalArgumentException\t{}",
            java_message(&e).map_or("null".to_string(), |m| hex(&m))
        ),
    }
}

const PLAIN: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";

fn table() -> Vec<String> {
    let mut cases: Vec<String> = [
        "",
        "   ",
        "// nothing but a comment",
        "/* unterminated",
        "M",
        "M required",
        "M required;",
        "M required ;",
        "M REQUIRED; N Requisite; O sufficient; P optional;",
        "M requıred;",
        "M ſufficient;",
        "M bogus;",
        "M 'required';",
        "M \"optional\" a=b;",
        "M 1;",
        "M = ;",
        "M required a=b",
        "M required a=;",
        "M required a=1;",
        "M required a=-1;",
        "M required a=\"1\";",
        "M required a b;",
        "M required a=b c=d;",
        "M required a=b a=c;",
        "M required = = v;",
        "M required 5=v;",
        "M required =v;",
        "M required \"k y\"='v;al';",
        "'' required;",
        "\"\" required a=b;",
        "1 required;",
        "1 required",
        "; required;",
        "M required a=\"unterminated\nb=c;",
        "M required a='x\\ty\\n\\101\\477\\09\\q\\\\';",
        "M required a=\"ends in a backslash\\",
        "M/comment\n required;",
        "M required // comment\n a=b;",
        "M required /* c\n */ a=b;",
        "M required / c\n a=b;",
        "M required /\n a=b;",
        "M required a=b /* x *\n/ y */;",
        "M required a=b\r\n;",
        "M\trequired\u{0}a=b;",
        "my-module_1$x.y required -k=v;",
        "M required k=-;",
        "M required k=é漢😀;",
        "é.Module required ключ=значение;",
        "M required k=\u{85}v;",
        "M required k={v};",
        "M required k=v; ;",
        "M required k=v;;",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cases.push(format!(
        "{PLAIN} required username=\"admin\" password=\"admin-secret\" \
         user_admin=\"admin-secret\" user_alice=\"alice-secret\";"
    ));
    cases.push(format!("{PLAIN} required; {PLAIN} optional user_x=\"y\";"));
    cases
}

/// Values built from pieces that matter to the tokenizer, from a fixed seed.
fn generated(n: usize) -> Vec<String> {
    const PIECES: &[&str] = &[
        "M",
        "org.x.Module",
        "required",
        "OPTIONAL",
        "Requisite",
        "bogus",
        " ",
        " ",
        " ",
        "\n",
        "\r",
        "\t",
        "=",
        "=",
        ";",
        ";",
        "a",
        "user_b",
        "\"",
        "'",
        "\"v w\"",
        "'x'",
        "\\",
        "\\n",
        "\\7",
        "\\377",
        "1",
        "2.5",
        "-",
        ".",
        "/",
        "//",
        "/*",
        "*/",
        "*",
        "é",
        "😀",
        "\u{0}",
        "{",
        "}",
        "$",
        "_",
        "#",
    ];
    let mut g = Gen(0x4a41_4153);
    (0..n)
        .map(|_| {
            let len = 1 + g.below(14) as usize;
            (0..len)
                .map(|_| PIECES[g.below(PIECES.len() as u64) as usize])
                .collect()
        })
        .collect()
}

#[test]
fn jaas_configs_parse_as_kafkas_jaas_config() {
    let dir = TestDir::new();
    let mut cases = table();
    let table_len = cases.len();
    cases.extend(generated(2000));
    let stdin: String = cases.iter().map(|c| format!("{}\n", hex(c))).collect();
    let java = run_probe("JaasProbe", &[], &stdin, dir.path());
    let lines: Vec<&str> = java.stdout.lines().collect();
    assert_eq!(lines.len(), cases.len(), "one answer a value:\n{java}");
    let mut failures = Vec::new();
    let (mut parsed, mut refused) = (0, 0);
    for (i, (case, java)) in cases.iter().zip(&lines).enumerate() {
        let ours = render(case);
        if i < table_len {
            eprintln!("  {case:?}: {java}");
        }
        if java.starts_with("ok") {
            parsed += 1;
        } else {
            refused += 1;
        }
        if ours != *java {
            failures.push(format!("{case:?}\n    java:   {java}\n    kraftd: {ours}"));
        }
    }
    eprintln!(
        "{} values ({table_len} from the table): {parsed} parsed, {refused} refused by both",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} values parse differently:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // The generator reaches both outcomes.
    assert!(
        parsed > 20 && refused > 20,
        "{parsed} parsed, {refused} refused"
    );
}
