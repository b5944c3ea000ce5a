//! Connections an SSL controller listener (client certificates required) refuses, sent to a
//! Java 4.4 controller and to kraftd: what the client sees, what each logs, and that each
//! serves the harness's DescribeQuorum over mutual TLS right after.
//!
//! What the client sees is compared as [`Seen`]: an alert (by name), other bytes, a close, a
//! reset, or a connection still open. Both answer every refused handshake with a fatal alert
//! and close; the alerts differ where Kafka's clients cannot tell them apart:
//! - bytes that are no TLS record (garbage, a plaintext ApiVersions request): Java sends
//!   `internal_error`, kraftd (rustls) `decode_error`. A plaintext Kafka client reads either
//!   7-byte alert as the size prefix of a 352 MB answer, and fails the same way;
//! - a certificate of another CA, an expired one: Java sends `certificate_unknown` for both
//!   (its trust manager's PKIX failure), kraftd `unknown_ca` and `certificate_expired`. A
//!   Java client reports any of them as `SslAuthenticationException: SSL handshake failed`
//!   and does not retry; only the cause's text names the alert;
//! - no certificate: both send `certificate_required` (TLS 1.3).
//!
//! Both log one line per refused connection at INFO, in Kafka's words: Java's `Selector`
//! "Failed authentication with /127.0.0.1 (channelId=...) (SSL handshake failed)", kraftd
//! "Failed authentication with 127.0.0.1:<port> on CONTROLLER (<why>)", the why naming the
//! failure (corrupt record, unknown issuer, expired, no certificate) where Java's does not.
//!
//! A handshake that never finishes is where the two differ by design: Java keeps such a
//! connection until `connections.max.idle.ms` (10 minutes by default; its `Selector` expires
//! idle channels, handshaking or not, and logs that at TRACE), where kraftd closes it after
//! `HANDSHAKE_TIMEOUT` (10 s), so that half-open handshakes cannot pile up (see `half_open`).

use std::time::Duration;

use super::client::{api_versions_frame, client_hello_prefix, Opened, Seen};
use super::{eventually, SslController};
use crate::harness::dynamic_quorum::Kind;
use crate::harness::pki::{Pki, Validity};

/// How long a refused connection may take to end.
const REFUSAL_WAIT: Duration = Duration::from_secs(5);
/// kraftd's handshake bound, and some slack.
const HALF_OPEN_WAIT: Duration = Duration::from_secs(13);

#[derive(Clone, Copy)]
enum Send {
    /// Raw bytes on the TCP connection.
    Raw(&'static str),
    /// A TLS handshake as this identity of the suite's CA (expired if so), then a request.
    Tls(Who),
}

#[derive(Clone, Copy, Debug)]
enum Who {
    OtherAuthority,
    Expired,
    NoCertificate,
}

/// Each case, what it sends, and what a client sees from Java and from kraftd.
fn cases() -> Vec<(&'static str, Send, Seen, Seen)> {
    use Seen::*;
    vec![
        (
            "garbage bytes",
            Send::Raw("garbage"),
            Alert("InternalError".into()),
            Alert("DecodeError".into()),
        ),
        (
            "a plaintext ApiVersions request",
            Send::Raw("api-versions"),
            Alert("InternalError".into()),
            Alert("DecodeError".into()),
        ),
        (
            "a certificate of another CA",
            Send::Tls(Who::OtherAuthority),
            Alert("CertificateUnknown".into()),
            Alert("UnknownCA".into()),
        ),
        (
            "an expired certificate",
            Send::Tls(Who::Expired),
            Alert("CertificateUnknown".into()),
            Alert("CertificateExpired".into()),
        ),
        (
            "no certificate",
            Send::Tls(Who::NoCertificate),
            // Java 17's TLS 1.3 server answers an empty certificate with bad_certificate
            // (RFC 8446 asks for certificate_required, which rustls sends).
            Alert("BadCertificate".into()),
            Alert("CertificateRequired".into()),
        ),
    ]
}

fn raw_bytes(what: &str) -> Vec<u8> {
    match what {
        "garbage" => b"\xde\xad\xbe\xef not a TLS record, nor a Kafka frame\r\n\r\n".to_vec(),
        "api-versions" => api_versions_frame(),
        other => unreachable!("{other}"),
    }
}

/// What one controller made of one case: what the client saw, and the log lines naming the
/// connection (by its client port, which Java's and kraftd's lines both name).
struct Outcome {
    seen: Seen,
    lines: Vec<String>,
}

fn run(c: &SslController, send: Send) -> Outcome {
    let mut opened = Opened::connect(c.port());
    let port = opened.local_port;
    let seen = match send {
        Send::Raw(what) => opened.send(&raw_bytes(what)).seen(REFUSAL_WAIT),
        Send::Tls(who) => {
            let identity = match who {
                Who::OtherAuthority => Some(Pki::other_authority().identity("intruder")),
                Who::Expired => Some(Pki::get().identity_valid("expired", Validity::Expired)),
                Who::NoCertificate => None,
            };
            opened.tls_request(identity.as_deref(), REFUSAL_WAIT)
        }
    };
    Outcome {
        seen,
        lines: lines_naming(c, port),
    }
}

/// The log lines naming the connection from client port `port`, once there is one (or after
/// two seconds: none).
fn lines_naming(c: &SslController, port: u16) -> Vec<String> {
    let needle = format!("127.0.0.1:{port}");
    let find = || -> Vec<String> {
        c.log()
            .lines()
            .filter(|l| l.contains(&needle))
            .map(str::to_string)
            .collect()
    };
    eventually(Duration::from_secs(2), || !find().is_empty());
    // A line may follow the first (Java's close, a moment later).
    std::thread::sleep(Duration::from_millis(300));
    find()
}

pub(super) fn compare(java: &SslController, kraftd: &SslController) {
    // The never-finished handshakes start first and are looked at last.
    let hello = client_hello_prefix(40);
    let mut half_open: Vec<(Kind, Opened)> = [java, kraftd]
        .iter()
        .map(|c| {
            let mut o = Opened::connect(c.port());
            o.send(&hello);
            (c.kind(), o)
        })
        .collect();
    let started = std::time::Instant::now();

    let mut failures = Vec::new();
    eprintln!("Refused connections, Java 4.4 and kraftd:");
    for (name, send, java_expects, kraftd_expects) in cases() {
        let j = run(java, send);
        let k = run(kraftd, send);
        eprintln!(
            "  {name}:\n    java:   {:?}; logged {:?}\n    kraftd: {:?}; logged {:?}",
            j.seen, j.lines, k.seen, k.lines
        );
        if j.seen != java_expects {
            failures.push(format!(
                "{name}: Java: {:?}, expected {java_expects:?}",
                j.seen
            ));
        }
        if k.seen != kraftd_expects {
            failures.push(format!(
                "{name}: kraftd: {:?}, expected {kraftd_expects:?}",
                k.seen
            ));
        }
        if k.lines.len() != 1 || !k.lines[0].contains("Failed authentication with") {
            failures.push(format!(
                "{name}: kraftd logged {} lines: {:?}",
                k.lines.len(),
                k.lines
            ));
        }
        for c in [java, kraftd] {
            if !c.serves() {
                failures.push(format!("{name}: {} no longer serves", c.kind()));
            }
        }
    }

    // A ClientHello cut short: kraftd closes it after its handshake bound, Java keeps it.
    std::thread::sleep(HALF_OPEN_WAIT.saturating_sub(started.elapsed()));
    eprintln!(
        "  half a ClientHello, then nothing ({:?} later):",
        started.elapsed()
    );
    for (kind, o) in &mut half_open {
        let closed = o.is_closed();
        let c = if *kind == Kind::Java { java } else { kraftd };
        let lines = lines_naming(c, o.local_port);
        eprintln!(
            "    {kind}: {}; logged {lines:?}",
            if closed { "closed" } else { "open" }
        );
        let expected = *kind == Kind::Kraftd;
        if closed != expected {
            failures.push(format!("half a ClientHello: {kind} closed: {closed}"));
        }
        if *kind == Kind::Kraftd && lines.len() != 1 {
            failures.push(format!("half a ClientHello: kraftd logged {lines:?}"));
        }
        if !c.serves() {
            failures.push(format!("half a ClientHello: {kind} no longer serves"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
