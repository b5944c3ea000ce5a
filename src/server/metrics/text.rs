//! The exposition, written as it is built: each family's `# HELP` and `# TYPE` lines and then
//! its samples go straight into one byte buffer, with no model of the families in between and
//! no string built per name, label or line (a scrape's whole cost is this writing). Names and
//! help are given in parts (a prefix and a bean's name, [`Parts`]), and a family's samples copy
//! its name from where its header wrote it.
//!
//! * Prometheus text format 0.0.4, as the JMX exporter writes it: `# HELP`, `# TYPE` (`gauge`,
//!   `counter`, `untyped`, `histogram`), the samples; NaN as `NaN`.
//! * OpenMetrics 1.0.0, when a scraper asks for it: a counter family is named without its
//!   `_total` (its samples keep it), untyped is `unknown`, and the text ends with `# EOF`.
//!
//! The `prometheus` crate's own text encoder panics on an untyped family (`unimplemented!`),
//! which raft-metrics' current-state is under the exporter's rules, and has no OpenMetrics one.

use std::io::Write;
use std::ops::Range;

pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const OPENMETRICS_FORMAT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Which format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    OpenMetrics,
}

impl Format {
    /// OpenMetrics when the `Accept` header names it (Prometheus asks for it first and takes
    /// the text format too), else the text format.
    pub fn negotiate(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => TEXT_FORMAT,
            Format::OpenMetrics => OPENMETRICS_FORMAT,
        }
    }
}

/// A family's Prometheus type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    /// The JMX exporter's `value: 1` rules (e.g. raft-metrics' current-state).
    Untyped,
    Histogram,
}

/// A name or help text given in parts, written one after the other: a `&str`, or an array of
/// them (`[KAFKA_CONTROLLER, bean]`).
pub trait Parts {
    fn each(&self, f: impl FnMut(&str));
}

impl Parts for &str {
    fn each(&self, mut f: impl FnMut(&str)) {
        f(self)
    }
}

impl<const N: usize> Parts for [&str; N] {
    fn each(&self, f: impl FnMut(&str)) {
        self.iter().copied().for_each(f)
    }
}

/// One scrape's text, family by family.
#[derive(Debug)]
pub struct Exposition {
    out: Vec<u8>,
    format: Format,
    /// The current family's name, where its header wrote it in `out`: its samples copy it.
    /// Empty before the first family, and samples need a family.
    name: Range<usize>,
    /// What the current family's samples add to its name: `_total` for an OpenMetrics counter.
    suffix: &'static str,
}

impl Exposition {
    /// `capacity`: the bytes reserved up front (the last scrape's size is a good guess).
    pub fn new(format: Format, capacity: usize) -> Exposition {
        Exposition {
            out: Vec::with_capacity(capacity),
            format,
            name: 0..0,
            suffix: "",
        }
    }

    /// The text, ended as the format wants.
    pub fn finish(mut self) -> Vec<u8> {
        if self.format == Format::OpenMetrics {
            self.out.extend_from_slice(b"# EOF\n");
        }
        self.out
    }

    /// Starts a family: its `# HELP` line (none for an empty help) and its `# TYPE` line. Its
    /// samples follow ([`Exposition::sample`], [`Exposition::keyed`]). The name is lowercased
    /// as the exporter's `lowercaseOutputName` does (a bean's name is given as Java spells it).
    pub fn family(&mut self, name: impl Parts, help: impl Parts, kind: Kind) {
        let mut has_help = false;
        help.each(|p| has_help |= !p.is_empty());
        let out = &mut self.out;
        out.extend_from_slice(if has_help { b"# HELP " } else { b"# TYPE " });
        let start = out.len();
        name.each(|p| push_lowercase(out, p));
        self.suffix = "";
        if self.format == Format::OpenMetrics && kind == Kind::Counter {
            if out[start..].ends_with(b"_total") {
                out.truncate(out.len() - "_total".len());
            }
            self.suffix = "_total";
        }
        self.name = start..out.len();
        if has_help {
            out.push(b' ');
            help.each(|p| escape_into(out, p, false));
            out.extend_from_slice(b"\n# TYPE ");
            out.extend_from_within(self.name.clone());
        }
        let type_name = match (kind, self.format) {
            (Kind::Counter, _) => "counter",
            (Kind::Gauge, _) => "gauge",
            (Kind::Untyped, Format::Text) => "untyped",
            (Kind::Untyped, Format::OpenMetrics) => "unknown",
            (Kind::Histogram, _) => "histogram",
        };
        for part in [" ", type_name, "\n"] {
            out.extend_from_slice(part.as_bytes());
        }
    }

    /// A sample of the current family, with its labels (values escaped).
    pub fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        self.sample_name();
        let out = &mut self.out;
        for (i, (k, v)) in labels.iter().enumerate() {
            out.push(if i == 0 { b'{' } else { b',' });
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"=\"");
            escape_into(out, v, true);
            out.push(b'"');
        }
        if !labels.is_empty() {
            out.push(b'}');
        }
        out.push(b' ');
        number_into(out, value);
        out.push(b'\n');
    }

    /// A sample of the current family with one integer label (a broker's id): a fleet's
    /// thousand per-broker gauges, written with no string each.
    pub fn keyed(&mut self, label: &str, key: i32, value: f64) {
        self.sample_name();
        let out = &mut self.out;
        out.push(b'{');
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(b"=\"");
        out.extend_from_slice(itoa::Buffer::new().format(key).as_bytes());
        out.extend_from_slice(b"\"} ");
        number_into(out, value);
        out.push(b'\n');
    }

    /// A gauge with one sample per value of its one integer label `label` (a broker's or a
    /// controller's id); no family at all when there are none, as Java registers these per id.
    pub fn gauge_by(
        &mut self,
        name: impl Parts,
        help: impl Parts,
        label: &str,
        values: impl IntoIterator<Item = (i32, f64)>,
    ) {
        let mut values = values.into_iter().peekable();
        if values.peek().is_none() {
            return;
        }
        self.family(name, help, Kind::Gauge);
        for (key, value) in values {
            self.keyed(label, key, value);
        }
    }

    pub fn gauge(&mut self, name: impl Parts, help: impl Parts, value: f64) {
        self.family(name, help, Kind::Gauge);
        self.sample(&[], value);
    }

    pub fn counter(&mut self, name: impl Parts, help: impl Parts, value: f64) {
        self.family(name, help, Kind::Counter);
        self.sample(&[], value);
    }

    /// A histogram family: (upper bound, observations at or below it) per bucket, without
    /// `+Inf`, then the count and sum; written as its `_bucket` lines (cumulative, `+Inf`
    /// last), `_sum` and `_count`.
    pub fn histogram(
        &mut self,
        name: impl Parts,
        help: impl Parts,
        buckets: &[(f64, u64)],
        count: u64,
        sum: f64,
    ) {
        self.family(name, help, Kind::Histogram);
        let name = self.name.clone();
        let out = &mut self.out;
        let line = |out: &mut Vec<u8>, tail: &str| {
            out.extend_from_within(name.clone());
            out.extend_from_slice(tail.as_bytes());
        };
        for (bound, n) in buckets {
            line(out, "_bucket{le=\"");
            number_into(out, *bound);
            let _ = writeln!(out, "\"}} {n}");
        }
        line(out, "_bucket{le=\"+Inf\"} ");
        let _ = writeln!(out, "{count}");
        line(out, "_sum ");
        number_into(out, sum);
        out.push(b'\n');
        line(out, "_count ");
        let _ = writeln!(out, "{count}");
    }

    fn sample_name(&mut self) {
        debug_assert!(!self.name.is_empty(), "a sample before its family");
        self.out.extend_from_within(self.name.clone());
        self.out.extend_from_slice(self.suffix.as_bytes());
    }
}

fn push_lowercase(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        out.extend(s.bytes().map(|b| b.to_ascii_lowercase()));
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// `\` and newlines escaped, and `"` in label values.
fn escape_into(out: &mut Vec<u8>, s: &str, quotes: bool) {
    let special = |b: u8| b == b'\\' || b == b'\n' || (quotes && b == b'"');
    if !s.bytes().any(special) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'"' if quotes => out.extend_from_slice(b"\\\""),
            b => out.push(b),
        }
    }
}

/// Go's float syntax as Prometheus reads it: `NaN`, `+Inf`, `-Inf`, else the shortest decimal
/// (an integral value as its integer, which is the same text, written faster).
fn number_into(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"+Inf" } else { b"-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 1e15 && !(v == 0.0 && v.is_sign_negative()) {
        out.extend_from_slice(itoa::Buffer::new().format(v as i64).as_bytes());
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_families(format: Format) -> String {
        let mut f = Exposition::new(format, 0);
        f.family("x_state", "The state", Kind::Untyped);
        f.sample(&[("state", "a\"b\\c\nd")], 1.0);
        f.counter("x_requests_total", "Requests", 3.0);
        f.gauge("x_ratio", "", f64::NAN);
        f.gauge(["x_", "Big"], ["line\n", "break"], f64::INFINITY);
        String::from_utf8(f.finish()).expect("UTF-8")
    }

    #[test]
    fn text_format_0_0_4() {
        assert_eq!(
            sample_families(Format::Text),
            "# HELP x_state The state\n\
             # TYPE x_state untyped\n\
             x_state{state=\"a\\\"b\\\\c\\nd\"} 1\n\
             # HELP x_requests_total Requests\n\
             # TYPE x_requests_total counter\n\
             x_requests_total 3\n\
             # TYPE x_ratio gauge\n\
             x_ratio NaN\n\
             # HELP x_big line\\nbreak\n\
             # TYPE x_big gauge\n\
             x_big +Inf\n"
        );
    }

    #[test]
    fn openmetrics_names_counter_families_without_total_and_ends_with_eof() {
        let text = sample_families(Format::OpenMetrics);
        assert!(text.contains("# TYPE x_state unknown\n"), "{text}");
        assert!(
            text.contains("# TYPE x_requests counter\nx_requests_total 3\n"),
            "{text}"
        );
        assert!(text.ends_with("x_big +Inf\n# EOF\n"), "{text}");
    }

    #[test]
    fn numbers_read_as_the_shortest_decimal_integral_or_not() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -5.0,
            42.0,
            1e14,
            999_999_999_999_999.0,
            1e15,
            1e20,
            -1e16,
            0.5,
            -2.25,
            1.0 / 3.0,
            1e-7,
            123_456.789,
            f64::MAX,
            f64::MIN_POSITIVE,
        ];
        for v in values {
            let mut out = Vec::new();
            number_into(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string(), "{v:e}");
        }
    }

    #[test]
    fn the_accept_header_picks_the_format() {
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("text/plain")), Format::Text);
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
    }
}
