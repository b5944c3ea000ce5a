//! The exposition formats, written here over kraftd's families (families.rs): the `prometheus`
//! crate's own text encoder panics on an untyped family (`unimplemented!`), which raft-metrics'
//! current-state is under the JMX exporter's rules, and it has no OpenMetrics encoder.
//!
//! * Prometheus text format 0.0.4, as the JMX exporter writes it: `# HELP`, `# TYPE` (`gauge`,
//!   `counter`, `untyped`), the samples; NaN as `NaN`.
//! * OpenMetrics 1.0.0, when a scraper asks for it: a counter family is named without its
//!   `_total` (its samples keep it), untyped is `unknown`, and the text ends with `# EOF`.

use std::fmt::Write;

use super::families::{escape_into, Family, Kind, Sample, Samples, Value};

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

/// Bytes a sample line takes, about: what the text is reserved at up front, so that a scrape
/// of a thousand brokers' gauges grows it once, not a dozen times.
const LINE_BYTES: usize = 96;

pub fn encode(families: &[Family], format: Format) -> String {
    let lines: usize = families.iter().map(|f| f.samples.len() + 2).sum();
    let mut out = String::with_capacity(lines * LINE_BYTES);
    for f in families {
        let name = f.name.as_str();
        let family_name = match (format, f.kind) {
            (Format::OpenMetrics, Kind::Counter) => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let type_name = match (f.kind, format) {
            (Kind::Counter, _) => "counter",
            (Kind::Gauge, _) => "gauge",
            (Kind::Untyped, Format::Text) => "untyped",
            (Kind::Untyped, Format::OpenMetrics) => "unknown",
            (Kind::Histogram, _) => "histogram",
        };
        if !f.help.is_empty() {
            out.push_str("# HELP ");
            out.push_str(family_name);
            out.push(' ');
            escape_into(&mut out, &f.help, false);
            out.push('\n');
        }
        for part in ["# TYPE ", family_name, " ", type_name, "\n"] {
            out.push_str(part);
        }
        match &f.samples {
            Samples::Labelled(samples) => {
                for sample in samples {
                    sample_lines(&mut out, f, format, sample);
                }
            }
            Samples::Keyed { label, values } => {
                let mut digits = itoa::Buffer::new();
                for (key, value) in values {
                    let key = digits.format(*key);
                    for part in [name, "{", label, "=\"", key, "\"} "] {
                        out.push_str(part);
                    }
                    number_into(&mut out, *value);
                    out.push('\n');
                }
            }
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// One labelled sample's line (a histogram's lines).
fn sample_lines(out: &mut String, f: &Family, format: Format, sample: &Sample) {
    let name = f.name.as_str();
    match &sample.value {
        Value::Histogram {
            buckets,
            count,
            sum,
        } => histogram_lines(out, name, buckets, *count, *sum),
        Value::Number(value) => {
            out.push_str(name);
            // OpenMetrics: a counter's samples end in `_total`.
            if format == Format::OpenMetrics && f.kind == Kind::Counter && !name.ends_with("_total")
            {
                out.push_str("_total");
            }
            out.push_str(&sample.labels);
            out.push(' ');
            number_into(out, *value);
            out.push('\n');
        }
    }
}

/// A histogram's `_bucket` lines (cumulative, `+Inf` last), `_sum` and `_count`.
fn histogram_lines(out: &mut String, name: &str, buckets: &[(f64, u64)], count: u64, sum: f64) {
    for (bound, n) in buckets {
        let _ = write!(out, "{name}_bucket{{le=\"");
        number_into(out, *bound);
        let _ = writeln!(out, "\"}} {n}");
    }
    let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
    let _ = write!(out, "{name}_sum ");
    number_into(out, sum);
    let _ = writeln!(out, "\n{name}_count {count}");
}

/// Go's float syntax as Prometheus reads it: `NaN`, `+Inf`, `-Inf`, else the shortest decimal
/// (an integral value as its integer, which is the same text, written faster).
fn number_into(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 1e15 && !(v == 0.0 && v.is_sign_negative()) {
        out.push_str(itoa::Buffer::new().format(v as i64));
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::metrics::families::Families;

    fn sample_families() -> Vec<Family> {
        let mut f = Families::default();
        f.untyped("x_state", "The state", &[("state", "a\"b\\c\nd")], 1.0);
        f.counter("x_requests_total", "Requests", 3.0);
        f.gauge("x_ratio", "", f64::NAN);
        f.gauge("x_big", "line\nbreak", f64::INFINITY);
        f.0
    }

    #[test]
    fn text_format_0_0_4() {
        assert_eq!(
            encode(&sample_families(), Format::Text),
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
        let text = encode(&sample_families(), Format::OpenMetrics);
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
            let mut out = String::new();
            number_into(&mut out, v);
            assert_eq!(out, v.to_string(), "{v:e}");
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
