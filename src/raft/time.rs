//! Time and randomness as values: a millisecond `Instant` the caller passes in, and the source
//! of random choices the config names (a seeded generator, or fixed choices for scripted
//! tests). The core never reads a clock or an ambient RNG.

use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

/// A point on the caller's monotonic clock, in milliseconds from an arbitrary origin. The node
/// loop maps `std::time::Instant` onto it; tests use a manual clock starting at 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(pub u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    /// Effectively "never" (Kafka's `Long.MAX_VALUE` timers).
    pub const NEVER: Instant = Instant(u64::MAX);

    pub fn millis(self) -> u64 {
        self.0
    }
    /// Milliseconds since `earlier`, 0 if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
    pub fn plus_millis(self, ms: u64) -> Instant {
        Instant(self.0.saturating_add(ms))
    }
    /// Milliseconds as Kafka's wire timestamps carry them.
    pub fn as_i64(self) -> i64 {
        i64::try_from(self.0).unwrap_or(i64::MAX)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        self.plus_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        Duration::from_millis(self.saturating_since(earlier))
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Instant::NEVER {
            write!(f, "never")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A small deterministic generator (SplitMix64). Owned by the core and seeded from the config,
/// so the same seed always gives the same timers (Kafka injects a `java.util.Random` likewise).
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, bound)`; 0 when `bound` is 0 (Java's `nextInt` would throw).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            0
        } else {
            // Multiply-shift: unbiased enough for timers, exact determinism is what matters.
            ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
        }
    }
    /// True with probability `p` (clamped to [0, 1]).
    pub fn chance(&mut self, p: f64) -> bool {
        let p = p.clamp(0.0, 1.0);
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len() as u64) as usize])
        }
    }
}

/// Where the core's random choices come from (`RaftConfig::randomness`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Randomness {
    /// A `Rng` with this seed: production and the randomized simulation.
    Seeded(u64),
    /// No draws at all, for scripted transcripts: every election timeout is `T + jitter`
    /// (capped below `2T`, as a draw would be), and a choice among candidates takes them in
    /// turn. A script then reads the same whatever a generator would have drawn.
    Fixed { election_jitter: Duration },
}

/// The core's source of random choices, built from `Randomness`.
#[derive(Debug, Clone)]
pub(crate) enum Chooser {
    Seeded(Rng),
    Fixed { election_jitter_ms: u64, turn: u64 },
}

impl Chooser {
    pub(crate) fn new(randomness: &Randomness) -> Self {
        match randomness {
            Randomness::Seeded(seed) => Chooser::Seeded(Rng::new(*seed)),
            Randomness::Fixed { election_jitter } => Chooser::Fixed {
                election_jitter_ms: ms(*election_jitter),
                turn: 0,
            },
        }
    }

    /// Kafka's `QuorumState.randomElectionTimeoutMs`: `T + rand[0, T)`, or 0 when T is 0.
    pub(crate) fn election_timeout(&mut self, base: Duration) -> u64 {
        let t = ms(base);
        if t == 0 {
            return 0;
        }
        match self {
            Chooser::Seeded(rng) => t + rng.below(t),
            Chooser::Fixed {
                election_jitter_ms, ..
            } => t + (*election_jitter_ms).min(t - 1),
        }
    }

    /// A fair coin for a prospective that may contest a pre-vote (`early_election.rs`). Fixed
    /// timing never contests: scripts then read as Kafka behaves.
    pub(crate) fn contest(&mut self) -> bool {
        match self {
            Chooser::Seeded(rng) => rng.chance(0.5),
            Chooser::Fixed { .. } => false,
        }
    }

    /// One of `items` (Kafka: a random ready bootstrap server).
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        match self {
            Chooser::Seeded(rng) => rng.pick(items),
            Chooser::Fixed { turn, .. } if !items.is_empty() => {
                let i = (*turn % items.len() as u64) as usize;
                *turn += 1;
                Some(&items[i])
            }
            Chooser::Fixed { .. } => None,
        }
    }
}

/// Kafka's `strictExponentialElectionBackoffMs(position, n)` (EndQuorumEpoch): 0 for the first
/// preferred successor, `max` when absent or out of range, else `min(max, (max >> (n-1)) <<
/// (position-1))`.
pub(crate) fn strict_exponential_backoff(max: Duration, position: Option<usize>, n: usize) -> u64 {
    let max = ms(max);
    match position {
        Some(0) => 0,
        Some(p) if p < n => {
            let base = max >> (n - 1).min(63);
            max.min(base.checked_shl((p - 1) as u32).unwrap_or(u64::MAX))
        }
        _ => max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_bounded() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..1000 {
            let x = a.below(7);
            assert_eq!(x, b.below(7));
            assert!(x < 7);
        }
        assert_eq!(a.below(0), 0);
    }

    #[test]
    fn election_timeout_is_in_t_to_2t() {
        let mut r = Chooser::new(&Randomness::Seeded(1));
        for _ in 0..1000 {
            let t = r.election_timeout(Duration::from_millis(1000));
            assert!((1000..2000).contains(&t), "{t}");
        }
        assert_eq!(r.election_timeout(Duration::ZERO), 0);
    }

    #[test]
    fn a_seeded_chooser_draws_as_the_generator_does() {
        let (mut rng, mut chooser) = (Rng::new(9), Chooser::new(&Randomness::Seeded(9)));
        let t = Duration::from_millis(1000);
        for _ in 0..100 {
            assert_eq!(chooser.election_timeout(t), 1000 + rng.below(1000));
            assert_eq!(chooser.pick(&[1, 2, 3]), rng.pick(&[1, 2, 3]));
        }
    }

    #[test]
    fn fixed_choices_need_no_generator() {
        let jitter = Duration::from_millis(400);
        let mut c = Chooser::new(&Randomness::Fixed {
            election_jitter: jitter,
        });
        assert_eq!(c.election_timeout(Duration::from_millis(1000)), 1400);
        assert_eq!(
            c.election_timeout(Duration::from_millis(300)),
            599,
            "below 2T"
        );
        assert_eq!(c.election_timeout(Duration::ZERO), 0);
        let picks: Vec<i32> = (0..4).map(|_| *c.pick(&[7, 8, 9]).unwrap()).collect();
        assert_eq!(picks, [7, 8, 9, 7], "in turn");
        assert_eq!(c.pick::<i32>(&[]), None);
    }

    #[test]
    fn strict_exponential_backoff_matches_kafka() {
        let max = Duration::from_millis(1000);
        // 3 successors: base = 1000 >> 2 = 250.
        assert_eq!(strict_exponential_backoff(max, Some(0), 3), 0);
        assert_eq!(strict_exponential_backoff(max, Some(1), 3), 250);
        assert_eq!(strict_exponential_backoff(max, Some(2), 3), 500);
        assert_eq!(strict_exponential_backoff(max, Some(3), 3), 1000);
        assert_eq!(strict_exponential_backoff(max, None, 3), 1000);
    }
}
