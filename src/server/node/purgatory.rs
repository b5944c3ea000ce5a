//! Replies parked until the records they depend on commit (Kafka's `DeferredEventQueue`). Every
//! controller request the active controller answers waits here: a decision with records for
//! its last record, one without for the highest record written before it (it read that
//! record). A reply leaves when the high watermark passes its offset in the epoch it was
//! parked in, or fails with `NOT_CONTROLLER` when that epoch's leadership is lost.

use std::collections::VecDeque;

use crate::raft::{Epoch, Offset};

/// The records a parked reply waited for were not committed by this leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeadershipLost;

/// What a parked reply does when it leaves.
pub type Release = Box<dyn FnOnce(Result<(), LeadershipLost>) + Send>;

struct Parked {
    /// Released once this offset is committed (-1: nothing to wait for).
    offset: Offset,
    epoch: Epoch,
    release: Release,
}

#[derive(Default)]
pub struct Purgatory {
    /// Invariant: offsets never decrease from front to back within one epoch.
    parked: VecDeque<Parked>,
}

impl Purgatory {
    pub fn park(&mut self, offset: Offset, epoch: Epoch, release: Release) {
        self.parked.push_back(Parked {
            offset,
            epoch,
            release,
        });
    }

    pub fn len(&self) -> usize {
        self.parked.len()
    }

    /// Releases every reply whose offset is below `high_watermark` while `leading` is its
    /// epoch; fails those of any other epoch.
    pub fn release(&mut self, high_watermark: Option<Offset>, leading: Option<Epoch>) {
        let hw = high_watermark.unwrap_or(-1);
        while let Some(front) = self.parked.front() {
            let outcome = if leading != Some(front.epoch) {
                Err(LeadershipLost)
            } else if front.offset < hw {
                Ok(())
            } else {
                break;
            };
            let parked = self.parked.pop_front().expect("front");
            (parked.release)(outcome);
        }
    }

    /// Fails every parked reply (the leadership they were parked under is lost).
    pub fn fail_all(&mut self) {
        for parked in self.parked.drain(..) {
            (parked.release)(Err(LeadershipLost));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn recorder() -> (Arc<Mutex<Vec<String>>>, impl Fn(&str) -> Release) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        let make = move |name: &str| -> Release {
            let (l, name) = (l.clone(), name.to_string());
            Box::new(move |r| {
                l.lock()
                    .unwrap()
                    .push(format!("{name}: {}", if r.is_ok() { "ok" } else { "lost" }))
            })
        };
        (log, make)
    }

    #[test]
    fn replies_leave_in_order_once_their_offset_commits_and_fail_when_leadership_is_lost() {
        let (log, reply) = recorder();
        let mut p = Purgatory::default();
        p.park(-1, 3, reply("read before anything was written"));
        p.park(10, 3, reply("registration at 10"));
        p.park(12, 3, reply("heartbeat at 12"));
        p.release(Some(0), Some(3));
        p.release(Some(11), Some(3));
        assert_eq!(p.len(), 1);
        p.release(Some(11), Some(4));
        assert_eq!(
            *log.lock().unwrap(),
            [
                "read before anything was written: ok",
                "registration at 10: ok",
                "heartbeat at 12: lost"
            ]
        );
        p.park(20, 4, reply("after a new election"));
        p.fail_all();
        assert_eq!(
            log.lock().unwrap().last().unwrap(),
            "after a new election: lost"
        );
        assert_eq!(p.len(), 0);
    }
}
