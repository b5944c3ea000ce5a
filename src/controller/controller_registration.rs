//! Deciding a controller's registration (KIP-919, Kafka's `ClusterControlManager.
//! registerController`): every controller, the active one included, registers its listeners
//! and supported feature ranges; the active controller writes a `RegisterControllerRecord`,
//! from which brokers and admin clients learn the controllers. The node carries the request in
//! and answers once the record is committed. An operator removes a registration with
//! UnregisterController (`kafka-cluster unregister-controller`, 4.4-IV2 and later).

use super::image::MetadataImage;
use super::metadata_version::MetadataVersion;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::register_controller_record::{
    ControllerEndpoint, ControllerFeature,
};
use crate::protocol::messages::{
    ControllerRegistrationRequest, RegisterControllerRecord, UnregisterControllerRecord,
};
use crate::protocol::records::MetadataRecordAndVersion;

/// Why the active controller refuses a registration; the message is Java's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationRefusal {
    #[error("The current metadata.version does not support controller registration.")]
    UnsupportedMetadataVersion,
    #[error("Unable to register controller {controller_id}: it does not support finalized version {level} of {feature}")]
    UnsupportedFeature {
        controller_id: i32,
        feature: String,
        level: i16,
    },
}

impl RegistrationRefusal {
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::UNSUPPORTED_VERSION
    }
}

/// Why the active controller refuses to unregister a controller; the message is Java's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnregistrationRefusal {
    #[error("Controller cannot unregister itself while it is active.")]
    ActiveItself,
    #[error("The current MetadataVersion is too old to support controller unregistration.")]
    UnsupportedMetadataVersion,
    #[error("Controller ID {0} is not currently registered.")]
    NotRegistered(i32),
}

impl UnregistrationRefusal {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            UnregistrationRefusal::ActiveItself => ErrorCode::INVALID_REQUEST,
            UnregistrationRefusal::UnsupportedMetadataVersion => ErrorCode::UNSUPPORTED_VERSION,
            UnregistrationRefusal::NotRegistered(_) => ErrorCode::CONTROLLER_ID_NOT_REGISTERED,
        }
    }
}

/// Kafka's `QuorumController.unregisterController` on active controller `local`: the record
/// that removes controller `controller_id`'s registration (a running controller registers
/// again by itself).
pub fn unregister_controller(
    image: &MetadataImage,
    local: i32,
    controller_id: i32,
) -> Result<MetadataRecordAndVersion, UnregistrationRefusal> {
    if controller_id == local {
        return Err(UnregistrationRefusal::ActiveItself);
    }
    let supported = image
        .features
        .metadata_version()
        .and_then(|level| MetadataVersion::from_level(level).ok())
        .is_some_and(MetadataVersion::is_controller_unregistration_supported);
    if !supported {
        return Err(UnregistrationRefusal::UnsupportedMetadataVersion);
    }
    if !image.cluster.controllers.contains_key(&controller_id) {
        return Err(UnregistrationRefusal::NotRegistered(controller_id));
    }
    let record = UnregisterControllerRecord {
        controller_id,
        ..Default::default()
    };
    Ok(MetadataRecordAndVersion::new(record, 0))
}

/// Does the image's metadata.version have controller registration (3.7-IV0 and later)?
pub fn registration_supported(image: &MetadataImage) -> bool {
    image
        .features
        .metadata_version()
        .and_then(|level| MetadataVersion::from_level(level).ok())
        .is_some_and(MetadataVersion::is_controller_registration_supported)
}

/// The record a registration becomes (version 0, as Java writes it), or why it is refused: the
/// controller must support every finalized feature level of the image (`kraft.version` is not
/// a finalized feature of the metadata log).
pub fn register_controller(
    image: &MetadataImage,
    request: &ControllerRegistrationRequest,
) -> Result<MetadataRecordAndVersion, RegistrationRefusal> {
    if !registration_supported(image) {
        return Err(RegistrationRefusal::UnsupportedMetadataVersion);
    }
    for (name, level) in image.features.levels.iter() {
        let supported = request
            .features
            .iter()
            .find(|f| &f.name == name)
            .is_some_and(|f| (f.min_supported_version..=f.max_supported_version).contains(level));
        if !supported {
            return Err(RegistrationRefusal::UnsupportedFeature {
                controller_id: request.controller_id,
                feature: name.clone(),
                level: *level,
            });
        }
    }
    let record = RegisterControllerRecord {
        controller_id: request.controller_id,
        incarnation_id: request.incarnation_id,
        zk_migration_ready: request.zk_migration_ready,
        end_points: request
            .listeners
            .iter()
            .map(|l| ControllerEndpoint {
                name: l.name.clone(),
                host: l.host.clone(),
                port: l.port,
                security_protocol: l.security_protocol,
                ..Default::default()
            })
            .collect(),
        features: request
            .features
            .iter()
            .map(|f| ControllerFeature {
                name: f.name.clone(),
                min_supported_version: f.min_supported_version,
                max_supported_version: f.max_supported_version,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    Ok(MetadataRecordAndVersion::new(record, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::controller_registration_request::{Feature, Listener};
    use crate::protocol::messages::FeatureLevelRecord;
    use crate::protocol::records::MetadataRecord;

    fn image(levels: &[(&str, i16)]) -> MetadataImage {
        let mut image = MetadataImage::default();
        for (name, level) in levels {
            let r: MetadataRecord = FeatureLevelRecord {
                name: name.to_string(),
                feature_level: *level,
                ..Default::default()
            }
            .into();
            image.replay(&r).unwrap();
        }
        image
    }

    fn request(features: &[(&str, i16, i16)]) -> ControllerRegistrationRequest {
        ControllerRegistrationRequest {
            controller_id: 3000,
            listeners: vec![Listener {
                name: "CONTROLLER".into(),
                host: "h".into(),
                port: 9093,
                ..Default::default()
            }],
            features: features
                .iter()
                .map(|(name, min, max)| Feature {
                    name: name.to_string(),
                    min_supported_version: *min,
                    max_supported_version: *max,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_controller_supporting_every_finalized_level_is_registered_as_it_asked() {
        let image = image(&[("metadata.version", 33), ("group.version", 1)]);
        let r = request(&[("metadata.version", 7, 33), ("group.version", 0, 1)]);
        let record = register_controller(&image, &r).unwrap();
        assert_eq!(record.version, 0);
        let MetadataRecord::RegisterController(c) = &record.record else {
            panic!("{record:?}");
        };
        assert_eq!(
            (c.controller_id, c.end_points.len(), c.features.len()),
            (3000, 1, 2)
        );
        assert_eq!(c.end_points[0].port, 9093);
    }

    #[test]
    fn a_finalized_level_the_controller_lacks_or_an_old_metadata_version_is_refused() {
        let image33 = image(&[("metadata.version", 33), ("group.version", 1)]);
        let e =
            register_controller(&image33, &request(&[("metadata.version", 7, 33)])).unwrap_err();
        assert_eq!(
            e,
            RegistrationRefusal::UnsupportedFeature {
                controller_id: 3000,
                feature: "group.version".into(),
                level: 1
            }
        );
        assert_eq!(e.error_code(), ErrorCode::UNSUPPORTED_VERSION);
        let old = image(&[("metadata.version", 14)]);
        assert_eq!(
            register_controller(&old, &request(&[("metadata.version", 7, 33)])),
            Err(RegistrationRefusal::UnsupportedMetadataVersion)
        );
        assert!(!registration_supported(&MetadataImage::default()));
    }

    #[test]
    fn unregistering_a_controller_needs_4_4_iv2_and_a_registration() {
        let mut image = image(&[("metadata.version", 33)]);
        assert_eq!(
            unregister_controller(&image, 1, 3000),
            Err(UnregistrationRefusal::NotRegistered(3000))
        );
        let registered = register_controller(&image, &request(&[("metadata.version", 7, 33)]));
        image.replay(&registered.unwrap().record).unwrap();
        let itself = unregister_controller(&image, 3000, 3000).unwrap_err();
        assert_eq!(
            (itself.error_code(), itself.to_string().as_str()),
            (
                ErrorCode::INVALID_REQUEST,
                "Controller cannot unregister itself while it is active."
            )
        );
        let record = unregister_controller(&image, 1, 3000).unwrap();
        assert_eq!(record.version, 0);
        let MetadataRecord::UnregisterController(u) = &record.record else {
            panic!("{record:?}");
        };
        assert_eq!(u.controller_id, 3000);
        image.replay(&record.record).unwrap();
        assert!(unregister_controller(&image, 1, 3000).is_err());

        let older = self::image(&[("metadata.version", 32)]);
        let e = unregister_controller(&older, 1, 3000).unwrap_err();
        assert_eq!(
            (e.error_code(), e.to_string().as_str()),
            (
                ErrorCode::UNSUPPORTED_VERSION,
                "The current MetadataVersion is too old to support controller unregistration."
            )
        );
        assert_eq!(
            UnregistrationRefusal::NotRegistered(7).error_code(),
            ErrorCode::CONTROLLER_ID_NOT_REGISTERED
        );
    }
}
