//! The metadata image: everything the committed records say about the cluster, in the parts of
//! Java's `MetadataImage`. `MetadataImage::replay` applies one record as Java's `MetadataDelta`
//! does; metadata transactions are the controller's (see `Controller::replay`).

use serde_json::{json, Value};

use super::acls::AclsImage;
use super::cluster::ClusterImage;
use super::configs::ConfigsImage;
use super::error::{InvariantViolation, Refusal};
use super::features::FeaturesImage;
use super::json::canonical;
use super::producer_ids::ProducerIdsImage;
use super::quotas::QuotasImage;
use super::replication::TopicsImage;
use super::scram::ScramImage;
use super::tokens::TokensImage;
use crate::protocol::records::{MetadataRecord, Offset};

/// The version of the canonical image JSON (compat/image-dumper/FORMAT.md).
pub const IMAGE_JSON_VERSION: i32 = 1;

/// The section of the image JSON that is streamed.
const TOPICS: &str = "topics";

/// A version of the image is an O(1) clone: every part is built on persistent maps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetadataImage {
    pub features: FeaturesImage,
    pub cluster: ClusterImage,
    pub topics: TopicsImage,
    pub configs: ConfigsImage,
    pub client_quotas: QuotasImage,
    pub producer_ids: ProducerIdsImage,
    pub acls: AclsImage,
    pub scram: ScramImage,
    pub delegation_tokens: TokensImage,
}

impl MetadataImage {
    /// Applies one record. Transaction markers are not image changes and are ignored here.
    pub fn replay(&mut self, record: &MetadataRecord) -> Result<(), Refusal> {
        use MetadataRecord as R;
        match record {
            R::RegisterBroker(r) => self.cluster.replay_register_broker(r),
            R::UnregisterBroker(r) => self.cluster.replay_unregister_broker(r.broker_id),
            R::FenceBroker(r) => self.cluster.replay_fence(r)?,
            R::UnfenceBroker(r) => self.cluster.replay_unfence(r)?,
            R::BrokerRegistrationChange(r) => self.cluster.replay_registration_change(r)?,
            R::RegisterController(r) => self.cluster.replay_register_controller(r),
            R::UnregisterController(r) => {
                self.cluster.replay_unregister_controller(r.controller_id)
            }
            R::Topic(r) => self.topics.replay_topic(r),
            R::Partition(r) => self.topics.replay_partition(r)?,
            R::PartitionChange(r) => self.topics.replay_partition_change(r)?,
            R::RemoveTopic(r) => {
                let name = self.topics.replay_remove_topic(r.topic_id)?;
                self.configs.remove_topic(&name);
            }
            R::ClearElr(r) => self.topics.replay_clear_elr(&r.topic_name)?,
            R::Config(r) => self.configs.replay(r),
            R::FeatureLevel(r) => self.features.replay(r)?,
            R::ClientQuota(r) => self.client_quotas.replay(r),
            R::ProducerIds(r) => self.producer_ids.replay(r),
            R::AccessControlEntry(r) => self.acls.replay(r),
            R::RemoveAccessControlEntry(r) => self.acls.replay_remove(r.id)?,
            R::UserScramCredential(r) => self.scram.replay(r),
            R::RemoveUserScramCredential(r) => self.scram.replay_remove(r.mechanism, &r.name),
            R::DelegationToken(r) => self.delegation_tokens.replay(r),
            R::RemoveDelegationToken(r) => self.delegation_tokens.replay_remove(&r.token_id),
            // Kafka 4.x keeps no ZooKeeper migration state; NoOps only move the offset.
            R::NoOp(_) | R::ZkMigrationState(_) => {}
            R::BeginTransaction(_) | R::EndTransaction(_) | R::AbortTransaction(_) => {}
        }
        Ok(())
    }

    /// Checks the invariants written beside the fields.
    pub fn check(&self) -> Result<(), InvariantViolation> {
        self.topics.check()?;
        if self.features.levels.iter().any(|(_, l)| *l <= 0) {
            return Err(InvariantViolation::FeatureLevelNotPositive {
                levels: self.features.levels.clone(),
            });
        }
        if self.configs.resources.values().any(|c| c.is_empty()) {
            return Err(InvariantViolation::EmptyConfigResource);
        }
        if self.client_quotas.entities.values().any(|q| q.is_empty()) {
            return Err(InvariantViolation::EmptyQuotaEntity);
        }
        Ok(())
    }

    /// The canonical JSON of the image as of `offset` (compat/image-dumper/FORMAT.md).
    pub fn to_json(&self, offset: Offset) -> Value {
        let mut v = self.json_but_topics(offset);
        v["topics"] = canonical(self.topics.to_json());
        v
    }

    /// The same JSON text `to_json` prints, streamed: the topics (nearly all of a large image)
    /// are written one partition at a time.
    pub fn write_json(&self, offset: Offset, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let Value::Object(sections) = self.json_but_topics(offset) else {
            unreachable!("the image JSON is an object");
        };
        out.write_all(b"{")?;
        for (i, (key, value)) in sections.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, key)?;
            out.write_all(b":")?;
            match key.as_str() {
                TOPICS => self.topics.write_json(out)?,
                _ => serde_json::to_writer(&mut *out, value)?,
            }
        }
        out.write_all(b"}")
    }

    /// Every section of the image JSON, canonical, with the topics left as `null` in their
    /// place.
    fn json_but_topics(&self, offset: Offset) -> Value {
        canonical(json!({
            "version": IMAGE_JSON_VERSION,
            "offset": offset,
            "features": self.features.to_json(),
            "cluster": self.cluster.to_json(),
            TOPICS: Value::Null,
            "configs": self.configs.to_json(),
            "clientQuotas": self.client_quotas.to_json(),
            "producerIds": self.producer_ids.to_json(),
            "acls": self.acls.to_json(),
            "scram": self.scram.to_json(),
            "delegationTokens": self.delegation_tokens.to_json(),
        }))
    }
}
