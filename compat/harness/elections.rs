//! Timing elections from a test: polling for the next leader after a kill, reading a voter's
//! log end from its data directory.

use std::net::SocketAddr;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use super::mixed_quorum::{Mixed, Stop};
use super::quorum_probe::{leader_view_at, read_log_batches};
use kraftd::raft::msg::DescribeQuorumResponse;

/// How often the leader is looked for after a kill: often enough to time an election to a few
/// milliseconds, rarely enough to leave the voters' CPU alone.
pub const POLL: Duration = Duration::from_millis(2);

/// Polls `addrs` every [`POLL`] until one leads in an epoch after `after`; returns its view and
/// the time since `since`, or `None` once `give_up` has passed since `since`. `each_poll` runs
/// before every poll with the time since `since` (e.g. to look at the voters meanwhile).
pub fn poll_for_new_leader(
    addrs: &[SocketAddr],
    after: i32,
    since: Instant,
    give_up: Duration,
    mut each_poll: impl FnMut(Duration),
) -> Option<(DescribeQuorumResponse, Duration)> {
    loop {
        each_poll(since.elapsed());
        if let Some(d) = leader_view_at(addrs).filter(|d| d.leader_epoch > after) {
            return Some((d, since.elapsed()));
        }
        if since.elapsed() >= give_up {
            return None;
        }
        thread::sleep(POLL);
    }
}

/// Every voter's address but `id`'s.
pub fn addrs_without(q: &Mixed, id: i32) -> Vec<SocketAddr> {
    q.voters
        .iter()
        .zip(q.addrs())
        .filter(|(v, _)| v.id != id)
        .map(|(_, a)| a)
        .collect()
}

/// The end offset of the complete batches in a node's metadata log on disk (a torn tail is
/// left out, as recovery would cut it). Both kinds write through the page cache, so a running
/// node's appends are visible here at once.
pub fn log_end_on_disk(metadata_dir: &Path) -> i64 {
    read_log_batches(metadata_dir)
        .last()
        .map_or(0, |(_, last, _)| last + 1)
}

/// Makes a Java voter lead a quorum with one kraftd voter (`kraftd`): while kraftd leads, it is
/// stopped with SIGTERM (it resigns with EndQuorumEpoch, so a Java voter takes over within
/// moments) and restarted. Returns the caught-up quorum's view.
pub fn hand_leadership_to_java(q: &mut Mixed, kraftd: i32) -> DescribeQuorumResponse {
    loop {
        let d = q.wait_caught_up(0);
        if d.leader_id != kraftd {
            return d;
        }
        q.stop_member(kraftd, Stop::Sigterm);
        q.wait_for_leader(d.leader_epoch);
        q.restart_member(kraftd);
    }
}

/// The lines of a log written after the first `mark` bytes were (a mark taken with `len()`).
pub fn lines_after(text: &str, mark: usize) -> impl Iterator<Item = &str> {
    text.get(mark..).unwrap_or_default().lines()
}
