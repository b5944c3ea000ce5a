//! The requests a quorum controller is sent, as stock Kafka 4.4 brokers and admin tools send
//! them, built from one-line directives (`build`), and the controller a node's properties
//! configure (`settings`). Shared by the controller transcripts (tests/quorum_controller) and
//! the controller simulation (tests/controller_machine), so both speak one request language.

pub mod args;
pub mod build;

use std::collections::BTreeMap;

use kraftd::controller::quorum::{ControllerReply, ControllerRequest, ControllerSettings};
use kraftd::controller::MetadataImage;
use kraftd::log::bootstrap::{resolve_features, Bootstrap};
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::records::Offset;
use kraftd::raft::Endpoints;
use kraftd::server::config::ControllerConfig;

pub use build::build;

/// The cluster id every harness's cluster has (Kafka's documentation example).
pub const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// What a client learns from an answer it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learn {
    Nothing,
    /// A broker's registration: its epoch.
    BrokerEpoch(i32),
    /// A created delegation token: its HMAC.
    Token,
}

/// A request as a harness sends it.
pub struct Ask {
    pub request: ControllerRequest,
    pub version: i16,
    pub learn: Learn,
}

/// What the brokers and clients remember of the answers they got.
#[derive(Debug, Clone, Default)]
pub struct Requester {
    /// Broker epochs, from the registrations' answers.
    pub broker_epochs: BTreeMap<i32, i64>,
    /// The HMACs of the delegation tokens created, in order (`token=1` is the first).
    pub tokens: Vec<Vec<u8>>,
}

impl Requester {
    /// Keeps what `learn` names of an answer.
    pub fn learn(&mut self, learn: Learn, answer: &ControllerReply) {
        match (learn, answer) {
            (Learn::BrokerEpoch(id), ControllerReply::BrokerRegistration(r))
                if r.error_code == 0 =>
            {
                self.broker_epochs.insert(id, r.broker_epoch);
            }
            (Learn::Token, ControllerReply::CreateDelegationToken(r)) if r.error_code == 0 => {
                self.tokens.push(r.hmac.clone());
            }
            _ => {}
        }
    }
}

/// What a request's sender knows when it builds the request.
pub struct Known<'a> {
    /// The published (committed) image: what brokers and tools have seen.
    pub image: &'a MetadataImage,
    /// The last committed offset (a broker's metadata offset once it caught up).
    pub committed: Offset,
    pub requester: &'a Requester,
}

/// A controller node's configuration, as `kraftd` reads it from its properties.
pub struct NodeSetup {
    pub settings: ControllerSettings,
    /// The bootstrap checkpoint's record values (`kafka-storage format`).
    pub bootstrap: Vec<Vec<u8>>,
}

/// Controller `node_id` of static `voters`, with the bootstrap features `kafka-storage format`
/// writes for `metadata_version` and `feature_overrides`, and `properties` over the defaults.
pub fn node_setup(
    node_id: i32,
    voters: &[i32],
    seed: u64,
    metadata_version: i16,
    feature_overrides: &BTreeMap<String, i16>,
    properties: Vec<(String, String)>,
) -> Result<NodeSetup, String> {
    let levels =
        resolve_features(metadata_version, feature_overrides).map_err(|e| e.to_string())?;
    let bootstrap = Bootstrap {
        metadata_version,
        features: levels.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        kraft_version: 0,
        voters: None,
        scram: Default::default(),
    }
    .metadata_records()
    .iter()
    .map(|r| r.encode().expect("bootstrap records encode"))
    .collect();
    // A controller's properties, as a node would read them; the caller's own win.
    let port = |id: i32| 9090 + id;
    let quorum_voters: Vec<String> = voters
        .iter()
        .map(|v| format!("{v}@localhost:{}", port(*v)))
        .collect();
    let mut all = vec![
        ("process.roles".to_string(), "controller".to_string()),
        ("node.id".into(), node_id.to_string()),
        ("controller.quorum.voters".into(), quorum_voters.join(",")),
        (
            "listeners".into(),
            format!("CONTROLLER://localhost:{}", port(node_id)),
        ),
        ("controller.listener.names".into(), "CONTROLLER".into()),
        ("log.dirs".into(), "/nonexistent/kraftd-harness".into()),
    ];
    all.extend(properties);
    let config = ControllerConfig::parse("", &all).map_err(|e| e.to_string())?;
    let settings = kraftd::server::node::node_settings(
        &config,
        CLUSTER_ID,
        Uuid::ZERO,
        Endpoints::empty(),
        seed,
    )
    .controller;
    Ok(NodeSetup {
        settings,
        bootstrap,
    })
}
