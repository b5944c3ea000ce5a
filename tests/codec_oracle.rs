//! A differential oracle: kraftd's generated codecs against the kafka-protocol crate, a second
//! Rust codec generated independently from Kafka's schemas. For every (message, version) both
//! know: the golden vectors real Kafka wrote, and generated values valid for the version, must
//! come out of both encoders as the same bytes. `--nocapture` prints what was covered.
//!
//! Values are generated as kraftd types only (codegen writes their generators); the other
//! direction is kafka-protocol's re-encoded bytes, which kraftd must read and write back
//! unchanged (compare.rs).
//!
//! Replay one generated case: `ORACLE_REPLAY=<Message>:<version>:<seed>`. More cases per
//! version: `ORACLE_CASES=<n>` (default 2000).

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

// The parts live in tests/codec_oracle/; `arbitrary/` is written by `make codegen`.
#[path = "codec_oracle/abort_guard.rs"]
mod abort_guard;
#[path = "codec_oracle/apis.rs"]
mod apis;
#[path = "codec_oracle/arbitrary/mod.rs"]
mod arbitrary;
#[path = "codec_oracle/compare.rs"]
mod compare;
#[path = "codec_oracle/gen.rs"]
mod gen;
#[path = "codec_oracle/vectors.rs"]
mod vectors;

use std::collections::{BTreeMap, BTreeSet};

use kraftd::protocol::messages::{SchemaKind, REGISTRY};

use abort_guard::{while_checking, GuardedAlloc};
use apis::{oracle_messages, OracleMessage};

#[global_allocator]
static ALLOCATOR: GuardedAlloc = GuardedAlloc;

fn fail_if_any(what: &str, failures: &[String]) {
    if failures.is_empty() {
        return;
    }
    let shown: Vec<String> = failures
        .iter()
        .take(20)
        .map(|f| f.chars().take(4000).collect())
        .collect();
    panic!(
        "{} {what} disagreement(s) (first {} shown):\n\n{}",
        failures.len(),
        shown.len(),
        shown.join("\n\n")
    );
}

/// "0-4" or "0-4 (kraftd only: 5)": the versions compared, then those only one side knows.
fn describe_versions(m: &OracleMessage) -> String {
    let shared = m.shared_versions();
    let mut s = format!("v{}-{}", shared.start(), shared.end());
    let only = |mine: &std::ops::RangeInclusive<i16>| -> Vec<String> {
        mine.clone()
            .filter(|v| !shared.contains(v))
            .map(|v| v.to_string())
            .collect()
    };
    for (who, range) in [
        ("kraftd", &m.kraftd_versions),
        ("kafka-protocol", &m.kafka_protocol_versions),
    ] {
        let o = only(range);
        if !o.is_empty() {
            s += &format!(" ({who} only: v{})", o.join(", v"));
        }
    }
    s
}

/// kraftd's messages the kafka-protocol crate (0.18) has no type for: Kafka 4.4's
/// UnregisterController. Real Kafka checks their bytes instead (compat
/// `unregister_controller`: the same requests to Java and kraftd, answers decoded by kraftd).
const NOT_IN_KAFKA_PROTOCOL: &[&str] = &[
    "UnregisterControllerRequest",
    "UnregisterControllerResponse",
];

#[test]
fn the_table_lists_every_kraftd_api() {
    let table: BTreeSet<&str> = oracle_messages().iter().map(|m| m.name).collect();
    let mut registry: BTreeSet<&str> = REGISTRY
        .iter()
        .filter(|e| matches!(e.kind, SchemaKind::Request | SchemaKind::Response))
        .map(|e| e.name)
        .collect();
    for name in NOT_IN_KAFKA_PROTOCOL {
        assert!(
            registry.remove(name),
            "{name} is no kraftd message any more"
        );
    }
    assert_eq!(
        table, registry,
        "tests/codec_oracle/apis.rs must list exactly kraftd's requests and responses"
    );
    let mut lines = vec!["codec oracle coverage (api key, versions compared):".to_string()];
    let mut pairs = 0;
    for m in oracle_messages() {
        let shared = m.shared_versions();
        assert!(
            !shared.is_empty(),
            "{}: no version in common with kafka-protocol",
            m.name
        );
        pairs += shared.len();
        lines.push(format!(
            "  {:>2} {:<36} {}",
            m.api_key,
            m.name,
            describe_versions(&m)
        ));
    }
    lines.push(format!("  {pairs} (message, version) pairs"));
    println!("{}", lines.join("\n"));
}

#[test]
fn golden_vectors_agree_with_kafka_protocol() {
    let messages: BTreeMap<&str, OracleMessage> =
        oracle_messages().into_iter().map(|m| (m.name, m)).collect();
    let mut failures = Vec::new();
    let (mut checked, mut live, mut outside) = (0, 0, 0);
    let mut per_message: BTreeMap<&str, usize> = BTreeMap::new();
    for v in vectors::schema_vectors()
        .into_iter()
        .chain(vectors::live_bodies())
    {
        let Some(m) = messages.get(v.message.as_str()) else {
            continue; // not an API message: headers, records, data
        };
        if !m.shared_versions().contains(&v.version) {
            outside += 1;
            continue;
        }
        checked += 1;
        live += v.label.starts_with("live/") as usize;
        *per_message.entry(m.name).or_default() += 1;
        if let Err(e) = while_checking(&v.label, || (m.check_bytes)(&v.bytes, v.version)) {
            failures.push(format!("{}: {e}", v.label));
        }
    }
    println!(
        "codec oracle golden vectors: {checked} checked against kafka-protocol over {} messages \
         ({live} of them live frame bodies), {outside} skipped at versions kafka-protocol lacks; \
         {} disagreement(s)",
        per_message.len(),
        failures.len()
    );
    assert!(checked > 0, "no golden vector was checked");
    fail_if_any("golden-vector", &failures);
}

/// A seed per case that depends only on the message, version and case number.
fn case_seed(name: &str, version: i16, case: u64) -> u64 {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    h ^ ((version as u64) << 48) ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn replay(spec: &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    let [name, version, seed] = parts[..] else {
        panic!("ORACLE_REPLAY=<Message>:<version>:<seed>");
    };
    let seed = u64::from_str_radix(seed.trim_start_matches("0x"), 16).expect("hex seed");
    let m = oracle_messages()
        .into_iter()
        .find(|m| m.name == name)
        .expect("a message in the table");
    let n = (m.check_generated)(seed, version.parse().unwrap()).unwrap();
    println!("{spec}: {n} bytes agree");
}

#[test]
fn generated_messages_agree_with_kafka_protocol() {
    if let Ok(spec) = std::env::var("ORACLE_REPLAY") {
        return replay(&spec);
    }
    let cases: u64 = std::env::var("ORACLE_CASES")
        .ok()
        .map_or(2000, |c| c.parse().expect("ORACLE_CASES is a number"));
    let mut failures = Vec::new();
    let (mut ran, mut pairs, mut bytes, mut largest) = (0u64, 0, 0usize, 0usize);
    for m in oracle_messages() {
        for version in m.shared_versions() {
            pairs += 1;
            let mut failed_here = 0;
            for case in 0..cases {
                let seed = case_seed(m.name, version, case);
                let replay_with = format!("ORACLE_REPLAY={}:{version}:{seed:x}", m.name);
                ran += 1;
                let result = while_checking(&replay_with, || (m.check_generated)(seed, version));
                if let Ok(n) = result {
                    bytes += n;
                    largest = largest.max(n);
                }
                if let Err(e) = result {
                    failed_here += 1;
                    // The first failure of each (message, version) says enough.
                    if failed_here == 1 {
                        failures.push(format!("{} v{version} ({replay_with}): {e}", m.name));
                    }
                }
            }
            if failed_here > 1 {
                failures.push(format!(
                    "{} v{version}: {failed_here} of {cases} cases disagree",
                    m.name
                ));
            }
        }
    }
    println!(
        "codec oracle generated messages: {ran} cases ({cases} per version) over {pairs} \
         (message, version) pairs, {bytes} bytes compared (largest message {largest}); \
         {} failure line(s)",
        failures.len()
    );
    fail_if_any("generated-message", &failures);
}
