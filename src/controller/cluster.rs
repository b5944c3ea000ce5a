//! Brokers and controllers (Kafka's `ClusterImage`, replayed as `ClusterDelta` does).

use std::collections::BTreeMap;
use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Value};

use super::error::Refusal;
use super::json::{uuid, uuids};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::{
    BrokerRegistrationChangeRecord, FenceBrokerRecord, RegisterBrokerRecord,
    RegisterControllerRecord, UnfenceBrokerRecord,
};

/// A listener of a broker or controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub security_protocol: i16,
}

/// A supported feature range, `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionRange {
    pub min: i16,
    pub max: i16,
}

/// Kafka's `BrokerRegistration`.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerRegistration {
    pub id: i32,
    pub epoch: i64,
    pub incarnation_id: Uuid,
    pub listeners: BTreeMap<String, Endpoint>,
    pub supported_features: BTreeMap<String, VersionRange>,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    pub is_migrating_zk_broker: bool,
    /// Sorted in Java's `Uuid` order (signed halves), as `BrokerRegistration` keeps them.
    pub directories: Vec<Uuid>,
    /// In record order; `None` until a record carries the field (Kafka 4.3+, KIP-1066).
    pub cordoned_directories: Option<Vec<Uuid>>,
}

/// Kafka's `ControllerRegistration`.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerRegistration {
    pub id: i32,
    pub incarnation_id: Uuid,
    pub zk_migration_ready: bool,
    pub listeners: BTreeMap<String, Endpoint>,
    pub supported_features: BTreeMap<String, VersionRange>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterImage {
    pub brokers: OrdMap<i32, Arc<BrokerRegistration>>,
    pub controllers: OrdMap<i32, Arc<ControllerRegistration>>,
}

/// Java's `Uuid.compareTo`: the most, then the least significant 64 bits, as signed longs.
pub fn java_uuid_order(a: &Uuid, b: &Uuid) -> std::cmp::Ordering {
    let halves = |u: &Uuid| {
        let msb = i64::from_be_bytes(u.0[..8].try_into().expect("8 bytes"));
        let lsb = i64::from_be_bytes(u.0[8..].try_into().expect("8 bytes"));
        (msb, lsb)
    };
    halves(a).cmp(&halves(b))
}

fn sorted_dirs(dirs: &[Uuid]) -> Vec<Uuid> {
    let mut v = dirs.to_vec();
    v.sort_by(java_uuid_order);
    v
}

impl ClusterImage {
    pub fn replay_register_broker(&mut self, r: &RegisterBrokerRecord) {
        let b = BrokerRegistration {
            id: r.broker_id,
            epoch: r.broker_epoch,
            incarnation_id: r.incarnation_id,
            listeners: listeners(
                r.end_points
                    .iter()
                    .map(|e| (&e.name, &e.host, e.port, e.security_protocol)),
            ),
            supported_features: features(
                r.features
                    .iter()
                    .map(|f| (&f.name, f.min_supported_version, f.max_supported_version)),
            ),
            rack: r.rack.clone(),
            fenced: r.fenced,
            in_controlled_shutdown: r.in_controlled_shutdown,
            is_migrating_zk_broker: r.is_migrating_zk_broker,
            directories: sorted_dirs(&r.log_dirs),
            cordoned_directories: r.cordoned_log_dirs.clone(),
        };
        self.brokers.insert(b.id, Arc::new(b));
    }

    pub fn replay_unregister_broker(&mut self, broker_id: i32) {
        self.brokers.remove(&broker_id);
    }

    fn broker_mut(
        &mut self,
        record: &'static str,
        broker: i32,
        epoch: i64,
    ) -> Result<&mut BrokerRegistration, Refusal> {
        let b = self
            .brokers
            .get_mut(&broker)
            .ok_or(Refusal::UnknownBroker { record, broker })?;
        if b.epoch != epoch {
            return Err(Refusal::BrokerEpochMismatch {
                record,
                broker,
                epoch,
                registered: b.epoch,
            });
        }
        Ok(Arc::make_mut(b))
    }

    pub fn replay_fence(&mut self, r: &FenceBrokerRecord) -> Result<(), Refusal> {
        self.broker_mut("FenceBrokerRecord", r.id, r.epoch)?.fenced = true;
        Ok(())
    }

    pub fn replay_unfence(&mut self, r: &UnfenceBrokerRecord) -> Result<(), Refusal> {
        self.broker_mut("UnfenceBrokerRecord", r.id, r.epoch)?
            .fenced = false;
        Ok(())
    }

    pub fn replay_registration_change(
        &mut self,
        r: &BrokerRegistrationChangeRecord,
    ) -> Result<(), Refusal> {
        const RECORD: &str = "BrokerRegistrationChangeRecord";
        // BrokerRegistrationFencingChange: 1 fence, 0 none, -1 unfence.
        let fenced = match r.fenced {
            1 => Some(true),
            0 => None,
            -1 => Some(false),
            v => return Err(invalid(RECORD, "Fenced", v.into())),
        };
        // BrokerRegistrationInControlledShutdownChange: 0 none, 1 in controlled shutdown.
        let in_controlled_shutdown = match r.in_controlled_shutdown {
            0 => None,
            1 => Some(true),
            v => return Err(invalid(RECORD, "InControlledShutdown", v.into())),
        };
        let b = self.broker_mut(RECORD, r.broker_id, r.broker_epoch)?;
        if let Some(f) = fenced {
            b.fenced = f;
        }
        if let Some(s) = in_controlled_shutdown {
            b.in_controlled_shutdown = s;
        }
        // An empty LogDirs means "no change"; a present CordonedLogDirs replaces, even empty.
        if !r.log_dirs.is_empty() {
            b.directories = sorted_dirs(&r.log_dirs);
        }
        if let Some(c) = &r.cordoned_log_dirs {
            b.cordoned_directories = Some(c.clone());
        }
        Ok(())
    }

    pub fn replay_register_controller(&mut self, r: &RegisterControllerRecord) {
        let c = ControllerRegistration {
            id: r.controller_id,
            incarnation_id: r.incarnation_id,
            zk_migration_ready: r.zk_migration_ready,
            listeners: listeners(
                r.end_points
                    .iter()
                    .map(|e| (&e.name, &e.host, e.port, e.security_protocol)),
            ),
            supported_features: features(
                r.features
                    .iter()
                    .map(|f| (&f.name, f.min_supported_version, f.max_supported_version)),
            ),
        };
        self.controllers.insert(c.id, Arc::new(c));
    }

    pub fn replay_unregister_controller(&mut self, controller_id: i32) {
        self.controllers.remove(&controller_id);
    }

    pub fn to_json(&self) -> Value {
        let brokers: serde_json::Map<String, Value> = self
            .brokers
            .iter()
            .map(|(id, b)| {
                let v = json!({
                    "id": b.id,
                    "epoch": b.epoch,
                    "incarnationId": uuid(&b.incarnation_id),
                    "listeners": listeners_json(&b.listeners),
                    "supportedFeatures": features_json(&b.supported_features),
                    "rack": b.rack,
                    "fenced": b.fenced,
                    "inControlledShutdown": b.in_controlled_shutdown,
                    "isMigratingZkBroker": b.is_migrating_zk_broker,
                    "directories": uuids(&b.directories),
                    "cordonedDirectories": b.cordoned_directories.as_deref().map(uuids),
                });
                (id.to_string(), v)
            })
            .collect();
        let controllers: serde_json::Map<String, Value> = self
            .controllers
            .iter()
            .map(|(id, c)| {
                let v = json!({
                    "id": c.id,
                    "incarnationId": uuid(&c.incarnation_id),
                    "zkMigrationReady": c.zk_migration_ready,
                    "listeners": listeners_json(&c.listeners),
                    "supportedFeatures": features_json(&c.supported_features),
                });
                (id.to_string(), v)
            })
            .collect();
        json!({ "brokers": brokers, "controllers": controllers })
    }
}

/// Listeners by name, from a record's (name, host, port, security protocol) entries.
fn listeners<'a>(
    entries: impl Iterator<Item = (&'a String, &'a String, u16, i16)>,
) -> BTreeMap<String, Endpoint> {
    entries
        .map(|(name, host, port, security_protocol)| {
            let e = Endpoint {
                host: host.clone(),
                port,
                security_protocol,
            };
            (name.clone(), e)
        })
        .collect()
}

/// Supported feature ranges by name, from a record's (name, min, max) entries.
fn features<'a>(
    entries: impl Iterator<Item = (&'a String, i16, i16)>,
) -> BTreeMap<String, VersionRange> {
    entries
        .map(|(name, min, max)| (name.clone(), VersionRange { min, max }))
        .collect()
}

fn invalid(record: &'static str, field: &'static str, value: i64) -> Refusal {
    Refusal::InvalidValue {
        record,
        field,
        value,
    }
}

fn listeners_json(l: &BTreeMap<String, Endpoint>) -> Value {
    l.iter()
        .map(|(name, e)| {
            let v =
                json!({"host": e.host, "port": e.port, "securityProtocol": e.security_protocol});
            (name.clone(), v)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn features_json(f: &BTreeMap<String, VersionRange>) -> Value {
    f.iter()
        .map(|(name, r)| (name.clone(), json!({"min": r.min, "max": r.max})))
        .collect::<serde_json::Map<_, _>>()
        .into()
}
