//! Connection limits and timers of the controller listeners, as Kafka 4.4's socket server has
//! them:
//!
//! - `max.connections` (all listeners) and `listener.name.<l>.max.connections`: at the limit,
//!   a listener stops accepting until a connection closes (Java's acceptor blocks; clients
//!   wait in the kernel's backlog);
//! - `max.connections.per.ip` and `max.connections.per.ip.overrides` (`host:count,...`): a
//!   connection from an address that has as many already is accepted and closed at once;
//! - `connections.max.idle.ms`: a connection idle this long is closed (negative: never);
//! - `connection.failed.authentication.delay.ms`: how long a failed authentication waits
//!   before its answer and the close.

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::config::values::parse_list;
use super::config::{ConfigError, Reader};
use super::tls::listener_prefix;

/// Every key read here (bare names; `max.connections` may carry a listener prefix).
pub const LIMIT_KEYS: &[&str] = &[
    "connection.failed.authentication.delay.ms",
    "connections.max.idle.ms",
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
];

/// The connection settings shared by every controller listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionSettings {
    /// `connections.max.idle.ms` (`None`: negative, never).
    pub max_idle: Option<Duration>,
    /// `connection.failed.authentication.delay.ms`.
    pub failed_authentication_delay: Duration,
    /// `max.connections`, over all listeners.
    pub max_connections: u32,
    /// `listener.name.<l>.max.connections`, where set.
    pub max_listener_connections: HashMap<String, u32>,
    /// `max.connections.per.ip`.
    pub max_per_ip: u32,
    /// `max.connections.per.ip.overrides`, resolved.
    pub max_per_ip_overrides: HashMap<IpAddr, u32>,
}

impl Default for ConnectionSettings {
    /// Kafka's defaults.
    fn default() -> Self {
        ConnectionSettings {
            max_idle: Some(Duration::from_millis(600_000)),
            failed_authentication_delay: Duration::from_millis(100),
            max_connections: i32::MAX as u32,
            max_listener_connections: HashMap::new(),
            max_per_ip: i32::MAX as u32,
            max_per_ip_overrides: HashMap::new(),
        }
    }
}

impl ConnectionSettings {
    pub(crate) fn read(r: &Reader<'_>, listeners: &[String]) -> Result<Self, ConfigError> {
        let d = ConnectionSettings::default();
        let idle_ms = r.long("connections.max.idle.ms", 600_000, i64::MIN)?;
        let delay_ms = r.int("connection.failed.authentication.delay.ms", 100, 0)?;
        if idle_ms >= 0 && i64::from(delay_ms) >= idle_ms {
            return Err(ConfigError::Inconsistent(format!(
                "connection.failed.authentication.delay.ms={delay_ms} must be less than \
                 connections.max.idle.ms={idle_ms}, or failed authentications time out before \
                 their answer; lower the delay or raise the idle timeout"
            )));
        }
        let max_per_ip = r.uint("max.connections.per.ip", d.max_per_ip, 0)?;
        let overrides = per_ip_overrides(r.raw("max.connections.per.ip.overrides"))?;
        if max_per_ip == 0 && overrides.is_empty() {
            return Err(ConfigError::Inconsistent(
                "max.connections.per.ip=0 would refuse everyone: Kafka allows 0 only with \
                 max.connections.per.ip.overrides naming the addresses that may connect"
                    .to_string(),
            ));
        }
        let mut max_listener_connections = HashMap::new();
        for l in listeners {
            let key = format!("{}max.connections", listener_prefix(l));
            if r.raw(&key).is_some() {
                max_listener_connections.insert(l.clone(), r.uint(&key, d.max_connections, 0)?);
            }
        }
        Ok(ConnectionSettings {
            max_idle: u64::try_from(idle_ms).ok().map(Duration::from_millis),
            failed_authentication_delay: Duration::from_millis(delay_ms as u64),
            max_connections: r.uint("max.connections", d.max_connections, 0)?,
            max_listener_connections,
            max_per_ip,
            max_per_ip_overrides: overrides,
        })
    }
}

/// `host:count,...` (Kafka's `parseCsvMap`: split at the last ':'), each host resolved.
fn per_ip_overrides(raw: Option<&str>) -> Result<HashMap<IpAddr, u32>, ConfigError> {
    const KEY: &str = "max.connections.per.ip.overrides";
    let Some(raw) = raw else {
        return Ok(HashMap::new());
    };
    let mut out = HashMap::new();
    let mut unresolved = Vec::new();
    for item in parse_list(KEY, raw)? {
        let Some((host, count)) = item.rsplit_once(':') else {
            return Err(ConfigError::invalid(
                KEY,
                raw,
                "host:count pairs, comma-separated",
            ));
        };
        let count = super::config::values::parse_int(KEY, count.trim(), 0)? as u32;
        let host = host.trim().trim_start_matches('[').trim_end_matches(']');
        match host.parse::<IpAddr>().ok().or_else(|| {
            (host, 0)
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .map(|a| a.ip())
        }) {
            Some(ip) => {
                out.insert(ip, count);
            }
            None => unresolved.push(host.to_string()),
        }
    }
    if !unresolved.is_empty() {
        return Err(ConfigError::invalid(
            KEY,
            raw,
            format!(
                "host:count pairs whose hosts resolve; these do not: {}",
                unresolved.join(", ")
            ),
        ));
    }
    Ok(out)
}

/// A connection refused for its address's count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Rejected connection from {ip}, address already has the configured maximum of {max} connections.")]
pub struct TooManyConnections {
    pub ip: IpAddr,
    pub max: u32,
}

/// The open connections, counted as Kafka's `ConnectionQuotas` counts them.
#[derive(Debug, Default)]
pub struct Counts {
    total: u32,
    per_listener: HashMap<String, u32>,
    per_ip: HashMap<IpAddr, u32>,
}

impl Counts {
    /// Whether `listener` may accept another connection.
    pub fn slot_available(&self, settings: &ConnectionSettings, listener: &str) -> bool {
        let on_listener = self.per_listener.get(listener).copied().unwrap_or(0);
        let listener_max = settings
            .max_listener_connections
            .get(listener)
            .copied()
            .unwrap_or(u32::MAX);
        on_listener < listener_max && self.total < settings.max_connections
    }

    /// Counts a connection from `ip`, unless its address is at its maximum.
    pub fn add(
        &mut self,
        settings: &ConnectionSettings,
        listener: &str,
        ip: IpAddr,
    ) -> Result<(), TooManyConnections> {
        let max = settings
            .max_per_ip_overrides
            .get(&ip)
            .copied()
            .unwrap_or(settings.max_per_ip);
        let from_ip = self.per_ip.entry(ip).or_insert(0);
        if *from_ip >= max {
            if *from_ip == 0 {
                self.per_ip.remove(&ip);
            }
            return Err(TooManyConnections { ip, max });
        }
        *from_ip += 1;
        self.total += 1;
        *self.per_listener.entry(listener.to_string()).or_insert(0) += 1;
        Ok(())
    }

    pub fn remove(&mut self, listener: &str, ip: IpAddr) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.per_listener.get_mut(listener) {
            *n = n.saturating_sub(1);
        }
        if let Some(n) = self.per_ip.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&ip);
            }
        }
    }
}

/// The limits in force and the live counts, shared by every listener.
#[derive(Debug, Default)]
pub struct ConnectionLimits {
    pub settings: ConnectionSettings,
    counts: Mutex<Counts>,
    freed: tokio::sync::Notify,
}

impl ConnectionLimits {
    pub fn new(settings: ConnectionSettings) -> ConnectionLimits {
        ConnectionLimits {
            settings,
            ..Default::default()
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        // Counts are updated in single statements; a poisoned lock still holds whole values.
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `listener` may accept a connection.
    pub async fn wait_for_slot(&self, listener: &str) {
        loop {
            let freed = self.freed.notified();
            if self.counts().slot_available(&self.settings, listener) {
                return;
            }
            freed.await;
        }
    }

    /// Counts a new connection; the guard uncounts it when dropped.
    pub fn register(
        self: &Arc<Self>,
        listener: &str,
        ip: IpAddr,
    ) -> Result<ConnectionGuard, TooManyConnections> {
        self.counts().add(&self.settings, listener, ip)?;
        Ok(ConnectionGuard {
            limits: self.clone(),
            listener: listener.to_string(),
            ip,
        })
    }
}

/// One counted connection.
pub struct ConnectionGuard {
    limits: Arc<ConnectionLimits>,
    listener: String,
    ip: IpAddr,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.limits.counts().remove(&self.listener, self.ip);
        self.limits.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::config::Properties;

    fn settings(pairs: &[(&str, &str)]) -> Result<ConnectionSettings, ConfigError> {
        let mut p = Properties::default();
        for (k, v) in pairs {
            p.insert(k.to_string(), v.to_string());
        }
        ConnectionSettings::read(&Reader(&p), &["CONTROLLER".to_string()])
    }

    #[test]
    fn per_ip_limits_refuse_the_connection_over_the_count() {
        let s = settings(&[
            ("max.connections.per.ip", "2"),
            ("max.connections.per.ip.overrides", "127.0.0.2:0, [::1]:5"),
        ])
        .unwrap();
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        assert_eq!(s.max_per_ip_overrides[&"::1".parse::<IpAddr>().unwrap()], 5);
        let mut c = Counts::default();
        c.add(&s, "CONTROLLER", a).unwrap();
        c.add(&s, "CONTROLLER", a).unwrap();
        assert_eq!(
            c.add(&s, "CONTROLLER", a),
            Err(TooManyConnections { ip: a, max: 2 })
        );
        assert_eq!(
            c.add(&s, "CONTROLLER", b).unwrap_err().to_string(),
            "Rejected connection from 127.0.0.2, address already has the configured maximum of 0 connections."
        );
        c.remove("CONTROLLER", a);
        c.add(&s, "CONTROLLER", a).unwrap();
    }

    #[test]
    fn max_connections_blocks_the_listener() {
        let s = settings(&[
            ("max.connections", "2"),
            ("listener.name.controller.max.connections", "1"),
        ])
        .unwrap();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let mut c = Counts::default();
        assert!(c.slot_available(&s, "CONTROLLER"));
        c.add(&s, "CONTROLLER", ip).unwrap();
        assert!(!c.slot_available(&s, "CONTROLLER"));
        assert!(c.slot_available(&s, "OTHER"));
        c.add(&s, "OTHER", ip).unwrap();
        assert!(!c.slot_available(&s, "OTHER"));
        c.remove("CONTROLLER", ip);
        assert!(c.slot_available(&s, "CONTROLLER"));
    }

    #[test]
    fn settings_are_checked_as_kafka_checks_them() {
        assert!(settings(&[("max.connections.per.ip", "0")]).is_err());
        assert!(settings(&[
            ("max.connections.per.ip", "0"),
            ("max.connections.per.ip.overrides", "127.0.0.1:3")
        ])
        .is_ok());
        let e = settings(&[("connection.failed.authentication.delay.ms", "700000")]).unwrap_err();
        assert!(
            e.to_string().contains("connections.max.idle.ms=600000"),
            "{e}"
        );
        let e = settings(&[("max.connections.per.ip.overrides", "no-such-host.invalid:3")])
            .unwrap_err();
        assert!(e.to_string().contains("no-such-host.invalid"), "{e}");
        assert_eq!(
            settings(&[("connections.max.idle.ms", "-1")])
                .unwrap()
                .max_idle,
            None
        );
        assert_eq!(settings(&[]).unwrap(), ConnectionSettings::default());
    }
}
