//! kraftd's metadata image against Java's: `kraftd metadata-state --json` and the Java image
//! dumper on the same log at the same offset, compared value by value (numbers as numbers).

use std::path::Path;

use serde_json::Value;

use super::image_dumper::dump_java_image;
use super::{KraftdProcess, KRAFTD_COMMAND_TIMEOUT};
use kraftd::controller::configs::TOPIC_RESOURCE;

/// kraftd's image of `log_dir` at `at` (the canonical JSON of compat/image-dumper/FORMAT.md).
pub fn kraftd_image(log_dir: &Path, at: Option<i64>) -> Value {
    let dir = log_dir.display().to_string();
    let at_text = at.map(|a| a.to_string());
    let mut args = vec!["metadata-state", dir.as_str(), "--json"];
    if let Some(a) = &at_text {
        args.extend(["--at", a.as_str()]);
    }
    let out = KraftdProcess::run(&args, &[], KRAFTD_COMMAND_TIMEOUT);
    out.assert_success();
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("kraftd metadata-state --json printed no JSON ({e}):\n{out}"))
}

/// The paths where two images differ, each with both values (empty: equal).
pub fn image_differences(java: &Value, kraftd: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", java, kraftd, &mut out);
    out
}

fn walk(path: &str, java: &Value, kraftd: &Value, out: &mut Vec<String>) {
    match (java, kraftd) {
        (Value::Object(j), Value::Object(k)) => {
            for (key, jv) in j {
                let p = format!("{path}/{key}");
                match k.get(key) {
                    Some(kv) => walk(&p, jv, kv, out),
                    None => out.push(format!("{p}: only Java has {}", short(jv))),
                }
            }
            for (key, kv) in k {
                if !j.contains_key(key) {
                    out.push(format!("{path}/{key}: only kraftd has {}", short(kv)));
                }
            }
        }
        (Value::Array(j), Value::Array(k)) if j.len() == k.len() => {
            for (i, (jv, kv)) in j.iter().zip(k).enumerate() {
                walk(&format!("{path}[{i}]"), jv, kv, out);
            }
        }
        (Value::Number(j), Value::Number(k)) if j.as_f64() == k.as_f64() => {}
        (j, k) if j == k => {}
        (j, k) => out.push(format!("{path}: Java {} vs kraftd {}", short(j), short(k))),
    }
}

/// `image` without the configs of topics it does not hold. Java's image can keep them: its
/// `ConfigurationsDelta` drops a topic's configs on `RemoveTopicRecord` only when they were in
/// the delta's base image, so a Java node that replays a topic's `ConfigRecord` and its removal
/// in one delta (e.g. catching up after a restart) keeps the configs in its image and writes
/// them into its snapshots, while a node that replayed them in two deltas does not. Nodes with
/// the same log can thus hold images that differ only in these configs.
pub fn without_orphan_topic_configs(image: &Value) -> Value {
    let mut image = image.clone();
    let names: Vec<String> = image["topics"]
        .as_object()
        .map(|t| {
            t.values()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let topic = TOPIC_RESOURCE.to_string();
    if let Some(configs) = image["configs"].as_object_mut() {
        configs.retain(|key, _| match key.split_once(':') {
            Some((kind, name)) if kind == topic => names.iter().any(|n| n == name),
            _ => true,
        });
    }
    image
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!("{}…", &s[..200])
    } else {
        s
    }
}

/// Asserts kraftd's image of `log_dir` equals Java's at `at`; returns the image's summary
/// (offset, topics, partitions) for the report.
pub fn assert_image_equals_javas(log_dir: &Path, at: Option<i64>) -> (i64, usize, usize) {
    let java = dump_java_image(log_dir, at);
    let kraftd = kraftd_image(log_dir, at);
    let diffs = image_differences(&java, &kraftd);
    assert!(
        diffs.is_empty(),
        "kraftd's image of {} at {at:?} differs from Java's in {} places:\n  {}",
        log_dir.display(),
        diffs.len(),
        diffs.join("\n  ")
    );
    let topics = java["topics"].as_object().map_or(0, |t| t.len());
    let partitions = java["topics"].as_object().map_or(0, |t| {
        t.values()
            .map(|t| t["partitions"].as_object().map_or(0, |p| p.len()))
            .sum()
    });
    (java["offset"].as_i64().unwrap_or(-2), topics, partitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_the_path_and_both_values() {
        let java = json!({"a": {"x": 1, "y": [1, 2]}, "q": 10.0});
        let kraftd = json!({"a": {"x": 2, "y": [1, 2], "z": true}, "q": 10});
        let d = image_differences(&java, &kraftd);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("/a/x: Java 1 vs kraftd 2"), "{d:?}");
        assert!(d[1].contains("/a/z: only kraftd has true"), "{d:?}");
        assert!(image_differences(&java, &java).is_empty());
    }

    #[test]
    fn only_configs_of_absent_topics_are_left_out() {
        let image = json!({
            "topics": {"id1": {"name": "kept"}},
            "configs": {"2:kept": {"a": "1"}, "2:gone": {"a": "1"}, "4:": {"b": "2"}}
        });
        let cleaned = without_orphan_topic_configs(&image);
        let keys: Vec<&String> = cleaned["configs"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["2:kept", "4:"]);
    }
}
