//! The load generator's protocol paths (bench/load) against a 3-kraftd and a 3-Java quorum,
//! with functional outcomes only: brokers register, are unfenced and stay so; a CreateTopics
//! storm creates every topic with the partitions asked; AlterPartition shrinks and expands ISRs
//! exactly as asked, and a stale one is refused. Timings belong to the driver
//! (controller_bench/mod.rs), never to these asserts.

use std::sync::Arc;
use std::time::Duration;

use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kraftd::protocol::messages::{AlterPartitionRequest, AlterPartitionResponse};

use crate::harness::mixed_quorum::Mixed;
use crate::harness::transport::{kraftd_client_tls, Transport};
use crate::load::churn::{churn, create_churn_topic, ChurnConfig};
use crate::load::client::{ControllerClient, Controllers};
use crate::load::fleet::{Fleet, FleetConfig};
use crate::load::topics::{count_existing, create_topics, TopicStorm};

/// The simulated brokers' first id: clear of the controllers' 1..=3.
pub(crate) const FIRST_BROKER: i32 = 100;
const UNFENCE_TIMEOUT: Duration = Duration::from_secs(60);

/// The quorum's controllers, for the generator's clients (as the harness over mutual TLS when
/// the quorum's controller listeners are SSL).
pub(crate) fn controllers_of(q: &Mixed) -> Arc<Controllers> {
    let nodes: Vec<_> = q.voters.iter().map(|v| v.id).zip(q.addrs()).collect();
    let tls = match q.transport {
        Transport::Plaintext => None,
        Transport::MutualTls { .. } => Some(kraftd_client_tls()),
        Transport::SaslSsl { .. } => panic!("the load generator speaks no SASL"),
    };
    Controllers::secured(&nodes, tls)
}

/// The generator's runtime: two workers, as many as the machine's cores.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

#[test]
fn load_generator_paths_on_kraftd() {
    generator_paths(&[1, 2, 3]);
}

#[test]
fn load_generator_paths_on_java() {
    generator_paths(&[]);
}

fn generator_paths(kraftd: &[i32]) {
    let mut q = Mixed::start(kraftd);
    q.wait_for_leader(0);
    let controllers = controllers_of(&q);
    runtime().block_on(async {
        let fleet = Fleet::start(
            controllers.clone(),
            FleetConfig {
                cluster_id: q.cluster_id.clone(),
                first_broker_id: FIRST_BROKER,
                brokers: 5,
                heartbeat_interval: Duration::from_millis(500),
                start_spread: Duration::from_millis(200),
            },
        );
        fleet
            .wait_unfenced(UNFENCE_TIMEOUT)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        fleet.begin_measuring();
        tokio::time::sleep(Duration::from_secs(3)).await;
        let r = fleet.report();
        assert_eq!((r.registered, r.unfenced, r.fencings), (5, 5, 0), "{r:?}");
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert!(
            r.heartbeats.0.len() >= 10,
            "5 brokers heartbeat every 500 ms: {r:?}"
        );
        let epochs: Vec<i64> = fleet.broker_ids().iter().map(|&b| fleet.epoch(b)).collect();
        assert!(epochs.iter().all(|&e| e >= 0), "{epochs:?}");

        let storm = TopicStorm {
            prefix: "paths".into(),
            topics: 20,
            partitions: 3,
            replication_factor: 3,
            per_request: 4,
            concurrency: 2,
        };
        let s = create_topics(controllers.clone(), &storm).await;
        assert_eq!((s.created, s.requests), (20, 5), "{s:?}");
        let names = storm.names();
        let existing = count_existing(controllers.clone(), &names).await.unwrap();
        assert_eq!(existing, 20);
        // The check tells an absent topic from an existing one.
        let absent = count_existing(controllers.clone(), &["paths-absent".into()]).await;
        assert_eq!(absent.unwrap(), 0);
        // Creating them again: each refused as existing.
        let again = create_topics(controllers.clone(), &storm).await;
        assert_eq!(again.created, 0);
        assert_eq!(
            again.errors.by_kind.get("TOPIC_ALREADY_EXISTS"),
            Some(&20),
            "{again:?}"
        );

        let leaders = &fleet.broker_ids()[..3];
        let (topic_id, partitions) = create_churn_topic(controllers.clone(), "churn", 6, leaders)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let config = ChurnConfig {
            batch: 1,
            duration: Duration::from_secs(2),
        };
        let report = churn(controllers.clone(), &fleet, topic_id, partitions, &config).await;
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(report.changes >= 6, "{report:?}");
        // Every accepted change moved the partition epoch by one: an odd epoch, a shrunk ISR.
        for p in &report.partitions {
            assert!(p.partition_epoch > 0, "{p:?}");
            let shrunk = p.isr.len() < p.replicas.len();
            assert_eq!(shrunk, p.partition_epoch % 2 == 1, "{p:?}");
        }
        let total: i64 = report
            .partitions
            .iter()
            .map(|p| p.partition_epoch as i64)
            .sum();
        assert_eq!(total as u64, report.changes);

        // The same change again, at the partition epoch it had before the last one: refused.
        let p = &report.partitions[0];
        let stale = AlterPartitionRequest {
            broker_id: p.leader(),
            broker_epoch: fleet.epoch(p.leader()),
            topics: vec![TopicData {
                topic_id,
                partitions: vec![PartitionData {
                    partition_index: p.index,
                    leader_epoch: p.leader_epoch,
                    new_isr_with_epochs: p
                        .next_isr()
                        .iter()
                        .map(|&b| BrokerState {
                            broker_id: b,
                            broker_epoch: fleet.epoch(b),
                            ..Default::default()
                        })
                        .collect(),
                    partition_epoch: p.partition_epoch - 1,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut client = ControllerClient::new(controllers.clone(), "load-test");
        let answer: AlterPartitionResponse = client.call_versions(&stale, 3, 3).await.unwrap();
        let code = ErrorCode(answer.topics[0].partitions[0].error_code);
        assert_eq!(code, ErrorCode::INVALID_UPDATE_VERSION, "{answer:?}");

        let r = fleet.stop().await;
        assert_eq!((r.unfenced, r.fencings), (5, 0), "{:?}", r.errors);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
    });
    q.assert_java_healthy();
    q.stop();
}
