//! 1,000 connections to each controller's SSL listener that never finish their handshake (half
//! send nothing, half send half a ClientHello), all open at once:
//! - kraftd's resident memory stays within [`RSS_GROWTH_BOUND`] of what it was before. Each
//!   such connection holds a socket, a task and a rustls server connection that has read at
//!   most a partial record: about 11 KiB each measured, so ~11 MiB for 1,000. The bound,
//!   32 MiB, leaves room for the allocator's slack, and is below what a connection that
//!   buffered a full TLS record (16 KiB and more) or a read buffer of its own before its
//!   handshake finished would cost;
//! - it answers the harness's DescribeQuorum over mutual TLS meanwhile, as Java does;
//! - it closes them all after its handshake bound and says so in at most a few lines (the
//!   first, then one count per quiet period), where Java (which keeps them until
//!   `connections.max.idle.ms`) logs nothing.

use std::time::{Duration, Instant};

use super::client::{client_hello_prefix, Opened};
use super::{eventually, SslController};

const CONNECTIONS: usize = 1_000;
const RSS_GROWTH_BOUND: u64 = 32 * 1024 * 1024;
/// kraftd's handshake bound, and time to close 1,000 connections after it.
const CLOSE_WAIT: Duration = Duration::from_secs(20);
/// At most this many log lines for the whole flood: the first timeout, a count at the end of
/// its quiet period, and one more if the flood straddles two periods.
const MAX_LOG_LINES: usize = 3;

/// Its resident set, from `/proc/<pid>/status`.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("a live process");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kib * 1024
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Makes room for both floods' descriptors in this process (Java raises its own limit to the
/// hard limit; kraftd's is checked by [`open_files_limit`]).
fn raise_open_files_limit() {
    let wanted = (2 * CONNECTIONS + 1_024) as libc::rlim_t;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write only the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        if limit.rlim_cur < wanted {
            assert!(
                limit.rlim_max >= wanted,
                "RLIMIT_NOFILE's hard limit is below {wanted}"
            );
            limit.rlim_cur = wanted;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
    }
}

/// The soft limit on open files of process `pid`.
fn open_files_limit(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("a live process");
    limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|soft| soft.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Opens the connections: even ones send nothing, odd ones half a ClientHello.
fn flood(c: &SslController) -> Vec<Opened> {
    let hello = client_hello_prefix(60);
    (0..CONNECTIONS)
        .map(|i| {
            let mut o = Opened::connect(c.port());
            if i % 2 == 1 {
                o.send(&hello);
            }
            o
        })
        .collect()
}

/// Lines naming a handshake that did not finish.
fn timeout_lines(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("TLS handshake did not finish"))
        .count()
}

pub(super) fn compare(java: &SslController, kraftd: &SslController) {
    raise_open_files_limit();
    let pid = kraftd.pid();
    let fds = open_files_limit(pid);
    assert!(
        fds > CONNECTIONS as u64 + 100,
        "kraftd may open only {fds} files"
    );
    let before = rss_bytes(pid);
    let lines_before = timeout_lines(&kraftd.log());
    let java_lines_before = java.log().lines().count();

    let started = Instant::now();
    let mut on_kraftd = flood(kraftd);
    eprintln!(
        "{CONNECTIONS} half-open handshakes to kraftd, opened in {:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_secs(1));
    let asked = Instant::now();
    assert!(
        kraftd.serves(),
        "kraftd stopped serving under the half-open handshakes"
    );
    let during = rss_bytes(pid);
    let closed_early = on_kraftd
        .iter_mut()
        .map(|o| o.is_closed())
        .filter(|c| *c)
        .count();
    eprintln!(
        "  DescribeQuorum answered in {:?}; RSS {:.1} MiB before, {:.1} MiB with them open",
        asked.elapsed(),
        mib(before),
        mib(during)
    );
    assert_eq!(closed_early, 0, "kraftd closed handshakes before its bound");
    assert!(
        during <= before + RSS_GROWTH_BOUND,
        "kraftd's RSS grew by {:.1} MiB (bound {:.1} MiB)",
        mib(during.saturating_sub(before)),
        mib(RSS_GROWTH_BOUND)
    );

    // Java meanwhile: the same flood (its listen backlog, `socket.listen.backlog.size` 50, makes
    // the client retry many connects), and it keeps serving.
    let java_started = Instant::now();
    let mut on_java = flood(java);
    eprintln!(
        "{CONNECTIONS} to Java, opened in {:?}",
        java_started.elapsed()
    );
    std::thread::sleep(Duration::from_secs(1));
    let asked = Instant::now();
    assert!(
        java.serves(),
        "Java stopped serving under the half-open handshakes"
    );
    eprintln!("  DescribeQuorum answered in {:?}", asked.elapsed());

    let all_closed = eventually(CLOSE_WAIT.saturating_sub(started.elapsed()), || {
        on_kraftd.iter_mut().all(|o| o.is_closed())
    });
    let closed = on_kraftd
        .iter_mut()
        .map(|o| o.is_closed())
        .filter(|c| *c)
        .count();
    assert!(
        all_closed,
        "kraftd closed {closed} of {CONNECTIONS} within {CLOSE_WAIT:?}"
    );
    let still_open = on_java
        .iter_mut()
        .map(|o| o.is_closed())
        .filter(|c| !*c)
        .count();
    eprintln!(
        "  {:?} after the first: kraftd has closed all its {CONNECTIONS}; Java keeps \
         {still_open} of its {CONNECTIONS} open {:?} after its first; Java logged {} lines \
         meanwhile; Java's RSS {:.1} MiB",
        started.elapsed(),
        java_started.elapsed(),
        java.log().lines().count() - java_lines_before,
        mib(rss_bytes(java.pid()))
    );
    drop(on_java);
    drop(on_kraftd);

    // The count comes at the end of the quiet period that the first timeout began.
    let counted = || kraftd.log().lines().any(|l| l.contains(" more connection"));
    eventually(Duration::from_secs(12), counted);
    let log = kraftd.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("TLS handshake did not finish"))
        .skip(lines_before)
        .collect();
    eprintln!("  kraftd logged {} lines for them: {lines:#?}", lines.len());
    assert!(
        (1..=MAX_LOG_LINES).contains(&lines.len()),
        "kraftd logged {} lines for {CONNECTIONS} handshake timeouts",
        lines.len()
    );
    eprintln!("  kraftd: RSS {:.1} MiB after", mib(rss_bytes(pid)));
    for c in [kraftd, java] {
        assert!(
            c.serves(),
            "{} serves after the half-open handshakes",
            c.kind()
        );
    }
}
