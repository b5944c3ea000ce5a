//! Certificate rotation on a live kraftd voter: three kraftd voters on mutual TLS (PEM key
//! stores), voter 2's key store a file of this test's own. The file is replaced (renamed over,
//! as operators deploy files) by a new key and certificate from the same CA for another
//! subject, and:
//! - the next TLS connections to voter 2 are served the new certificate;
//! - a connection opened before goes on being answered, on the old one;
//! - voter 2 was not restarted (same pid) and the quorum kept its leader and epoch;
//! - voter 2 logged one line for the reload.
//!
//! Then the file is replaced by garbage: voter 2 keeps serving the new certificate and logs
//! once why it kept it.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::{self as wire, DescribeQuorumResponse};
use kraftd::raft::convert::describe;
use kraftd::raft::msg::DescribeQuorumRequest;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use super::client::loopback;
use super::eventually;
use crate::harness::kraftd_quorum::KraftdQuorum;
use crate::harness::pki::{Pki, StoreFormat};
use crate::harness::quorum_probe::{describe_quorum, leader_view, try_read_response};
use crate::harness::transport::{client_config, PerNode, ProbeStream, Transport};
use crate::harness::TestDir;

const ROTATED: i32 = 2;
const KEYSTORE_LOCATION: &str = "listener.name.controller.ssl.keystore.location";
/// kraftd looks at its store files every 2 s.
const RELOAD_WAIT: Duration = Duration::from_secs(10);

/// A new TLS connection to `port` as the harness, and the certificate it was served.
fn connect(port: u16) -> (ProbeStream, CertificateDer<'static>) {
    let s = ProbeStream::connect_tls(loopback(port), Duration::from_secs(5), client_config())
        .unwrap_or_else(|e| panic!("a TLS connection to port {port}: {e}"));
    let served = match &s {
        ProbeStream::Tls(tls) => tls.conn.peer_certificates().expect("a server chain")[0].clone(),
        ProbeStream::Plain(_) => unreachable!("a TLS port"),
    };
    (s, served)
}

/// DescribeQuorum on an open connection (voter 2 answers it as leader or follower): the
/// leader epoch it names (-1 from a follower).
fn describe_on(s: &mut ProbeStream) -> i32 {
    let body = describe::request_to_wire(&DescribeQuorumRequest { partition_ok: true });
    let key = wire::DescribeQuorumRequest::API_KEY;
    let frame = encode_request(key, 2, 9, Some("compat-rotation"), &body).expect("encodes");
    s.write_all(&frame).expect("the request is sent");
    let answer = try_read_response(s, key, 2, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("DescribeQuorum on the connection opened before: {e}"));
    let wire = DescribeQuorumResponse::decode_exact(&answer, 2).expect("decodes");
    describe::response_from_wire(&wire).leader_epoch
}

/// The leaf certificate of a PEM key store.
fn leaf_of(pem: &Path) -> CertificateDer<'static> {
    CertificateDer::pem_file_iter(pem)
        .expect("a PEM file")
        .next()
        .expect("a certificate")
        .expect("readable")
}

/// Replaces `target` by a file with `bytes`, renamed over it.
fn replace(target: &Path, bytes: &[u8]) {
    let tmp = target.with_extension("next");
    fs::write(&tmp, bytes).expect("the new file is written");
    fs::rename(&tmp, target).expect("the new file replaces the old");
}

fn count(log: &Path, needle: &str) -> usize {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

#[test]
fn a_kraftd_voter_serves_a_rotated_certificate_without_a_restart() {
    let dir = TestDir::new();
    let pki = Pki::get();
    let keystore = dir.join("controller-2-keystore.pem");
    fs::copy(
        pki.identity("controller-2").keystore(StoreFormat::Pem),
        &keystore,
    )
    .expect("voter 2's own key store");
    let tls = Transport::MutualTls {
        kraftd: PerNode::Every(StoreFormat::Pem),
    };
    let location = keystore.display().to_string();
    let mut q = KraftdQuorum::start_secured_with(&dir, 3, tls, |id| match id {
        ROTATED => vec![(KEYSTORE_LOCATION.to_string(), location.clone())],
        _ => Vec::new(),
    });
    let port = q.port(ROTATED);
    q.wait_for_leader(|_| true);
    let ports: Vec<u16> = (1..=3).map(|id| q.port(id)).collect();
    let leader_and_epoch = || {
        let d = leader_view(&ports).expect("a voter leads");
        (d.leader_id, d.leader_epoch)
    };
    let before = leader_and_epoch();
    let voter_2_says = describe_quorum(port).expect("voter 2 answers").leader_epoch;
    let pid = q.node(ROTATED).pid();
    let log = q.node(ROTATED).log_path().to_path_buf();
    let (mut opened_before, first) = connect(port);
    assert_eq!(
        first,
        leaf_of(&keystore),
        "voter 2 serves its key store's certificate"
    );
    assert_eq!(describe_on(&mut opened_before), voter_2_says);

    // A new key and certificate, same CA, another subject and serial.
    let next = pki.identity("controller-2-next");
    let rotated = leaf_of(&next.keystore(StoreFormat::Pem));
    replace(
        &keystore,
        &fs::read(next.keystore(StoreFormat::Pem)).unwrap(),
    );
    assert!(
        eventually(RELOAD_WAIT, || connect(port).1 == rotated),
        "voter 2 still serves the old certificate {RELOAD_WAIT:?} after the rotation"
    );
    eprintln!("voter 2 serves the rotated certificate (CN=controller-2-next)");
    assert_eq!(
        describe_on(&mut opened_before),
        voter_2_says,
        "the connection opened before the rotation is still answered"
    );
    assert_eq!(q.node(ROTATED).pid(), pid, "voter 2 was not restarted");
    assert!(q.node(ROTATED).is_running());
    assert_eq!(
        leader_and_epoch(),
        before,
        "the quorum kept its leader and epoch"
    );
    assert_eq!(
        count(&log, "Reloaded the TLS of listener"),
        1,
        "one line for the reload"
    );
    let text = fs::read_to_string(&log).unwrap();
    let reloaded = text
        .lines()
        .find(|l| l.contains("Reloaded the TLS"))
        .unwrap();
    eprintln!("{reloaded}");
    assert!(
        reloaded.contains(&location) && !reloaded.contains("ca.pem"),
        "the line names the file that changed, and only it"
    );

    // Garbage in its place: the rotated certificate stays, and voter 2 says why, once.
    replace(
        &keystore,
        b"-----BEGIN GARBAGE-----\nnot a key store\n-----END GARBAGE-----\n",
    );
    let kept = "Kept the previous TLS of listener";
    assert!(
        eventually(RELOAD_WAIT, || count(&log, kept) == 1),
        "voter 2 did not say it kept its TLS"
    );
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(
        count(&log, kept),
        1,
        "one line for the bad file, not one per look"
    );
    let line = fs::read_to_string(&log).unwrap();
    let line = line.lines().find(|l| l.contains(kept)).unwrap();
    eprintln!("after the garbage: {line}");
    assert_eq!(
        connect(port).1,
        rotated,
        "voter 2 still serves the rotated certificate"
    );
    assert_eq!(describe_on(&mut opened_before), voter_2_says);
    assert_eq!(
        leader_and_epoch(),
        before,
        "the quorum kept its leader and epoch"
    );
    assert_eq!(count(&log, "Reloaded the TLS of listener"), 1);
    q.stop();
}
