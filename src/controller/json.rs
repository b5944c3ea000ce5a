//! The canonical image JSON (compat/image-dumper/FORMAT.md): what `kraftd metadata-state --json`
//! prints and what Java's image dumper prints for the same log, compared field by field.

use serde_json::Value;

use crate::protocol::codec::Uuid;

/// A Uuid as Kafka prints it (URL-safe base64, no padding).
pub fn uuid(u: &Uuid) -> Value {
    Value::String(u.to_string())
}

pub fn uuids(us: &[Uuid]) -> Value {
    Value::Array(us.iter().map(uuid).collect())
}

/// Bytes as standard base64.
pub fn bytes(b: &[u8]) -> Value {
    use base64::Engine;
    Value::String(base64::engine::general_purpose::STANDARD.encode(b))
}

/// The same value with every object's keys sorted, recursively, so that printing is canonical.
pub fn canonical(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(canonical).collect()),
        other => other,
    }
}
