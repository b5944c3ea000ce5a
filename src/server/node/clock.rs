//! The node's clock: wall-clock milliseconds (batch timestamps and DescribeQuorum times are
//! wall-clock in Kafka) that never go back, because they advance with the monotonic clock.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::raft::Instant;

pub struct NodeClock {
    wall_at_start_ms: u64,
    start: std::time::Instant,
}

impl NodeClock {
    pub fn new() -> NodeClock {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        NodeClock {
            wall_at_start_ms: wall,
            start: std::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Instant {
        Instant(self.wall_at_start_ms + self.start.elapsed().as_millis() as u64)
    }

    /// How long from now until `deadline` (`None`: never).
    pub fn until(&self, deadline: Instant) -> Option<Duration> {
        if deadline == Instant::NEVER {
            return None;
        }
        Some(Duration::from_millis(
            deadline.0.saturating_sub(self.now().0),
        ))
    }
}

impl Default for NodeClock {
    fn default() -> Self {
        Self::new()
    }
}
