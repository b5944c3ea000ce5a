//! `kraftd format --release-version R` against `kafka-storage format --release-version R` for
//! every name an operator could give Kafka 4.4's tool: each metadata.version (`X.Y-IVn`) and each
//! release (`X.Y`, its latest) from 3.0 to 4.5, and a few that name nothing. Where Java formats,
//! kraftd writes the same checkpoint (a static quorum's: record for record, timestamps aside);
//! where Java refuses, kraftd refuses with Java's message. The names come from this list, not
//! from kraftd's table, so a name Java takes and kraftd does not know fails the test.

use super::{compare_checkpoints, config, kraftd_format, CHECKPOINT};
use crate::harness::{free_port, random_kafka_uuid, FormatFlag, Kafka, Output, TestDir};

/// The candidates: every `X.Y` and `X.Y-IV0` to `X.Y-IV4` from 3.0 to 4.5, and some non-names.
fn candidates() -> Vec<String> {
    let releases = (0..=9)
        .map(|m| format!("3.{m}"))
        .chain((0..=5).map(|m| format!("4.{m}")));
    let mut names = Vec::new();
    for release in releases {
        names.extend((0..=4).map(|iv| format!("{release}-IV{iv}")));
        names.push(release);
    }
    names.extend(["4", "3.9-iv0", "3.9-IV", "latest"].map(String::from));
    names
}

/// The line of a refusal that says why (the tool's last non-empty line of stderr).
fn reason(out: &Output) -> &str {
    out.stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

#[test]
fn kraftd_format_takes_every_release_version_kafka_storage_takes() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let voters = format!("1@127.0.0.1:{port}");
    let cluster = random_kafka_uuid();
    let key = "controller.quorum.voters";
    let (mut formatted, mut refused) = (Vec::new(), Vec::new());
    for (i, name) in candidates().iter().enumerate() {
        let ours = config(&dir, &format!("kraftd-{i}"), key, &voters, port);
        let java = config(&dir, &format!("java-{i}"), key, &voters, port);
        let args = ["--release-version", name.as_str()];
        let out = kraftd_format(&ours, &cluster, &FormatFlag::None, &args);
        let jout = kafka.storage_format(&java, &cluster, &FormatFlag::None, &args);
        match (jout.success(), out.success()) {
            (true, true) => {
                let read = |cfg: &std::path::Path| {
                    std::fs::read(cfg.parent().unwrap().join("meta").join(CHECKPOINT))
                        .unwrap_or_else(|e| panic!("{name}: the checkpoint: {e}"))
                };
                compare_checkpoints(&read(&ours), &read(&java), true);
                formatted.push(name.clone());
            }
            (false, false) => {
                let why = reason(&jout);
                let all = format!("{}{}", out.stdout, out.stderr);
                assert!(
                    !why.is_empty() && all.contains(why) && !all.contains("panicked"),
                    "{name}: Java refused with {why:?}; kraftd said:\n{out}"
                );
                refused.push(name.clone());
            }
            (java_ok, _) => panic!(
                "--release-version {name}: Java {}, kraftd {}:\nJava:\n{jout}\nkraftd:\n{out}",
                if java_ok { "formats" } else { "refuses" },
                if java_ok { "refuses" } else { "formats" },
            ),
        }
    }
    eprintln!("formatted as Java does: {formatted:?}\nrefused as Java does: {refused:?}");
    // Both ways taken: the releases kraftd serves, and names before 3.3-IV3 or after 4.4.
    assert!(formatted.iter().any(|n| n == "3.3-IV3") && formatted.iter().any(|n| n == "4.4"));
    assert!(refused.iter().any(|n| n == "3.2") && refused.iter().any(|n| n == "4.5-IV0"));
}
