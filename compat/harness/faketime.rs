//! A node whose wall clock runs ahead of the machine's, as on a host whose time sync drifted:
//! Debian's libfaketime (package `faketime`) preloaded into the process. Only the wall clock
//! moves (`FAKETIME_DONT_FAKE_MONOTONIC`): Java's and kraftd's timers run on the monotonic
//! clock, as they do when a real clock is stepped.

use std::path::Path;
use std::time::Duration;

/// Where Debian puts the thread-safe library (Java and kraftd both run many threads).
const LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// The environment that starts a process with its wall clock `ahead` of the machine's.
pub fn clock_ahead_env(ahead: Duration) -> Vec<(String, String)> {
    assert!(
        Path::new(LIBRARY).exists(),
        "{LIBRARY} is missing: install Debian's faketime package (apt-get install faketime), \
         which .ci/run installs"
    );
    vec![
        ("LD_PRELOAD".into(), LIBRARY.into()),
        // A relative offset in seconds, with a fraction.
        ("FAKETIME".into(), format!("+{:.3}", ahead.as_secs_f64())),
        ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
        // Without this, libfaketime on Debian 12's glibc rewrites the deadlines of timed waits
        // on the monotonic clock, which then return at once: a Java controller spun at 200% CPU
        // (44 s of CPU in 22 s; 1 s with the fix off).
        ("FAKETIME_FORCE_MONOTONIC_FIX".into(), "0".into()),
    ]
}
