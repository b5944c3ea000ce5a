//! A listener's TLS as it is now: built at start-up, and rebuilt when one of its store files
//! changes, so that a rotated certificate reaches new connections without a restart (Java
//! needs a dynamic config change for that). Connections already open keep the TLS they began
//! with. A new file that does not load leaves the old TLS in place, and says why once.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tracing::{info, warn};

use super::context::{ListenerTls, TlsError};
use super::settings::TlsSettings;

/// How often the store files are looked at.
pub const RELOAD_CHECK_INTERVAL: Duration = Duration::from_secs(2);

/// One listener's current TLS.
pub struct LiveTls {
    settings: TlsSettings,
    current: RwLock<Arc<ListenerTls>>,
    /// The store files and their contents when last looked at (`None`: unreadable then).
    seen: Mutex<Vec<(PathBuf, Option<Vec<u8>>)>>,
}

impl LiveTls {
    /// Builds the listener's TLS from its stores; an error here stops the start-up.
    pub fn load(settings: &TlsSettings) -> Result<Arc<LiveTls>, TlsError> {
        let seen = snapshot(settings);
        let built = ListenerTls::build(settings)?;
        Ok(Arc::new(LiveTls {
            settings: settings.clone(),
            current: RwLock::new(Arc::new(built)),
            seen: Mutex::new(seen),
        }))
    }

    /// The TLS a new connection uses.
    pub fn current(&self) -> Arc<ListenerTls> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn listener(&self) -> &str {
        &self.settings.listener
    }

    /// Rebuilds the TLS if a store file changed since last looked at. Returns whether it did.
    pub fn refresh(&self) -> bool {
        let now = snapshot(&self.settings);
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if *seen == now {
            return false;
        }
        let changed: Vec<String> = now
            .iter()
            .filter(|file| !seen.contains(file))
            .map(|(p, _)| p.display().to_string())
            .collect();
        *seen = now;
        match ListenerTls::build(&self.settings) {
            Ok(built) => {
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(built);
                info!(
                    target: "kraftd::tls",
                    "Reloaded the TLS of listener {} from {}: new connections use it",
                    self.settings.listener,
                    changed.join(", ")
                );
                true
            }
            Err(e) => {
                warn!(
                    target: "kraftd::tls",
                    "Kept the previous TLS of listener {}: its changed store does not load: {e}",
                    self.settings.listener
                );
                false
            }
        }
    }

    /// Looks at the store files every [`RELOAD_CHECK_INTERVAL`], forever.
    pub async fn watch(self: Arc<Self>) {
        let mut tick = tokio::time::interval(RELOAD_CHECK_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let live = self.clone();
            // File reads off the async workers.
            let _ = tokio::task::spawn_blocking(move || live.refresh()).await;
        }
    }
}

fn snapshot(settings: &TlsSettings) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    ListenerTls::files(settings)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).ok();
            (p, bytes)
        })
        .collect()
}
