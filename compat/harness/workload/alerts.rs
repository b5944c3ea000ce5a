//! Strimzi's controller alerts on the workload's mixed quorum (Java voters 1 and 2, kraftd voter
//! 3): a real Prometheus scrapes every voter (kraftd's `/metrics`, the JMX exporter on Java),
//! Strimzi's KRaft dashboard has data for each, and `OfflinePartitions`, which Strimzi evaluates
//! per controller pod, fires for the Java controllers and for kraftd alike while a partition has
//! no leader, and goes quiet on every one once it has one again. `AbnormalControllerState` stays
//! quiet throughout: the workload stops brokers, never a controller for longer than the alert's
//! 10 s.

use std::collections::BTreeSet;
use std::time::Duration;

use super::cluster::Cluster;
use crate::harness::prometheus::Prometheus;

impl Cluster {
    /// Starts Prometheus on every voter's metrics endpoint; checks the dashboard's panels and
    /// that both alerts are quiet.
    pub(super) fn watch_with_prometheus(&mut self) {
        let targets: Vec<_> = self
            .q
            .voters
            .iter()
            .zip(&self.q.metrics_addrs)
            .filter_map(|(v, addr)| Some((v.id, (*addr)?)))
            .collect();
        assert_eq!(targets.len(), 3, "every voter serves metrics");
        let prometheus = Prometheus::start(&self.q.dir, &targets);
        prometheus.assert_dashboard_has_data(targets.len());
        prometheus.wait_targets_up(targets.len());
        for alert in ["AbnormalControllerState", "OfflinePartitions"] {
            prometheus.wait_alert(alert, None);
        }
        self.prometheus = Some(prometheus);
    }

    /// While a partition has no leader: `OfflinePartitions` fires for every voter's pod, Java's
    /// and kraftd's; `AbnormalControllerState` does not.
    pub(super) fn offline_alert_fires_everywhere(&self) {
        let Some(p) = &self.prometheus else { return };
        let pods: BTreeSet<String> = self
            .q
            .voters
            .iter()
            .map(|v| Prometheus::pod(v.id))
            .collect();
        let firing = p.wait("OfflinePartitions firing for every controller", |p| {
            let firing = p.firing_pods("OfflinePartitions");
            (firing == pods).then_some(firing)
        });
        eprintln!(
            "prometheus: OfflinePartitions firing for {firing:?} (voters 1 and 2 Java, 3 kraftd)"
        );
        assert_eq!(p.alert_state("AbnormalControllerState"), None);
    }

    /// Once every partition has a leader again (the unclean election done, and broker 103, the
    /// only replica of some, back): `OfflinePartitions` quiet on every pod.
    pub(super) fn offline_alert_quiet(&self) {
        if let Some(p) = &self.prometheus {
            let took = p.wait_alert("OfflinePartitions", None);
            eprintln!("prometheus: OfflinePartitions quiet on every controller {took:?} after the brokers are back");
        }
    }

    /// `AbnormalControllerState` never fired since Prometheus started.
    pub(super) fn controller_alert_never_fired(&self) {
        if let Some(p) = &self.prometheus {
            let since = p.age() + Duration::from_secs(1);
            assert!(
                !p.fired_within("AbnormalControllerState", since),
                "AbnormalControllerState fired during the workload, whose controllers all ran"
            );
        }
    }
}
