//! `--add-scram` refusals: the same exit status and message from `kraftd format` and
//! `kafka-storage format`, but where Kafka echoes what may be a secret.

use std::path::Path;

use super::super::{config, kraftd_format};
use crate::harness::{free_port, random_kafka_uuid, FormatFlag, Kafka, Output, TestDir};

/// One refusal: the arguments, Java's message (stderr, alone), and kraftd's when it differs
/// (a value that may be a secret shown as `[hidden]`).
struct Refusal {
    args: &'static [&'static str],
    java: &'static str,
    kraftd: Option<&'static str>,
}

const fn same(args: &'static [&'static str], java: &'static str) -> Refusal {
    Refusal {
        args,
        java,
        kraftd: None,
    }
}

const fn hidden(
    args: &'static [&'static str],
    java: &'static str,
    kraftd: &'static str,
) -> Refusal {
    Refusal {
        args,
        java,
        kraftd: Some(kraftd),
    }
}

const REFUSALS: &[Refusal] = &[
    same(
        &["-S", "SCRAM-SHA-256"],
        "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'",
    ),
    same(
        &["-S", "SCRAM-SHA-1=[name=a,password=b]"],
        "The add-scram mechanism SCRAM-SHA-1 is not supported.",
    ),
    same(
        &["-S", "scram-sha-512=[name=a,password=b]"],
        "The add-scram mechanism scram-sha-512 is not supported.",
    ),
    same(
        &["-S", "SCRAM-SHA-256=name=a,password=b]"],
        "Expected configuration string to start with [",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,password=b"],
        "Expected configuration string to end with ]",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[]"],
        "No equals sign found in SCRAM component: ",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,nokey,password=b]"],
        "No equals sign found in SCRAM component: nokey",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[,]"],
        "You must supply 'name' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[ name=a,password=b]"],
        "You must supply 'name' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a]"],
        "You must supply one of 'password' or 'saltedpassword' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,saltedpassword=YWJj]"],
        "You must supply 'salt' with 'saltedpassword' to add-scram",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,password=b,iterations=x]"],
        "Failed to parse iterations count: x",
    ),
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=b,iterations=2147483648]",
        ],
        "Failed to parse iterations count: 2147483648",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,password=b,iterations=4095]"],
        "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
    ),
    same(
        &["-S", "SCRAM-SHA-512=[name=a,password=b,iterations=16385]"],
        "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[name=a,foo=1,bar=2,password=b]"],
        "Unknown SCRAM configurations: bar, foo",
    ),
    // Each argument is parsed and made a record before the next is read.
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=p,iterations=1]",
            "-S",
            "SCRAM-SHA-256=[bogus]",
        ],
        "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
    ),
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=p]",
            "-S",
            "SCRAM-SHA-256=[bogus]",
        ],
        "No equals sign found in SCRAM component: bogus",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256=[name=a,salt=%%%,saltedpassword=YWJj]"],
        "Failed to decode given salt: %%%",
        "Failed to decode given salt: [hidden] (an illegal base64 character at position 0)",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256=[name=a,salt=YWJj,saltedpassword=YQ=]"],
        "Failed to decode given saltedPassword: YQ=",
        "Failed to decode given saltedPassword: [hidden] (an incomplete padding at the end)",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256=[name=a,password=pa,ss]"],
        "No equals sign found in SCRAM component: ss",
        "No equals sign found in SCRAM component: [hidden]",
    ),
    hidden(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=pa,ss=word,iterations=8192,foo=1]",
        ],
        "Unknown SCRAM configurations: foo, ss",
        "Unknown SCRAM configurations: foo, [hidden]",
    ),
    hidden(
        &["-S", "SCRAM-SHA-256:[name:a;password:b]"],
        "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256:[name:a;password:b]'",
        "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256:[hidden]'",
    ),
    // The metadata.version gate, before any argument is read.
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=b]",
            "--release-version",
            "3.5-IV1",
        ],
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.",
    ),
    same(
        &["-S", "SCRAM-SHA-256=[bogus", "--release-version", "3.4"],
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.",
    ),
    same(
        &[
            "-S",
            "SCRAM-SHA-256=[name=a,password=b]",
            "--feature",
            "metadata.version=10",
        ],
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.",
    ),
];

/// Java's stderr when it died of `IllegalArgumentException: Empty key` (an empty password or
/// salted password), and kraftd's message for it.
const EMPTY_KEYS: [(&str, &str); 2] = [
    (
        "SCRAM-SHA-256=[name=a,password=]",
        "Empty key: the password of add-scram user 'a' is empty",
    ),
    (
        "SCRAM-SHA-512=[name=a,salt=YWJj,saltedpassword=\"\"]",
        "Empty key: the saltedpassword of add-scram user 'a' is empty",
    ),
];

/// A one-line output without its newline (a message may end with a space).
fn line(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// kraftd's message: its stderr without the `kraftd format: ` prefix.
fn kraftd_message(out: &Output) -> &str {
    line(&out.stderr)
        .strip_prefix("kraftd format: ")
        .unwrap_or_else(|| panic!("one message line expected:\n{out}"))
}

fn refuse_both(kafka: &Kafka, cfg: &Path, args: &[&str]) -> (Output, Output) {
    let cluster = random_kafka_uuid();
    let ours = kraftd_format(cfg, &cluster, &FormatFlag::None, args);
    let java = kafka.storage_format(cfg, &cluster, &FormatFlag::None, args);
    assert_eq!(ours.code(), Some(1), "{ours}");
    assert_eq!(java.code(), Some(1), "{java}");
    assert!(!ours.stderr.contains("panicked"), "{ours}");
    (ours, java)
}

#[test]
fn add_scram_refusals_match_kafka_storage() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let cfg = config(
        &dir,
        "n",
        "controller.quorum.voters",
        &format!("1@127.0.0.1:{port}"),
        port,
    );
    // Two at a time: each Java run is a JVM start.
    let outputs: Vec<(Output, Output)> = std::thread::scope(|s| {
        REFUSALS
            .chunks(2)
            .flat_map(|pair| {
                let running: Vec<_> = pair
                    .iter()
                    .map(|r| s.spawn(|| refuse_both(kafka, &cfg, r.args)))
                    .collect();
                running
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    for (r, (ours, java)) in REFUSALS.iter().zip(&outputs) {
        assert_eq!(line(&java.stderr), r.java, "{:?}: Java\n{java}", r.args);
        assert_eq!(
            kraftd_message(ours),
            r.kraftd.unwrap_or(r.java),
            "{:?}: kraftd\n{ours}",
            r.args
        );
        assert!(
            java.stdout.is_empty() && ours.stdout.is_empty(),
            "{ours}\n{java}"
        );
    }
    for (arg, message) in EMPTY_KEYS {
        let (ours, java) = refuse_both(kafka, &cfg, &["--add-scram", arg]);
        assert!(
            java.stderr.starts_with(
                "Exception in thread \"main\" java.lang.IllegalArgumentException: Empty key"
            ),
            "{java}"
        );
        assert_eq!(kraftd_message(&ours), message);
    }
    // Java checks kraft.version before SCRAM.
    let dynamic = config(
        &dir,
        "d",
        "controller.quorum.bootstrap.servers",
        &format!("127.0.0.1:{port}"),
        port,
    );
    let args = [
        "--standalone",
        "--feature",
        "kraft.version=0",
        "--release-version",
        "3.4",
        "-S",
        "SCRAM-SHA-256=[bogus",
    ];
    let (ours, java) = refuse_both(kafka, &dynamic, &args);
    assert!(
        java.stderr.starts_with("Cannot set kraft.version to 0 if"),
        "{java}"
    );
    assert_eq!(kraftd_message(&ours), line(&java.stderr));
    assert!(
        !dir.join("n/meta").exists() && !dir.join("d/meta").exists(),
        "nothing written"
    );
}
