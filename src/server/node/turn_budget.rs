//! How much one turn of the node loop takes from its channel before it steps the raft core:
//! appends have a budget of their own, so that a leader's batch (one fsync) holds the backlog.

use super::event::Event;

/// Events other than appends handled before the loop steps the core and carries out actions.
const MAX_EVENTS_PER_TURN: usize = 256;
/// Append events handled in one turn. Each goes to the core's accumulator, which (with a zero
/// linger) appends and fsyncs what it gathered as one batch at the core's next step (the turn's
/// tick, or an inbound request's): under the other events' cap a leader appended at most 256
/// records per fsync, whatever the backlog (W1's closed loop levelled off at 256 records per
/// fdatasync, ~70,000 records/s with 4 ms fdatasyncs). Kafka's accumulator takes every record
/// proposed while its raft thread was busy; this takes up to 16,384 of them (4 MiB of 256 B
/// records), and the other events' cap still bounds the turn.
const MAX_APPENDS_PER_TURN: usize = 16_384;

/// What one turn of the loop has taken from its channel so far.
#[derive(Debug, Default)]
pub(super) struct TurnBudget {
    events: usize,
    appends: usize,
}

impl TurnBudget {
    pub(super) fn count(&mut self, event: &Event) {
        match event {
            Event::Append { .. } => self.appends += 1,
            _ => self.events += 1,
        }
    }

    /// The turn has taken its share: time to step the core and carry out its actions.
    pub(super) fn spent(&self) -> bool {
        self.events >= MAX_EVENTS_PER_TURN || self.appends >= MAX_APPENDS_PER_TURN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    fn append() -> Event {
        Event::Append {
            records: vec![vec![0; 256]],
            reply: oneshot::channel().0,
        }
    }

    #[test]
    fn a_turn_takes_a_backlog_of_appends_beyond_the_other_events_cap() {
        let mut budget = TurnBudget::default();
        for _ in 0..MAX_EVENTS_PER_TURN * 4 {
            budget.count(&append());
        }
        assert!(
            !budget.spent(),
            "appends beyond 256 still join this turn's batch"
        );
        for _ in 0..MAX_APPENDS_PER_TURN {
            budget.count(&append());
        }
        assert!(budget.spent());
    }

    #[test]
    fn other_events_still_end_a_turn_after_256() {
        let mut budget = TurnBudget::default();
        budget.count(&append());
        for _ in 0..MAX_EVENTS_PER_TURN - 1 {
            budget.count(&Event::Shutdown);
            assert!(!budget.spent());
        }
        budget.count(&Event::Shutdown);
        assert!(budget.spent());
    }
}
