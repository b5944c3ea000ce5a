//! Scraping Prometheus endpoints (kraftd's `/metrics`, the JMX exporter javaagent on Java
//! controllers) and comparing what they export: Java is the oracle of kraftd's metric names,
//! label sets and types (docs/monitoring.md).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use super::Kafka;

// The families the names check covers: Java's, under kraftd's list of them.
use kraftd::server::metrics::JAVA_FAMILY_PREFIXES;

/// How far apart the voters' high watermarks may be in one round of scrapes: the no-ops and
/// heartbeat-driven records the leader commits while the nodes are read one after another.
const HIGH_WATERMARK_SPREAD: f64 = 50.0;

/// Metrics Java registers on the leader (the active controller) only.
pub const LEADER_ONLY: [&str; 3] = [
    "kafka_server_raftmetrics_number_of_observers",
    "kafka_server_raftmetrics_uncommitted_voter_change",
    // The active controller's (the raft leader's) per-broker heartbeat gauge.
    "kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms",
];

/// Our Strimzi-style rules for the JMX exporter.
pub fn jmx_exporter_rules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("compat/jmx-exporter-kraft.yaml")
}

/// The JVM option that loads the JMX exporter, serving on `addr`.
pub fn jmx_exporter_opt(kafka: &Kafka, addr: SocketAddr) -> String {
    format!(
        "-javaagent:{}={addr}:{}",
        kafka.jmx_exporter_agent().display(),
        jmx_exporter_rules().display()
    )
}

/// One metric family of a scrape: its type and its samples (labels, value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Family {
    pub kind: String,
    pub samples: Vec<(BTreeMap<String, String>, f64)>,
}

/// A scrape: families by name (a sample's name; `# TYPE` gives the type).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    pub families: BTreeMap<String, Family>,
}

impl Scrape {
    /// Parses Prometheus's text format (the subset both exporters write).
    pub fn parse(text: &str) -> Scrape {
        let mut families: BTreeMap<String, Family> = BTreeMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
                families.entry(name.to_string()).or_default().kind = kind.to_string();
                continue;
            }
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').unwrap_or((line, "NaN"));
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, parse_labels(rest.trim_end_matches('}'))),
                None => (series, BTreeMap::new()),
            };
            let value = value.parse().unwrap_or(f64::NAN);
            families
                .entry(name.to_string())
                .or_default()
                .samples
                .push((labels, value));
        }
        Scrape { families }
    }

    /// The single value of an unlabelled family.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.families.get(name)?.samples.first().map(|(_, v)| *v)
    }

    /// (name, type, label names) of each checked family with samples.
    pub fn signatures(&self) -> BTreeSet<(String, String, Vec<String>)> {
        let mut out = BTreeSet::new();
        for (name, f) in &self.families {
            if !JAVA_FAMILY_PREFIXES.iter().any(|p| name.starts_with(p)) {
                continue;
            }
            for (labels, _) in &f.samples {
                out.insert((
                    name.clone(),
                    f.kind.clone(),
                    labels.keys().cloned().collect(),
                ));
            }
        }
        out
    }
}

fn parse_labels(s: &str) -> BTreeMap<String, String> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            Some((k.to_string(), v.trim_matches('"').to_string()))
        })
        .collect()
}

/// What `java` exports (name, type, label names) that `kraftd` does not export the same way.
/// `java_leads` and `kraftd_leads`: Java registers two raft-metrics on the leader only.
pub fn missing_from_kraftd(
    java: &Scrape,
    kraftd: &Scrape,
    java_leads: bool,
    kraftd_leads: bool,
) -> Vec<String> {
    let have = kraftd.signatures();
    java.signatures()
        .into_iter()
        .filter(|(name, ..)| !(java_leads && !kraftd_leads && LEADER_ONLY.contains(&name.as_str())))
        .filter(|sig| !have.contains(sig))
        .map(|(name, kind, labels)| {
            let kraftd_kind = kraftd.families.get(&name).map(|f| f.kind.as_str());
            match kraftd_kind {
                Some(k) if k != kind => format!("{name}: {kind} on Java, {k} on kraftd"),
                Some(_) => format!("{name}: labels {labels:?} on Java, not on kraftd"),
                None => format!("{name} ({kind}, labels {labels:?}): not exported by kraftd"),
            }
        })
        .collect()
}

/// `GET /metrics` on `addr`: the body, or why not.
pub fn scrape(addr: SocketAddr) -> Result<String, String> {
    http_get(addr, "/metrics").and_then(|(status, body)| match status {
        200 => Ok(body),
        s => Err(format!("/metrics on {addr} answered {s}: {body}")),
    })
}

/// A connection to one `/metrics`, kept open between scrapes as Prometheus keeps it, and opened
/// again when the exporter has closed it (kraftd closes one idle for its head-read timeout).
pub struct KeptScrape {
    addr: SocketAddr,
    conn: Option<BufReader<TcpStream>>,
}

impl KeptScrape {
    pub fn new(addr: SocketAddr) -> KeptScrape {
        KeptScrape { addr, conn: None }
    }

    /// `GET /metrics`: the body, or why not.
    pub fn scrape(&mut self) -> Result<String, String> {
        let fail = |e: std::io::Error| format!("GET /metrics on {}: {e}", self.addr);
        // Only a kept connection the exporter closed before answering is asked again, on a new
        // one: a request it may have served is never sent twice.
        for fresh in [self.conn.is_none(), true] {
            if fresh {
                let s =
                    TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).map_err(fail)?;
                s.set_read_timeout(Some(Duration::from_secs(10)))
                    .map_err(fail)?;
                self.conn = Some(BufReader::new(s));
            }
            let conn = self.conn.as_mut().expect("just opened");
            match get_on(conn, self.addr, "/metrics", false) {
                Ok((status, body, keep)) => {
                    if !keep {
                        self.conn = None;
                    }
                    return match status {
                        200 => Ok(body),
                        s => Err(format!("/metrics on {} answered {s}: {body}", self.addr)),
                    };
                }
                Err(e) => {
                    self.conn = None;
                    match e {
                        GetError::ClosedUnanswered(_) if !fresh => continue,
                        GetError::ClosedUnanswered(e) | GetError::Failed(e) => return Err(fail(e)),
                    }
                }
            }
        }
        unreachable!("the second try is on a fresh connection")
    }
}

/// Why a GET on a kept connection failed.
enum GetError {
    /// The connection was closed (or reset) before any byte of an answer: the request was not
    /// served and may be sent again.
    ClosedUnanswered(std::io::Error),
    Failed(std::io::Error),
}

impl From<std::io::Error> for GetError {
    fn from(e: std::io::Error) -> GetError {
        GetError::Failed(e)
    }
}

/// One GET of `path` on a connection (asking the server to close it after, or not): the status,
/// the body (read by its length, its chunks, or to the close), and whether the connection stays
/// open.
fn get_on(
    conn: &mut BufReader<TcpStream>,
    addr: SocketAddr,
    path: &str,
    close: bool,
) -> Result<(u16, String, bool), GetError> {
    use std::io::ErrorKind;
    let bad = |what: String| std::io::Error::new(ErrorKind::InvalidData, what);
    let closed = |e: std::io::Error| match e.kind() {
        ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => {
            GetError::ClosedUnanswered(e)
        }
        _ => GetError::Failed(e),
    };
    let close = if close { "Connection: close\r\n" } else { "" };
    write!(
        conn.get_mut(),
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{close}\r\n"
    )
    .map_err(closed)?;
    let mut line = String::new();
    if conn.read_line(&mut line).map_err(closed)? == 0 {
        let eof = std::io::Error::new(ErrorKind::UnexpectedEof, "closed before answering");
        return Err(GetError::ClosedUnanswered(eof));
    }
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(format!("bad status line {line:?}")))?;
    // HTTP/1.0 closes unless it says otherwise; HTTP/1.1 keeps the connection unless it says so.
    let (mut length, mut chunked) = (None, false);
    let mut keep = !line.starts_with("HTTP/1.0");
    loop {
        line.clear();
        if conn.read_line(&mut line)? == 0 {
            return Err(bad("closed in the middle of the head".into()).into());
        }
        let header = line.trim_end().to_ascii_lowercase();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let mut tokens = value.split(',').map(str::trim);
        match name.trim() {
            "content-length" => length = value.trim().parse::<usize>().ok(),
            "transfer-encoding" => chunked = tokens.any(|t| t == "chunked"),
            "connection" => {
                let tokens: Vec<&str> = tokens.collect();
                keep = !tokens.contains(&"close") && (keep || tokens.contains(&"keep-alive"));
            }
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            conn.read_line(&mut line)?;
            // A chunk size may carry extensions after a ';'.
            let size = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| bad(format!("bad chunk size {line:?}")))?;
            if size == 0 {
                // Trailers, if any, up to the empty line.
                loop {
                    line.clear();
                    if conn.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            conn.read_exact(&mut body[start..])?;
            line.clear();
            conn.read_line(&mut line)?;
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        conn.read_exact(&mut body)?;
    } else {
        conn.read_to_end(&mut body)?;
        keep = false;
    }
    Ok((status, String::from_utf8_lossy(&body).into_owned(), keep))
}

/// A plain HTTP/1.1 GET (no keep-alive): the status and the body.
pub fn http_get(addr: SocketAddr, path: &str) -> Result<(u16, String), String> {
    let fail = |e: std::io::Error| format!("GET {path} on {addr}: {e}");
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(fail)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(fail)?;
    match get_on(&mut BufReader::new(s), addr, path, true) {
        Ok((status, body, _)) => Ok((status, body)),
        Err(GetError::ClosedUnanswered(e) | GetError::Failed(e)) => Err(fail(e)),
    }
}

/// Whether a scrape's raft-metrics say this node leads.
pub fn leads(s: &Scrape) -> bool {
    s.families
        .get("kafka_server_raftmetrics_current_state")
        .is_some_and(|f| {
            f.samples
                .iter()
                .any(|(l, _)| l.get("current_state").map(String::as_str) == Some("leader"))
        })
}

/// Scrapes every voter of `q` (started observed) and checks what Java is the oracle of: each
/// name, type and label set a Java controller exports among [`JAVA_FAMILY_PREFIXES`] is exported by
/// kraftd; `current_leader`, `current_epoch`, `number_of_voters` and the image's topic,
/// partition, offline partition, active and fenced broker counts are equal on every node, and
/// `high_watermark` within [`HIGH_WATERMARK_SPREAD`]; exactly one node has
/// `activecontrollercount` 1; `metadataerrorcount` is 0 everywhere.
/// Retries for up to a minute (a leader change settles), then panics with what differs.
#[track_caller]
pub fn assert_quorum_metrics(q: &super::mixed_quorum::Mixed, when: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        match quorum_metrics(q) {
            Ok(summary) => {
                eprintln!("metrics ({when}): {summary}");
                return;
            }
            Err(problems) if std::time::Instant::now() >= deadline => {
                panic!("metrics ({when}):\n  {}", problems.join("\n  "))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

/// One scrape of each voter of `q` (started observed): (`kind id`, kind, its scrape).
fn scrape_voters(
    q: &super::mixed_quorum::Mixed,
) -> Result<Vec<(String, &'static str, Scrape)>, String> {
    let mut nodes = Vec::new();
    for (i, m) in q.members.iter().enumerate() {
        let name = format!("{} {}", m.kind(), i + 1);
        let addr = q.metrics_addrs[i].unwrap_or_else(|| panic!("{name} serves no metrics"));
        let text = scrape(addr).map_err(|e| format!("{name}: {e}"))?;
        nodes.push((name, m.kind(), Scrape::parse(&text)));
    }
    Ok(nodes)
}

/// The value of the unlabelled family `name`, the same on every one of `nodes`, or what each
/// has.
fn same_everywhere(nodes: &[(String, &str, Scrape)], name: &str) -> Result<f64, String> {
    let first = nodes[0].2.value(name);
    match first {
        Some(v) if nodes.iter().all(|(_, _, s)| s.value(name) == first) => Ok(v),
        _ => {
            let values: Vec<String> = nodes
                .iter()
                .map(|(n, _, s)| format!("{n}={:?}", s.value(name)))
                .collect();
            Err(format!("{name} differs: {}", values.join(", ")))
        }
    }
}

/// One round of [`assert_quorum_metrics`]: a summary, or the problems found.
pub fn quorum_metrics(q: &super::mixed_quorum::Mixed) -> Result<String, Vec<String>> {
    let nodes = scrape_voters(q).map_err(|e| vec![e])?;
    let mut problems = Vec::new();
    let mut compared = 0;
    for (jname, _, java) in nodes.iter().filter(|n| n.1 == "java") {
        for (kname, _, kraftd) in nodes.iter().filter(|n| n.1 == "kraftd") {
            compared = compared.max(java.signatures().len());
            for m in missing_from_kraftd(java, kraftd, leads(java), leads(kraftd)) {
                problems.push(format!("{kname} against {jname}: {m}"));
            }
        }
    }
    // The raft view and the image's counts (every node's committed image), Java's the oracle.
    let same = [
        "kafka_server_raftmetrics_current_leader",
        "kafka_server_raftmetrics_current_epoch",
        "kafka_server_raftmetrics_number_of_voters",
        "kafka_controller_kafkacontroller_globaltopiccount",
        "kafka_controller_kafkacontroller_globalpartitioncount",
        "kafka_controller_kafkacontroller_activebrokercount",
        "kafka_controller_kafkacontroller_fencedbrokercount",
        "kafka_controller_kafkacontroller_offlinepartitionscount",
    ];
    problems.extend(
        same.iter()
            .filter_map(|name| same_everywhere(&nodes, name).err()),
    );
    // High watermarks agree within what the leader appends while the nodes are scraped.
    let hws: Vec<f64> = nodes
        .iter()
        .filter_map(|(_, _, s)| s.value("kafka_server_raftmetrics_high_watermark"))
        .collect();
    let spread =
        hws.iter().copied().fold(f64::MIN, f64::max) - hws.iter().copied().fold(f64::MAX, f64::min);
    if hws.len() != nodes.len() || spread > HIGH_WATERMARK_SPREAD {
        problems.push(format!(
            "high_watermark spread {spread} over {hws:?}, more than {HIGH_WATERMARK_SPREAD}"
        ));
    }
    let active: Vec<&str> = nodes
        .iter()
        .filter(|(_, _, s)| {
            s.value("kafka_controller_kafkacontroller_activecontrollercount") == Some(1.0)
        })
        .map(|(n, ..)| n.as_str())
        .collect();
    if active.len() != 1 {
        problems.push(format!(
            "activecontrollercount 1 on {active:?}, not on exactly one node"
        ));
    }
    for (n, _, s) in &nodes {
        let errors = s.value("kafka_controller_kafkacontroller_metadataerrorcount");
        if errors != Some(0.0) {
            problems.push(format!("{n}: metadataerrorcount {errors:?}"));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let (_, _, first) = &nodes[0];
    let count = |m: &str| first.value(&format!("kafka_controller_kafkacontroller_{m}"));
    Ok(format!(
        "{compared} Java name/label sets all exported by kraftd with the same type; leader {:?}, epoch {:?}, {:?} voters on every node; active controller {}; on every node {:?} topics, {:?} partitions ({:?} offline), {:?} active and {:?} fenced brokers; high watermarks within {spread}",
        first.value("kafka_server_raftmetrics_current_leader"),
        first.value("kafka_server_raftmetrics_current_epoch"),
        first.value("kafka_server_raftmetrics_number_of_voters"),
        active[0],
        count("globaltopiccount"),
        count("globalpartitioncount"),
        count("offlinepartitionscount"),
        count("activebrokercount"),
        count("fencedbrokercount"),
    ))
}

/// The ControllerStats meters Java counts partition leader elections with.
const ELECTION_COUNTERS: [&str; 2] = [
    "kafka_controller_controllerstats_uncleanleaderelections_total",
    "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total",
];

/// Every voter of `q` (none restarted since the workload began) counted the same unclean and
/// ELR elections, Java's controllers the oracle, and at least one of each (the workload's crash
/// phase makes them); returns the two counts.
#[track_caller]
pub fn assert_election_counts_agree(q: &super::mixed_quorum::Mixed) -> [f64; 2] {
    let nodes = scrape_voters(q).unwrap_or_else(|e| panic!("{e}"));
    ELECTION_COUNTERS.map(|c| {
        let count = same_everywhere(&nodes, c).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            count >= 1.0,
            "{c} is {count}: the workload's election is not counted"
        );
        count
    })
}
