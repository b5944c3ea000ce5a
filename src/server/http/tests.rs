//! The listener against hostile and broken clients: each gets 400 (431, 405, 404) or a close,
//! and the listener goes on serving; the probes' answers over HTTP.

use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;

async fn listening(dir: PathBuf) -> (SocketAddr, Arc<LoopHealth>) {
    let health = Arc::new(LoopHealth::default());
    let state = HttpState {
        node: None,
        health: health.clone(),
        channel: Arc::default(),
        metadata_dir: dir,
        process: None,
        last_exposition_bytes: Default::default(),
    };
    let socket = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    tokio::spawn(serve(socket, Arc::new(state)));
    (addr, health)
}

/// Sends `bytes` and returns what comes back until the server closes (or 5 s pass).
async fn exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    // The server may close before reading everything: a failed write is an answer too.
    let _ = s.write_all(bytes).await;
    let _ = s.shutdown().await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

async fn get(addr: SocketAddr, path: &str) -> String {
    exchange(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
}

fn status(answer: &str) -> Option<u16> {
    answer.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kraftd-http-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn probes_answer_with_one_line() {
    let (addr, health) = listening(temp_dir("probes")).await;
    let h = get(addr, "/healthz").await;
    assert_eq!(status(&h), Some(200), "{h}");
    assert!(h.ends_with("\r\n\r\nok: node loop alive\n"), "{h}");
    let r = get(addr, "/readyz").await;
    assert_eq!(status(&r), Some(503), "{r}");
    assert!(r.ends_with("not ready: no leader known\n"), "{r}");
    health.turn_ended(2, true);
    let r = get(addr, "/readyz").await;
    assert_eq!(status(&r), Some(200), "{r}");
    assert!(r.ends_with("ready: leader 2, caught up, metadata log dir writable\n"));
    // No node loop in this test: /metrics says so.
    assert_eq!(status(&get(addr, "/metrics").await), Some(503));
    health.stopped();
    assert_eq!(status(&get(addr, "/healthz").await), Some(503));
}

#[tokio::test]
async fn bad_requests_get_an_error_status_or_a_close_and_the_listener_serves_on() {
    let (addr, _) = listening(temp_dir("bad")).await;
    let post = exchange(
        addr,
        b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status(&post), Some(405), "{post}");
    assert!(post.contains("allow: GET, HEAD"), "{post}");
    assert_eq!(status(&get(addr, "/nope").await), Some(404));
    let garbage = exchange(addr, b"\x00\x01\x02 NOT HTTP\r\n\r\n").await;
    assert!(matches!(status(&garbage), Some(400) | None), "{garbage}");
    let huge = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(MAX_HEAD_BYTES * 2)
    );
    let answer = exchange(addr, huge.as_bytes()).await;
    assert!(
        matches!(status(&answer), Some(431) | Some(400) | None),
        "{answer}"
    );
    let many: String = (0..MAX_HEADERS * 2)
        .map(|i| format!("X-{i}: y\r\n"))
        .collect();
    let answer = exchange(
        addr,
        format!("GET /healthz HTTP/1.1\r\n{many}\r\n").as_bytes(),
    )
    .await;
    assert!(
        matches!(status(&answer), Some(431) | Some(400) | None),
        "{answer}"
    );
    let answer = exchange(addr, b"GET /healthz HTTP/9.9\r\n\r\n").await;
    assert!(
        matches!(status(&answer), Some(400) | Some(505) | None),
        "{answer}"
    );
    // Seeded random bytes, one connection each; then a good request still works.
    let mut rng = rand::rngs::StdRng::seed_from_u64(30);
    for _ in 0..100 {
        let len = rng.gen_range(1..2048);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if rng.gen_bool(0.5) {
            // A plausible start, to get past the request line now and then.
            bytes.splice(0..0, b"GET /metrics HTTP/1.1\r\n".iter().copied());
        }
        let answer = exchange(addr, &bytes).await;
        assert!(
            matches!(
                status(&answer),
                Some(400) | Some(431) | Some(404) | Some(505) | None
            ),
            "{answer}"
        );
    }
    assert_eq!(status(&get(addr, "/healthz").await), Some(200));
}

#[tokio::test]
async fn connections_beyond_the_bound_are_closed_and_the_rest_served() {
    let (addr, _) = listening(temp_dir("conns")).await;
    let mut idle = Vec::new();
    for _ in 0..MAX_CONNECTIONS {
        let mut s = TcpStream::connect(addr).await.unwrap();
        // Half a request: the connection holds its slot.
        s.write_all(b"GET /hea").await.unwrap();
        idle.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = get(addr, "/healthz").await;
    assert_eq!(
        refused, "",
        "the connection over the bound is closed unanswered"
    );
    drop(idle);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(status(&get(addr, "/healthz").await), Some(200));
}

// Waits out the real head timeout (a paused clock needs tokio's test-util, which would build
// tokio a second time, with other features, for the tests alone).
#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_quietly_and_a_silent_one_as_bad_http() {
    let (addr, _) = listening(temp_dir("idle")).await;
    // A scraper's kept connection: one answer, then nothing for longer than the head timeout.
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = kept.read(&mut buf).await.unwrap();
    assert_eq!(status(&String::from_utf8_lossy(&buf[..n])), Some(200));
    // A client that connects and never sends a request head.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(HEAD_READ_TIMEOUT + Duration::from_secs(1)).await;
    assert_eq!(kept.read(&mut buf).await.unwrap(), 0, "closed after idling");
    assert_eq!(silent.read(&mut buf).await.unwrap(), 0, "closed unanswered");
    // How each is logged: the idle one quietly (debug), the silent one as bad HTTP (a warning).
    assert!(!bad_http(true, 1));
    assert!(bad_http(true, 0));
    assert!(bad_http(false, 3));
}
