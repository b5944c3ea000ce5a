//! One image entry to its record, as each part's `toRecord` in Kafka 4.4 builds it: the fields
//! the snapshot's metadata.version can hold, at the version it allows, and a [`Loss`] for the
//! rest.

use super::loss::{Loss, Lost};
use super::SnapshotOptions;
use crate::controller::acls::Acl;
use crate::controller::cluster::{BrokerRegistration, ControllerRegistration};
use crate::controller::configs::ConfigResource;
use crate::controller::quotas::QuotaEntity;
use crate::controller::replication::{PartitionRegistration, DIRECTORY_MIGRATING};
use crate::controller::scram::ScramCredential;
use crate::controller::tokens::DelegationToken;
use crate::protocol::codec::Uuid;
use crate::protocol::features::METADATA_VERSION;
use crate::protocol::messages::client_quota_record::EntityData;
use crate::protocol::messages::register_broker_record::{BrokerEndpoint, BrokerFeature};
use crate::protocol::messages::register_controller_record::{
    ControllerEndpoint, ControllerFeature,
};
use crate::protocol::messages::*;
use crate::protocol::records::MetadataRecordAndVersion as Rv;

/// Where the builders report what they leave out.
pub(super) struct Losses<'a> {
    pub options: SnapshotOptions,
    pub out: &'a mut Vec<Loss>,
}

impl Losses<'_> {
    pub fn lose(&mut self, what: Lost) {
        self.out.push(Loss {
            what,
            metadata_version: self.options.metadata_version,
        });
    }
}

pub(super) fn feature_level(name: &str, level: i16) -> Rv {
    let r = FeatureLevelRecord {
        name: name.to_string(),
        feature_level: level,
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `FeaturesImage.writeFeatureLevels` starts with metadata.version at the snapshot's level.
pub(super) fn metadata_version(options: SnapshotOptions) -> Rv {
    feature_level(METADATA_VERSION, options.metadata_version.level())
}

/// `BrokerRegistration.toRecord`.
pub(super) fn broker(b: &BrokerRegistration, losses: &mut Losses<'_>) -> Rv {
    let mv = losses.options.metadata_version;
    let mut r = RegisterBrokerRecord {
        broker_id: b.id,
        rack: b.rack.clone(),
        broker_epoch: b.epoch,
        incarnation_id: b.incarnation_id,
        fenced: b.fenced,
        in_controlled_shutdown: b.in_controlled_shutdown,
        end_points: b
            .listeners
            .iter()
            .map(|(name, e)| BrokerEndpoint {
                name: name.clone(),
                host: e.host.clone(),
                port: e.port,
                security_protocol: e.security_protocol,
                ..Default::default()
            })
            .collect(),
        features: b
            .supported_features
            .iter()
            .map(|(name, v)| BrokerFeature {
                name: name.clone(),
                min_supported_version: v.min,
                max_supported_version: v.max,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    if b.is_migrating_zk_broker {
        if mv.is_migration_supported() {
            r.is_migrating_zk_broker = true;
        } else {
            losses.lose(Lost::MigratingZkBroker { broker: b.id });
        }
    }
    if b.directories.is_empty() || mv.is_directory_assignment_supported() {
        r.log_dirs = b.directories.clone();
    } else {
        losses.lose(Lost::BrokerDirectories { broker: b.id });
    }
    if b.cordoned_directories.is_none() || mv.is_cordoned_log_dirs_supported() {
        r.cordoned_log_dirs = b.cordoned_directories.clone();
    } else {
        losses.lose(Lost::CordonedDirectories { broker: b.id });
    }
    Rv::new(r, mv.register_broker_record_version())
}

/// `ControllerRegistration.toRecord` (the caller checks that the version has them).
pub(super) fn controller(c: &ControllerRegistration) -> Rv {
    let r = RegisterControllerRecord {
        controller_id: c.id,
        incarnation_id: c.incarnation_id,
        zk_migration_ready: c.zk_migration_ready,
        end_points: c
            .listeners
            .iter()
            .map(|(name, e)| ControllerEndpoint {
                name: name.clone(),
                host: e.host.clone(),
                port: e.port,
                security_protocol: e.security_protocol,
                ..Default::default()
            })
            .collect(),
        features: c
            .supported_features
            .iter()
            .map(|(name, v)| ControllerFeature {
                name: name.clone(),
                min_supported_version: v.min,
                max_supported_version: v.max,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    Rv::new(r, 0)
}

pub(super) fn topic(name: &str, id: Uuid) -> Rv {
    let r = TopicRecord {
        name: name.to_string(),
        topic_id: id,
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `PartitionRegistration.toRecord`.
pub(super) fn partition(
    topic_id: Uuid,
    partition: i32,
    p: &PartitionRegistration,
    losses: &mut Losses<'_>,
) -> Rv {
    let options = losses.options;
    let mv = options.metadata_version;
    let mut r = PartitionRecord {
        partition_id: partition,
        topic_id,
        replicas: p.replicas.clone(),
        isr: p.isr.clone(),
        removing_replicas: p.removing_replicas.clone(),
        adding_replicas: p.adding_replicas.clone(),
        leader: p.leader,
        leader_recovery_state: p.leader_recovery_state,
        leader_epoch: p.leader_epoch,
        partition_epoch: p.partition_epoch,
        ..Default::default()
    };
    let has_elr = !p.elr.is_empty() || !p.last_known_elr.is_empty();
    if options.elr_enabled && mv.is_elr_supported() {
        // Only non-empty lists are written: null is the field's default.
        r.eligible_leader_replicas = Some(p.elr.clone()).filter(|l| !l.is_empty());
        r.last_known_elr = Some(p.last_known_elr.clone()).filter(|l| !l.is_empty());
    } else if has_elr {
        losses.lose(Lost::PartitionElr {
            topic_id,
            partition,
        });
    }
    if mv.is_directory_assignment_supported() {
        r.directories = p.directories.clone();
    } else if p.directories.iter().any(|d| *d != DIRECTORY_MIGRATING) {
        losses.lose(Lost::PartitionDirectories {
            topic_id,
            partition,
        });
    }
    Rv::new(r, mv.partition_record_version())
}

/// `ConfigurationImage.write`: one record per key.
pub(super) fn config(resource: &ConfigResource, name: &str, value: &str) -> Rv {
    let r = ConfigRecord {
        resource_type: resource.0,
        resource_name: resource.1.clone(),
        name: name.to_string(),
        value: Some(value.to_string()),
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `ClientQuotaImage.write`: one record per quota key.
pub(super) fn client_quota(entity: &QuotaEntity, key: &str, value: f64) -> Rv {
    let r = ClientQuotaRecord {
        entity: entity
            .iter()
            .map(|(entity_type, entity_name)| EntityData {
                entity_type: entity_type.clone(),
                entity_name: entity_name.clone(),
                ..Default::default()
            })
            .collect(),
        key: key.to_string(),
        value,
        remove: false,
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `ProducerIdsImage.write`: no broker, only the next id.
pub(super) fn producer_ids(next_producer_id: i64) -> Rv {
    let r = ProducerIdsRecord {
        broker_id: -1,
        broker_epoch: -1,
        next_producer_id,
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `StandardAclWithId.toRecord`.
pub(super) fn acl(id: Uuid, a: &Acl) -> Rv {
    let r = AccessControlEntryRecord {
        id,
        resource_type: a.resource_type,
        resource_name: a.resource_name.clone(),
        pattern_type: a.pattern_type,
        principal: a.principal.clone(),
        host: a.host.clone(),
        operation: a.operation,
        permission_type: a.permission_type,
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `ScramCredentialData.toRecord`.
pub(super) fn scram(mechanism: i8, user: &str, c: &ScramCredential) -> Rv {
    let r = UserScramCredentialRecord {
        name: user.to_string(),
        mechanism,
        salt: c.salt.clone(),
        stored_key: c.stored_key.clone(),
        server_key: c.server_key.clone(),
        iterations: c.iterations,
        ..Default::default()
    };
    Rv::new(r, 0)
}

/// `DelegationTokenData.toRecord`.
pub(super) fn delegation_token(token_id: &str, t: &DelegationToken) -> Rv {
    let r = DelegationTokenRecord {
        owner: t.owner.clone(),
        requester: t.requester.clone(),
        renewers: t.renewers.clone(),
        issue_timestamp: t.issue_timestamp,
        max_timestamp: t.max_timestamp,
        expiration_timestamp: t.expiry_timestamp,
        token_id: token_id.to_string(),
        ..Default::default()
    };
    Rv::new(r, 0)
}
