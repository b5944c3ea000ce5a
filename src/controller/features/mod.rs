//! Finalized feature levels (Kafka's `FeaturesImage`). metadata.version is held with the others,
//! by its feature level. [`update`] decides UpdateFeatures.

pub mod update;

#[cfg(test)]
mod tests;

use imbl::OrdMap;
use serde_json::Value;

use super::error::Refusal;
use crate::protocol::features::{metadata_version_name, METADATA_VERSION};
use crate::protocol::messages::FeatureLevelRecord;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeaturesImage {
    /// Invariant: every level is > 0 (level 0 removes the feature), and metadata.version's is
    /// one Kafka 4.4 knows.
    pub levels: OrdMap<String, i16>,
}

impl FeaturesImage {
    pub fn replay(&mut self, r: &FeatureLevelRecord) -> Result<(), Refusal> {
        if r.name == METADATA_VERSION {
            if metadata_version_name(r.feature_level).is_none() {
                return Err(Refusal::UnknownMetadataVersion {
                    level: r.feature_level,
                });
            }
        } else if r.feature_level == 0 {
            self.levels.remove(&r.name);
            return Ok(());
        }
        self.levels.insert(r.name.clone(), r.feature_level);
        Ok(())
    }

    pub fn metadata_version(&self) -> Option<i16> {
        self.levels.get(METADATA_VERSION).copied()
    }

    pub fn to_json(&self) -> Value {
        self.levels
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(*v)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}
