//! Per-node invariants, checked after every step in debug builds and tests (etcd's discipline:
//! a broken invariant is a bug, never "log and continue").

use super::log::RaftLog;
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Checks the node's invariants; the first broken one is returned.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (start, flushed, end) = (
            self.log.start_offset(),
            self.log.flushed_end_offset(),
            self.log.end_offset(),
        );
        if !(start <= flushed && flushed <= end) {
            return Err(format!(
                "log offsets out of order: start {start} flushed {flushed} end {end}"
            ));
        }
        if let Some(hw) = self.high_watermark {
            if hw > end {
                return Err(format!(
                    "high watermark {hw} above the log end offset {end}"
                ));
            }
            if self.reported_hw.map_or(true, |r| hw > r) {
                return Err(format!("high watermark {hw} was never reported"));
            }
        }
        if let Some(deadline) = self.shutdown.filter(|d| *d > self.now) {
            if self.next_deadline > deadline {
                return Err(format!(
                    "shutting down until {deadline}, but the next deadline is {}",
                    self.next_deadline
                ));
            }
        }
        if !self.parked.is_empty() && !self.is_leader() {
            return Err("parked fetches while not leader".into());
        }
        if self.epoch() < self.log.last_fetched_epoch() {
            return Err(format!(
                "epoch {} below the log's last epoch {}",
                self.epoch(),
                self.log.last_fetched_epoch()
            ));
        }
        let stored = self
            .store
            .read_election_state()
            .map_err(|e| e.to_string())?;
        match &self.role {
            Role::Prospective(_) | Role::Resigned(_) => {
                if stored.as_ref().map(|s| s.epoch) != Some(self.epoch()) {
                    return Err(format!("{} but quorum-state holds {stored:?}", self.role));
                }
            }
            role => {
                // A file written at data version 0 keeps no voted directory id.
                let expected = role.election_state(self.local);
                let without_directory = expected.persisted_at(0);
                if stored.as_ref() != Some(&expected) && stored.as_ref() != Some(&without_directory)
                {
                    return Err(format!(
                        "{role} must be persisted as {expected}, quorum-state holds {stored:?}"
                    ));
                }
            }
        }
        let local_id = self.local_id();
        let departs = self.cfg.election_rules.departs_from_kafka();
        match &self.role {
            Role::Follower(f) => {
                if Some(f.leader_id) == local_id || f.leader_endpoints.is_empty() {
                    return Err(format!(
                        "{} with leader {} endpoints {:?}",
                        self.role, f.leader_id, f.leader_endpoints
                    ));
                }
                if self.is_voter() && flushed != end {
                    return Err(format!(
                        "voter follower has unflushed data: flushed {flushed} end {end}"
                    ));
                }
                if f.early_election_at.is_some_and(|at| at > f.fetch_deadline) {
                    return Err(format!(
                        "early election at {:?} after the fetch timeout {}",
                        f.early_election_at, f.fetch_deadline
                    ));
                }
                if f.early_election_at.is_some() && !departs {
                    return Err("an early election under Kafka's rules".into());
                }
            }
            Role::Unattached(u) => {
                if u.voted_key.is_some_and(|v| Some(v.id) == local_id) {
                    return Err("unattached with a vote for itself".into());
                }
            }
            Role::Leader(l) => {
                // Only a VotersRecord of its own epoch can have removed a leader (it resigns
                // once that commits).
                let removed_in_epoch = self
                    .control
                    .latest_voters_offset()
                    .is_some_and(|o| o >= l.epoch_start_offset);
                if !self.is_voter() && !removed_in_epoch {
                    return Err("leader is not a voter".into());
                }
                if l.epoch_start_offset > end || flushed != end {
                    return Err(format!(
                        "leader log: epoch start {} flushed {flushed} end {end}",
                        l.epoch_start_offset
                    ));
                }
                let own = l.local_state().and_then(|s| s.end_offset);
                if own != Some(end) {
                    return Err(format!(
                        "leader's own progress {own:?} is not its log end offset {end}"
                    ));
                }
                if l.requested_kraft_version.is_some() && l.upgrade_voters.is_some() {
                    return Err("a kraft.version upgrade was written but the static voters are still open to updates".into());
                }
                if (l.upgrade_voters.is_some() || l.requested_kraft_version.is_some())
                    != (self.control.kraft_version_at(l.epoch_start_offset - 1) == 0)
                {
                    return Err(format!(
                        "leader elected at kraft.version {} with upgrade voters {} and requested upgrade {:?}",
                        self.control.kraft_version_at(l.epoch_start_offset - 1),
                        l.upgrade_voters.is_some(),
                        l.requested_kraft_version
                    ));
                }
                if let Some(hw) = self.high_watermark {
                    if hw <= l.epoch_start_offset {
                        return Err(format!(
                            "leader HW {hw} not past its epoch start {}",
                            l.epoch_start_offset
                        ));
                    }
                }
            }
            Role::Candidate(_) => {
                if !self.is_voter() {
                    return Err(format!("{} is not a voter", self.role));
                }
            }
            Role::Prospective(p) => {
                if !self.is_voter() {
                    return Err(format!("{} is not a voter", self.role));
                }
                if p.leader_gone && !departs {
                    return Err("a prospective renewing its round under Kafka's rules".into());
                }
            }
            Role::Resigned(_) => {}
        }
        Ok(())
    }
}
