//! The metric families of one scrape: name, type, help and samples, each sample's labels
//! already in exposition syntax (`{name="value",...}`, escaped), and a fleet's per-broker
//! gauges as (broker id, value) pairs written straight into the text ([`Samples::Keyed`]).

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
    pub samples: Samples,
}

/// A family's samples.
#[derive(Debug, Clone, PartialEq)]
pub enum Samples {
    /// Each with its labels already in exposition syntax.
    Labelled(Vec<Sample>),
    /// A gauge's samples keyed by one integer label (a broker id), written straight into the
    /// text: a fleet's thousand per-broker gauges need no string each.
    Keyed {
        label: String,
        values: Vec<(i32, f64)>,
    },
}

impl Samples {
    pub fn len(&self) -> usize {
        match self {
            Samples::Labelled(s) => s.len(),
            Samples::Keyed { values, .. } => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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
    fn push(&mut self, name: &str, help: &str, kind: Kind, samples: Samples) {
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
            Samples::Labelled(vec![Self::number(String::new(), value)]),
        );
    }

    /// A gauge with one sample per label set.
    pub fn gauge_samples(&mut self, name: &str, help: &str, samples: &[(&[(&str, &str)], f64)]) {
        let samples = samples
            .iter()
            .map(|(pairs, value)| Self::number(label_text(pairs), *value))
            .collect();
        self.push(name, help, Kind::Gauge, Samples::Labelled(samples));
    }

    /// A gauge with one sample per value of its one integer label `label` (a broker id), for
    /// families as long as a fleet ([`Samples::Keyed`]).
    pub fn gauge_by(
        &mut self,
        name: &str,
        help: &str,
        label: &str,
        values: impl ExactSizeIterator<Item = (i32, f64)>,
    ) {
        let samples = Samples::Keyed {
            label: label.to_string(),
            values: values.collect(),
        };
        self.push(name, help, Kind::Gauge, samples);
    }

    pub fn counter(&mut self, name: &str, help: &str, value: f64) {
        self.push(
            name,
            help,
            Kind::Counter,
            Samples::Labelled(vec![Self::number(String::new(), value)]),
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
        self.push(name, help, Kind::Histogram, Samples::Labelled(vec![sample]));
    }

    /// An untyped sample with labels (the JMX exporter's `value: 1` rules, e.g. raft-metrics'
    /// current-state).
    pub fn untyped(&mut self, name: &str, help: &str, pairs: &[(&str, &str)], value: f64) {
        self.push(
            name,
            help,
            Kind::Untyped,
            Samples::Labelled(vec![Self::number(label_text(pairs), value)]),
        );
    }
}
