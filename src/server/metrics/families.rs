//! Building Prometheus metric families (the `prometheus` crate's data model) by name, type,
//! help and labels.

use prometheus::proto::{
    Bucket, Counter, Gauge, Histogram, LabelPair, Metric, MetricFamily, MetricType, Untyped,
};

/// The families of one scrape, in the order they are added.
#[derive(Debug, Default)]
pub struct Families(pub Vec<MetricFamily>);

fn family(name: &str, help: &str, kind: MetricType, metrics: Vec<Metric>) -> MetricFamily {
    let mut f = MetricFamily::default();
    f.set_name(name.to_string());
    f.set_help(help.to_string());
    f.set_field_type(kind);
    f.set_metric(metrics);
    f
}

fn labels(pairs: &[(&str, &str)]) -> Vec<LabelPair> {
    pairs
        .iter()
        .map(|(k, v)| {
            let mut l = LabelPair::default();
            l.set_name(k.to_string());
            l.set_value(v.to_string());
            l
        })
        .collect()
}

impl Families {
    pub fn gauge(&mut self, name: &str, help: &str, value: f64) {
        self.gauge_samples(name, help, &[(&[], value)]);
    }

    /// A gauge with one sample per label set.
    pub fn gauge_samples(&mut self, name: &str, help: &str, samples: &[(&[(&str, &str)], f64)]) {
        let metrics = samples
            .iter()
            .map(|(pairs, value)| {
                let mut g = Gauge::default();
                g.set_value(*value);
                let mut m = Metric::from_label(labels(pairs));
                m.set_gauge(g);
                m
            })
            .collect();
        self.0.push(family(name, help, MetricType::GAUGE, metrics));
    }

    pub fn counter(&mut self, name: &str, help: &str, value: f64) {
        let mut c = Counter::default();
        c.set_value(value);
        let mut m = Metric::default();
        m.set_counter(c);
        self.0
            .push(family(name, help, MetricType::COUNTER, vec![m]));
    }

    /// A histogram: (upper bound, observations at or below it) per bucket, the count and sum.
    pub fn histogram(
        &mut self,
        name: &str,
        help: &str,
        buckets: &[(f64, u64)],
        count: u64,
        sum: f64,
    ) {
        let mut h = Histogram::default();
        h.set_sample_count(count);
        h.set_sample_sum(sum);
        h.set_bucket(
            buckets
                .iter()
                .map(|&(bound, n)| {
                    let mut b = Bucket::default();
                    b.set_upper_bound(bound);
                    b.set_cumulative_count(n);
                    b
                })
                .collect(),
        );
        let mut m = Metric::default();
        m.set_histogram(h);
        self.0
            .push(family(name, help, MetricType::HISTOGRAM, vec![m]));
    }

    /// An untyped sample with labels (the JMX exporter's `value: 1` rules, e.g. raft-metrics'
    /// current-state). The crate's plain model marks its untyped type deprecated (it may drop
    /// it later), but its text encoder writes it, and `untyped` is what the exporter says.
    #[allow(deprecated)]
    pub fn untyped(&mut self, name: &str, help: &str, pairs: &[(&str, &str)], value: f64) {
        let mut u = Untyped::default();
        u.set_value(value);
        let mut m = Metric::from_label(labels(pairs));
        m.set_untyped(u);
        self.0
            .push(family(name, help, MetricType::UNTYPED, vec![m]));
    }
}
