//! The active controller's soft state about brokers (Kafka 4.4's `BrokerHeartbeatManager` and
//! `BrokerHeartbeatTracker`): when each broker last made contact, what it reported, and whether
//! it is shutting down. Never written to the log and never replayed: only the active controller
//! has it, and a new active controller starts it afresh from the image (`BrokerSessions::activate`),
//! giving every unfenced broker a full session so that no live broker is fenced by a failover.
//!
//! Time is an argument: `now_ms` is the caller's monotonic clock in milliseconds.

use std::collections::BTreeMap;

use crate::controller::{InvariantViolation, MetadataImage};

/// A broker's heartbeat state (Java's `BrokerHeartbeatState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatState {
    /// Fenced as far as heartbeats go (set by the decision, ahead of the record's commit).
    pub fenced: bool,
    /// The metadata offset the broker last reported (-1: none yet).
    pub metadata_offset: i64,
    /// Set once the records that start its controlled shutdown are written: the end offset of
    /// their batch. Invariant: `None` while `fenced`.
    pub controlled_shutdown_offset: Option<i64>,
}

impl HeartbeatState {
    /// Unfenced and not shutting down: counts for the lowest active offset.
    fn active(&self) -> bool {
        !self.fenced && self.controlled_shutdown_offset.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerSessions {
    /// `broker.session.timeout.ms`.
    timeout_ms: u64,
    /// The last contact of each (broker id, broker epoch) that made one: Java's tracker. An
    /// entry outlives a new registration of the broker and is dropped when it expires.
    contacts: BTreeMap<(i32, i64), u64>,
    /// Every registered broker's heartbeat state. Invariant: a key for every broker of the
    /// image this controller has seen registered (activation or a registration since).
    brokers: BTreeMap<i32, HeartbeatState>,
}

impl BrokerSessions {
    /// The soft state of a controller that just became active (Java's
    /// `ClusterControlManager.activate`): every registered broker known with its fencing, and
    /// every unfenced one with a fresh session starting `now_ms`.
    pub fn activate(image: &MetadataImage, timeout_ms: u64, now_ms: u64) -> BrokerSessions {
        let mut s = BrokerSessions {
            timeout_ms,
            contacts: BTreeMap::new(),
            brokers: BTreeMap::new(),
        };
        for (id, b) in image.cluster.brokers.iter() {
            s.register(*id, b.fenced);
            if !b.fenced {
                s.contacts.insert((*id, b.epoch), now_ms);
            }
        }
        s
    }

    /// Each registered broker with its last contact in ms, if it made one (any epoch): what
    /// Java's `TimeSinceLastHeartbeatReceivedMs{broker}` counts from.
    pub fn last_contacts(&self) -> Vec<(i32, Option<u64>)> {
        self.brokers
            .keys()
            .map(|&id| {
                let last = self
                    .contacts
                    .range((id, i64::MIN)..=(id, i64::MAX))
                    .map(|(_, &at)| at)
                    .max();
                (id, last)
            })
            .collect()
    }

    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    pub fn state(&self, broker: i32) -> Option<&HeartbeatState> {
        self.brokers.get(&broker)
    }

    /// Every known broker's heartbeat state, by id.
    pub fn states(&self) -> impl Iterator<Item = (i32, &HeartbeatState)> {
        self.brokers.iter().map(|(id, s)| (*id, s))
    }

    /// A heartbeat arrived from `broker` at `epoch` (any epoch: Java tracks before it checks).
    pub fn track_contact(&mut self, broker: i32, epoch: i64, now_ms: u64) {
        self.contacts.insert((broker, epoch), now_ms);
    }

    fn expired(&self, contact_ms: u64, now_ms: u64) -> bool {
        now_ms > contact_ms && contact_ms + self.timeout_ms < now_ms
    }

    /// Whether `broker` at `epoch` made contact within the session timeout.
    pub fn has_valid_session(&self, broker: i32, epoch: i64, now_ms: u64) -> bool {
        self.contacts
            .get(&(broker, epoch))
            .is_some_and(|&t| !self.expired(t, now_ms))
    }

    /// Removes and returns one expired session, the oldest.
    pub fn remove_expired(&mut self, now_ms: u64) -> Option<(i32, i64)> {
        let (&key, _) = self
            .contacts
            .iter()
            .filter(|(_, &t)| self.expired(t, now_ms))
            .min_by_key(|(_, &t)| t)?;
        self.contacts.remove(&key);
        Some(key)
    }

    /// When the next session can expire (the first millisecond past its timeout).
    pub fn next_expiry(&self) -> Option<u64> {
        self.contacts
            .values()
            .min()
            .map(|t| t + self.timeout_ms + 1)
    }

    /// Knows `broker` (registering it if new) with this fencing; a broker whose fencing changes
    /// keeps its reported offset (Java's `register`).
    pub fn register(&mut self, broker: i32, fenced: bool) {
        let offset = match self.brokers.get(&broker) {
            None => -1,
            Some(s) if s.fenced != fenced => s.metadata_offset,
            Some(_) => -1,
        };
        self.brokers.entry(broker).or_insert(HeartbeatState {
            fenced,
            metadata_offset: -1,
            controlled_shutdown_offset: None,
        });
        self.touch(broker, fenced, offset);
    }

    /// The broker's state after a heartbeat: fencing and reported offset (a fenced broker
    /// leaves controlled shutdown).
    pub fn touch(&mut self, broker: i32, fenced: bool, metadata_offset: i64) {
        if let Some(s) = self.brokers.get_mut(&broker) {
            s.fenced = fenced;
            s.metadata_offset = metadata_offset;
            if fenced {
                s.controlled_shutdown_offset = None;
            }
        }
    }

    pub fn fence(&mut self, broker: i32) {
        if let Some(s) = self.brokers.get_mut(&broker) {
            s.fenced = true;
        }
    }

    /// Forgets the broker's heartbeat state (a new incarnation, or unregistered).
    pub fn remove(&mut self, broker: i32) {
        self.brokers.remove(&broker);
    }

    /// The records starting `broker`'s controlled shutdown end at `offset` (kept from the first
    /// time). A fenced broker cannot enter controlled shutdown.
    pub fn controlled_shutdown_written(&mut self, broker: i32, offset: i64) {
        if let Some(s) = self.brokers.get_mut(&broker) {
            if !s.fenced && s.controlled_shutdown_offset.is_none() {
                s.controlled_shutdown_offset = Some(offset);
            }
        }
    }

    /// The lowest metadata offset reported by an active broker (i64::MAX: none is active).
    pub fn lowest_active_offset(&self) -> i64 {
        self.brokers
            .values()
            .filter(|s| s.active())
            .map(|s| s.metadata_offset)
            .min()
            .unwrap_or(i64::MAX)
    }

    /// Checks the invariants beside the fields.
    pub fn check(&self) -> Result<(), InvariantViolation> {
        match self
            .brokers
            .iter()
            .find(|(_, s)| s.fenced && s.controlled_shutdown_offset.is_some())
        {
            Some((id, _)) => Err(InvariantViolation::FencedAndShuttingDown { broker: *id }),
            None => Ok(()),
        }
    }
}
