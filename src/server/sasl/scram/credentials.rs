//! The SCRAM credentials connections authenticate against: an immutable snapshot of the
//! committed image's credentials (Kafka's `CredentialCache`, which `ScramPublisher` fills on
//! brokers and controllers alike).

use std::sync::Arc;

use crate::controller::scram::{ScramCredential, ScramImage};

use super::ScramMechanism;

/// (mechanism, user) → salt, StoredKey, ServerKey and iterations, as of one committed image.
/// Cloning and taking a snapshot are O(1): the image's map is persistent.
#[derive(Clone, Default, PartialEq)]
pub struct ScramCredentials {
    image: ScramImage,
}

/// Counts only: the keys stay out of logs.
impl std::fmt::Debug for ScramCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramCredentials")
            .field("credentials", &self.image.credentials.len())
            .finish()
    }
}

impl ScramCredentials {
    /// The credentials of `image` (the controller's committed `ScramImage`).
    pub fn of(image: &ScramImage) -> ScramCredentials {
        ScramCredentials {
            image: image.clone(),
        }
    }

    /// Whether this snapshot is `image`'s (the same version of the map, not a copy).
    pub fn is_of(&self, image: &ScramImage) -> bool {
        self.image.credentials.ptr_eq(&image.credentials)
    }

    /// `user`'s credential for `mechanism`, if the metadata holds one.
    pub fn get(&self, mechanism: ScramMechanism, user: &str) -> Option<&Arc<ScramCredential>> {
        self.image
            .credentials
            .get(&(mechanism.type_code(), user.to_string()))
    }

    pub fn len(&self) -> usize {
        self.image.credentials.len()
    }

    pub fn is_empty(&self) -> bool {
        self.image.credentials.is_empty()
    }

    /// These credentials and `user`'s for `mechanism` (tests and tools; the node publishes
    /// snapshots of the image).
    pub fn with(
        &self,
        mechanism: ScramMechanism,
        user: &str,
        credential: ScramCredential,
    ) -> ScramCredentials {
        let mut image = self.image.clone();
        image.credentials.insert(
            (mechanism.type_code(), user.to_string()),
            Arc::new(credential),
        );
        ScramCredentials { image }
    }
}

/// The credential a server stores for `password` (what `kafka-configs --add-config
/// 'SCRAM-SHA-256=[password=...]'` has the controller store, with the given salt and
/// iterations): `None` for an empty password, which Java cannot salt.
pub fn credential_for(
    mechanism: ScramMechanism,
    password: &str,
    salt: &[u8],
    iterations: u32,
) -> Option<ScramCredential> {
    let salted = mechanism.hi(password.as_bytes(), salt, iterations).ok()?;
    let keys = crate::controller::scram::keys::derive(mechanism, &salted).ok()?;
    Some(ScramCredential {
        salt: salt.to_vec(),
        stored_key: keys.stored_key,
        server_key: keys.server_key,
        iterations: i32::try_from(iterations).ok()?,
    })
}
