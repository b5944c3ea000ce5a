//! Handshake timeouts logged without flooding. A client that opens many connections and never
//! finishes their handshakes (a scan, a flood of half-open connections) would otherwise cost a
//! log line each; Java logs nothing when it closes such a connection (its idle expiry logs at
//! TRACE). The first timeout in a quiet listener is logged as any refused connection is; those
//! that follow within [`QUIET_PERIOD`] are counted, and said in one line when it ends. INFO, as
//! Java logs a refused handshake.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use tracing::{info, Instrument};

use super::accept::HANDSHAKE_TIMEOUT;

/// After a logged timeout, further ones are only counted for this long.
pub const QUIET_PERIOD: Duration = Duration::from_secs(10);

/// One listener's handshake timeouts.
pub struct TimeoutLog {
    listener: String,
    tally: Mutex<Tally>,
}

#[derive(Default)]
struct Tally {
    /// Until when timeouts are only counted.
    quiet_until: Option<Instant>,
    counted: u64,
    addresses: BTreeSet<IpAddr>,
}

impl TimeoutLog {
    pub fn new(listener: &str) -> Arc<TimeoutLog> {
        Arc::new(TimeoutLog {
            listener: listener.to_string(),
            tally: Mutex::new(Tally::default()),
        })
    }

    /// Notes that the handshake of the connection from `peer` timed out and it was closed.
    pub fn closed(self: &Arc<Self>, peer: SocketAddr) {
        let now = Instant::now();
        let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        match tally.quiet_until {
            Some(until) if now < until => {
                tally.counted += 1;
                tally.addresses.insert(peer.ip());
                if tally.counted == 1 {
                    let log = self.clone();
                    tokio::spawn(
                        async move {
                            tokio::time::sleep_until(until).await;
                            log.summarize();
                        }
                        .in_current_span(),
                    );
                }
            }
            _ => {
                tally.quiet_until = Some(now + QUIET_PERIOD);
                info!(
                    target: "kraftd::socket",
                    "Failed authentication with {peer} on {} (TLS handshake did not finish \
                     within {HANDSHAKE_TIMEOUT:?})",
                    self.listener
                );
            }
        }
    }

    /// Says how many timeouts were counted, and stays quiet for another period.
    fn summarize(&self) {
        let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        let (counted, addresses) = (tally.counted, tally.addresses.len());
        info!(
            target: "kraftd::socket",
            "Closed {counted} more connection{} on {} whose TLS handshake did not finish within \
             {HANDSHAKE_TIMEOUT:?} (from {addresses} address{}) in the last {QUIET_PERIOD:?}",
            if counted == 1 { "" } else { "s" },
            self.listener,
            if addresses == 1 { "" } else { "es" }
        );
        *tally = Tally {
            quiet_until: Some(Instant::now() + QUIET_PERIOD),
            ..Tally::default()
        };
    }
}
