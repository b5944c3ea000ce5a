//! One controller (a Java 4.4 controller or kraftd, formatted `--standalone`) and stock Java
//! brokers registered with it, each waited for until it runs (unfenced).

use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::frame::encode_request;

use crate::harness::dynamic_quorum::{start_node_formatted, Kind, Node};
use crate::harness::quorum_probe::{describe_quorum, try_round_trip_frame};
use crate::harness::{
    free_port, random_kafka_uuid, JavaBroker, Kafka, Quorum, ServerBuilder, TestDir,
};

pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(120);
pub const RUNNING: &str = "The broker has been unfenced. Transitioning from RECOVERY to RUNNING.";

pub struct TopicCluster {
    pub controller: Node,
    pub brokers: Vec<JavaBroker>,
    pub cluster_id: String,
}

impl TopicCluster {
    pub fn start(dir: &TestDir, kind: Kind, brokers: &[i32]) -> TopicCluster {
        Self::start_with(dir, kind, brokers, &[])
    }

    /// As [`Self::start`], with these controller properties.
    pub fn start_with(
        dir: &TestDir,
        kind: Kind,
        brokers: &[i32],
        props: &[(&str, String)],
    ) -> TopicCluster {
        Self::start_configured(dir, kind, brokers, props, |b| b)
    }

    /// As [`Self::start_with`], each broker's builder passed through `broker` first.
    pub fn start_configured(
        dir: &TestDir,
        kind: Kind,
        brokers: &[i32],
        props: &[(&str, String)],
        broker: impl Fn(ServerBuilder<JavaBroker>) -> ServerBuilder<JavaBroker>,
    ) -> TopicCluster {
        let mut cluster = Self::controller_only(dir, kind, props, &[]);
        cluster.add_brokers_configured(dir, Kafka::get(), brokers, broker);
        cluster
    }

    /// The controller alone, formatted with `format_args` too, once it leads.
    pub fn controller_only(
        dir: &TestDir,
        kind: Kind,
        props: &[(&str, String)],
        format_args: &[&str],
    ) -> TopicCluster {
        Self::controller_with_id(dir, kind, props, format_args, &random_kafka_uuid())
    }

    /// [`Self::controller_only`] formatted with this cluster id (so that two controllers
    /// compared give the same answers where Kafka names the cluster id).
    pub fn controller_with_id(
        dir: &TestDir,
        kind: Kind,
        props: &[(&str, String)],
        format_args: &[&str],
        cluster_id: &str,
    ) -> TopicCluster {
        let cluster_id = cluster_id.to_string();
        let port = free_port();
        let quorum = Quorum::Standalone;
        let controller =
            start_node_formatted(dir, kind, 1, port, &cluster_id, quorum, props, format_args);
        let deadline = Instant::now() + START_TIMEOUT;
        while !describe_quorum(port).is_some_and(|d| d.leader_id == 1 && d.high_watermark > 0) {
            assert!(
                Instant::now() < deadline,
                "{kind}: the controller did not lead within {START_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        TopicCluster {
            controller,
            brokers: Vec::new(),
            cluster_id,
        }
    }

    /// Starts stock brokers registering with the controller and waits until each is unfenced.
    pub fn add_brokers(&mut self, dir: &TestDir, ids: &[i32]) {
        self.add_brokers_of(dir, Kafka::get(), ids);
    }

    /// [`Self::add_brokers`] running this Kafka release's brokers.
    pub fn add_brokers_of(&mut self, dir: &TestDir, kafka: &'static Kafka, ids: &[i32]) {
        self.add_brokers_configured(dir, kafka, ids, |b| b);
    }

    /// [`Self::add_brokers_of`], each broker's builder passed through `broker` first.
    pub fn add_brokers_configured(
        &mut self,
        dir: &TestDir,
        kafka: &'static Kafka,
        ids: &[i32],
        broker: impl Fn(ServerBuilder<JavaBroker>) -> ServerBuilder<JavaBroker>,
    ) {
        let kind = self.kind();
        let endpoint = self.controller.endpoint();
        let builders = ids
            .iter()
            .map(|id| {
                broker(
                    JavaBroker::builder(*id, Quorum::Bootstrap(vec![endpoint.clone()]))
                        .cluster_id(self.cluster_id.clone())
                        .kafka(kafka)
                        .name(&format!("{kind}-broker-{id}")),
                )
            })
            .collect();
        let mut brokers = ServerBuilder::start_all(builders, dir);
        for b in &mut brokers {
            assert!(
                b.wait_for_log(RUNNING, START_TIMEOUT),
                "{kind}: broker {} did not reach RUNNING; log {}",
                b.node_id(),
                b.log_path().display()
            );
        }
        self.brokers.extend(brokers);
    }

    pub fn kind(&self) -> Kind {
        self.controller.kind
    }

    /// `host:port` of the first broker (for `--bootstrap-server`).
    pub fn bootstrap_server(&self) -> String {
        self.brokers[0].bootstrap_server()
    }

    /// Sends `request` at `version` straight to the controller; the response body.
    pub fn send<M: Message + ApiMessage>(
        &self,
        version: i16,
        request: &M,
    ) -> Result<Vec<u8>, String> {
        let frame = encode_request(M::API_KEY, version, 7, Some("compat-topics"), request)
            .expect("the request encodes");
        try_round_trip_frame(
            self.controller.port,
            M::API_KEY,
            version,
            &frame,
            Duration::from_secs(30),
        )
    }

    /// Kills the brokers (quicker than their controlled shutdowns, which
    /// `leadership::brokers` shows), then stops the controller.
    pub fn stop(&mut self) {
        for b in &mut self.brokers {
            b.kill9();
        }
        self.controller.member.sigterm();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.controller.is_running() {
            assert!(Instant::now() < deadline, "the controller did not stop");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
