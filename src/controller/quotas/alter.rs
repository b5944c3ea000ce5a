//! The active controller's AlterClientQuotas decision (Kafka's
//! `ClientQuotaControlManager.alterClientQuotas`): each entity's type combination, quota keys
//! and values checked in Java's order, one `ClientQuotaRecord` per changed key, and one result
//! per entity in the order Java's response lists them.
//!
//! Java keeps entities and their quota ops in `HashMap`s, so which problem is reported first,
//! the order of records and of response entries, and how an entity prints in messages are
//! those maps' iteration orders (`controller::java`).

use super::{QuotaEntity, QuotasImage};
use crate::controller::java::{
    hash_map_capacity, hash_order, optional_string_hash, string_hash, string_map_order,
};
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::client_quota_record::EntityData;
use crate::protocol::messages::ClientQuotaRecord;
use crate::protocol::records::MetadataRecordAndVersion;

pub const USER: &str = "user";
pub const CLIENT_ID: &str = "client-id";
pub const IP: &str = "ip";

/// The type a quota key's value must fit (`QuotaConfig`'s `ConfigDef` types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuotaType {
    Int,
    Long,
    Double,
}

/// `QuotaConfig.userAndClientQuotaConfigs()` (Kafka 4.4).
const USER_AND_CLIENT_KEYS: &[(&str, QuotaType)] = &[
    ("producer_byte_rate", QuotaType::Long),
    ("consumer_byte_rate", QuotaType::Long),
    ("request_percentage", QuotaType::Double),
    ("controller_mutation_rate", QuotaType::Double),
];

/// `QuotaConfig.ipConfigs()` (Kafka 4.4).
const IP_KEYS: &[(&str, QuotaType)] = &[("connection_creation_rate", QuotaType::Int)];

/// One entry of the request: the entity's (type, name) pairs as sent, and its ops (a `None`
/// value removes the key).
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaAlteration {
    pub entity: Vec<(String, Option<String>)>,
    pub ops: Vec<(String, Option<f64>)>,
}

/// Why an entity's alteration is refused: Java's message (always `INVALID_REQUEST`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuotaError {
    #[error("Duplicate quota key {key} not updating quota for this entity {entity}")]
    DuplicateKey { key: String, entity: String },
    #[error("Ignoring duplicate entity {entity}")]
    DuplicateEntity { entity: String },
    #[error("Invalid empty client quota entity")]
    EmptyEntity,
    #[error("Unhandled client quota entity type: {0}")]
    UnhandledType(String),
    #[error("Empty {0} not supported")]
    EmptyName(String),
    // Java's message lacks the space.
    #[error(
        "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"
    )]
    IpCombination,
    #[error("{0} is not a valid IP or resolvable host.")]
    InvalidIp(String),
    #[error("Invalid configuration key {0}")]
    InvalidKey(String),
    #[error("Quota {0} must be greater than 0")]
    NotPositive(String),
    #[error("Proposed value for {0} is too large for an INT.")]
    TooLargeInt(String),
    #[error("Proposed value for {0} is too large for a LONG.")]
    TooLargeLong(String),
    #[error("{0} cannot be a fractional value.")]
    Fractional(String),
}

impl QuotaError {
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::INVALID_REQUEST
    }
}

/// One entity's result: its (type, name) pairs in the order Java lists them, and the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaResult {
    pub entity: Vec<(String, Option<String>)>,
    pub outcome: Result<(), QuotaError>,
}

/// A `ClientQuotaEntity`: its entries map as Java iterates it.
struct JavaEntity {
    entries: Vec<(String, Option<String>)>,
}

impl JavaEntity {
    fn of(sent: &[(String, Option<String>)]) -> JavaEntity {
        JavaEntity {
            entries: string_map_order(sent.len(), sent),
        }
    }

    /// The image's key: the pairs sorted by type.
    fn key(&self) -> QuotaEntity {
        let mut k = self.entries.clone();
        k.sort();
        k
    }

    /// `ClientQuotaEntity.hashCode`: `Objects.hash(entries)`.
    fn hash(&self) -> i32 {
        let map = self.entries.iter().fold(0i32, |h, (t, n)| {
            h.wrapping_add(string_hash(t) ^ optional_string_hash(n.as_deref()))
        });
        31i32.wrapping_add(map)
    }

    /// `ClientQuotaEntity.toString`.
    fn describe(&self) -> String {
        let entries: Vec<String> = self
            .entries
            .iter()
            .map(|(t, n)| format!("{t}={}", n.as_deref().unwrap_or("null")))
            .collect();
        format!("ClientQuotaEntity(entries={{{}}})", entries.join(", "))
    }
}

/// Java's `alterClientQuotas`: the records of every entity that passes, and a result per
/// distinct entity. `resolves` says whether an ip entity's name is an address or a host name
/// that resolves (Java's `InetAddress.getByName`). Validating only writes no records.
pub fn alter_client_quotas(
    image: &QuotasImage,
    alterations: &[QuotaAlteration],
    validate_only: bool,
    resolves: &dyn Fn(&str) -> bool,
) -> ControllerResult<Vec<QuotaResult>> {
    let mut records = Vec::new();
    // Java's `outputResults` HashMap: a later put for the same entity replaces the outcome in
    // place.
    let mut results: Vec<(QuotaEntity, i32, QuotaResult)> = Vec::new();
    let put = |results: &mut Vec<(QuotaEntity, i32, QuotaResult)>,
               e: &JavaEntity,
               outcome: Result<(), QuotaError>| {
        let key = e.key();
        match results.iter_mut().find(|(k, _, _)| *k == key) {
            Some(slot) => slot.2.outcome = outcome,
            None => results.push((
                key,
                e.hash(),
                QuotaResult {
                    entity: e.entries.clone(),
                    outcome,
                },
            )),
        }
    };
    for alteration in alterations {
        let entity = JavaEntity::of(&alteration.entity);
        let mut ops: Vec<(String, Option<f64>)> = Vec::new();
        for (key, value) in &alteration.ops {
            if ops.iter().any(|(k, _)| k == key) {
                let e = QuotaError::DuplicateKey {
                    key: key.clone(),
                    entity: entity.describe(),
                };
                put(&mut results, &entity, Err(e));
            } else {
                ops.push((key.clone(), *value));
            }
        }
        let key = entity.key();
        if results.iter().any(|(k, _, _)| *k == key) {
            let e = QuotaError::DuplicateEntity {
                entity: entity.describe(),
            };
            put(&mut results, &entity, Err(e));
            continue;
        }
        let ops = string_map_order(alteration.ops.len(), &ops);
        match alter_entity(image, &entity, &ops, resolves) {
            Ok(mut r) => {
                records.append(&mut r);
                put(&mut results, &entity, Ok(()));
            }
            Err(e) => put(&mut results, &entity, Err(e)),
        }
    }
    let capacity = hash_map_capacity(results.len());
    let reply = hash_order(
        results.into_iter().map(|(_, h, r)| (h, r)).collect(),
        capacity,
    );
    if validate_only {
        records.clear();
    }
    ControllerResult::new(records, reply)
}

/// `alterClientQuotaEntity`: the entity's records, or the first problem.
fn alter_entity(
    image: &QuotasImage,
    entity: &JavaEntity,
    ops: &[(String, Option<f64>)],
    resolves: &dyn Fn(&str) -> bool,
) -> Result<Vec<MetadataRecordAndVersion>, QuotaError> {
    if entity.entries.is_empty() {
        return Err(QuotaError::EmptyEntity);
    }
    for (t, n) in &entity.entries {
        if ![USER, CLIENT_ID, IP].contains(&t.as_str()) {
            return Err(QuotaError::UnhandledType(t.clone()));
        }
        if n.as_deref() == Some("") {
            return Err(QuotaError::EmptyName(t.clone()));
        }
    }
    let name_of = |t: &str| entity.entries.iter().find(|(k, _)| k == t).map(|e| &e.1);
    let keys = match (name_of(IP), name_of(USER).or(name_of(CLIENT_ID))) {
        (Some(_), Some(_)) => return Err(QuotaError::IpCombination),
        (Some(Some(ip)), None) if !resolves(ip) => return Err(QuotaError::InvalidIp(ip.clone())),
        (Some(_), None) => IP_KEYS,
        (None, Some(_)) => USER_AND_CLIENT_KEYS,
        (None, None) => return Err(QuotaError::EmptyEntity),
    };
    // The record's entity: Java's `validatedEntityMap` (`new HashMap<>(3)`).
    let record_entity: Vec<EntityData> = string_map_order(3, &entity.entries)
        .into_iter()
        .map(|(entity_type, entity_name)| EntityData {
            entity_type,
            entity_name,
            ..Default::default()
        })
        .collect();
    let current = image.entities.get(&entity.key());
    let mut records = Vec::new();
    for (key, value) in ops {
        let current = current.and_then(|q| q.get(key)).copied();
        let record = match value {
            None if current.is_some() => ClientQuotaRecord {
                entity: record_entity.clone(),
                key: key.clone(),
                remove: true,
                ..Default::default()
            },
            None => continue,
            Some(v) => {
                check_value(keys, key, *v)?;
                // `Objects.equals` on Doubles: bit patterns, every NaN alike.
                if current.is_some_and(|c| c.to_bits() == v.to_bits() || (c.is_nan() && v.is_nan()))
                {
                    continue;
                }
                ClientQuotaRecord {
                    entity: record_entity.clone(),
                    key: key.clone(),
                    value: *v,
                    ..Default::default()
                }
            }
        };
        records.push(MetadataRecordAndVersion::new(record, 0));
    }
    Ok(records)
}

/// `validateQuotaKeyValue`.
fn check_value(keys: &[(&str, QuotaType)], key: &str, value: f64) -> Result<(), QuotaError> {
    let Some((_, ty)) = keys.iter().find(|(k, _)| *k == key) else {
        return Err(QuotaError::InvalidKey(key.to_string()));
    };
    if value <= 0.0 {
        return Err(QuotaError::NotPositive(key.to_string()));
    }
    let too_large = match ty {
        QuotaType::Double => return Ok(()),
        QuotaType::Int => {
            (value > f64::from(i32::MAX)).then(|| QuotaError::TooLargeInt(key.into()))
        }
        QuotaType::Long => (value > i64::MAX as f64).then(|| QuotaError::TooLargeLong(key.into())),
    };
    if let Some(e) = too_large {
        return Err(e);
    }
    if (value % 1.0).abs() > 1e-6 {
        return Err(QuotaError::Fractional(key.to_string()));
    }
    Ok(())
}
