//! Looking at a running quorum from a test: fast raw DescribeQuorum polls (no JVM start per
//! poll, so handovers can be timed), `kafka-metadata-quorum describe --replication` parsing,
//! and batch-by-batch comparison of the nodes' metadata logs on disk.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use super::transport::ProbeStream;
use kraftd::protocol::codec::{ApiMessage, Message, Reader};
use kraftd::protocol::frame::{encode_request, response_header_version};
use kraftd::protocol::messages::{self as wire, DescribeQuorumResponse, ResponseHeader};
use kraftd::protocol::records::{split_batches, SplitEnd};
use kraftd::raft::convert::describe;
use kraftd::raft::msg::{DescribeQuorumRequest, DescribeQuorumResponse as Described};

/// Sends one request to `127.0.0.1:port` on a fresh connection and returns the response body
/// (header removed) and the version to decode it at; `None` if the node is unreachable, closes
/// the connection or answers with a bad header.
pub fn round_trip<M: Message>(port: u16, api_key: i16, version: i16, body: &M) -> Option<Vec<u8>> {
    round_trip_at(loopback(port), api_key, version, body)
}

/// [`round_trip`] to any address.
pub fn round_trip_at<M: Message>(
    addr: SocketAddr,
    api_key: i16,
    version: i16,
    body: &M,
) -> Option<Vec<u8>> {
    let frame = encode_request(api_key, version, 7, Some("compat-probe"), body).ok()?;
    let mut s = send_frame_to(addr, &frame)?;
    read_response(&mut s, api_key, version, Duration::from_secs(10))
}

/// [`round_trip`] of an already encoded request frame (size prefix included), so that the very
/// same bytes can go to several nodes; waits up to `timeout` for the answer.
pub fn round_trip_frame(
    port: u16,
    api_key: i16,
    version: i16,
    frame: &[u8],
    timeout: Duration,
) -> Option<Vec<u8>> {
    let mut s = send_frame(port, frame)?;
    read_response(&mut s, api_key, version, timeout)
}

/// How long a probe's connect may take: a node cut off by a partition (see `netns.rs`) drops
/// the handshake instead of refusing it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Connects to `127.0.0.1:port` and writes `frame`; the answer is read with [`read_response`].
pub fn send_frame(port: u16, frame: &[u8]) -> Option<ProbeStream> {
    send_frame_to(loopback(port), frame)
}

/// [`send_frame`] to any address.
pub fn send_frame_to(addr: SocketAddr, frame: &[u8]) -> Option<ProbeStream> {
    let mut s = ProbeStream::connect(addr, CONNECT_TIMEOUT)?;
    s.write_all(frame).ok()?;
    Some(s)
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Reads one response from `s` and returns its body (header removed); `None` if the peer closes
/// the connection, answers with a bad header, or says nothing within `timeout`.
pub fn read_response(
    s: &mut ProbeStream,
    api_key: i16,
    version: i16,
    timeout: Duration,
) -> Option<Vec<u8>> {
    try_read_response(s, api_key, version, timeout).ok()
}

/// [`read_response`] saying why there is no answer.
pub fn try_read_response(
    s: &mut ProbeStream,
    api_key: i16,
    version: i16,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut size = [0u8; 4];
    s.read_exact(&mut size).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            "the connection was closed without an answer".to_string()
        }
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("no answer within {timeout:?}")
        }
        _ => format!("reading the answer failed: {e}"),
    })?;
    let mut answer = vec![0u8; i32::from_be_bytes(size).max(0) as usize];
    s.read_exact(&mut answer)
        .map_err(|e| format!("the answer was cut short: {e}"))?;
    let mut r = Reader::new(&answer);
    ResponseHeader::decode(&mut r, response_header_version(api_key, version))
        .map_err(|e| format!("bad response header: {e:?}"))?;
    Ok(r.rest().to_vec())
}

/// [`round_trip_frame`] saying why there is no answer.
pub fn try_round_trip_frame(
    port: u16,
    api_key: i16,
    version: i16,
    frame: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let mut s = send_frame(port, frame).ok_or_else(|| format!("cannot send to port {port}"))?;
    try_read_response(&mut s, api_key, version, timeout)
}

/// One DescribeQuorum v2 round trip to `127.0.0.1:port`; `None` if the node is unreachable or
/// the answer is unreadable.
pub fn describe_quorum(port: u16) -> Option<Described> {
    describe_quorum_at(loopback(port))
}

/// [`describe_quorum`] at any address.
pub fn describe_quorum_at(addr: SocketAddr) -> Option<Described> {
    let body = describe::request_to_wire(&DescribeQuorumRequest { partition_ok: true });
    let answer = round_trip_at(addr, wire::DescribeQuorumRequest::API_KEY, 2, &body)?;
    let wire = DescribeQuorumResponse::decode_exact(&answer, 2).ok()?;
    Some(describe::response_from_wire(&wire))
}

/// The leader's DescribeQuorum answer, asking each port in turn (`None`: no node leads).
pub fn leader_view(ports: &[u16]) -> Option<Described> {
    let addrs: Vec<SocketAddr> = ports.iter().map(|&p| loopback(p)).collect();
    leader_view_at(&addrs)
}

/// [`leader_view`] asking each address in turn.
pub fn leader_view_at(addrs: &[SocketAddr]) -> Option<Described> {
    addrs.iter().find_map(|&a| {
        describe_quorum_at(a).filter(|d| d.partition_error.0 == 0 && d.leader_id >= 0)
    })
}

/// The log end offset the leader reports for voter `id`.
pub fn voter_end(d: &Described, id: i32) -> Option<i64> {
    d.voters
        .iter()
        .find(|v| v.replica_key.id == id)
        .map(|v| v.log_end_offset)
}

/// Does every voter stand at the leader's log end offset?
pub fn all_caught_up(d: &Described) -> bool {
    let leader_end = voter_end(d, d.leader_id);
    leader_end.is_some()
        && d.voters
            .iter()
            .all(|v| Some(v.log_end_offset) == leader_end)
}

/// The lowest base offset among the `.log` segments of a node's metadata log (0 if none).
pub fn first_segment_offset(metadata_dir: &Path) -> i64 {
    partition_files(metadata_dir)
        .iter()
        .filter_map(|n| n.strip_suffix(".log").and_then(|o| o.parse::<i64>().ok()))
        .min()
        .unwrap_or(0)
}

/// The end offsets of the snapshots (`<offset>-<epoch>.checkpoint`) in a node's metadata log.
pub fn snapshot_offsets(metadata_dir: &Path) -> Vec<i64> {
    let mut v: Vec<i64> = partition_files(metadata_dir)
        .iter()
        .filter_map(|n| {
            n.strip_suffix(".checkpoint")?
                .split('-')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    v.sort();
    v
}

fn partition_files(metadata_dir: &Path) -> Vec<String> {
    std::fs::read_dir(metadata_dir.join("__cluster_metadata-0"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// One row of `kafka-metadata-quorum describe --replication`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicationRow {
    pub node_id: i32,
    pub log_end_offset: i64,
    pub lag: i64,
    pub status: String,
    /// Every column by its header name.
    pub columns: BTreeMap<String, String>,
}

/// Parses the tool's table: a header line of column names, then one line per replica.
pub fn parse_replication(stdout: &str) -> Option<Vec<ReplicationRow>> {
    let mut lines = stdout.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .find(|l| l.trim_start().starts_with("NodeId"))?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.len() != header.len() {
            return None;
        }
        let columns: BTreeMap<String, String> = header
            .iter()
            .cloned()
            .zip(cells.iter().map(|c| c.to_string()))
            .collect();
        rows.push(ReplicationRow {
            node_id: columns.get("NodeId")?.parse().ok()?,
            log_end_offset: columns.get("LogEndOffset")?.parse().ok()?,
            lag: columns.get("Lag")?.parse().ok()?,
            status: columns.get("Status")?.clone(),
            columns,
        });
    }
    Some(rows)
}

/// A batch of a node's log: (base offset, last offset, exact bytes).
pub type LoggedBatch = (i64, i64, Vec<u8>);

/// Every complete batch in the `.log` segments of `<metadata dir>/__cluster_metadata-0`, in
/// offset order. A torn tail (a node killed mid-write) is left out, as recovery would cut it.
pub fn read_log_batches(metadata_dir: &Path) -> Vec<LoggedBatch> {
    let partition = metadata_dir.join("__cluster_metadata-0");
    let mut segments: Vec<_> = std::fs::read_dir(&partition)
        .unwrap_or_else(|e| panic!("read {}: {e}", partition.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    let mut out = Vec::new();
    for seg in segments {
        let bytes = std::fs::read(&seg).unwrap_or_else(|e| panic!("read {}: {e}", seg.display()));
        let split = split_batches(&bytes);
        for b in &split.batches {
            out.push((b.base_offset(), b.last_offset(), b.bytes().to_vec()));
        }
        if let SplitEnd::Corrupt { position, error } = &split.end {
            panic!("{} is corrupt at byte {position}: {error}", seg.display());
        }
    }
    out
}

/// Checks that every node holds the same batches, byte for byte, for all offsets in
/// `[from, below)` that it has; returns how many batches were compared per node.
#[track_caller]
pub fn assert_same_batches(logs: &[(String, Vec<LoggedBatch>)], from: i64, below: i64) -> usize {
    let in_range = |l: &[LoggedBatch]| -> Vec<LoggedBatch> {
        l.iter()
            .filter(|(base, last, _)| *base >= from && *last < below)
            .cloned()
            .collect()
    };
    let (first_name, first) = &logs[0];
    let reference = in_range(first);
    for (name, log) in &logs[1..] {
        let other = in_range(log);
        assert_eq!(
            reference.len(),
            other.len(),
            "{first_name} and {name} hold different numbers of batches in [{from}, {below})"
        );
        for (a, b) in reference.iter().zip(&other) {
            assert_eq!(
                (a.0, a.1),
                (b.0, b.1),
                "{first_name} and {name} have different batch boundaries"
            );
            assert!(
                a.2 == b.2,
                "{first_name} and {name} differ in the batch at offset {}",
                a.0
            );
        }
    }
    reference.len()
}
