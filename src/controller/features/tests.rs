//! UpdateFeatures transcripts: a controller at a given set of finalized levels, one request at
//! a time, with raft's kraft.version part played by a recorder. Messages are Java 4.4's (the
//! compat test `reconfiguration::feature_updates` compares them with a Java controller's).

use super::update::{
    hash_order_names, update_features, FeatureUpdate, FeatureUpdateContext, KraftVersionAccess,
    RaftRefusal, UpgradeType,
};
use crate::controller::Controller;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{ConfigRecord, FeatureLevelRecord};
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion, Offset};

/// Raft as the controller sees it: the kraft.version, and what it was asked.
struct Raft {
    kraft_version: i16,
    refusal: Option<RaftRefusal>,
    asked: Vec<(i16, bool)>,
}

impl KraftVersionAccess for Raft {
    fn kraft_version(&self) -> i16 {
        self.kraft_version
    }
    fn upgrade_kraft_version(
        &mut self,
        level: i16,
        validate_only: bool,
    ) -> Result<(), RaftRefusal> {
        self.asked.push((level, validate_only));
        match &self.refusal {
            Some(r) => Err(r.clone()),
            None => Ok(()),
        }
    }
}

struct Cluster {
    controller: Controller,
    next_offset: Offset,
    ctx: FeatureUpdateContext,
    raft: Raft,
}

impl Cluster {
    /// Finalized at `levels` (metadata.version among them), kraft.version 0, node 1.
    fn at(levels: &[(&str, i16)]) -> Cluster {
        let mut c = Cluster {
            controller: Controller::new(),
            next_offset: 0,
            ctx: FeatureUpdateContext {
                node_id: 1,
                quorum_node_ids: vec![1],
                static_min_insync_replicas: 2,
            },
            raft: Raft {
                kraft_version: 0,
                refusal: None,
                asked: Vec::new(),
            },
        };
        for (name, level) in levels {
            c.replay(FeatureLevelRecord {
                name: name.to_string(),
                feature_level: *level,
                ..Default::default()
            });
        }
        c
    }

    fn replay(&mut self, r: impl Into<MetadataRecord>) {
        self.controller.replay(&r.into(), self.next_offset).unwrap();
        self.next_offset += 1;
    }

    /// Decides the updates; on success writes the records. Returns the records or Java's
    /// message.
    fn update(
        &mut self,
        updates: &[(&str, i16, UpgradeType)],
        validate_only: bool,
    ) -> Result<Vec<MetadataRecordAndVersion>, (ErrorCode, String)> {
        let updates: Vec<FeatureUpdate> = updates
            .iter()
            .map(|(f, l, t)| FeatureUpdate {
                feature: f.to_string(),
                level: *l,
                upgrade_type: *t,
            })
            .collect();
        let result = update_features(
            self.controller.latest_state(),
            &self.ctx,
            &updates,
            validate_only,
            &mut self.raft,
        );
        match result.reply {
            Ok(()) => {
                for r in &result.records {
                    self.replay(r.record.clone());
                }
                Ok(result.records)
            }
            Err(e) => {
                assert!(result.records.is_empty(), "a refusal writes nothing");
                Err((e.error_code(), e.to_string()))
            }
        }
    }

    fn level(&self, name: &str) -> Option<i16> {
        self.controller.image().features.levels.get(name).copied()
    }
}

use UpgradeType::{SafeDowngrade, UnsafeDowngrade, Upgrade};

fn invalid(message: &str) -> Result<Vec<MetadataRecordAndVersion>, (ErrorCode, String)> {
    Err((ErrorCode::INVALID_UPDATE_VERSION, message.to_string()))
}

#[test]
fn a_feature_upgrade_is_a_feature_level_record() {
    let mut c = Cluster::at(&[("metadata.version", 33)]);
    let records = c.update(&[("group.version", 1, Upgrade)], false).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(c.level("group.version"), Some(1));
    // A safe downgrade to 0 removes it.
    c.update(&[("group.version", 0, SafeDowngrade)], false)
        .unwrap();
    assert_eq!(c.level("group.version"), None);
}

#[test]
fn refusals_carry_javas_messages() {
    let mut c = Cluster::at(&[("metadata.version", 33), ("group.version", 1)]);
    let cases: &[(&str, i16, UpgradeType, &str)] = &[
        ("foo.bar", 1, Upgrade, "Invalid update version 1 for feature foo.bar. Local controller 1 does not support this feature."),
        ("foo.bar", 0, Upgrade, "Invalid update version 0 for feature foo.bar. Feature foo.bar not found."),
        ("metadata.version", 34, Upgrade, "Invalid update version 34 for feature metadata.version. Local controller 1 only supports versions 7-33"),
        ("group.version", -1, Upgrade, "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."),
        ("group.version", 0, Upgrade, "Invalid update version 0 for feature group.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."),
        ("transaction.version", 2, SafeDowngrade, "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer version."),
        ("group.version", 1, UpgradeType::Unknown, "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."),
        ("metadata.version", 31, SafeDowngrade, "Unsupported metadata.version downgrade from 33 to 31. Refusing to perform the requested downgrade because it might delete metadata information."),
        ("metadata.version", 31, UnsafeDowngrade, "Unsupported metadata.version downgrade from 33 to 31. Unsafe metadata downgrade is not supported in this version."),
        ("kraft.version", 1, SafeDowngrade, "Invalid update version 1 for feature kraft.version. Can't downgrade to a newer version."),
    ];
    for (feature, level, kind, message) in cases {
        assert_eq!(
            c.update(&[(feature, *level, *kind)], false),
            invalid(message),
            "{feature}={level} {kind:?}"
        );
    }
    assert!(c.raft.asked.is_empty(), "raft is asked only for upgrades");
    assert_eq!(c.level("group.version"), Some(1));
}

#[test]
fn a_metadata_version_downgrade_without_record_changes_is_allowed() {
    // 4.2-IV1 (29) changed no records since 4.2-IV0 (28).
    let mut c = Cluster::at(&[("metadata.version", 29)]);
    c.update(&[("metadata.version", 28, SafeDowngrade)], false)
        .unwrap();
    assert_eq!(c.level("metadata.version"), Some(28));
    // An upgrade, even to the same level, is written.
    assert_eq!(
        c.update(&[("metadata.version", 28, Upgrade)], false)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_first_refused_update_in_javas_order_fails_all() {
    let mut c = Cluster::at(&[("metadata.version", 33)]);
    // Java's HashMap visits group.version before foo.bar and transaction.version after.
    assert_eq!(
        c.update(
            &[
                ("transaction.version", 5, Upgrade),
                ("foo.bar", 1, Upgrade),
                ("group.version", 1, Upgrade),
            ],
            false
        ),
        invalid("Invalid update version 1 for feature foo.bar. Local controller 1 does not support this feature.")
    );
    assert_eq!(c.level("group.version"), None);
}

#[test]
fn hash_order_is_javas() {
    // Printed by Java 17's HashMap for these insertion orders.
    let names = [
        "metadata.version",
        "kraft.version",
        "group.version",
        "transaction.version",
        "share.version",
        "streams.version",
        "eligible.leader.replicas.version",
        "foo.bar",
    ];
    assert_eq!(
        hash_order_names(&names),
        [
            "group.version",
            "foo.bar",
            "kraft.version",
            "metadata.version",
            "share.version",
            "streams.version",
            "transaction.version",
            "eligible.leader.replicas.version"
        ]
    );
    let many = [
        "f0",
        "f1",
        "f2",
        "f3",
        "f4",
        "f5",
        "f6",
        "f7",
        "f8",
        "f9",
        "f10",
        "f11",
        "f12",
        "f13",
        "group.version",
        "kraft.version",
    ];
    assert_eq!(
        hash_order_names(&many),
        [
            "group.version",
            "f10",
            "kraft.version",
            "f12",
            "f11",
            "f13",
            "f0",
            "f1",
            "f2",
            "f3",
            "f4",
            "f5",
            "f6",
            "f7",
            "f8",
            "f9"
        ]
    );
}

#[test]
fn kraft_version_goes_to_raft_and_the_reply_waits_for_a_noop() {
    let mut c = Cluster::at(&[("metadata.version", 33)]);
    // Validating asks raft to validate and writes nothing.
    assert_eq!(c.update(&[("kraft.version", 1, Upgrade)], true), Ok(vec![]));
    assert_eq!(c.raft.asked, [(1, true)]);
    let records = c.update(&[("kraft.version", 1, Upgrade)], false).unwrap();
    assert_eq!(c.raft.asked, [(1, true), (1, false)]);
    assert!(matches!(
        records[..],
        [MetadataRecordAndVersion {
            record: MetadataRecord::NoOp(_),
            ..
        }]
    ));
    // kraft.version is never a FeatureLevelRecord.
    assert_eq!(c.level("kraft.version"), None);

    c.raft.kraft_version = 1;
    assert_eq!(
        c.update(&[("kraft.version", 0, SafeDowngrade)], false),
        invalid("Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature.")
    );
    // Staying at 1 with a downgrade type is nothing to do.
    assert_eq!(
        c.update(&[("kraft.version", 1, SafeDowngrade)], false),
        Ok(vec![])
    );
}

#[test]
fn raft_refusals_pass_through() {
    let mut c = Cluster::at(&[("metadata.version", 33)]);
    let refusal = RaftRefusal {
        code: ErrorCode::INVALID_UPDATE_VERSION,
        message: "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it".into(),
    };
    c.raft.refusal = Some(refusal.clone());
    assert_eq!(
        c.update(
            &[("kraft.version", 1, Upgrade), ("group.version", 1, Upgrade)],
            false
        ),
        Err((refusal.code, refusal.message))
    );
    assert_eq!(c.level("group.version"), None);
}

#[test]
fn a_static_voter_that_has_not_registered_blocks_updates() {
    let mut c = Cluster::at(&[("metadata.version", 33)]);
    c.ctx.quorum_node_ids = vec![1, 2, 3];
    assert_eq!(
        c.update(&[("group.version", 1, Upgrade)], false),
        invalid("Invalid update version 1 for feature group.version. controller 2 has not registered, and may not support this feature")
    );
    // Before 3.7-IV0 controllers do not register, and are not checked.
    let mut old = Cluster::at(&[("metadata.version", 14)]);
    old.ctx.quorum_node_ids = vec![1, 2, 3];
    old.update(&[("group.version", 1, Upgrade)], false).unwrap();
}

#[test]
fn eligible_leader_replicas_need_4_0_iv1_and_bring_a_cluster_min_isr() {
    let mut c = Cluster::at(&[("metadata.version", 22)]);
    assert_eq!(
        c.update(&[("eligible.leader.replicas.version", 1, Upgrade)], false),
        invalid("Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23")
    );
    // A broker's own min.insync.replicas goes; the cluster gets this controller's.
    c.replay(ConfigRecord {
        resource_type: 4,
        resource_name: "7".into(),
        name: "min.insync.replicas".into(),
        value: Some("3".into()),
        ..Default::default()
    });
    let records = c
        .update(
            &[
                ("eligible.leader.replicas.version", 1, Upgrade),
                ("metadata.version", 23, Upgrade),
            ],
            false,
        )
        .unwrap();
    assert_eq!(c.level("metadata.version"), Some(23));
    assert_eq!(c.level("eligible.leader.replicas.version"), Some(1));
    assert_eq!(records.len(), 4);
    let configs = &c.controller.image().configs.resources;
    assert_eq!(
        configs
            .get(&(4, String::new()))
            .and_then(|m| m.get("min.insync.replicas")),
        Some(&"2".to_string())
    );
    assert!(!configs.contains_key(&(4, "7".to_string())));
}
