//! SSL controller listeners with client certificates required, a Java 4.4 controller and
//! kraftd side by side (one of each, started once for every case), and kraftd's certificate
//! rotation on a live voter:
//! - `refusals`: connections each controller refuses (garbage, a plaintext request, a
//!   handshake that never finishes, a certificate of another CA, an expired one, none), what a
//!   client sees of each and what each logs;
//! - `half_open`: 1,000 handshakes left half open, kraftd's memory and log meanwhile;
//! - `principals`: certificates mapped by `ssl.principal.mapping.rules` to principals that
//!   StandardAuthorizer's ACLs name, the same answers from both;
//! - `rotation`: a kraftd voter's key store replaced under it (and then by garbage);
//! - `tools`: Kafka's tools through each over mutual TLS, the same answers from both.
//!
//! `client` is the test's TLS client: it connects as a given certificate (or none, or raw TCP)
//! and says what it saw.

mod client;
mod half_open;
mod principals;
mod refusals;
mod rotation;
mod tools;

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kraftd::protocol::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};

use crate::harness::dynamic_quorum::{start_node_formatted, Kind, Node};
use crate::harness::mixed_quorum::Member;
use crate::harness::pki::StoreFormat;
use crate::harness::quorum_probe::{describe_quorum, round_trip};
use crate::harness::transport::{principal_mapping_rules, PerNode, Role, Transport};
use crate::harness::{free_port, Quorum, TestDir};

/// Both controllers are formatted with it (DescribeCluster names it).
const CLUSTER_ID: &str = "tlsSideBySideCluster0A";
const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
/// kraftd reads PEM stores here (Java, as always in the suite, PKCS12).
const TLS: Transport = Transport::MutualTls {
    kraftd: PerNode::Every(StoreFormat::Pem),
};
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// One SSL controller of either kind, leading its own single-voter quorum.
pub(super) struct SslController {
    node: Node,
}

impl SslController {
    /// Starts it with the suite's mutual TLS, StandardAuthorizer, `super.users` the suite's
    /// nodes and the harness (not the test's clients), and the mapping rules of
    /// [`mapping_rules`]; waits until it leads.
    fn start(dir: &TestDir, kind: Kind) -> SslController {
        let port = free_port();
        TLS.register([port]);
        let mut props = TLS.node_props(
            1,
            Role::Controller {
                kraftd: kind == Kind::Kraftd,
            },
            Some("User:admin"),
        );
        props.retain(|(k, _)| !k.ends_with("ssl.principal.mapping.rules"));
        props.push((
            "listener.name.controller.ssl.principal.mapping.rules".into(),
            mapping_rules(),
        ));
        props.push(("authorizer.class.name".into(), STANDARD_AUTHORIZER.into()));
        let props: Vec<(&str, String)> =
            props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let node = start_node_formatted(
            dir,
            kind,
            1,
            port,
            CLUSTER_ID,
            Quorum::Standalone,
            &props,
            &[],
        );
        let deadline = Instant::now() + START_TIMEOUT;
        while !describe_quorum(port).is_some_and(|d| d.leader_id == 1 && d.high_watermark > 0) {
            assert!(
                Instant::now() < deadline,
                "{kind}: no leader within {START_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let c = SslController { node };
        if kind == Kind::Java {
            c.log_refused_connections();
        }
        c
    }

    pub(super) fn kind(&self) -> Kind {
        self.node.kind
    }

    pub(super) fn port(&self) -> u16 {
        self.node.port
    }

    pub(super) fn pid(&self) -> u32 {
        match &self.node.member {
            Member::Java(j) => j.pid(),
            Member::Kraftd(k, _) => k.pid(),
        }
    }

    pub(super) fn log_path(&self) -> PathBuf {
        match &self.node.member {
            Member::Java(j) => j.log_path().to_path_buf(),
            Member::Kraftd(k, _) => k.log_path().to_path_buf(),
        }
    }

    /// Its log so far.
    pub(super) fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Whether it answers the harness's DescribeQuorum (over mutual TLS) as the leader.
    pub(super) fn serves(&self) -> bool {
        describe_quorum(self.port()).is_some_and(|d| d.leader_id == 1)
    }

    /// Stock Kafka logs its network layer at INFO (the suite's log4j config, at WARN, would
    /// hide "Failed authentication" lines): raise `Selector` to INFO, as an operator does with
    /// `kafka-configs --bootstrap-controller --entity-type broker-loggers`.
    fn log_refused_connections(&self) {
        let request = IncrementalAlterConfigsRequest {
            resources: vec![AlterConfigsResource {
                resource_type: 8, // BROKER_LOGGER
                resource_name: "1".into(),
                configs: vec![AlterableConfig {
                    name: "org.apache.kafka.common.network.Selector".into(),
                    config_operation: 0,
                    value: Some("INFO".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let key = IncrementalAlterConfigsRequest::API_KEY;
        let body = round_trip(self.port(), key, 1, &request).expect("Java answers");
        let answer = IncrementalAlterConfigsResponse::decode_exact(&body, 1).expect("decodes");
        let codes: Vec<i16> = answer.responses.iter().map(|r| r.error_code).collect();
        assert_eq!(codes, [0], "Java's Selector logger to INFO: {answer:?}");
    }

    fn stop(mut self) {
        self.node.member.sigterm();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.node.is_running() {
            assert!(Instant::now() < deadline, "the controller did not stop");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The suite's rules, after one that maps `CN=shout-<name>` to upper case (`/U`).
fn mapping_rules() -> String {
    format!(
        "RULE:^CN=(shout-[a-z]+),O={}$/$1/U,{}",
        crate::harness::pki::ORGANIZATION,
        principal_mapping_rules()
    )
}

/// Polls `check` every 100 ms until it holds or `timeout` passes; whether it held.
pub(super) fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn ssl_controllers_refuse_bad_clients_and_authorize_mapped_principals_as_java_does() {
    let dir = TestDir::new();
    let java = SslController::start(&dir, Kind::Java);
    let kraftd = SslController::start(&dir, Kind::Kraftd);
    refusals::compare(&java, &kraftd);
    half_open::compare(&java, &kraftd);
    principals::compare(&java, &kraftd);
    tools::compare(&java, &kraftd);
    java.stop();
    kraftd.stop();
}
