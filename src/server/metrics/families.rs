//! The metric families of one scrape: name, type, help and samples, each sample's labels
//! already in exposition syntax (`{name="value",...}`, escaped), so that a scrape of a
//! thousand brokers' gauges makes one string per sample and the text is a concatenation. The
//! `prometheus` crate's process collector hands its families over in the crate's model, which
//! [`Families::extend_collected`] converts.

use prometheus::proto::{MetricFamily, MetricType};

/// A family's Prometheus type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    /// The JMX exporter's `value: 1` rules (e.g. raft-metrics' current-state).
    Untyped,
    Histogram,
}

/// What a sample holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    /// (upper bound, observations at or below it) per bucket, without `+Inf`; the count and sum.
    Histogram {
        buckets: Vec<(f64, u64)>,
        count: u64,
        sum: f64,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// `{name="value",...}` with values escaped, or empty.
    pub labels: String,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: String,
    pub help: String,
    pub kind: Kind,
    pub samples: Vec<Sample>,
}

/// The families of one scrape, in the order they are added.
#[derive(Debug, Default)]
pub struct Families(pub Vec<Family>);

/// `{k="v",...}` of `pairs`, values escaped; empty for none.
fn label_text(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        out.push(if i == 0 { '{' } else { ',' });
        out.push_str(k);
        out.push_str("=\"");
        escape_into(&mut out, v, true);
        out.push('"');
    }
    if !pairs.is_empty() {
        out.push('}');
    }
    out
}

/// `\` and newlines escaped, and `"` in label values.
pub fn escape_into(out: &mut String, s: &str, quotes: bool) {
    let special = |c: char| c == '\\' || c == '\n' || (quotes && c == '"');
    if !s.contains(special) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quotes => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}

impl Families {
    fn push(&mut self, name: &str, help: &str, kind: Kind, samples: Vec<Sample>) {
        self.0.push(Family {
            name: name.to_string(),
            help: help.to_string(),
            kind,
            samples,
        });
    }

    fn number(labels: String, value: f64) -> Sample {
        Sample {
            labels,
            value: Value::Number(value),
        }
    }

    pub fn gauge(&mut self, name: &str, help: &str, value: f64) {
        self.push(
            name,
            help,
            Kind::Gauge,
            vec![Self::number(String::new(), value)],
        );
    }

    /// A gauge with one sample per label set.
    pub fn gauge_samples(&mut self, name: &str, help: &str, samples: &[(&[(&str, &str)], f64)]) {
        let samples = samples
            .iter()
            .map(|(pairs, value)| Self::number(label_text(pairs), *value))
            .collect();
        self.push(name, help, Kind::Gauge, samples);
    }

    /// A gauge with one sample per value of its one integer label `label` (a broker id): one
    /// string per sample, for families as long as a fleet.
    pub fn gauge_by(
        &mut self,
        name: &str,
        help: &str,
        label: &str,
        values: impl ExactSizeIterator<Item = (i32, f64)>,
    ) {
        let mut samples = Vec::with_capacity(values.len());
        let mut digits = itoa::Buffer::new();
        for (key, value) in values {
            let key = digits.format(key);
            let mut labels = String::with_capacity(label.len() + key.len() + 5);
            for part in ["{", label, "=\"", key, "\"}"] {
                labels.push_str(part);
            }
            samples.push(Self::number(labels, value));
        }
        self.push(name, help, Kind::Gauge, samples);
    }

    pub fn counter(&mut self, name: &str, help: &str, value: f64) {
        self.push(
            name,
            help,
            Kind::Counter,
            vec![Self::number(String::new(), value)],
        );
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
        let value = Value::Histogram {
            buckets: buckets.to_vec(),
            count,
            sum,
        };
        let sample = Sample {
            labels: String::new(),
            value,
        };
        self.push(name, help, Kind::Histogram, vec![sample]);
    }

    /// An untyped sample with labels (the JMX exporter's `value: 1` rules, e.g. raft-metrics'
    /// current-state).
    pub fn untyped(&mut self, name: &str, help: &str, pairs: &[(&str, &str)], value: f64) {
        self.push(
            name,
            help,
            Kind::Untyped,
            vec![Self::number(label_text(pairs), value)],
        );
    }

    /// The `prometheus` crate's families (its process collector's: counters and gauges). A
    /// type kraftd never gets from it (summary, histogram, untyped) is left out.
    pub fn extend_collected(&mut self, collected: Vec<MetricFamily>) {
        for f in collected {
            let kind = match f.get_field_type() {
                MetricType::COUNTER => Kind::Counter,
                MetricType::GAUGE => Kind::Gauge,
                _ => continue,
            };
            let samples = f
                .get_metric()
                .iter()
                .map(|m| {
                    let pairs: Vec<(&str, &str)> = m
                        .get_label()
                        .iter()
                        .map(|l| (l.name(), l.value()))
                        .collect();
                    let value = match kind {
                        Kind::Counter => m.get_counter().get_value(),
                        _ => m.get_gauge().get_value(),
                    };
                    Self::number(label_text(&pairs), value)
                })
                .collect();
            self.push(f.name(), f.help(), kind, samples);
        }
    }
}
