//! `kafka_server_metadataloader_*`: Java's metadata loader gauges (`MetadataLoaderMetrics`,
//! `kafka.server:type=MetadataLoader`), which a Java controller registers too, as the JMX
//! exporter names them under Strimzi's generic gauge rule: each gauge's `Value`, lowercased.

use super::text::{Exposition, Kind};
use crate::protocol::features::{KRAFT_VERSION, SUPPORTED_FEATURES};

/// What the loader gauges report of the node's committed image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoaderSample {
    /// The share of time the loader (here: the node loop) waits for work.
    pub avg_idle_ratio: f64,
    /// The raft leader, -1 when none is known.
    pub current_controller_id: i32,
    /// metadata.version's feature level in the committed image (0 before any).
    pub metadata_version: i16,
    /// Snapshots loaded into the image (at start-up, or fetched from the leader).
    pub snapshot_loads: u64,
    /// Each finalized feature level, by Kafka's feature name (0: not finalized).
    pub finalized: Vec<(&'static str, i16)>,
}

impl LoaderSample {
    /// Levels of every feature this build supports, as Java lists its production features:
    /// `level(name)` for each, kraft.version's from raft.
    pub fn finalized_levels(
        kraft_version: i16,
        level: impl Fn(&str) -> Option<i16>,
    ) -> Vec<(&'static str, i16)> {
        SUPPORTED_FEATURES
            .iter()
            .map(|f| {
                let v = if f.name == KRAFT_VERSION {
                    kraft_version
                } else {
                    level(f.name).unwrap_or(0)
                };
                (f.name, v)
            })
            .collect()
    }
}

const LOADER: &str = "kafka_server_metadataloader_";

pub fn loader_families(f: &mut Exposition, s: &LoaderSample) {
    let gauges = [
        ("AvgIdleRatio", s.avg_idle_ratio),
        ("CurrentControllerId", f64::from(s.current_controller_id)),
        ("CurrentMetadataVersion", f64::from(s.metadata_version)),
        ("HandleLoadSnapshotCount", s.snapshot_loads as f64),
    ];
    for (bean, value) in gauges {
        f.gauge(
            [LOADER, bean],
            ["kafka.server:type=MetadataLoader,name=", bean],
            value,
        );
    }
    f.family(
        [LOADER, "finalizedlevel"],
        "kafka.server:type=MetadataLoader,name=FinalizedLevel",
        Kind::Gauge,
    );
    for (feature, level) in &s.finalized {
        f.sample(&[("featureName", &label_name(feature))], f64::from(*level));
    }
}

/// Java's label for a feature: its dotted words in camel case (`metadata.version` is
/// `metadataVersion`).
fn label_name(feature: &str) -> String {
    let mut words = feature.split('.');
    let mut out = words.next().unwrap_or_default().to_string();
    for w in words {
        let mut chars = w.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(&chars.as_str().to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::features::METADATA_VERSION;

    #[test]
    fn feature_labels_are_javas() {
        assert_eq!(label_name(METADATA_VERSION), "metadataVersion");
        assert_eq!(
            label_name("eligible.leader.replicas.version"),
            "eligibleLeaderReplicasVersion"
        );
        assert_eq!(label_name(KRAFT_VERSION), "kraftVersion");
    }

    #[test]
    fn kraft_version_comes_from_raft_and_missing_features_are_zero() {
        let levels = LoaderSample::finalized_levels(1, |n| (n == METADATA_VERSION).then_some(33));
        assert!(levels.contains(&(KRAFT_VERSION, 1)));
        assert!(levels.contains(&(METADATA_VERSION, 33)));
        assert!(levels.contains(&("group.version", 0)));
        assert_eq!(levels.len(), SUPPORTED_FEATURES.len());
    }
}
