//! The probes' decisions, pure functions of what the node loop published and of the metadata
//! log directory's write test: `/healthz` (the process and its loop are alive) and `/readyz` (a
//! leader is known, this node caught up with it, the log directory takes writes).

use std::io::Write;
use std::path::Path;

use crate::server::metrics::health::LoopState;

/// A probe's answer: 200 or 503, and one line saying why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub ok: bool,
    pub reason: String,
}

impl Verdict {
    fn ok(reason: impl Into<String>) -> Verdict {
        Verdict {
            ok: true,
            reason: reason.into(),
        }
    }
    fn fail(reason: impl Into<String>) -> Verdict {
        Verdict {
            ok: false,
            reason: reason.into(),
        }
    }
}

/// `/healthz`: the loop runs, and no turn of it has been busy for longer than `stuck_after_ms`.
pub fn healthz(state: LoopState, stuck_after_ms: u64) -> Verdict {
    if !state.running {
        return Verdict::fail("node loop stopped");
    }
    match state.busy_for_ms {
        Some(busy) if busy > stuck_after_ms => Verdict::fail(format!(
            "node loop stuck: one turn busy for {busy} ms (bound {stuck_after_ms} ms)"
        )),
        _ => Verdict::ok("ok: node loop alive"),
    }
}

/// `/readyz`: the loop runs, knows a leader, leads or fetched from it within
/// `controller.quorum.fetch.timeout.ms`, and the metadata log directory took a write
/// (`log_dir`: the write test's outcome).
pub fn readyz(state: LoopState, log_dir: Result<(), String>) -> Verdict {
    if !state.running {
        return Verdict::fail("not ready: node loop stopped");
    }
    let Some(leader) = state.leader else {
        return Verdict::fail("not ready: no leader known");
    };
    if !state.caught_up {
        return Verdict::fail(format!(
            "not ready: no fetch from leader {leader} within controller.quorum.fetch.timeout.ms"
        ));
    }
    if let Err(e) = log_dir {
        return Verdict::fail(format!("not ready: metadata log dir not writable: {e}"));
    }
    Verdict::ok(format!(
        "ready: leader {leader}, caught up, metadata log dir writable"
    ))
}

/// The file the write test creates and removes in the metadata log directory.
pub const WRITE_TEST_FILE: &str = ".kraftd-readyz";

/// Creates, writes, syncs and removes [`WRITE_TEST_FILE`] in `dir` (a blocking call).
pub fn write_test(dir: &Path) -> Result<(), String> {
    let path = dir.join(WRITE_TEST_FILE);
    let write = |path: &Path| -> std::io::Result<()> {
        let mut f = std::fs::File::create(path)?;
        f.write_all(b"ok")?;
        f.sync_data()
    };
    let attempt = write(&path);
    let removed = std::fs::remove_file(&path);
    attempt
        .and(removed)
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(running: bool, busy: Option<u64>, leader: Option<i32>, caught_up: bool) -> LoopState {
        LoopState {
            running,
            busy_for_ms: busy,
            leader,
            caught_up,
        }
    }

    #[test]
    fn healthz_fails_on_a_stopped_or_stuck_loop_only() {
        let idle = state(true, None, None, false);
        assert_eq!(healthz(idle, 5_000), Verdict::ok("ok: node loop alive"));
        let busy = state(true, Some(2_000), None, false);
        assert!(healthz(busy, 5_000).ok, "busy for 2 s of a 5 s bound");
        let stuck = state(true, Some(9_000), Some(1), true);
        assert_eq!(
            healthz(stuck, 5_000),
            Verdict::fail("node loop stuck: one turn busy for 9000 ms (bound 5000 ms)")
        );
        let stopped = state(false, None, Some(1), true);
        assert_eq!(healthz(stopped, 5_000), Verdict::fail("node loop stopped"));
    }

    #[test]
    fn readyz_needs_a_leader_a_recent_fetch_and_a_writable_dir() {
        let ok = || Ok(());
        assert_eq!(
            readyz(state(true, None, None, false), ok()),
            Verdict::fail("not ready: no leader known")
        );
        assert_eq!(
            readyz(state(true, None, Some(2), false), ok()),
            Verdict::fail(
                "not ready: no fetch from leader 2 within controller.quorum.fetch.timeout.ms"
            )
        );
        assert_eq!(
            readyz(
                state(true, None, Some(2), true),
                Err("/d/.kraftd-readyz: EROFS".into())
            ),
            Verdict::fail("not ready: metadata log dir not writable: /d/.kraftd-readyz: EROFS")
        );
        assert_eq!(
            readyz(state(true, Some(5), Some(2), true), ok()),
            Verdict::ok("ready: leader 2, caught up, metadata log dir writable")
        );
        assert!(!readyz(state(false, None, Some(2), true), ok()).ok);
    }

    #[test]
    fn the_write_test_leaves_nothing_behind_and_names_the_file_on_failure() {
        let dir = std::env::temp_dir().join(format!("kraftd-readyz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_test(&dir).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
        let err = write_test(&dir).unwrap_err();
        assert!(err.contains(WRITE_TEST_FILE), "{err}");
    }
}
