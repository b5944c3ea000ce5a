//! Kafka-style log lines on stderr:
//!
//! ```text
//! [2026-11-29 07:50:11,123] INFO [RaftManager id=1] Completed transition to Leader (kraftd::raft)
//! ```
//!
//! i.e. `[timestamp] LEVEL [Component id=N] message fields (target)`, like Kafka's
//! `[%d] %p %m (%c)` with its component prefixes, so runbooks that grep Kafka logs keep working.
//! Timestamps are UTC (Kafka prints local time; UTC avoids a time-zone dependency).
//!
//! # Component prefixes
//!
//! Any span with a `component` field (and optionally `id`) prefixes every event inside it.
//! No dependency on this module is needed, so `raft` and `controller` can use it too:
//!
//! ```
//! // The span is created at ERROR level so that it exists whatever the log level is.
//! let span = tracing::error_span!("component", component = "RaftManager", id = 1);
//! let _guard = span.enter();
//! tracing::info!("Completed transition to Leader"); // -> "INFO [RaftManager id=1] Completed ..."
//! ```
//!
//! or, from the server module, [`component_span`]`("QuorumController", Some(1))`. Where Kafka's
//! prefix has another shape, put all of it in `component` and leave out `id`, e.g.
//! `component = "SocketServer listenerType=CONTROLLER, nodeId=1"` or `"KafkaRaftServer nodeId=1"`.
//! The innermost component span wins. Spans without a `component` field add nothing.

use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, Layer};

/// A span that gives events inside it the prefix `[name id=N]` (or `[name]`).
pub fn component_span(name: &'static str, id: Option<i32>) -> tracing::Span {
    match id {
        Some(id) => tracing::error_span!("component", component = name, id = id),
        None => tracing::error_span!("component", component = name),
    }
}

/// Installs the global subscriber. `level` (from `--log-level`) wins when given; otherwise
/// `RUST_LOG` is used if set (full `EnvFilter` syntax), else `info`. Safe to call twice.
pub fn init(level: Option<&str>) {
    let filter = match (level, std::env::var("RUST_LOG")) {
        (Some(level), _) => EnvFilter::new(level),
        (None, Ok(spec)) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new("info"),
    };
    let _ = tracing::subscriber::set_global_default(subscriber(filter, std::io::stderr));
}

/// The full subscriber, with any writer (tests capture into a buffer).
pub fn subscriber<W>(filter: EnvFilter, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(writer)
        .event_format(KafkaFormat);
    tracing_subscriber::registry()
        .with(ComponentLayer)
        .with(fmt)
        .with(filter)
}

/// The `[Component id=N]` text stored on a span by [`ComponentLayer`].
struct Prefix {
    component: String,
    id: Option<String>,
}

#[derive(Default)]
struct PrefixVisitor {
    component: Option<String>,
    id: Option<String>,
}

impl Visit for PrefixVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "component" => self.component = Some(value.to_owned()),
            "id" => self.id = Some(value.to_owned()),
            _ => {}
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "component" => self.component = Some(format!("{value:?}").trim_matches('"').to_owned()),
            "id" => self.id = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

/// Remembers each span's component fields so the formatter need not re-parse them.
struct ComponentLayer;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for ComponentLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut v = PrefixVisitor::default();
        attrs.record(&mut v);
        if let (Some(component), Some(span)) = (v.component, ctx.span(id)) {
            span.extensions_mut().insert(Prefix {
                component,
                id: v.id,
            });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let mut v = PrefixVisitor::default();
        values.record(&mut v);
        let Some(span) = ctx.span(id) else { return };
        let mut ext = span.extensions_mut();
        if let Some(p) = ext.get_mut::<Prefix>() {
            if let Some(c) = v.component {
                p.component = c;
            }
            if v.id.is_some() {
                p.id = v.id;
            }
        }
    }
}

/// Formats one event as a Kafka-like line.
struct KafkaFormat;

impl<S, N> FormatEvent<S, N> for KafkaFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        write!(w, "[{}] {} ", timestamp(SystemTime::now()), meta.level())?;
        if let Some(scope) = ctx.event_scope() {
            // Innermost first: the first span carrying a prefix wins.
            for span in scope {
                if let Some(p) = span.extensions().get::<Prefix>() {
                    match &p.id {
                        Some(id) => write!(w, "[{} id={id}] ", p.component)?,
                        None => write!(w, "[{}] ", p.component)?,
                    }
                    break;
                }
            }
        }
        ctx.format_fields(w.by_ref(), event)?;
        writeln!(w, " ({})", meta.target())
    }
}

/// `2026-11-29 07:50:11,123` (UTC) for a wall-clock time.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    let mut s = String::with_capacity(23);
    let _ = write!(
        s,
        "{y:04}-{m:02}-{day:02} {:02}:{:02}:{:02},{:03}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    );
    s
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar, using the
/// 400-year cycle (146097 days) with years starting in March so leap days fall at the end.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // shift the epoch to 0000-03-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153; // month index from March
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buf {
        type Writer = Buf;
        fn make_writer(&'a self) -> Buf {
            self.clone()
        }
    }

    fn capture(filter: &str, f: impl FnOnce()) -> Vec<String> {
        let buf = Buf::default();
        tracing::subscriber::with_default(subscriber(EnvFilter::new(filter), buf.clone()), f);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines().map(str::to_owned).collect()
    }

    /// Drops the timestamp, checking its shape.
    fn body(line: &str) -> &str {
        let b = line.as_bytes();
        assert_eq!((b[0], b[24], b[25]), (b'[', b']', b' '), "{line}");
        assert_eq!(
            (b[5], b[11], b[14], b[20]),
            (b'-', b' ', b':', b','),
            "{line}"
        );
        &line[26..]
    }

    #[test]
    fn kafka_like_lines_with_component_prefixes() {
        let lines = capture("info", || {
            tracing::info!(target: "kraftd::server", "plain");
            let _raft = component_span("RaftManager", Some(1)).entered();
            tracing::warn!(target: "kraftd::raft", epoch = 3, "became leader");
            {
                let _inner = tracing::error_span!("x", component = "QuorumController").entered();
                tracing::error!(target: "kraftd::controller", "boom");
            }
            let _other = tracing::info_span!("no_component", foo = 1).entered();
            tracing::debug!("filtered out");
            tracing::info!(target: "t", "still raft");
        });
        let bodies: Vec<&str> = lines.iter().map(|l| body(l)).collect();
        assert_eq!(
            bodies,
            [
                "INFO plain (kraftd::server)",
                "WARN [RaftManager id=1] became leader epoch=3 (kraftd::raft)",
                "ERROR [QuorumController] boom (kraftd::controller)",
                "INFO [RaftManager id=1] still raft (t)",
            ]
        );
    }

    #[test]
    fn prefix_survives_a_strict_level() {
        let lines = capture("error", || {
            let _s = component_span("SharedServer", Some(2)).entered();
            tracing::error!(target: "t", "fatal");
        });
        assert_eq!(body(&lines[0]), "ERROR [SharedServer id=2] fatal (t)");
    }

    #[test]
    fn timestamps() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01 00:00:00,000");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_938_611_123);
        assert_eq!(timestamp(t), "2026-11-29 07:50:11,123");
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29 00:00:00,000"
        );
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_secs(4_107_542_399)),
            "2100-02-28 23:59:59,000"
        );
    }
}
