//! The metadata log directory: `meta.properties` now; segments, snapshots and `quorum-state`
//! with the storage work. Uses `protocol`; never `server`.
pub mod meta_properties;
