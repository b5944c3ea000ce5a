//! What the probes read of the node loop without asking it (a stuck loop answers nothing):
//! whether it runs, since when its current turn has been busy, and what it last saw of the
//! quorum. The loop writes it every turn; the HTTP tasks read it.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

/// Shared between the node loop (writer) and the probes (readers).
#[derive(Debug)]
pub struct LoopHealth {
    /// The loop thread runs (false once it returned, halted or panicked).
    running: AtomicBool,
    /// When the current turn began, in ms since `origin` plus one; 0 while the loop waits for
    /// an event.
    busy_since: AtomicU64,
    origin: std::time::Instant,
    /// The leader this node knows, -1 when none.
    leader: AtomicI32,
    /// The node leads, or follows and fetched from the leader within the fetch timeout.
    caught_up: AtomicBool,
}

impl Default for LoopHealth {
    fn default() -> Self {
        LoopHealth {
            running: AtomicBool::new(true),
            busy_since: AtomicU64::new(0),
            origin: std::time::Instant::now(),
            leader: AtomicI32::new(-1),
            caught_up: AtomicBool::new(false),
        }
    }
}

/// The loop's state as a probe reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopState {
    pub running: bool,
    /// How long the current turn has been busy (`None`: the loop waits for an event).
    pub busy_for_ms: Option<u64>,
    pub leader: Option<i32>,
    pub caught_up: bool,
}

impl LoopHealth {
    fn elapsed_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    pub fn turn_started(&self) {
        self.busy_since
            .store(self.elapsed_ms() + 1, Ordering::Relaxed);
    }

    /// The turn ended, with what the loop now knows of the quorum.
    pub fn turn_ended(&self, leader: i32, caught_up: bool) {
        self.leader.store(leader, Ordering::Relaxed);
        self.caught_up.store(caught_up, Ordering::Relaxed);
        self.busy_since.store(0, Ordering::Relaxed);
    }

    pub fn stopped(&self) {
        self.running.store(false, Ordering::Relaxed);
    }

    pub fn state(&self) -> LoopState {
        let busy = self.busy_since.load(Ordering::Relaxed);
        let leader = self.leader.load(Ordering::Relaxed);
        LoopState {
            running: self.running.load(Ordering::Relaxed),
            busy_for_ms: (busy != 0).then(|| (self.elapsed_ms() + 1).saturating_sub(busy)),
            leader: (leader >= 0).then_some(leader),
            caught_up: self.caught_up.load(Ordering::Relaxed),
        }
    }
}

/// Marks the loop stopped when dropped: on return, halt or panic of the loop thread alike.
pub struct StoppedOnDrop(pub std::sync::Arc<LoopHealth>);

impl Drop for StoppedOnDrop {
    fn drop(&mut self) {
        self.0.stopped();
    }
}
