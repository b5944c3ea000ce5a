//! Golden vectors captured from real Apache Kafka (how: protocol-tests/README.md).
//!
//! Every vector must decode with kraftd's generated codec, re-encode to the same bytes at the
//! same version, and render the same JSON as Kafka's own JsonConverter. A vector for a message
//! kraftd has no codec for fails the suite unless `NO_CODEC` says why that is fine, and every
//! (message, version) kraftd generates must have at least one vector. Each test collects all
//! its failures before failing, so one run shows the whole picture.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use kraftd::protocol::codec::{Message, Reader};
use kraftd::protocol::messages::{
    RequestHeader, ResponseHeader, SchemaEntry, KAFKA_VERSION, REGISTRY,
};
use serde_json::Value;

/// Messages with golden vectors but no kraftd codec, each with the reason that is acceptable.
const NO_CODEC: &[(&str, &str)] = &[];

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol-tests/vectors")
}

fn entry(name: &str) -> Option<&'static SchemaEntry> {
    REGISTRY.iter().find(|e| e.name == name)
}

fn allowed_without_codec(name: &str) -> bool {
    NO_CODEC.iter().any(|(n, _)| *n == name)
}

/// One `<Message>/v<N>[-<variant>].bin` file.
struct Vector {
    message: String,
    version: i16,
    variant: String,
    bin: PathBuf,
}

impl Vector {
    fn label(&self) -> String {
        let v = if self.variant.is_empty() {
            String::new()
        } else {
            format!("-{}", self.variant)
        };
        format!("{} v{}{v}", self.message, self.version)
    }
    fn json(&self) -> PathBuf {
        self.bin.with_extension("json")
    }
}

/// Parses "v12" or "v12-unknown-tags" (the file stem).
fn parse_stem(stem: &str) -> Option<(i16, String)> {
    let rest = stem.strip_prefix('v')?;
    let (num, variant) = match rest.find('-') {
        Some(i) => (&rest[..i], rest[i + 1..].to_string()),
        None => (rest, String::new()),
    };
    Some((num.parse().ok()?, variant))
}

/// All schema vectors (everything but `live/`). Panics when the directory is missing or empty:
/// a checkout without vectors must not pass by testing nothing.
fn schema_vectors() -> Vec<Vector> {
    let dir = vectors_dir();
    let mut out = Vec::new();
    let mut bad_names = Vec::new();
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "golden vectors missing at {}: {e}; run `make vectors`",
            dir.display()
        )
    });
    for msg_dir in entries.map(|e| e.unwrap().path()) {
        if !msg_dir.is_dir() || msg_dir.file_name().unwrap() == "live" {
            continue;
        }
        let message = msg_dir.file_name().unwrap().to_string_lossy().into_owned();
        for file in fs::read_dir(&msg_dir).unwrap().map(|e| e.unwrap().path()) {
            if file.extension().is_none_or(|x| x != "bin") {
                continue;
            }
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            match parse_stem(&stem) {
                Some((version, variant)) => out.push(Vector {
                    message: message.clone(),
                    version,
                    variant,
                    bin: file,
                }),
                None => bad_names.push(file.display().to_string()),
            }
        }
    }
    assert!(
        bad_names.is_empty(),
        "vector files not named v<N>[-<variant>].bin: {bad_names:?}"
    );
    assert!(
        !out.is_empty(),
        "no golden vectors under {}; run `make vectors`",
        dir.display()
    );
    out.sort_by(|a, b| {
        (&a.message, a.version, &a.variant).cmp(&(&b.message, b.version, &b.variant))
    });
    out
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where two byte strings first differ, with a little hex context.
fn byte_diff(expected: &[u8], actual: &[u8]) -> String {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let ctx = |b: &[u8]| {
        let start = at.saturating_sub(4);
        b[start.min(b.len())..(at + 12).min(b.len())]
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "{} bytes expected, {} re-encoded; first difference at offset {at}: kafka [{}] kraftd [{}]",
        expected.len(),
        actual.len(),
        ctx(expected),
        ctx(actual)
    )
}

/// The first place two JSON values differ, as a path; numbers compare by value (Kafka writes
/// float64 fields as doubles, every other number as an integer).
fn json_diff(path: &str, expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                match a.get(k) {
                    None => {
                        return Some(format!(
                            "{path}.{k}: missing in kraftd's JSON (Kafka has {ev})"
                        ))
                    }
                    Some(av) => {
                        if let Some(d) = json_diff(&format!("{path}.{k}"), ev, av) {
                            return Some(d);
                        }
                    }
                }
            }
            a.keys()
                .find(|k| !e.contains_key(*k))
                .map(|k| format!("{path}.{k}: in kraftd's JSON but not in Kafka's ({})", a[k]))
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Some(format!(
                    "{path}: {} elements in Kafka's JSON, {} in kraftd's",
                    e.len(),
                    a.len()
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (ev, av))| json_diff(&format!("{path}[{i}]"), ev, av))
        }
        (Value::Number(e), Value::Number(a)) => {
            let same = if e.is_f64() || a.is_f64() {
                e.as_f64() == a.as_f64()
            } else {
                e == a
            };
            (!same).then(|| format!("{path}: Kafka {e}, kraftd {a}"))
        }
        _ if expected == actual => None,
        _ => Some(format!("{path}: Kafka {expected}, kraftd {actual}")),
    }
}

fn fail_if_any(what: &str, failures: Vec<String>) {
    if failures.is_empty() {
        return;
    }
    let shown: Vec<&str> = failures.iter().take(60).map(String::as_str).collect();
    panic!(
        "{} {what} failure(s){}:\n  {}",
        failures.len(),
        if failures.len() > shown.len() {
            " (first 60 shown)"
        } else {
            ""
        },
        shown.join("\n  ")
    );
}

#[test]
fn vectors_exist_and_match_the_manifest_and_kafka_release() {
    let vectors = schema_vectors();
    let manifest = read_json(&vectors_dir().join("manifest.json"));
    assert_eq!(
        manifest["kafkaVersion"].as_str(),
        Some(KAFKA_VERSION),
        "vectors were captured from a different Kafka release than the codecs were generated from; \
         run `make vectors`"
    );
    let listed: BTreeSet<String> = manifest["vectors"]
        .as_array()
        .expect("manifest.json has a vectors array")
        .iter()
        .map(|v| {
            v["file"]
                .as_str()
                .expect("manifest entry has a file")
                .to_string()
        })
        .collect();
    let present: BTreeSet<String> = vectors
        .iter()
        .map(|v| {
            format!(
                "{}/{}",
                v.message,
                v.bin.file_name().unwrap().to_string_lossy()
            )
        })
        .collect();
    let mut failures = Vec::new();
    for f in listed.difference(&present) {
        failures.push(format!("{f}: in manifest.json but missing"));
    }
    for f in present.difference(&listed) {
        failures.push(format!(
            "{f}: present but not in manifest.json (stale? rerun `make vectors`)"
        ));
    }
    for v in &vectors {
        if !v.json().exists() {
            failures.push(format!("{}: no Kafka JSON next to it", v.label()));
        }
    }
    let live = live_exchanges();
    if live.is_empty() {
        failures.push("no live exchanges in vectors/live".into());
    }
    fail_if_any("vector set", failures);
}

#[test]
fn every_vector_has_a_kraftd_codec_or_an_allow_listed_reason() {
    let mut failures = Vec::new();
    let mut without: BTreeMap<String, usize> = BTreeMap::new();
    for v in schema_vectors() {
        if entry(&v.message).is_none() {
            *without.entry(v.message.clone()).or_default() += 1;
        }
    }
    for (name, n) in &without {
        if !allowed_without_codec(name) {
            failures.push(format!("{name}: {n} golden vector(s) but kraftd has no codec (add it to codegen/messages.txt, or to NO_CODEC with a reason)"));
        }
    }
    for (name, _) in NO_CODEC {
        if entry(name).is_some() {
            failures.push(format!(
                "{name}: in NO_CODEC but kraftd now has a codec; remove the entry"
            ));
        } else if !without.contains_key(*name) {
            failures.push(format!(
                "{name}: in NO_CODEC but has no vectors; remove the entry"
            ));
        }
    }
    fail_if_any("codec coverage", failures);
}

#[test]
fn every_generated_message_version_has_a_vector() {
    let have: BTreeSet<(String, i16)> = schema_vectors()
        .into_iter()
        .map(|v| (v.message, v.version))
        .collect();
    let mut failures = Vec::new();
    for e in REGISTRY {
        for v in e.lowest_version..=e.highest_version {
            if !have.contains(&(e.name.to_string(), v)) {
                failures.push(format!("{} v{v}: kraftd has a codec but no golden vector (run `make vectors`; add the message to CaptureVectors.java if new)", e.name));
            }
        }
    }
    fail_if_any("vector coverage", failures);
}

#[test]
fn every_vector_decodes_and_re_encodes_byte_identically() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for v in schema_vectors() {
        let Some(e) = entry(&v.message) else { continue }; // reported by the codec-coverage test
        if !(e.lowest_version..=e.highest_version).contains(&v.version) {
            failures.push(format!(
                "{}: kraftd's codec covers v{}-{}",
                v.label(),
                e.lowest_version,
                e.highest_version
            ));
            continue;
        }
        let bytes = read(&v.bin);
        match (e.round_trip)(&bytes, v.version) {
            Ok(out) if out == bytes => checked += 1,
            Ok(out) => failures.push(format!("{}: {}", v.label(), byte_diff(&bytes, &out))),
            Err(err) => failures.push(format!("{}: {err}", v.label())),
        }
    }
    fail_if_any("byte round-trip", failures);
    assert!(checked > 0, "no vector was checked");
}

#[test]
fn every_vector_renders_kafkas_json() {
    let mut failures = Vec::new();
    for v in schema_vectors() {
        let Some(e) = entry(&v.message) else { continue };
        if !(e.lowest_version..=e.highest_version).contains(&v.version) || !v.json().exists() {
            continue; // reported by the tests above
        }
        let expected = read_json(&v.json());
        match (e.to_kafka_json)(&read(&v.bin), v.version) {
            Ok(actual) => {
                if let Some(d) = json_diff("", &expected, &actual) {
                    failures.push(format!("{}: {d}", v.label()));
                }
            }
            Err(err) => failures.push(format!("{}: decode: {err}", v.label())),
        }
    }
    fail_if_any("Kafka JSON", failures);
}

/// `live/<n>-<Api>-v<N>-request.bin` files, with the API name and version from the file name.
fn live_exchanges() -> Vec<(PathBuf, String, i16)> {
    let dir = vectors_dir().join("live");
    let mut out = Vec::new();
    for p in fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix("-request.bin") else {
            continue;
        };
        let parts: Vec<&str> = stem.splitn(3, '-').collect();
        let parsed = match parts.as_slice() {
            [_, api, ver] => ver
                .strip_prefix('v')
                .and_then(|v| v.parse().ok())
                .map(|v| (api.to_string(), v)),
            _ => None,
        };
        let (api, version) =
            parsed.unwrap_or_else(|| panic!("{}: not <n>-<Api>-v<N>-request.bin", p.display()));
        out.push((p, api, version));
    }
    out.sort();
    out
}

/// Kafka's header versions: v2 requests / v1 responses from the API's first flexible version,
/// except that ApiVersions responses always use header v0 (a client must be able to read them
/// before it knows what the server speaks).
fn header_version(e: &SchemaEntry, api_key: i16, version: i16, request: bool) -> i16 {
    let flexible = e.first_flexible_version.is_some_and(|f| version >= f);
    match (request, flexible) {
        (true, true) => 2,
        (true, false) => 1,
        (false, _) if api_key == 18 => 0,
        (false, true) => 1,
        (false, false) => 0,
    }
}

/// Checks one live frame (header + body); returns failures.
fn check_live_frame(path: &Path, e: &SchemaEntry, version: i16, request: bool) -> Vec<String> {
    let label = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut failures = Vec::new();
    let frame = read(path);
    let kafka = read_json(&path.with_extension("json"));
    let api_key = e.api_key.expect("an API message has a key");
    let hv = header_version(e, api_key, version, request);
    if kafka["headerVersion"].as_i64() != Some(hv as i64) {
        failures.push(format!(
            "{label}: Kafka used header v{}, kraftd's rule says v{hv}",
            kafka["headerVersion"]
        ));
        return failures;
    }
    let mut r = Reader::new(&frame);
    let header = if request {
        RequestHeader::decode(&mut r, hv).map(|h| {
            if (h.request_api_key, h.request_api_version) != (api_key, version) {
                failures.push(format!(
                    "{label}: header says api {} v{}",
                    h.request_api_key, h.request_api_version
                ));
            }
            (h.encode_to_vec(hv), h.to_kafka_json(hv))
        })
    } else {
        ResponseHeader::decode(&mut r, hv).map(|h| (h.encode_to_vec(hv), h.to_kafka_json(hv)))
    };
    let (header_bytes, header_json) = match header {
        Ok(x) => x,
        Err(err) => {
            failures.push(format!("{label}: header: {err}"));
            return failures;
        }
    };
    let (head, body) = frame.split_at(r.position());
    match header_bytes {
        Ok(b) if b == head => {}
        Ok(b) => failures.push(format!("{label}: header: {}", byte_diff(head, &b))),
        Err(err) => failures.push(format!("{label}: header encode: {err}")),
    }
    if let Some(d) = json_diff("header", &kafka["header"], &header_json) {
        failures.push(format!("{label}: {d}"));
    }
    match (e.round_trip)(body, version) {
        Ok(out) if out == body => {}
        Ok(out) => failures.push(format!("{label}: body: {}", byte_diff(body, &out))),
        Err(err) => failures.push(format!("{label}: body: {err}")),
    }
    match (e.to_kafka_json)(body, version) {
        Ok(json) => {
            if let Some(d) = json_diff("body", &kafka["body"], &json) {
                failures.push(format!("{label}: {d}"));
            }
        }
        Err(err) => failures.push(format!("{label}: body JSON: {err}")),
    }
    failures
}

#[test]
fn live_frames_from_a_java_controller_round_trip() {
    let exchanges = live_exchanges();
    assert!(
        !exchanges.is_empty(),
        "no live exchanges under {}; run `make vectors`",
        vectors_dir().join("live").display()
    );
    let mut failures = Vec::new();
    for (req_path, api, version) in exchanges {
        for (path, name, request) in [
            (req_path.clone(), format!("{api}Request"), true),
            (
                PathBuf::from(
                    req_path
                        .to_string_lossy()
                        .replace("-request.bin", "-response.bin"),
                ),
                format!("{api}Response"),
                false,
            ),
        ] {
            if !path.exists() {
                failures.push(format!("{}: missing", path.display()));
                continue;
            }
            match entry(&name) {
                Some(e) => failures.extend(check_live_frame(&path, e, version, request)),
                None if allowed_without_codec(&name) => {}
                None => failures.push(format!(
                    "{}: kraftd has no codec for {name}",
                    path.display()
                )),
            }
        }
    }
    fail_if_any("live frame", failures);
}
