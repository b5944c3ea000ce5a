//! Moving the log start offset up to a snapshot (Kafka's `deleteBeforeSnapshot`) and the
//! retention policy that does it (`KafkaRaftLog.maybeClean`): steps of `RaftLog`'s
//! `delete_before_snapshot` and `maybe_clean` for `log::LogCore`.

use super::log::LogError;
use super::log_core::during;
use super::types::OffsetAndEpoch;
use crate::log::storage::Storage;
use crate::log::LogCore;

impl<S: Storage> LogCore<S> {
    /// Moves the log start to snapshot `id`'s end offset, deleting the segments entirely below
    /// it and the older snapshots. Nothing moves unless `id` is retained, above the log start,
    /// at or below the latest snapshot and the high watermark. Returns whether segments went.
    pub(super) fn advance_log_start_to(&mut self, id: OffsetAndEpoch) -> Result<bool, LogError> {
        let Some(latest) = self.snapshots.keys().next_back().copied() else {
            return Ok(false);
        };
        if !self.snapshots.contains_key(&id)
            || self.log_start >= id.offset
            || id.offset > latest.offset
            || id.offset > self.high_watermark
        {
            return Ok(false);
        }
        let failed = || during("delete the metadata log before a snapshot");
        self.log_start = id.offset;
        self.epochs.truncate_from_start(id.offset);
        let deleted = self.storage.delete_below(id.offset).map_err(failed())?;
        self.remove_snapshots_before(id).map_err(failed())?;
        self.persist_epochs().map_err(failed())?;
        Ok(deleted > 0)
    }

    /// `metadata.max.retention.bytes` (log and snapshot bytes) and `metadata.max.retention.ms`
    /// (a snapshot's last contained timestamp), below the high watermark. The latest snapshot
    /// always stays.
    pub(super) fn apply_retention(&mut self, now_ms: i64) -> Result<bool, LogError> {
        let mut cleaned = false;
        if self.config.retention_bytes >= 0 {
            let limit = self.config.retention_bytes as u64;
            let mut snapshot_total: u64 = self.snapshots.values().map(|m| m.size).sum();
            cleaned |= self.clean_snapshots(|log, id| {
                let size = log.snapshots[&id].size;
                if log.storage.size() + snapshot_total > limit {
                    snapshot_total -= size;
                    true
                } else {
                    false
                }
            })?;
        }
        if self.config.retention_ms >= 0 {
            let retention = self.config.retention_ms;
            cleaned |= self.clean_snapshots(|log, id| {
                now_ms - log.snapshots[&id].last_contained_log_timestamp > retention
            })?;
        }
        Ok(cleaned)
    }

    /// Java's `cleanSnapshots`: for consecutive snapshots (S, next), while `should_go(S)`, move
    /// the log start to `next`; stop at the first that may stay or whose move deletes nothing.
    fn clean_snapshots(
        &mut self,
        mut should_go: impl FnMut(&Self, OffsetAndEpoch) -> bool,
    ) -> Result<bool, LogError> {
        let ids = self.snapshot_ids();
        let mut cleaned = false;
        for pair in ids.windows(2) {
            if !should_go(self, pair[0]) || !self.advance_log_start_to(pair[1])? {
                break;
            }
            cleaned = true;
        }
        Ok(cleaned)
    }
}
