//! The statistics behind Kafka's sensors and Yammer histograms, with time as an argument:
//!
//! * [`Window`]: Kafka's `SampledStat` as `org.apache.kafka.common.metrics` keeps it by default
//!   (`metrics.num.samples` 2 of `metrics.sample.window.ms` 30 s): `Avg`, `Max` and `Rate` over
//!   the samples not yet expired. An empty window's avg and max are NaN, as Java's are.
//! * [`Reservoir`]: the last values of a Yammer histogram (its default reservoir keeps 1028),
//!   for the percentiles the JMX exporter reads (`50thPercentile` … `999thPercentile`).

/// Kafka's defaults: `metrics.num.samples` and `metrics.sample.window.ms`.
pub const SAMPLES: usize = 2;
pub const SAMPLE_WINDOW_MS: u64 = 30_000;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sample {
    start_ms: u64,
    count: u64,
    sum: f64,
    max: f64,
}

/// Values recorded over time, summarized over the last `SAMPLES` windows of
/// `SAMPLE_WINDOW_MS`.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    samples: [Sample; SAMPLES],
    current: usize,
    window_ms: u64,
}

impl Default for Window {
    fn default() -> Self {
        Window::new(SAMPLE_WINDOW_MS)
    }
}

impl Window {
    pub fn new(window_ms: u64) -> Window {
        Window {
            samples: [Sample::default(); SAMPLES],
            current: 0,
            window_ms,
        }
    }

    /// Records `value` at `now_ms` (Kafka's `Sensor.record(value, now)`).
    pub fn record(&mut self, value: f64, now_ms: u64) {
        let s = &self.samples[self.current];
        if s.count == 0 && s.start_ms == 0 {
            self.samples[self.current].start_ms = now_ms;
        } else if now_ms >= s.start_ms + self.window_ms {
            self.current = (self.current + 1) % SAMPLES;
            self.samples[self.current] = Sample {
                start_ms: now_ms,
                ..Sample::default()
            };
        }
        let s = &mut self.samples[self.current];
        s.max = if s.count == 0 {
            value
        } else {
            s.max.max(value)
        };
        s.count += 1;
        s.sum += value;
    }

    /// The samples not expired at `now_ms` (Kafka purges a sample older than all windows).
    fn live(&self, now_ms: u64) -> impl Iterator<Item = &Sample> {
        let span = self.window_ms * SAMPLES as u64;
        self.samples
            .iter()
            .filter(move |s| s.count > 0 && now_ms < s.start_ms + span)
    }

    /// Kafka's `Avg`: NaN without a live sample.
    pub fn avg(&self, now_ms: u64) -> f64 {
        let (sum, count) = self
            .live(now_ms)
            .fold((0.0, 0u64), |(sum, n), s| (sum + s.sum, n + s.count));
        if count == 0 {
            f64::NAN
        } else {
            sum / count as f64
        }
    }

    /// Kafka's `Max`: NaN without a live sample.
    pub fn max(&self, now_ms: u64) -> f64 {
        self.live(now_ms)
            .map(|s| s.max)
            .fold(f64::NAN, |m, v| if m.is_nan() { v } else { m.max(v) })
    }

    /// Kafka's `Rate` (per second) of the recorded values' sum: over the time since the oldest
    /// live sample began, at least the span of all windows but the current one.
    pub fn rate(&self, now_ms: u64) -> f64 {
        let sum: f64 = self.live(now_ms).map(|s| s.sum).sum();
        let oldest = self
            .live(now_ms)
            .map(|s| s.start_ms)
            .min()
            .unwrap_or(now_ms);
        let elapsed = now_ms
            .saturating_sub(oldest)
            .max(self.window_ms * (SAMPLES as u64 - 1));
        sum / (elapsed as f64 / 1000.0)
    }
}

/// The percentiles the JMX exporter reads from a Yammer histogram, as `quantile` labels.
pub const QUANTILES: [(&str, f64); 6] = [
    ("0.50", 0.50),
    ("0.75", 0.75),
    ("0.95", 0.95),
    ("0.98", 0.98),
    ("0.99", 0.99),
    ("0.999", 0.999),
];

/// How many recent values a [`Reservoir`] keeps (Yammer's default reservoir size).
pub const RESERVOIR_SIZE: usize = 1028;

/// A histogram's count and its last `RESERVOIR_SIZE` values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reservoir {
    count: u64,
    values: Vec<f64>,
    next: usize,
}

impl Reservoir {
    pub fn record(&mut self, value: f64) {
        self.count += 1;
        if self.values.len() < RESERVOIR_SIZE {
            self.values.push(value);
        } else {
            self.values[self.next] = value;
            self.next = (self.next + 1) % RESERVOIR_SIZE;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Each of [`QUANTILES`], as Yammer's snapshot computes it (interpolated between the
    /// sorted values; 0 when empty).
    pub fn quantiles(&self) -> [f64; 6] {
        let mut sorted = self.values.clone();
        sorted.sort_by(f64::total_cmp);
        QUANTILES.map(|(_, q)| quantile(&sorted, q))
    }
}

/// Yammer's `UniformSnapshot.getValue`: position q·(n+1), interpolated.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = q * (sorted.len() + 1) as f64;
    if pos < 1.0 {
        return sorted[0];
    }
    if pos >= sorted.len() as f64 {
        return sorted[sorted.len() - 1];
    }
    let lower = sorted[pos as usize - 1];
    let upper = sorted[pos as usize];
    lower + (pos - pos.floor()) * (upper - lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_window_is_nan_and_a_zero_rate() {
        let w = Window::default();
        assert!(w.avg(1000).is_nan());
        assert!(w.max(1000).is_nan());
        assert_eq!(w.rate(1000), 0.0);
    }

    #[test]
    fn avg_max_and_rate_over_the_live_samples() {
        let mut w = Window::default();
        w.record(10.0, 1_000);
        w.record(30.0, 2_000);
        assert_eq!(w.avg(3_000), 20.0);
        assert_eq!(w.max(3_000), 30.0);
        // 40 over at least one window (30 s).
        assert!((w.rate(3_000) - 40.0 / 30.0).abs() < 1e-9);
        // A second window; then both expire.
        w.record(2.0, 31_500);
        assert_eq!(w.max(40_000), 30.0);
        assert!((w.avg(40_000) - 14.0).abs() < 1e-9);
        assert_eq!(w.max(62_000), 2.0, "the first sample expired at 61 s");
        assert!(w.avg(100_000).is_nan());
    }

    #[test]
    fn quantiles_interpolate_as_yammer_does() {
        let mut r = Reservoir::default();
        assert_eq!(r.quantiles(), [0.0; 6]);
        for v in 1..=10 {
            r.record(v as f64);
        }
        assert_eq!(r.count(), 10);
        let q = r.quantiles();
        assert_eq!(q[0], 5.5);
        assert_eq!(q[1], 8.25);
        assert_eq!(q[5], 10.0);
        for v in 0..2000 {
            r.record(v as f64);
        }
        assert_eq!(r.count(), 2010);
        assert_eq!(r.values.len(), RESERVOIR_SIZE);
    }
}
