//! The exposition formats, written here over the `prometheus` crate's data model: its own text
//! encoder panics on an untyped family (`unimplemented!`), which raft-metrics' current-state is
//! under the JMX exporter's rules, and it has no OpenMetrics encoder.
//!
//! * Prometheus text format 0.0.4, as the JMX exporter writes it: `# HELP`, `# TYPE` (`gauge`,
//!   `counter`, `untyped`), the samples; NaN as `NaN`.
//! * OpenMetrics 1.0.0, when a scraper asks for it: a counter family is named without its
//!   `_total` (its samples keep it), untyped is `unknown`, and the text ends with `# EOF`.

use std::fmt::Write;

use prometheus::proto::{LabelPair, Metric, MetricFamily, MetricType};

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

pub fn encode(families: &[MetricFamily], format: Format) -> String {
    let mut out = String::new();
    for f in families {
        let kind = f.get_field_type();
        let name = f.name();
        let family_name = match (format, kind) {
            (Format::OpenMetrics, MetricType::COUNTER) => {
                name.strip_suffix("_total").unwrap_or(name)
            }
            _ => name,
        };
        let type_name = match (kind, format) {
            (MetricType::COUNTER, _) => "counter",
            (MetricType::GAUGE, _) => "gauge",
            (MetricType::UNTYPED, Format::Text) => "untyped",
            (MetricType::UNTYPED, Format::OpenMetrics) => "unknown",
            (MetricType::HISTOGRAM, _) => "histogram",
            // Not built by kraftd (the process collector makes counters and gauges only).
            (MetricType::SUMMARY, _) => continue,
        };
        if !f.help().is_empty() {
            let _ = writeln!(out, "# HELP {family_name} {}", escape(f.help(), false));
        }
        let _ = writeln!(out, "# TYPE {family_name} {type_name}");
        for m in f.get_metric() {
            if kind == MetricType::HISTOGRAM {
                histogram_lines(&mut out, name, m);
                continue;
            }
            let value = match kind {
                MetricType::COUNTER => m.get_counter().get_value(),
                MetricType::GAUGE => m.get_gauge().get_value(),
                _ => untyped_value(m),
            };
            let sample = match (format, kind) {
                (Format::OpenMetrics, MetricType::COUNTER) => format!("{family_name}_total"),
                _ => name.to_string(),
            };
            let _ = writeln!(out, "{sample}{} {}", labels(m.get_label()), number(value));
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// A histogram's `_bucket` lines (cumulative, `+Inf` last), `_sum` and `_count`.
fn histogram_lines(out: &mut String, name: &str, m: &Metric) {
    let h = m.get_histogram();
    for b in h.get_bucket() {
        let _ = writeln!(
            out,
            "{name}_bucket{{le=\"{}\"}} {}",
            number(b.upper_bound()),
            b.cumulative_count()
        );
    }
    let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", h.get_sample_count());
    let _ = writeln!(out, "{name}_sum {}", number(h.get_sample_sum()));
    let _ = writeln!(out, "{name}_count {}", h.get_sample_count());
}

#[allow(deprecated)] // the plain model's untyped accessors (see families.rs)
fn untyped_value(m: &Metric) -> f64 {
    m.get_untyped().get_value()
}

fn labels(pairs: &[LabelPair]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs
        .iter()
        .map(|l| format!("{}=\"{}\"", l.name(), escape(l.value(), true)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// `\` and newlines escaped, and `"` in label values.
fn escape(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quotes => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

/// Go's float syntax as Prometheus reads it: `NaN`, `+Inf`, `-Inf`, else the shortest decimal.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::metrics::families::Families;

    fn sample_families() -> Vec<MetricFamily> {
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
    fn the_accept_header_picks_the_format() {
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("text/plain")), Format::Text);
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
    }
}
