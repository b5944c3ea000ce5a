//! Latency percentiles, and a process's CPU time and memory as Linux's /proc reports them.

use std::collections::BTreeMap;
use std::time::Duration;

use kraftd::server::metrics::process::{
    clock_ticks_per_second, cpu_time, stat_field, STIME, UTIME,
};
use serde_json::{json, Value};

/// Round-trip times in microseconds.
#[derive(Debug, Default, Clone)]
pub struct Latencies(pub Vec<u32>);

impl Latencies {
    pub fn record(&mut self, d: Duration) {
        self.0.push(d.as_micros().min(u32::MAX as u128) as u32);
    }

    pub fn extend(&mut self, other: Latencies) {
        self.0.extend(other.0);
    }

    pub fn summary(&self) -> LatencySummary {
        let mut v = self.0.clone();
        v.sort_unstable();
        // The nearest-rank percentile: the smallest sample at or above p of all samples.
        let at = |p: f64| -> f64 {
            if v.is_empty() {
                return f64::NAN;
            }
            let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[rank - 1] as f64 / 1000.0
        };
        LatencySummary {
            count: v.len(),
            p50_ms: at(0.50),
            p99_ms: at(0.99),
            p999_ms: at(0.999),
            max_ms: at(1.0),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct LatencySummary {
    pub count: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

impl LatencySummary {
    pub fn json(&self) -> Value {
        json!({
            "count": self.count,
            "p50_ms": finite(self.p50_ms),
            "p99_ms": finite(self.p99_ms),
            "p999_ms": finite(self.p999_ms),
            "max_ms": finite(self.max_ms),
        })
    }

    pub fn line(&self) -> String {
        format!(
            "{} samples, p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
            self.count, self.p50_ms, self.p99_ms, self.p999_ms, self.max_ms
        )
    }
}

/// Errors counted by kind, and the first few in full.
#[derive(Debug, Clone, Default)]
pub struct ErrorTally {
    pub by_kind: BTreeMap<String, u64>,
    pub first: Vec<String>,
}

impl ErrorTally {
    /// How many errors are kept in full.
    const KEPT: usize = 10;

    pub fn add(&mut self, kind: &str, why: String) {
        *self.by_kind.entry(kind.to_string()).or_insert(0) += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(why);
        }
    }

    pub fn merge(&mut self, other: ErrorTally) {
        for (kind, n) in other.by_kind {
            *self.by_kind.entry(kind).or_insert(0) += n;
        }
        let room = Self::KEPT.saturating_sub(self.first.len());
        self.first.extend(other.first.into_iter().take(room));
    }

    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    pub fn json(&self) -> Value {
        json!({"total": self.by_kind.values().sum::<u64>(), "by_kind": self.by_kind, "first": self.first})
    }
}

/// NaN and infinities as JSON null.
pub fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// A process's CPU time so far and its memory, from its CPU clock (or /proc/<pid>/stat) and
/// /proc/<pid>/status.
#[derive(Debug, Clone, Copy)]
pub struct ProcessSample {
    /// User plus system time, in nanoseconds where the process's CPU clock can be read (stat's
    /// ticks are 10 ms: a 5 s phase of a controller at 24 ms/s would be known to 8 % only).
    pub cpu: Duration,
    pub rss_kib: u64,
    /// The peak resident set size (VmHWM).
    pub peak_rss_kib: u64,
}

impl ProcessSample {
    /// `None` if the process is gone or /proc says something unexpected.
    pub fn read(pid: u32) -> Option<ProcessSample> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let ticks = stat_field(&stat, UTIME)? + stat_field(&stat, STIME)?;
        let ticked = Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second() as f64);
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kib = |key: &str| -> Option<u64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        };
        Some(ProcessSample {
            // A process whose clock cannot be read cannot from one sample to the next either.
            cpu: cpu_time(Some(pid)).unwrap_or(ticked),
            rss_kib: kib("VmRSS:")?,
            peak_rss_kib: kib("VmHWM:")?,
        })
    }

    /// CPU time spent between `earlier` and this sample.
    pub fn cpu_since(&self, earlier: &ProcessSample) -> Duration {
        self.cpu.saturating_sub(earlier.cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_clock_is_read_and_agrees_with_stat() {
        use std::time::Instant;
        let spun = Instant::now();
        while spun.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(spun.elapsed());
        }
        let pid = std::process::id();
        let clock = cpu_time(Some(pid)).expect("this process's CPU clock");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        let ticks = stat_field(&stat, UTIME).unwrap() + stat_field(&stat, STIME).unwrap();
        let ticked = Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second() as f64);
        assert!(clock >= Duration::from_millis(50), "{clock:?}");
        // Other tests' threads run between the two reads: agree to a few ticks.
        let apart = clock.abs_diff(ticked);
        assert!(
            apart < Duration::from_millis(100),
            "{clock:?} vs {ticked:?}"
        );
        assert_eq!(ProcessSample::read(pid).map(|s| s.cpu >= clock), Some(true));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let l = Latencies((1..=1000).map(|ms| ms * 1000).collect());
        let s = l.summary();
        assert_eq!(
            (s.count, s.p50_ms, s.p99_ms, s.max_ms),
            (1000, 500.0, 990.0, 1000.0)
        );
        assert!(Latencies::default().summary().p99_ms.is_nan());
    }

    #[test]
    fn this_process_has_a_sample() {
        let s = ProcessSample::read(std::process::id()).expect("/proc/self");
        assert!(s.rss_kib > 0 && s.peak_rss_kib >= s.rss_kib, "{s:?}");
    }
}
