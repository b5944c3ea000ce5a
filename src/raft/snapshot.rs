//! Snapshots: FetchSnapshot on both sides (chunked byte ranges of a frozen snapshot), loading a
//! downloaded snapshot, and the state machine's snapshot creation and log cleaning.

use super::log::{RaftLog, ValidOffsetAndEpoch};
use super::msg::{FetchSnapshotRequest, FetchSnapshotResponse};
use super::node::{Action, Raft};
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{NodeId, OffsetAndEpoch};
use super::voters::voters_record;
use crate::protocol::errors::ErrorCode;

/// Why a snapshot could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot end offset {offset} is above the high watermark {hw:?}")]
    AboveHighWatermark { offset: i64, hw: Option<i64> },
    #[error("snapshot end offset {offset} is below the log start offset {start}")]
    BelowLogStart { offset: i64, start: i64 },
    #[error("snapshot id {0} is not valid for the log")]
    InvalidId(OffsetAndEpoch),
    #[error("snapshot end offset {0} is not at a batch boundary")]
    NotBatchBoundary(i64),
    #[error("log refused the snapshot: {0}")]
    Log(#[from] super::log::LogError),
    /// Storage failed while writing it: the node emitted its fatal action and stops.
    #[error("the node halted on a storage fault while writing the snapshot")]
    Halted,
}

/// Kafka's `POSITION_OUT_OF_RANGE` (99); not yet in `protocol::errors` (owned elsewhere).
pub const POSITION_OUT_OF_RANGE: ErrorCode = ErrorCode(99);

const BOOTSTRAP_SNAPSHOT_ID: OffsetAndEpoch = OffsetAndEpoch::new(0, 0);

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    fn fetch_snapshot_response(
        &self,
        error: ErrorCode,
        listener: Option<&str>,
    ) -> FetchSnapshotResponse {
        FetchSnapshotResponse {
            partition_ok: true,
            partition_error: error,
            leader_id: self.leader_id().unwrap_or(-1),
            leader_epoch: self.epoch(),
            leader_endpoint: self.leader_endpoint_for(listener),
            ..FetchSnapshotResponse::default()
        }
    }

    /// Kafka's `handleFetchSnapshotRequest`.
    pub(super) fn handle_fetch_snapshot_request(
        &mut self,
        now: Instant,
        r: &FetchSnapshotRequest,
        listener: Option<&str>,
    ) -> FetchSnapshotResponse {
        if !self.valid_cluster_id(&r.cluster_id) {
            return FetchSnapshotResponse {
                error: ErrorCode::INCONSISTENT_CLUSTER_ID,
                ..Default::default()
            };
        }
        if !r.partition_ok {
            return self.fetch_snapshot_response(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, listener);
        }
        if let Some(e) = self.validate_leader_only_request(r.current_leader_epoch) {
            return self.fetch_snapshot_response(e, listener);
        }
        let size = match self.log.snapshot_size(r.snapshot_id) {
            Some(size) if r.snapshot_id != BOOTSTRAP_SNAPSHOT_ID => size as i64,
            _ => return self.fetch_snapshot_response(ErrorCode::SNAPSHOT_NOT_FOUND, listener),
        };
        if r.position < 0 || r.position >= size {
            return self.fetch_snapshot_response(POSITION_OUT_OF_RANGE, listener);
        }
        let max = usize::try_from(r.max_bytes).unwrap_or(0).max(1);
        let n = max.min((size - r.position) as usize);
        let chunk = self
            .log
            .read_snapshot_chunk(r.snapshot_id, r.position as u64, n);
        let Some(bytes) = self.log_value(chunk) else {
            return self.fetch_snapshot_response(ErrorCode::UNKNOWN_SERVER_ERROR, listener);
        };
        let bytes = bytes.unwrap_or_default();
        if let Role::Leader(l) = &mut self.role {
            if l.is_voter(&r.replica_key) {
                l.update_check_quorum(r.replica_key.id, now);
            }
        }
        FetchSnapshotResponse {
            snapshot_id: Some(r.snapshot_id),
            size,
            position: r.position,
            bytes,
            ..self.fetch_snapshot_response(ErrorCode::NONE, listener)
        }
    }

    /// The leader answered a Fetch with a snapshot id: download it (or, if we already have it,
    /// make the log start there).
    pub(super) fn start_snapshot_download(&mut self, now: Instant, id: OffsetAndEpoch) {
        if self.high_watermark.is_some_and(|hw| hw > id.offset) {
            // Loading it would move the HW back (Java throws on that after the download).
            return self.fail(format!(
                "snapshot {id} is below the high watermark {:?}",
                self.high_watermark
            ));
        }
        if self.log.snapshot_size(id).is_some() {
            let truncated = self.log.truncate_to_latest_snapshot();
            if self.log_value(truncated) == Some(true) {
                self.after_snapshot_truncation(now);
            }
            return;
        }
        let begun = self.log.begin_snapshot_download(id);
        if self.log_value(begun).is_none() {
            return;
        }
        if let Role::Follower(f) = &mut self.role {
            f.fetching_snapshot = Some(id);
        }
    }

    /// The log was fully truncated to its latest snapshot: reload the voter history, HW = the
    /// snapshot's end offset, and tell the state machine to load it.
    fn after_snapshot_truncation(&mut self, _now: Instant) {
        let Some(id) = self.log.latest_snapshot_id() else {
            return;
        };
        let opened = self.log.open_snapshot(id);
        match self.log_value(opened) {
            Some(Some(reader)) => self.control.load_snapshot(reader.header()),
            Some(None) => {}
            None => return,
        }
        self.set_high_watermark(id.offset);
        self.out.push(Action::LoadSnapshot(id));
    }

    fn abort_download(&mut self, now: Instant) {
        self.log.abort_snapshot_download();
        let timeout = self.cfg.fetch_timeout;
        if let Role::Follower(f) = &mut self.role {
            f.fetching_snapshot = None;
            f.fetch_deadline = now + timeout;
        }
    }

    /// Kafka's `handleFetchSnapshotResponse`.
    pub(super) fn handle_fetch_snapshot_response(
        &mut self,
        now: Instant,
        _from: NodeId,
        r: FetchSnapshotResponse,
    ) -> bool {
        if r.error != ErrorCode::NONE {
            return self.handle_top_level_error(r.error);
        }
        if !r.partition_ok {
            return false;
        }
        let leader = (r.leader_id >= 0).then_some(r.leader_id);
        let endpoints = self.response_leader_endpoints(leader, &r.leader_endpoint);
        if let Some(handled) = self.maybe_handle_common_response(
            now,
            r.partition_error,
            leader,
            r.leader_epoch,
            endpoints,
        ) {
            return handled;
        }
        let negative = r.snapshot_id.is_none_or(|s| s.offset < 0 || s.epoch < 0);
        if r.partition_error == ErrorCode::SNAPSHOT_NOT_FOUND
            || (r.partition_error == ErrorCode::NONE && negative)
        {
            self.abort_download(now);
            return true;
        }
        if r.partition_error != ErrorCode::NONE {
            return false;
        }
        let Role::Follower(f) = &self.role else {
            return true;
        };
        let expected = f.fetching_snapshot;
        let written = self.log.snapshot_download().map(|(_, n)| n as i64);
        if expected.is_none() || expected != r.snapshot_id || written != Some(r.position) {
            // Java throws here; a Rust follower just starts over.
            self.abort_download(now);
            return false;
        }
        match self.log.append_snapshot_download(&r.bytes) {
            Ok(()) => {}
            Err(e) if e.is_fault() => {
                self.log_value(Err::<(), _>(e));
                return true;
            }
            Err(_refused) => {
                self.abort_download(now);
                return false;
            }
        }
        if r.position + r.bytes.len() as i64 >= r.size {
            match self.log.complete_snapshot_download() {
                Ok(_) => {
                    let truncated = self.log.truncate_to_latest_snapshot();
                    let Some(truncated) = self.log_value(truncated) else {
                        return true;
                    };
                    if !truncated {
                        self.fail(format!(
                            "downloaded snapshot {:?} is not ahead of the log",
                            r.snapshot_id
                        ));
                        return true;
                    }
                    self.after_snapshot_truncation(now);
                }
                Err(e) if e.is_fault() => {
                    self.log_value(Err::<(), _>(e));
                    return true;
                }
                Err(_refused) => {
                    self.abort_download(now);
                    return false;
                }
            }
            if let Role::Follower(f) = &mut self.role {
                f.fetching_snapshot = None;
            }
        }
        self.fetched_from_leader(now);
        true
    }

    /// Kafka's `createSnapshot` checks: at or below the HW, at or above the log start, valid for
    /// the log, at a batch boundary; never (0, 0), the bootstrap checkpoint's id.
    pub(super) fn check_snapshot_id(&self, id: OffsetAndEpoch) -> Result<(), SnapshotError> {
        // (0, 0) is the bootstrap checkpoint's id; a Java peer refuses any other snapshot there.
        if id.offset == 0 {
            return Err(SnapshotError::InvalidId(id));
        }
        if self.high_watermark.is_none_or(|hw| id.offset > hw) {
            return Err(SnapshotError::AboveHighWatermark {
                offset: id.offset,
                hw: self.high_watermark,
            });
        }
        if id.offset < self.log.start_offset() {
            return Err(SnapshotError::BelowLogStart {
                offset: id.offset,
                start: self.log.start_offset(),
            });
        }
        if !matches!(
            self.log.validate_offset_and_epoch(id.offset, id.epoch),
            ValidOffsetAndEpoch::Valid(_)
        ) {
            return Err(SnapshotError::InvalidId(id));
        }
        if id.offset < self.log.end_offset() {
            let first = self.log.read(id.offset, 1).map_err(SnapshotError::Log)?;
            match first.first() {
                Some(b) if b.base_offset == id.offset => {}
                _ => return Err(SnapshotError::NotBatchBoundary(id.offset)),
            }
        }
        Ok(())
    }

    /// The kraft.version and (from version 1) the voter set as of `id.offset − 1`.
    pub(super) fn snapshot_header(
        &self,
        id: OffsetAndEpoch,
    ) -> (
        i16,
        Option<crate::protocol::messages::voters_record::VotersRecord>,
    ) {
        let at = id.offset - 1;
        let kraft_version = self.control.kraft_version_at(at);
        let voters = (kraft_version >= 1).then(|| voters_record(self.control.voters_at(at)));
        (kraft_version, voters)
    }

    /// Applies the log's retention policy (Kafka's `maybeClean`), below the high watermark.
    pub fn maybe_clean(&mut self, now: Instant) -> bool {
        let Some(hw) = self.high_watermark else {
            return false;
        };
        let cleaned = self.log.maybe_clean(now.as_i64(), hw);
        let cleaned = self.log_value(cleaned).unwrap_or(false);
        if cleaned {
            self.control.trim_before(self.log.start_offset());
        }
        cleaned
    }

    /// Moves the log start up to snapshot `id` (Kafka's `deleteBeforeSnapshot`, driven by the
    /// retention policy). Never past the high watermark.
    pub fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> bool {
        if self.high_watermark.is_none_or(|hw| id.offset > hw) {
            return false;
        }
        let done = self.log.delete_before_snapshot(id);
        let done = self.log_value(done).unwrap_or(false);
        if done {
            self.control.trim_before(id.offset);
        }
        done
    }
}
