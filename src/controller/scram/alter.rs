//! The active controller's AlterUserScramCredentials decision (Kafka's
//! `ScramControlManager.alterCredentials`): deletions, then upsertions, each user checked in
//! Java's order; a `RemoveUserScramCredentialRecord` per deletion and a
//! `UserScramCredentialRecord` (with the keys derived from the SaltedPassword) per upsertion.
//!
//! Java keeps deletions, upsertions and errors in three `HashMap<String, _>`s keyed by user
//! name, so a user is altered at most once per request (whatever the mechanisms), and records
//! and results come in those maps' iteration orders: deletions, upsertions, then errors.

use super::keys::{derive, EmptyKey, ScramMechanism};
use super::ScramImage;
use crate::controller::java::JavaStringMap;
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{RemoveUserScramCredentialRecord, UserScramCredentialRecord};
use crate::protocol::records::MetadataRecordAndVersion;

/// `ScramControlManager.MAX_ITERATIONS`.
pub const MAX_ITERATIONS: i32 = 16384;

/// A credential to delete: the user and the mechanism's type code as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramDeletion {
    pub name: String,
    pub mechanism: i8,
}

/// A credential to add or replace, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramUpsertion {
    pub name: String,
    pub mechanism: i8,
    pub iterations: i32,
    pub salt: Vec<u8>,
    pub salted_password: Vec<u8>,
}

/// Why a user's alteration is refused, with Java's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramError {
    #[error("A user credential cannot be altered twice in the same request")]
    AlteredTwice,
    #[error("The current metadata.version does not support SCRAM")]
    NotSupported,
    #[error("Username must not be empty")]
    EmptyName,
    #[error("Unknown SCRAM mechanism")]
    UnknownMechanism,
    #[error("Too few iterations")]
    TooFewIterations,
    #[error("Too many iterations")]
    TooManyIterations,
    #[error("Attempt to delete a user credential that does not exist")]
    NotFound,
    /// The keys could not be derived (Java's `Mac.init` throws); answered without a message.
    #[error("cannot derive the keys: {0}")]
    Derivation(#[from] EmptyKey),
}

impl ScramError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ScramError::AlteredTwice => ErrorCode::DUPLICATE_RESOURCE,
            ScramError::NotSupported => ErrorCode::UNSUPPORTED_VERSION,
            ScramError::EmptyName
            | ScramError::TooFewIterations
            | ScramError::TooManyIterations => ErrorCode::UNACCEPTABLE_CREDENTIAL,
            ScramError::UnknownMechanism => ErrorCode::UNSUPPORTED_SASL_MECHANISM,
            ScramError::NotFound => ErrorCode::RESOURCE_NOT_FOUND,
            ScramError::Derivation(_) => ErrorCode::UNKNOWN_SERVER_ERROR,
        }
    }

    /// The response's message: `ApiError.fromThrowable` keeps none for UNKNOWN_SERVER_ERROR.
    pub fn message(&self) -> Option<String> {
        match self {
            ScramError::Derivation(_) => None,
            e => Some(e.to_string()),
        }
    }
}

/// One user's result, in the order Java's response lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramResult {
    pub user: String,
    pub outcome: Result<(), ScramError>,
}

/// `validateScramUsernameAndMechanism`.
fn check_name_and_mechanism(name: &str, mechanism: i8) -> Result<ScramMechanism, ScramError> {
    if name.is_empty() {
        return Err(ScramError::EmptyName);
    }
    ScramMechanism::from_type(mechanism).ok_or(ScramError::UnknownMechanism)
}

fn check_deletion(image: &ScramImage, d: &ScramDeletion) -> Result<(), ScramError> {
    check_name_and_mechanism(&d.name, d.mechanism)?;
    if !image
        .credentials
        .contains_key(&(d.mechanism, d.name.clone()))
    {
        return Err(ScramError::NotFound);
    }
    Ok(())
}

fn check_upsertion(u: &ScramUpsertion) -> Result<(), ScramError> {
    let mechanism = check_name_and_mechanism(&u.name, u.mechanism)?;
    if u.iterations < mechanism.min_iterations() {
        return Err(ScramError::TooFewIterations);
    }
    if u.iterations > MAX_ITERATIONS {
        return Err(ScramError::TooManyIterations);
    }
    Ok(())
}

/// `finishUpsertion`: the record, with the keys derived from the SaltedPassword.
fn upsertion_record(u: &ScramUpsertion) -> Result<MetadataRecordAndVersion, ScramError> {
    let mechanism = ScramMechanism::from_type(u.mechanism).expect("checked before");
    let keys = derive(mechanism, &u.salted_password)?;
    let record = UserScramCredentialRecord {
        name: u.name.clone(),
        mechanism: u.mechanism,
        salt: u.salt.clone(),
        stored_key: keys.stored_key,
        server_key: keys.server_key,
        iterations: u.iterations,
        ..Default::default()
    };
    Ok(MetadataRecordAndVersion::new(record, 0))
}

/// Java's `alterCredentials` against the latest `image` at metadata.version `mv`: every
/// accepted change's record (one batch, all or nothing) and a result per user.
pub fn alter_user_scram_credentials(
    image: &ScramImage,
    mv: MetadataVersion,
    deletions: &[ScramDeletion],
    upsertions: &[ScramUpsertion],
) -> ControllerResult<Vec<ScramResult>> {
    let supported = mv.is_scram_supported();
    let mut to_delete: JavaStringMap<&ScramDeletion> = JavaStringMap::default();
    let mut to_upsert: JavaStringMap<&ScramUpsertion> = JavaStringMap::default();
    let mut errors: JavaStringMap<ScramError> = JavaStringMap::default();
    for d in deletions {
        if errors.contains_key(&d.name) {
            continue;
        }
        let checked = if to_delete.remove(&d.name).is_some() {
            Err(ScramError::AlteredTwice)
        } else if !supported {
            Err(ScramError::NotSupported)
        } else {
            check_deletion(image, d)
        };
        match checked {
            Ok(()) => to_delete.put(&d.name, d),
            Err(e) => errors.put(&d.name, e),
        }
    }
    for u in upsertions {
        if errors.contains_key(&u.name) {
            continue;
        }
        // A user is in at most one of the two maps.
        let twice = to_delete.remove(&u.name).is_some() || to_upsert.remove(&u.name).is_some();
        let checked = if twice {
            Err(ScramError::AlteredTwice)
        } else if !supported {
            Err(ScramError::NotSupported)
        } else {
            check_upsertion(u)
        };
        match checked {
            Ok(()) => to_upsert.put(&u.name, u),
            Err(e) => errors.put(&u.name, e),
        }
    }
    let mut records = Vec::new();
    let mut results = Vec::new();
    for (user, d) in to_delete.into_ordered() {
        let record = RemoveUserScramCredentialRecord {
            name: d.name.clone(),
            mechanism: d.mechanism,
            ..Default::default()
        };
        records.push(MetadataRecordAndVersion::new(record, 0));
        results.push(ScramResult {
            user,
            outcome: Ok(()),
        });
    }
    for (user, u) in to_upsert.into_ordered() {
        match upsertion_record(u) {
            Ok(record) => {
                records.push(record);
                results.push(ScramResult {
                    user,
                    outcome: Ok(()),
                });
            }
            Err(e) => errors.put(&user, e),
        }
    }
    results.extend(
        errors
            .into_ordered()
            .into_iter()
            .map(|(user, e)| ScramResult {
                user,
                outcome: Err(e),
            }),
    );
    ControllerResult::new(records, results)
}
