//! What request handlers may read about this node: identity, endpoints, features and the
//! quorum's current view. Shared by every connection; the node loop updates the quorum view.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use crate::controller::acls::authorizer::{Authorizer, Denied, NotReady};
use crate::controller::acls::{operation, resource, AclsImage, CLUSTER_NAME, CLUSTER_OPERATIONS};
use crate::controller::principal::RequestPrincipal;
use crate::controller::scram::ScramImage;
use crate::server::sasl::scram::ScramCredentials;

pub use crate::protocol::features::FeatureRange;

/// Finalized feature levels and the offset they were read at (-1: none known yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedFeatures {
    pub epoch: i64,
    pub levels: BTreeMap<String, i16>,
}

impl Default for FinalizedFeatures {
    fn default() -> Self {
        FinalizedFeatures {
            epoch: -1,
            levels: BTreeMap::new(),
        }
    }
}

/// A controller's address on one listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerEndpoint {
    pub node_id: i32,
    pub listener: String,
    pub host: String,
    pub port: u16,
}

/// The quorum as this node currently sees it. Until consensus runs, only this node is known.
#[derive(Debug, Clone, Default)]
pub struct QuorumView {
    pub leader_id: Option<i32>,
    /// Every known controller's endpoints, this node's included.
    pub controllers: Vec<ControllerEndpoint>,
    pub finalized: FinalizedFeatures,
}

#[derive(Debug)]
pub struct ServerContext {
    pub node_id: i32,
    /// From meta.properties; None while the metadata log dir is unformatted.
    pub cluster_id: Option<String>,
    pub supported_features: Vec<FeatureRange>,
    /// Largest request frame accepted (`socket.request.max.bytes`).
    pub max_request_bytes: usize,
    /// `delete.topic.enable`, which a controller checks before anything else in DeleteTopics.
    pub delete_topic_enable: bool,
    /// `authorizer.class.name` (StandardAuthorizer) and its settings; `None`: no authorizer.
    pub authorizer: Option<crate::controller::acls::authorizer::AuthorizerConfig>,
    /// The committed ACLs, as the node loop last published them: what the authorizer reads
    /// for requests answered outside the node loop (Envelopes, raft, DescribeCluster). `None`
    /// until the node first catches up with the committed metadata (the authorizer's first
    /// load).
    acls: RwLock<Option<AclsImage>>,
    /// The committed SCRAM credentials, as the node loop last published them: what SASL/SCRAM
    /// connections authenticate against. A watch channel (tokio's, already a dependency): a
    /// connection takes the current snapshot without locking, and may wait for the next.
    scram: watch::Sender<Arc<ScramCredentials>>,
    quorum: RwLock<QuorumView>,
    /// Connection limits and timers of the listeners, with the live counts.
    pub connections: std::sync::Arc<crate::server::limits::ConnectionLimits>,
}

impl ServerContext {
    pub fn new(
        node_id: i32,
        cluster_id: Option<String>,
        max_request_bytes: usize,
        quorum: QuorumView,
    ) -> Self {
        ServerContext {
            node_id,
            cluster_id,
            supported_features: crate::protocol::features::SUPPORTED_FEATURES.to_vec(),
            max_request_bytes,
            delete_topic_enable: true,
            authorizer: None,
            acls: RwLock::default(),
            scram: watch::Sender::new(Arc::default()),
            quorum: RwLock::new(quorum),
            connections: Default::default(),
        }
    }

    fn view(&self) -> std::sync::RwLockReadGuard<'_, QuorumView> {
        // A panic while holding the lock cannot leave the view half-written (writers replace
        // whole fields), so a poisoned lock is still safe to read.
        self.quorum.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn leader_id(&self) -> Option<i32> {
        self.view().leader_id
    }

    /// What a controller that is not the active one answers with: the leader it knows of
    /// when that is another node.
    pub fn non_active(&self) -> crate::controller::quorum::NonActive {
        crate::controller::quorum::NonActive::of(
            self.node_id,
            self.leader_id(),
            self.delete_topic_enable,
        )
    }

    pub fn finalized_features(&self) -> FinalizedFeatures {
        self.view().finalized.clone()
    }

    /// The controllers' endpoints on `listener`, in node id order.
    pub fn controller_endpoints(&self, listener: &str) -> Vec<ControllerEndpoint> {
        let mut v: Vec<_> = self
            .view()
            .controllers
            .iter()
            .filter(|c| c.listener == listener)
            .cloned()
            .collect();
        v.sort_by_key(|c| c.node_id);
        v
    }

    /// Whether `who` may do `op` on `(resource_type, name)`, by the published ACLs (always,
    /// without an authorizer).
    pub fn authorize(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> Result<bool, NotReady> {
        let acls = self.acls.read().unwrap_or_else(|p| p.into_inner());
        self.authorizer_with(acls.as_ref())
            .allows(who, resource_type, name, op)
    }

    /// `AuthHelper.authorizeClusterOperation` by the published ACLs.
    pub fn authorize_cluster_operation(
        &self,
        api: &'static str,
        who: &RequestPrincipal,
        op: i8,
    ) -> Result<(), Denied> {
        let acls = self.acls.read().unwrap_or_else(|p| p.into_inner());
        self.authorizer_with(acls.as_ref())
            .cluster_operation(api, who, op)
    }

    fn authorizer_with<'a>(&'a self, acls: Option<&'a AclsImage>) -> Authorizer<'a> {
        Authorizer {
            config: self.authorizer.as_ref(),
            acls,
        }
    }

    /// DescribeCluster's `clusterAuthorizedOperations` (`AuthHelper.computeDescribeClusterResponse`):
    /// with DESCRIBE on the cluster, the bit field (`1 << code`) of the cluster operations `who`
    /// may do (`authorizedOperations`, each asked of the authorizer; all of them without one),
    /// else 0. Asked only once `who` passed DescribeCluster's ALTER check, so the authorizer
    /// is ready for it.
    pub fn authorized_cluster_operations(&self, who: &RequestPrincipal) -> i32 {
        let may = |op| {
            self.authorize(who, resource::CLUSTER, CLUSTER_NAME, op)
                .unwrap_or(false)
        };
        if !may(operation::DESCRIBE) {
            return 0;
        }
        CLUSTER_OPERATIONS
            .into_iter()
            .filter(|&op| may(op))
            .fold(0, |bits, op| bits | 1 << op)
    }

    /// Publishes the committed ACLs (called by the node loop once it has caught up with the
    /// committed metadata, and whenever they change after).
    pub fn publish_acls(&self, acls: &AclsImage) {
        let mut guard = self.acls.write().unwrap_or_else(|p| p.into_inner());
        if guard
            .as_ref()
            .is_some_and(|published| published.by_id.ptr_eq(&acls.by_id))
        {
            return;
        }
        *guard = Some(acls.clone());
    }

    /// The SCRAM credentials of the committed metadata as last published (none before the
    /// node has replayed any): a SCRAM exchange starts with the snapshot current then.
    pub fn scram_credentials(&self) -> Arc<ScramCredentials> {
        self.scram.borrow().clone()
    }

    /// A receiver of every SCRAM credentials snapshot published from now on.
    pub fn watch_scram_credentials(&self) -> watch::Receiver<Arc<ScramCredentials>> {
        self.scram.subscribe()
    }

    /// Publishes the committed SCRAM credentials (called by the node loop after every replay
    /// turn; a snapshot of the same version of the image is not published twice).
    pub fn publish_scram(&self, image: &ScramImage) {
        self.scram.send_if_modified(|published| {
            if published.is_of(image) {
                return false;
            }
            *published = Arc::new(ScramCredentials::of(image));
            true
        });
    }

    /// Replaces the quorum view (called by the node loop when leadership or voters change).
    pub fn update_quorum(&self, f: impl FnOnce(&mut QuorumView)) {
        let mut guard = self.quorum.write().unwrap_or_else(|p| p.into_inner());
        f(&mut guard);
    }
}

#[cfg(test)]
mod scram_tests {
    use std::sync::Arc;

    use super::{QuorumView, ServerContext};
    use crate::controller::scram::{ScramCredential, ScramImage};
    use crate::server::sasl::scram::ScramMechanism;

    #[test]
    fn scram_credentials_are_published_once_per_version_of_the_image() {
        let ctx = ServerContext::new(1, None, 1024, QuorumView::default());
        assert!(ctx.scram_credentials().is_empty());
        let mut watch = ctx.watch_scram_credentials();
        let mut image = ScramImage::default();
        image.credentials.insert(
            (1, "alice".to_string()),
            Arc::new(ScramCredential {
                salt: vec![1],
                stored_key: vec![2],
                server_key: vec![3],
                iterations: 4096,
            }),
        );
        ctx.publish_scram(&image);
        assert!(watch.has_changed().unwrap());
        let published = watch.borrow_and_update().clone();
        assert!(published.get(ScramMechanism::Sha256, "alice").is_some());
        assert!(published.get(ScramMechanism::Sha512, "alice").is_none());
        // The same version again: nothing new for the watchers.
        ctx.publish_scram(&image.clone());
        assert!(!watch.has_changed().unwrap());
        image.replay_remove(1, "alice");
        ctx.publish_scram(&image);
        assert!(watch.has_changed().unwrap());
        assert!(ctx.scram_credentials().is_empty());
    }
}
