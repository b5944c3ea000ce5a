//! Client quotas by entity (Kafka's `ClientQuotasImage`).

pub mod alter;
#[cfg(test)]
mod tests;

use imbl::OrdMap;
use serde_json::Value;

use crate::protocol::messages::ClientQuotaRecord;

/// A quota entity: (entity type, name) pairs sorted by type; a `None` name is the default entity.
pub type QuotaEntity = Vec<(String, Option<String>)>;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuotasImage {
    /// Invariant: no entity maps to an empty set of quotas.
    pub entities: OrdMap<QuotaEntity, OrdMap<String, f64>>,
}

impl QuotasImage {
    pub fn replay(&mut self, r: &ClientQuotaRecord) {
        let mut entity: QuotaEntity = r
            .entity
            .iter()
            .map(|e| (e.entity_type.clone(), e.entity_name.clone()))
            .collect();
        entity.sort();
        if r.remove {
            if let Some(q) = self.entities.get_mut(&entity) {
                q.remove(&r.key);
                if q.is_empty() {
                    self.entities.remove(&entity);
                }
            }
        } else {
            self.entities
                .entry(entity)
                .or_default()
                .insert(r.key.clone(), r.value);
        }
    }

    pub fn to_json(&self) -> Value {
        self.entities
            .iter()
            .map(|(entity, quotas)| {
                let key = entity
                    .iter()
                    .map(|(t, n)| match n {
                        Some(n) => format!("{t}={n}"),
                        None => t.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                let quotas: serde_json::Map<String, Value> = quotas
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(*v)))
                    .collect();
                (key, Value::Object(quotas))
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}
