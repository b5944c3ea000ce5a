//! Outbound request bookkeeping (Kafka's `RequestManager`): at most one request in flight per
//! destination, a timeout for unanswered ones, a backoff after failed ones, and correlation ids
//! so that late responses from an earlier state are ignored.

use std::collections::BTreeMap;
use std::time::Duration;

use super::msg::{ApiKind, CorrelationId};
use super::time::Instant;
use super::types::NodeId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    /// One request in flight, forgotten at `deadline`.
    Awaiting {
        corr: CorrelationId,
        api: ApiKind,
        deadline: Instant,
    },
    /// The last response failed; READY again at `until`.
    BackingOff { until: Instant },
}

/// Per destination: READY (no entry), AWAITING_RESPONSE or BACKING_OFF.
#[derive(Debug, Clone)]
pub struct RequestManager {
    conns: BTreeMap<NodeId, Conn>,
    request_timeout: Duration,
    retry_backoff: Duration,
    next_corr: CorrelationId,
}

impl RequestManager {
    pub fn new(request_timeout: Duration, retry_backoff: Duration) -> Self {
        RequestManager {
            conns: BTreeMap::new(),
            request_timeout,
            retry_backoff,
            next_corr: 1,
        }
    }

    /// A request may be sent to `dest` now.
    pub fn is_ready(&self, dest: NodeId, now: Instant) -> bool {
        match self.conns.get(&dest) {
            None => true,
            Some(Conn::Awaiting { deadline, .. }) => now >= *deadline,
            Some(Conn::BackingOff { until }) => now >= *until,
        }
    }

    pub fn is_backing_off(&self, dest: NodeId, now: Instant) -> bool {
        matches!(self.conns.get(&dest), Some(Conn::BackingOff { until }) if now < *until)
    }

    /// The in-flight request to `dest` has gone unanswered past the request timeout.
    pub fn has_timed_out(&self, dest: NodeId, now: Instant) -> bool {
        matches!(self.conns.get(&dest), Some(Conn::Awaiting { deadline, .. }) if now >= *deadline)
    }

    /// Any request in flight anywhere (not yet timed out)?
    pub fn any_in_flight(&self, now: Instant) -> bool {
        self.conns
            .values()
            .any(|c| matches!(c, Conn::Awaiting { deadline, .. } if now < *deadline))
    }

    /// When `dest` becomes READY (`now` if it is).
    pub fn ready_at(&self, dest: NodeId, now: Instant) -> Instant {
        match self.conns.get(&dest) {
            None => now,
            Some(Conn::Awaiting { deadline, .. }) => (*deadline).max(now),
            Some(Conn::BackingOff { until }) => (*until).max(now),
        }
    }

    /// The earliest time any destination's state changes (for the next deadline).
    pub fn next_change(&self, now: Instant) -> Instant {
        self.conns
            .values()
            .map(|c| match c {
                Conn::Awaiting { deadline, .. } => *deadline,
                Conn::BackingOff { until } => *until,
            })
            .filter(|t| *t > now)
            .min()
            .unwrap_or(Instant::NEVER)
    }

    /// Records a request sent to `dest`; returns its correlation id.
    pub fn on_send(&mut self, dest: NodeId, api: ApiKind, now: Instant) -> CorrelationId {
        let corr = self.next_corr;
        self.next_corr = self.next_corr.wrapping_add(1).max(1);
        self.conns.insert(
            dest,
            Conn::Awaiting {
                corr,
                api,
                deadline: now + self.request_timeout,
            },
        );
        corr
    }

    /// The API of request `corr` in flight to `dest`, if it is the one in flight.
    pub fn in_flight_api(&self, dest: NodeId, corr: CorrelationId) -> Option<ApiKind> {
        match self.conns.get(&dest) {
            Some(Conn::Awaiting { corr: c, api, .. }) if *c == corr => Some(*api),
            _ => None,
        }
    }

    /// Is `corr` the request in flight to `from`? Only such responses are processed.
    pub fn is_expected(&self, from: NodeId, corr: CorrelationId) -> bool {
        self.in_flight_api(from, corr).is_some()
    }

    /// The response was processed: READY if handled, else BACKING_OFF.
    pub fn on_response(&mut self, from: NodeId, handled: bool, now: Instant) {
        if handled {
            self.conns.remove(&from);
        } else {
            self.conns.insert(
                from,
                Conn::BackingOff {
                    until: now + self.retry_backoff,
                },
            );
        }
    }

    /// Forget one destination (e.g. after its request timed out).
    pub fn reset(&mut self, dest: NodeId) {
        self.conns.remove(&dest);
    }

    /// Forget everything: late responses of the previous state are then ignored.
    pub fn reset_all(&mut self) {
        self.conns.clear();
    }
}
