//! How long the log's fsyncs take: a histogram of whole flushes (every dirty segment synced),
//! for `kraftd_log_fsync_duration_seconds` and the doctor's "is the disk the cause" question.

use std::time::Duration;

/// Upper bounds, in seconds, of the histogram's buckets (from 0.1 ms, a fast SSD's flush, to
/// 2.5 s, a disk in trouble).
pub const FSYNC_BUCKETS_S: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Flush durations, bucketed. Invariant: `count` is the sum of `buckets` and `above`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FsyncLatency {
    /// Flushes per bucket of [`FSYNC_BUCKETS_S`] (each in its lowest bucket only).
    pub buckets: [u64; FSYNC_BUCKETS_S.len()],
    /// Flushes slower than the last bound.
    pub above: u64,
    pub count: u64,
    pub sum_seconds: f64,
}

impl FsyncLatency {
    pub fn observe(&mut self, took: Duration) {
        let s = took.as_secs_f64();
        match FSYNC_BUCKETS_S.iter().position(|&bound| s <= bound) {
            Some(i) => self.buckets[i] += 1,
            None => self.above += 1,
        }
        self.count += 1;
        self.sum_seconds += s;
        debug_assert_eq!(self.count, self.buckets.iter().sum::<u64>() + self.above);
    }

    /// (upper bound, flushes at or below it), as a Prometheus histogram's `le` buckets.
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut total = 0;
        FSYNC_BUCKETS_S
            .iter()
            .zip(self.buckets)
            .map(|(&bound, n)| {
                total += n;
                (bound, total)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushes_land_in_their_lowest_bucket_and_add_up() {
        let mut h = FsyncLatency::default();
        h.observe(Duration::from_micros(80));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(3));
        assert_eq!(h.count, 3);
        assert_eq!(h.above, 1);
        let c = h.cumulative();
        assert_eq!(c[0], (0.0001, 1));
        assert_eq!(c[5], (0.005, 2));
        assert_eq!(c.last().copied(), Some((2.5, 2)));
        assert!((h.sum_seconds - 3.00308).abs() < 1e-9);
    }
}
