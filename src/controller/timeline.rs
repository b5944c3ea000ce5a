//! Offset-versioned state, after Kafka's `SnapshotRegistry`, built on values whose `clone` is
//! O(1) (persistent maps): a version is a copy of the whole state at an offset.
//!
//! The state ahead of the stable offset may be reverted: a leader's records that never commit,
//! or a metadata transaction that is aborted. Versions are kept only for that: one at the offset
//! a revert may return to, and one at the end of each batch written after it. Commit and revert
//! cost O(versions dropped), never O(state).

use std::collections::VecDeque;

use super::error::InvariantViolation;
use crate::protocol::records::Offset;

/// A state `T` with its reachable past.
#[derive(Debug, Clone)]
pub struct Timeline<T: Clone> {
    latest: T,
    /// The offset of the last record applied to `latest` (-1: none).
    latest_offset: Offset,
    /// Earlier versions, oldest first, each the state after the record at its offset.
    /// Invariant: offsets strictly increase and are all ≤ `latest_offset`.
    versions: VecDeque<(Offset, T)>,
}

/// A revert to an offset whose version was not kept: a bug in the caller, never a data fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no version of the controller state at offset {wanted} (kept: {kept:?}, latest {latest})")]
pub struct NoSuchVersion {
    pub wanted: Offset,
    pub kept: Vec<Offset>,
    pub latest: Offset,
}

impl<T: Clone> Timeline<T> {
    pub fn new(initial: T, offset: Offset) -> Timeline<T> {
        Timeline {
            latest: initial,
            latest_offset: offset,
            versions: VecDeque::new(),
        }
    }

    pub fn latest(&self) -> &T {
        &self.latest
    }

    pub fn latest_offset(&self) -> Offset {
        self.latest_offset
    }

    /// The state to change by the next record. Changing it is not yet applying a record: call
    /// `advance` with the record's offset once it applied.
    pub fn latest_mut(&mut self) -> &mut T {
        &mut self.latest
    }

    /// The record at `offset` has been applied to `latest`; offsets strictly increase.
    pub fn advance(&mut self, offset: Offset) {
        debug_assert!(
            offset > self.latest_offset,
            "records are applied in offset order"
        );
        self.latest_offset = offset;
    }

    /// Keeps the current state as the version at `latest_offset`, so that a revert can return to
    /// it. Idempotent.
    pub fn keep_version(&mut self) {
        if self.versions.back().map(|(o, _)| *o) != Some(self.latest_offset) {
            self.versions
                .push_back((self.latest_offset, self.latest.clone()));
        }
    }

    /// The state as of `offset`: `latest` when nothing after `offset` was applied, else the version
    /// kept at exactly `offset` (a batch end or a revert target; anything else was never kept).
    pub fn at(&self, offset: Offset) -> Result<&T, NoSuchVersion> {
        if offset >= self.latest_offset {
            return Ok(&self.latest);
        }
        self.versions
            .iter()
            .find(|(o, _)| *o == offset)
            .map(|(_, v)| v)
            .ok_or_else(|| self.no_such(offset))
    }

    /// Drops every version older than the one `stable` would revert to: the state at or before
    /// `stable` can no longer change. When nothing after `stable` was applied, no version is
    /// needed at all and `latest` is again the only copy (so it mutates in place).
    pub fn release_through(&mut self, stable: Offset) {
        if stable >= self.latest_offset {
            self.versions.clear();
            return;
        }
        while self.versions.len() > 1 && self.versions[1].0 <= stable {
            self.versions.pop_front();
        }
    }

    /// Reverts to the state as of `offset`, which must be `latest_offset` or a kept version.
    pub fn revert_to(&mut self, offset: Offset) -> Result<(), NoSuchVersion> {
        if offset >= self.latest_offset {
            return Ok(());
        }
        while let Some((o, _)) = self.versions.back() {
            if *o > offset {
                self.versions.pop_back();
            } else {
                break;
            }
        }
        match self.versions.back() {
            Some((o, v)) if *o == offset => {
                self.latest = v.clone();
                self.latest_offset = offset;
                Ok(())
            }
            _ => Err(self.no_such(offset)),
        }
    }

    /// Makes `latest` the state as of `offset` again, keeping every version: the states in
    /// between stay the history of their offsets (an aborted transaction's records did apply
    /// there, and a revert to one of them must still find it).
    pub fn restore(&mut self, offset: Offset) -> Result<(), NoSuchVersion> {
        match self.versions.iter().find(|(o, _)| *o == offset) {
            Some((_, v)) => {
                self.latest = v.clone();
                Ok(())
            }
            None if offset == self.latest_offset => Ok(()),
            None => Err(self.no_such(offset)),
        }
    }

    /// The offsets of the kept versions, oldest first.
    pub fn kept(&self) -> Vec<Offset> {
        self.versions.iter().map(|(o, _)| *o).collect()
    }

    fn no_such(&self, wanted: Offset) -> NoSuchVersion {
        NoSuchVersion {
            wanted,
            kept: self.kept(),
            latest: self.latest_offset,
        }
    }

    /// Checks the invariant on `versions`.
    pub fn check(&self) -> Result<(), InvariantViolation> {
        let mut prev = Offset::MIN;
        for (o, _) in &self.versions {
            if *o <= prev || *o > self.latest_offset {
                return Err(InvariantViolation::TimelineOutOfOrder {
                    kept: self.kept(),
                    latest: self.latest_offset,
                });
            }
            prev = *o;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(t: &mut Timeline<Vec<i64>>, offset: Offset) {
        t.latest_mut().push(offset);
        t.advance(offset);
    }

    #[test]
    fn a_revert_returns_to_the_kept_version_and_forgets_what_followed() {
        let mut t = Timeline::new(Vec::new(), -1);
        apply(&mut t, 0);
        apply(&mut t, 1);
        t.keep_version(); // committed through 1
        apply(&mut t, 2);
        t.keep_version();
        apply(&mut t, 3);
        t.keep_version();
        assert_eq!(t.at(2).unwrap(), &vec![0, 1, 2]);
        t.revert_to(1).unwrap();
        assert_eq!(t.latest(), &vec![0, 1]);
        assert_eq!(t.latest_offset(), 1);
        assert_eq!(t.kept(), vec![1]);
        t.check().unwrap();
    }

    #[test]
    fn release_keeps_the_version_a_revert_to_the_stable_offset_needs() {
        let mut t = Timeline::new(Vec::new(), -1);
        apply(&mut t, 0);
        t.keep_version();
        apply(&mut t, 1);
        t.keep_version();
        apply(&mut t, 2);
        t.keep_version();
        t.release_through(1);
        assert_eq!(t.kept(), vec![1, 2]);
        t.revert_to(1).unwrap();
        assert_eq!(t.latest(), &vec![0, 1]);
        t.release_through(1);
        assert!(
            t.kept().is_empty(),
            "nothing after the stable offset: no copy kept"
        );
    }

    #[test]
    fn a_revert_to_a_version_never_kept_is_refused() {
        let mut t = Timeline::new(Vec::new(), -1);
        apply(&mut t, 0);
        apply(&mut t, 1);
        let e = t.revert_to(0).unwrap_err();
        assert_eq!(e.wanted, 0);
        assert_eq!(t.latest(), &vec![0, 1], "a refused revert changes nothing");
        assert!(t.at(0).is_err());
    }
}
