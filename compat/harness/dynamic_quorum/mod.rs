//! Dynamic quorums (kraft.version 1, KIP-853) of Java and kraftd controllers: nodes formatted
//! `--standalone`, `--initial-controllers`, `--no-initial-controllers` (observers that join
//! later) or for a static quorum, reconfigured with `kafka-metadata-quorum add-controller` /
//! `remove-controller`, and the checks the reconfiguration tests make after every step: the
//! committed log byte-identical on every node, the same VotersRecord history everywhere, no Java
//! fault and no kraftd exit.
//!
//! Every node of a [`DynamicQuorum`] gets its port up front, so that every node's
//! `controller.quorum.bootstrap.servers` can list all of them (a removed leader, back as an
//! observer, must still find the new leader).

mod node;

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use kraftd::raft::msg::{DescribeQuorumResponse, ReplicaDescription};

pub use node::{
    ids, kraftd_format, kraftd_format_with, kraftd_props, start_node, start_node_formatted,
    voters_history, Kind, Node, VoterEntry, VotersAt,
};

use super::mixed_quorum::{Member, Mixed};
use super::quorum_probe::{
    assert_same_batches, describe_quorum, parse_replication, read_log_batches, ReplicationRow,
};
use super::{Kafka, Output, Properties, Quorum, TestDir};

/// How long a step (an election, a catch-up, a voter change) may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// How many leader restarts [`DynamicQuorum::move_leadership_to`] may make.
pub const MAX_LEADER_MOVES: usize = 4;

/// The replica entry (voter or observer) of node `id` in a leader's DescribeQuorum answer.
pub fn replica(d: &DescribeQuorumResponse, id: i32) -> Option<&ReplicaDescription> {
    d.voters
        .iter()
        .chain(&d.observers)
        .find(|r| r.replica_key.id == id)
}

/// The replica entry of the node with key (`id`, `directory_id`): after a disk replacement the
/// leader may still list the old key of the same id as an observer.
pub fn replica_of<'a>(
    d: &'a DescribeQuorumResponse,
    id: i32,
    directory_id: &str,
) -> Option<&'a ReplicaDescription> {
    d.voters.iter().chain(&d.observers).find(|r| {
        r.replica_key.id == id
            && r.replica_key
                .directory_id
                .is_none_or(|u| u.to_string() == directory_id)
    })
}

/// The voter ids a leader's DescribeQuorum answer lists, sorted.
pub fn voter_ids(d: &DescribeQuorumResponse) -> Vec<i32> {
    let mut v: Vec<i32> = d.voters.iter().map(|r| r.replica_key.id).collect();
    v.sort();
    v
}

/// What one step of a reconfiguration test saw, for its summary.
#[derive(Debug)]
pub struct StepReport {
    pub step: String,
    pub leader: (i32, Kind),
    pub high_watermark: i64,
    pub batches_compared: usize,
    pub voters_history: Vec<VotersAt>,
}

/// A dynamic quorum under reconfiguration: the nodes started so far (a node's index is its
/// position, not its id) and the reports of the checked steps.
pub struct DynamicQuorum {
    pub dir: TestDir,
    pub cluster_id: String,
    pub nodes: Vec<Node>,
    pub reports: Vec<StepReport>,
    /// Nodes stopped with SIGSTOP (not asked for DescribeQuorum: they would not answer).
    frozen: Vec<i32>,
    started: Instant,
}

impl DynamicQuorum {
    pub fn new() -> DynamicQuorum {
        DynamicQuorum {
            dir: TestDir::new(),
            cluster_id: Kafka::get().random_uuid(),
            nodes: Vec::new(),
            reports: Vec::new(),
            frozen: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Starts a node (see [`start_node`]) and returns its index.
    pub fn start(
        &mut self,
        kind: Kind,
        id: i32,
        port: u16,
        quorum: Quorum,
        extra: &[(&str, String)],
    ) -> usize {
        let node = start_node(&self.dir, kind, id, port, &self.cluster_id, quorum, extra);
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    pub fn node(&self, id: i32) -> &Node {
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .unwrap_or_else(|| panic!("no node {id}"))
    }

    pub fn node_mut(&mut self, id: i32) -> &mut Node {
        self.nodes
            .iter_mut()
            .find(|n| n.id == id)
            .unwrap_or_else(|| panic!("no node {id}"))
    }

    pub fn kind_of(&self, id: i32) -> Kind {
        self.node(id).kind
    }

    /// Stops node `id` with SIGTERM (checking it exits cleanly) and starts it again on the same
    /// config and data.
    #[track_caller]
    pub fn restart(&mut self, id: i32) {
        let DynamicQuorum { dir, nodes, .. } = self;
        let node = nodes
            .iter_mut()
            .find(|n| n.id == id)
            .expect("a node of the test");
        let name = node.name();
        node.member.sigterm();
        node.member.assert_clean_exit(&name);
        node.member.restart(dir);
        eprintln!(
            "[{:>5.1}s] restarted {name}",
            self.started.elapsed().as_secs_f64()
        );
    }

    /// Pauses node `id` (SIGSTOP); the waits stop asking it.
    pub fn freeze(&mut self, id: i32) {
        self.node_mut(id).member.signal(libc::SIGSTOP);
        self.frozen.push(id);
    }

    /// Resumes node `id` (SIGCONT).
    pub fn thaw(&mut self, id: i32) {
        self.node_mut(id).member.signal(libc::SIGCONT);
        self.frozen.retain(|&f| f != id);
    }

    /// Moves leadership to a node of `kind` among `voters`: while a leader of another kind leads,
    /// the voters of other kinds than `kind` (the leader's rivals) are frozen (SIGSTOP), the
    /// leader is restarted (SIGTERM, start again), and the rivals thawed once a leader is back.
    /// With the rivals frozen, only a `kind` node can gather a majority (the restarted node
    /// votes for the candidate that stayed up); tried at most [`MAX_LEADER_MOVES`] times.
    #[track_caller]
    pub fn move_leadership_to(&mut self, kind: Kind, voters: &[i32]) {
        for attempt in 0..=MAX_LEADER_MOVES {
            let d = self.wait_for(&format!("a leader among {voters:?}"), |d| {
                voters.contains(&d.leader_id)
            });
            let leader = d.leader_id;
            if self.kind_of(leader) == kind {
                eprintln!("  leader {leader} is {kind} after {attempt} restarts");
                return;
            }
            let rivals: Vec<i32> = voters
                .iter()
                .copied()
                .filter(|&v| v != leader && self.kind_of(v) != kind)
                .collect();
            for &r in &rivals {
                self.freeze(r);
            }
            self.restart(leader);
            let got = self.wait_for(&format!("a leader with {rivals:?} frozen"), |d| {
                voters.contains(&d.leader_id)
            });
            for &r in &rivals {
                self.thaw(r);
            }
            eprintln!("  node {} leads after restarting {leader}", got.leader_id);
            self.wait_for(&format!("voters {voters:?} caught up"), |d| {
                let end = replica(d, d.leader_id).map(|r| r.log_end_offset);
                voters.contains(&d.leader_id)
                    && voters
                        .iter()
                        .all(|&v| replica(d, v).map(|r| r.log_end_offset) >= end)
            });
        }
        panic!("no {kind} node led after {MAX_LEADER_MOVES} leader restarts");
    }

    /// `host:port,...` of every node, for `--bootstrap-controller`.
    pub fn bootstrap(&self) -> String {
        self.nodes
            .iter()
            .map(Node::endpoint)
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The leader's DescribeQuorum answer, asking every node (`None`: nobody leads now).
    pub fn leader_view(&self) -> Option<DescribeQuorumResponse> {
        self.nodes
            .iter()
            .filter(|n| !self.frozen.contains(&n.id))
            .find_map(|n| {
                describe_quorum(n.port).filter(|d| d.partition_error.0 == 0 && d.leader_id >= 0)
            })
    }

    /// Polls the leader's DescribeQuorum until `done` holds; panics naming `what` (with the
    /// last answer) after [`STEP_TIMEOUT`], or at once if a node process has exited.
    #[track_caller]
    pub fn wait_for(
        &mut self,
        what: &str,
        done: impl Fn(&DescribeQuorumResponse) -> bool,
    ) -> DescribeQuorumResponse {
        self.wait_for_within(STEP_TIMEOUT, what, done)
    }

    /// [`Self::wait_for`] with its own timeout.
    #[track_caller]
    pub fn wait_for_within(
        &mut self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&DescribeQuorumResponse) -> bool,
    ) -> DescribeQuorumResponse {
        let deadline = Instant::now() + timeout;
        let mut last = None;
        loop {
            self.assert_processes_alive(what);
            if let Some(d) = self.leader_view() {
                if done(&d) {
                    return d;
                }
                last = Some(d);
            }
            if Instant::now() >= deadline {
                panic!(
                    "timed out after {timeout:?} waiting for {what}; last leader view: {last:#?}"
                );
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Panics if a node that should run has exited (a kraftd crash or a JVM exit).
    #[track_caller]
    pub fn assert_processes_alive(&mut self, during: &str) {
        for n in &mut self.nodes {
            let name = n.name();
            let stopped = match &mut n.member {
                Member::Java(j) => (!j.is_running()).then(|| "exited".to_string()),
                Member::Kraftd(k, _) => (!k.is_running()).then(|| "exited".to_string()),
            };
            if let Some(how) = stopped {
                let log = n.member.log_text();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                panic!(
                    "{name} {how} during {during}; last log lines:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
        }
    }

    /// Waits until node `id` is listed (as voter or observer) by the leader at the leader's log
    /// end offset, i.e. it has caught up and can be added.
    pub fn wait_caught_up(&mut self, id: i32, what: &str) -> DescribeQuorumResponse {
        let dir = self.node(id).directory_id();
        self.wait_for(what, |d| {
            let leader_end = replica(d, d.leader_id).map(|r| r.log_end_offset);
            replica_of(d, id, &dir).is_some_and(|r| Some(r.log_end_offset) >= leader_end)
        })
    }

    /// [`add_controller`] of node `id` through `via`.
    pub fn add_controller(&self, via: &str, id: i32) -> Output {
        let node = self.node(id);
        add_controller(&self.dir, &node.config, &node.name(), via)
    }

    /// `remove-controller --controller-id <id> --controller-directory-id <dir>` through `via`.
    pub fn remove_controller(&self, via: &str, id: i32, directory_id: &str) -> Output {
        Kafka::get().metadata_quorum(
            via,
            &[
                "remove-controller",
                "--controller-id",
                &id.to_string(),
                "--controller-directory-id",
                directory_id,
            ],
        )
    }

    /// `describe --replication` through `via`, parsed.
    pub fn describe_replication(&self, via: &str) -> Result<Vec<ReplicationRow>, Output> {
        let out = Kafka::get().quorum_tool_fast(via, &["describe", "--replication"]);
        match out
            .success()
            .then(|| parse_replication(&out.stdout))
            .flatten()
        {
            Some(rows) => Ok(rows),
            None => Err(out),
        }
    }

    /// The checks after every step: waits until everything the leader had appended when the
    /// check began is committed, and every running node has fetched up to that high watermark
    /// (as the leader reports it); then asserts that every node holds the same batches below it
    /// byte for byte, that every node's VotersRecord history below it is the same, that no Java
    /// controller logged a fault and no process exited. Returns the common history.
    #[track_caller]
    pub fn check_step(&mut self, step: &str) -> Vec<VotersAt> {
        let first = self.wait_for(&format!("a leader after {step}"), |d| d.high_watermark > 0);
        let end = replica(&first, first.leader_id).map_or(0, |r| r.log_end_offset);
        let committed = self.wait_for(
            &format!("the leader's log end {end} to commit after {step}"),
            |d| d.high_watermark >= end,
        );
        let target = committed.high_watermark;
        let keys: Vec<(i32, String)> = self
            .nodes
            .iter_mut()
            .filter_map(|n| n.is_running().then(|| (n.id, n.directory_id())))
            .collect();
        let running: Vec<i32> = keys.iter().map(|k| k.0).collect();
        let d = self.wait_for(
            &format!("every running node {running:?} to fetch up to offset {target} after {step}"),
            |d| {
                keys.iter().all(|(id, dir)| {
                    *id == d.leader_id
                        || replica_of(d, *id, dir).is_some_and(|r| r.log_end_offset >= target)
                })
            },
        );
        let logs: Vec<(String, Vec<_>)> = self
            .nodes
            .iter()
            .filter(|n| running.contains(&n.id))
            .map(|n| (n.name(), read_log_batches(&n.metadata_dir())))
            .collect();
        let from = logs
            .iter()
            .map(|(_, l)| l.first().map_or(0, |b| b.0))
            .max()
            .unwrap_or(0);
        let compared = assert_same_batches(&logs, from, target);
        let histories: Vec<(String, Vec<VotersAt>)> = self
            .nodes
            .iter()
            .filter(|n| running.contains(&n.id))
            .map(|n| {
                let mut h = n.voters_history();
                h.retain(|(offset, _)| *offset >= from && *offset < target);
                (n.name(), h)
            })
            .collect();
        let (first_name, reference) = &histories[0];
        for (name, h) in &histories[1..] {
            assert_eq!(
                h, reference,
                "after {step}: the VotersRecord history below {target} of {name} differs from {first_name}'s"
            );
        }
        for n in &mut self.nodes {
            let name = n.name();
            let other = n.member.assert_java_healthy(&name);
            if other > 0 {
                eprintln!("  {name}: {other} other ERROR lines so far");
            }
        }
        self.assert_processes_alive(step);
        let leader = (d.leader_id, self.kind_of(d.leader_id));
        eprintln!(
            "[{:>5.1}s] {step}: leader {} ({}), hw {target}, {compared} batches identical on {} nodes, voters history {:?}",
            self.elapsed().as_secs_f64(),
            leader.0,
            leader.1,
            running.len(),
            reference.iter().map(|(o, v)| (*o, ids(v))).collect::<Vec<_>>()
        );
        let history = reference.clone();
        self.reports.push(StepReport {
            step: step.to_string(),
            leader,
            high_watermark: target,
            batches_compared: compared,
            voters_history: history.clone(),
        });
        history
    }
}

impl DynamicQuorum {
    /// Takes over a static [`Mixed`] quorum (its voters 1..=3 become nodes 1..=3).
    pub fn from_mixed(m: Mixed) -> DynamicQuorum {
        let Mixed {
            dir,
            cluster_id,
            voters,
            members,
            kafka,
            ..
        } = m;
        // Its Java nodes restart and its tools run on Kafka::get()'s release.
        assert!(
            std::ptr::eq(kafka, Kafka::get()),
            "a DynamicQuorum runs {:?}, not {kafka:?}",
            Kafka::get()
        );
        let nodes = voters
            .iter()
            .zip(members)
            .map(|(v, member)| {
                let (kind, config) = match &member {
                    Member::Java(j) => (Kind::Java, j.config_path().to_path_buf()),
                    Member::Kraftd(..) => (
                        Kind::Kraftd,
                        dir.join(format!("kraftd-{}", v.id))
                            .join("server.properties"),
                    ),
                };
                Node {
                    id: v.id,
                    kind,
                    port: v.port,
                    config,
                    member,
                }
            })
            .collect();
        DynamicQuorum {
            dir,
            cluster_id,
            nodes,
            reports: Vec::new(),
            frozen: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Stops node `id` for good (SIGTERM, clean exit) and drops it from the quorum's nodes; its
    /// directories stay.
    #[track_caller]
    pub fn retire(&mut self, id: i32) -> Node {
        let at = self
            .nodes
            .iter()
            .position(|n| n.id == id)
            .unwrap_or_else(|| panic!("no node {id}"));
        let mut node = self.nodes.remove(at);
        let name = node.name();
        node.member.sigterm();
        node.member.assert_clean_exit(&name);
        node
    }

    /// The finalized feature levels, via `kafka-features describe` through every node.
    pub fn finalized_features(&self) -> std::collections::BTreeMap<String, String> {
        Kafka::get().finalized_features(&self.bootstrap())
    }
}

impl Default for DynamicQuorum {
    fn default() -> Self {
        Self::new()
    }
}

/// `kafka-metadata-quorum --bootstrap-controller <via> --command-config <the node's config plus
/// short admin timeouts> add-controller` for the node that runs with `config`. Retried (at most
/// 3 runs) while the leader answers REQUEST_TIMED_OUT because the node lags behind, as Kafka's
/// docs advise.
pub fn add_controller(dir: &TestDir, config: &Path, name: &str, via: &str) -> Output {
    let tool_config = dir
        .subdir("tool-configs")
        .join(format!("add-{name}.properties"));
    let mut props = Properties::read(config);
    props
        .set("request.timeout.ms", "20000")
        .set("default.api.timeout.ms", "30000");
    props.write(&tool_config);
    let tool_config = tool_config.display().to_string();
    let kafka = Kafka::get();
    let mut out = None;
    for _ in 0..3 {
        let o = kafka.metadata_quorum(via, &["--command-config", &tool_config, "add-controller"]);
        let retry = !o.success() && o.stderr.contains("lagging behind");
        out = Some(o);
        if !retry {
            break;
        }
        thread::sleep(Duration::from_secs(1));
    }
    out.expect("ran at least once")
}

/// Asserts `out` succeeded, saying what ran against which leader.
#[track_caller]
pub fn assert_tool_ok(out: &Output, what: &str) {
    assert!(out.success(), "{what} failed:\n{out}");
}

/// The rows of `describe --replication` that are voters (Leader or Follower).
pub fn voter_rows(rows: &[ReplicationRow]) -> Vec<&ReplicationRow> {
    rows.iter()
        .filter(|r| r.status == "Leader" || r.status == "Follower")
        .collect()
}
