//! Controller transcripts: every `tests/controller_scenarios/*.txt` drives one
//! `kraftd::controller::quorum::QuorumController` as the node loop does (src/server/node:
//! propose, `on_written`, park the answer until its records commit, release it, or answer
//! `lost` when the leadership ends first), over a fake raft: a log that gives written records
//! their offsets and commits only on `commit`, and a quorum whose epoch and leader the
//! directives set. Time is a manual clock (milliseconds from 0) that only `tick` moves; the
//! only randomness is the controller's own `TopicRandom`, seeded by the `controller` directive.
//!
//! Directives (each followed by what it prints):
//!
//! * `controller node=1 voters=1,2,3 seed=7 [release-version=4.0-IV3]
//!   [features=eligible.leader.replicas.version:0,...] [<kafka.property>=<value> ...]`: the
//!   controller, with the settings a node reading those properties gives it
//!   (`kraftd::server::node::node_settings`); the bootstrap features are what `kafka-storage format`
//!   writes for the release version (default the latest, 4.4-IV2) and feature overrides.
//! * `elect [epoch=N]`: this node leads epoch N (default the next): its LeaderChange takes one
//!   offset and commits everything before it, then the controller activates (on an empty log
//!   it writes the bootstrap records).
//! * `resign [leader=N] [epoch=N]`: another node (or none) leads a newer epoch: the controller
//!   renounces, parked answers go out in their `lost` form, the log loses what was not
//!   committed.
//! * `commit [through=N]`: raft commits every batch (or those through offset N); the committed
//!   batches are replayed and parked answers released in order.
//! * `tick N`: N milliseconds pass; the controller's periodic decisions run when due.
//! * `principal User:alice`: who sends the requests that follow (default `User:ANONYMOUS`, a
//!   PLAINTEXT connection's); `as=User:bob` on one request overrides it.
//! * `image [committed]`: the latest (or committed) image, summed up.
//! * one directive per request (see `requests`), each with `v=N` (default the request's
//!   highest version), `as=PRINCIPAL` and `forwarded` (it came in an Envelope from a broker).
//!
//! A request prints `answer <Api> <json>`, or `write <first>..<last>` and its records, then
//! `parked until <offset>`; a parked answer prints `released <Api> <json>` when it goes out.
//! Broker epochs and delegation tokens are remembered from the answers brokers and clients
//! get, so later directives need not spell them.

mod render;

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr};

use kraftd::controller::features::update::{KraftVersionAccess, RaftRefusal};
use kraftd::controller::principal::RequestPrincipal;
use kraftd::controller::quorum::{Decision, Landed, QuorumAccess, QuorumController, Reply, Write};
use kraftd::log::bootstrap::{parse_metadata_version, LATEST_PRODUCTION_LEVEL};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::records::Offset;
use kraftd::raft::sim::script::{Case, Script};

use crate::controller_requests::args::Args;
use crate::controller_requests::{build, node_setup, Ask, Known, Learn, Requester};

/// A script and what each of its directives printed, or the line that could not run and why.
pub type Outputs = Result<(Script, Vec<Vec<String>>), (usize, String)>;

/// Runs a script: the script and what each directive printed, in order.
pub fn run(text: &str) -> Outputs {
    let script = Script::parse(text)?;
    let mut node: Option<Node> = None;
    let mut outputs = Vec::new();
    for case in &script.cases {
        let output = execute(&mut node, case).map_err(|e| (case.line, e))?;
        outputs.push(output);
    }
    Ok((script, outputs))
}

fn execute(node: &mut Option<Node>, case: &Case) -> Result<Vec<String>, String> {
    let mut args = Args::parse(&case.directive)?;
    if args.name == "controller" {
        if node.is_some() {
            return Err("`controller` comes once, first".into());
        }
        let built = Node::new(&mut args)?;
        args.finish()?;
        let out = vec![format!(
            "controller {} of voters {:?}, cluster {}",
            built.quorum.node_id,
            built.quorum.voters,
            crate::controller_requests::CLUSTER_ID
        )];
        *node = Some(built);
        return Ok(out);
    }
    let node = node
        .as_mut()
        .ok_or("the first directive must be `controller`")?;
    let mut out = node.execute(&mut args)?;
    args.finish()?;
    if out.is_empty() {
        out.push("ok".into());
    }
    Ok(out)
}

/// A batch of the fake log.
struct Batch {
    base: Offset,
    /// `None`: a control batch of one record (raft's own, e.g. LeaderChange).
    values: Option<Vec<Vec<u8>>>,
}

impl Batch {
    fn last(&self) -> Offset {
        self.base + self.values.as_ref().map_or(1, |v| v.len() as Offset) - 1
    }
}

/// Raft as the controller sees it: the epoch, the leader, the log's end and the voters.
struct FakeQuorum {
    node_id: i32,
    epoch: i32,
    leader: Option<i32>,
    shutting_down: bool,
    voters: Vec<i32>,
    kraft_version: i16,
    log: Vec<Batch>,
    /// Offsets below it are committed (None before the first commit).
    high_watermark: Option<Offset>,
    /// What raft did while the controller decided (a kraft.version upgrade).
    events: Vec<String>,
}

impl FakeQuorum {
    fn end(&self) -> Offset {
        self.log.last().map_or(0, |b| b.last() + 1)
    }

    fn append(&mut self, values: Option<Vec<Vec<u8>>>) -> (Offset, Offset) {
        let batch = Batch {
            base: self.end(),
            values,
        };
        let range = (batch.base, batch.last());
        self.log.push(batch);
        range
    }
}

impl KraftVersionAccess for FakeQuorum {
    fn kraft_version(&self) -> i16 {
        self.kraft_version
    }

    fn upgrade_kraft_version(
        &mut self,
        level: i16,
        validate_only: bool,
    ) -> Result<(), RaftRefusal> {
        if !self.is_leader() {
            return Err(RaftRefusal {
                code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                message: "not the leader".into(),
            });
        }
        if !validate_only && level != self.kraft_version {
            let (at, _) = self.append(None);
            self.kraft_version = level;
            self.events
                .push(format!("raft appends KRaftVersion {level} at offset {at}"));
        }
        Ok(())
    }
}

impl QuorumAccess for FakeQuorum {
    fn epoch(&self) -> i32 {
        self.epoch
    }

    fn leader_id(&self) -> Option<i32> {
        self.leader
    }

    fn is_leader(&self) -> bool {
        self.leader == Some(self.node_id)
    }

    fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    fn next_proposal_offset(&self) -> Option<Offset> {
        self.is_leader().then(|| self.end())
    }

    fn voter_ids(&self) -> Vec<i32> {
        self.voters.clone()
    }
}

/// An answer waiting for its records to commit (the node's purgatory).
struct Parked {
    /// Released once this offset is committed (-1: nothing to wait for).
    offset: Offset,
    epoch: i32,
    version: i16,
    learn: Learn,
    reply: Reply,
}

/// One controller node, driven as the node loop drives it.
struct Node {
    controller: QuorumController,
    quorum: FakeQuorum,
    /// The bootstrap checkpoint's record values.
    bootstrap: Vec<Vec<u8>>,
    parked: VecDeque<Parked>,
    now: u64,
    principal: RequestPrincipal,
    /// Batches below this offset have been replayed as committed.
    counted_to: Offset,
    /// What the brokers and clients learned from their answers.
    requester: Requester,
}

fn principal(name: &str) -> Result<RequestPrincipal, String> {
    let (ty, n) = name
        .split_once(':')
        .ok_or_else(|| format!("`{name}` is not a principal (e.g. User:alice)"))?;
    Ok(RequestPrincipal {
        principal_type: ty.to_string(),
        name: n.to_string(),
        token_authenticated: false,
        host: IpAddr::V4(Ipv4Addr::LOCALHOST),
    })
}

impl Node {
    fn new(args: &mut Args) -> Result<Node, String> {
        let node_id: i32 = args.number("node")?.ok_or("`controller` needs node=N")?;
        let voters = args
            .ids("voters")?
            .ok_or("`controller` needs voters=1,2,3")?;
        let seed: u64 = args.number("seed")?.ok_or("`controller` needs seed=N")?;
        let mv = match args.key("release-version") {
            Some(v) => parse_metadata_version(&v).map_err(|e| e.to_string())?,
            None => LATEST_PRODUCTION_LEVEL,
        };
        let mut overrides = BTreeMap::new();
        if let Some(features) = args.key("features") {
            for f in features.split(',') {
                let (name, level) = f
                    .split_once(':')
                    .ok_or_else(|| format!("`features`: `{f}` is not name:level"))?;
                let level = level
                    .parse()
                    .map_err(|_| format!("`features`: `{level}` is not a level"))?;
                overrides.insert(name.to_string(), level);
            }
        }
        let setup = node_setup(
            node_id,
            &voters,
            seed,
            mv,
            &overrides,
            args.take_keys(|k| k.contains('.')),
        )?;
        Ok(Node {
            controller: QuorumController::new(setup.settings),
            quorum: FakeQuorum {
                node_id,
                epoch: 0,
                leader: None,
                shutting_down: false,
                voters,
                kraft_version: 0,
                log: Vec::new(),
                high_watermark: None,
                events: Vec::new(),
            },
            bootstrap: setup.bootstrap,
            parked: VecDeque::new(),
            now: 0,
            principal: principal("User:ANONYMOUS")?,
            counted_to: 0,
            requester: Requester::default(),
        })
    }

    fn execute(&mut self, args: &mut Args) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        match args.name.as_str() {
            "elect" => {
                let epoch = args.number("epoch")?.unwrap_or(self.quorum.epoch + 1);
                self.elect(epoch, &mut out)?;
            }
            "resign" => {
                let epoch = args.number("epoch")?.unwrap_or(self.quorum.epoch + 1);
                let leader = args.number("leader")?;
                self.resign(epoch, leader, &mut out)?;
            }
            "commit" => {
                let through = args.number("through")?;
                self.commit(through, &mut out)?;
            }
            "tick" => {
                let ms: u64 = args
                    .word("milliseconds")?
                    .parse()
                    .map_err(|_| "`tick` takes milliseconds".to_string())?;
                self.tick(ms, &mut out)?;
            }
            "principal" => self.principal = principal(&args.word("a principal")?)?,
            "image" => {
                let m = self.controller.machine();
                let image = if args.flag("committed") {
                    out.push(format!("committed through {}", m.committed_point()));
                    &m.committed_state().image
                } else {
                    out.push(format!(
                        "applied through {}, committed through {}",
                        m.last_applied(),
                        m.committed_point()
                    ));
                    m.image()
                };
                out.extend(render::image(image));
            }
            _ => {
                let who = match args.key("as") {
                    Some(p) => principal(&p)?,
                    None => self.principal.clone(),
                };
                let (_, image) = self.controller.machine().stable_image();
                let known = Known {
                    image,
                    committed: self.quorum.high_watermark.unwrap_or(0) - 1,
                    requester: &self.requester,
                };
                let ask = build(&known, args)?;
                self.request(ask, &who, &mut out)?;
            }
        }
        Ok(out)
    }

    /// `Node::handle` for a controller request, then `carry_out`.
    fn request(
        &mut self,
        ask: Ask,
        who: &RequestPrincipal,
        out: &mut Vec<String>,
    ) -> Result<(), String> {
        let decision = self
            .controller
            .handle(self.now, who, ask.request, &mut self.quorum);
        out.append(&mut self.quorum.events);
        match decision {
            Decision::Answer(answer) => {
                out.push(format!("answer {}", render::reply(&answer, ask.version)));
                self.requester.learn(ask.learn, &answer);
            }
            Decision::Write(write) => {
                self.write(write, Some((ask.version, ask.learn)), "", out)?;
            }
        }
        self.release(out);
        Ok(())
    }

    /// The pipeline's `write`: propose the records as this leader, tell the controller where
    /// they landed, park the answer until they commit.
    fn write(
        &mut self,
        write: Write,
        asked: Option<(i16, Learn)>,
        when: &str,
        out: &mut Vec<String>,
    ) -> Result<(), String> {
        let Write {
            records,
            reply,
            then,
        } = write;
        let epoch = self.quorum.epoch;
        let (landed, wait_for) = if records.is_empty() {
            let pending = self.controller.machine().last_applied();
            let committed = self.quorum.high_watermark.unwrap_or(0) - 1;
            (None, Some(if pending > committed { pending } else { -1 }))
        } else if self.quorum.is_leader() {
            let (base, last) = self.quorum.append(Some(records.clone()));
            out.push(format!("{when}write {base}..{last}"));
            for (i, value) in records.iter().enumerate() {
                out.push(render::record(base + i as Offset, value));
            }
            let landed = Landed {
                epoch,
                base_offset: base,
                last_offset: last,
            };
            (Some(landed), Some(last))
        } else {
            out.push(format!(
                "{when}raft refuses {} record(s): not the leader",
                records.len()
            ));
            (None, None)
        };
        self.controller
            .on_written(landed, &records, then)
            .map_err(|e| format!("the controller cannot replay its own records: {e}"))?;
        let (Some(reply), Some((version, learn))) = (reply, asked) else {
            return Ok(());
        };
        match wait_for {
            None => {
                out.push(format!("answer {}", render::reply(&reply.lost, version)));
                self.requester.learn(learn, &reply.lost);
            }
            Some(offset) => {
                out.push(format!("parked until {offset}"));
                self.parked.push_back(Parked {
                    offset,
                    epoch,
                    version,
                    learn,
                    reply,
                });
            }
        }
        Ok(())
    }

    /// The purgatory's `release`: answers whose offset is committed go out in order, those of
    /// an epoch this node no longer leads fail.
    fn release(&mut self, out: &mut Vec<String>) {
        let hw = self.quorum.high_watermark.unwrap_or(-1);
        let leading = self.quorum.is_leader().then_some(self.quorum.epoch);
        while let Some(front) = self.parked.front() {
            let committed = if leading != Some(front.epoch) {
                false
            } else if front.offset < hw {
                true
            } else {
                break;
            };
            let parked = self.parked.pop_front().expect("front");
            self.send(parked, committed, out);
        }
    }

    fn send(&mut self, parked: Parked, committed: bool, out: &mut Vec<String>) {
        let answer = if committed {
            parked.reply.committed
        } else {
            parked.reply.lost
        };
        out.push(format!(
            "released {}",
            render::reply(&answer, parked.version)
        ));
        self.requester.learn(parked.learn, &answer);
    }

    /// Raft commits through `through` (default the log's end): the newly committed batches are
    /// replayed (the leader's own are only marked committed), then answers are released.
    fn commit(&mut self, through: Option<Offset>, out: &mut Vec<String>) -> Result<(), String> {
        let end = self.quorum.end();
        let through = through.unwrap_or(end - 1);
        if through >= end {
            return Err(format!(
                "offset {through} is not in the log (it ends at {end})"
            ));
        }
        if !self.quorum.log.iter().any(|b| b.last() == through) && through >= 0 {
            return Err(format!("offset {through} does not end a batch"));
        }
        self.quorum.high_watermark = Some(through + 1);
        out.push(format!("committed through {through}"));
        self.replay_committed()?;
        self.release(out);
        Ok(())
    }

    /// The snapshot policy's `on_commit`: every committed batch not yet counted into the
    /// controller, then the node has caught up.
    fn replay_committed(&mut self) -> Result<(), String> {
        let hw = self.quorum.high_watermark.unwrap_or(0);
        let machine = self.controller.machine_mut();
        for b in &self.quorum.log {
            if b.base < self.counted_to || b.last() >= hw {
                continue;
            }
            match &b.values {
                Some(values) => machine
                    .replay_committed_batch(b.base, values)
                    .map_err(|e| format!("a committed batch does not replay: {e}"))?,
                None => machine.skip_committed_control_batch(b.last()),
            }
            self.counted_to = b.last() + 1;
        }
        self.controller.caught_up();
        Ok(())
    }

    /// `maybe_renounce`: the controller gives up an epoch this node no longer leads, and every
    /// parked answer fails.
    fn maybe_renounce(&mut self, out: &mut Vec<String>) -> Result<(), String> {
        let renounced = self
            .controller
            .renounce_unless_leading(&self.quorum)
            .map_err(|e| format!("cannot renounce: {e}"))?;
        if let Some(r) = renounced {
            out.push(format!(
                "renounced epoch {}: {} uncommitted offset(s) reverted",
                r.epoch, r.reverted
            ));
            while let Some(parked) = self.parked.pop_front() {
                self.send(parked, false, out);
            }
        }
        Ok(())
    }

    /// This node leads `epoch`: its LeaderChange commits everything before it, then the
    /// controller activates (`maybe_activate`).
    fn elect(&mut self, epoch: i32, out: &mut Vec<String>) -> Result<(), String> {
        if epoch <= self.quorum.epoch {
            return Err(format!(
                "epoch {epoch} is not newer than {}",
                self.quorum.epoch
            ));
        }
        self.quorum.epoch = epoch;
        self.quorum.leader = Some(self.quorum.node_id);
        self.maybe_renounce(out)?;
        let (at, _) = self.quorum.append(None);
        out.push(format!(
            "leader of epoch {epoch}: LeaderChange at offset {at}"
        ));
        self.commit(Some(at), out)?;
        let bootstrap = self.bootstrap.clone();
        if let Some(write) = self
            .controller
            .activate(self.now, epoch, move || Some(bootstrap))
        {
            self.write(write, None, "", out)?;
        }
        out.push(format!(
            "active controller of epoch {}",
            self.controller.active_epoch().unwrap_or(-1)
        ));
        self.release(out);
        Ok(())
    }

    /// Another node (or none) leads `epoch`: this one renounces, and its log loses what was
    /// not committed (the new leader never had it).
    fn resign(
        &mut self,
        epoch: i32,
        leader: Option<i32>,
        out: &mut Vec<String>,
    ) -> Result<(), String> {
        if epoch <= self.quorum.epoch {
            return Err(format!(
                "epoch {epoch} is not newer than {}",
                self.quorum.epoch
            ));
        }
        if leader == Some(self.quorum.node_id) {
            return Err("`resign` names another leader; `elect` makes this node lead".into());
        }
        self.quorum.epoch = epoch;
        self.quorum.leader = leader;
        out.push(match leader {
            Some(l) => format!("node {l} leads epoch {epoch}"),
            None => format!("no leader in epoch {epoch}"),
        });
        self.maybe_renounce(out)?;
        let hw = self.quorum.high_watermark.unwrap_or(0);
        let end = self.quorum.end();
        if end > hw {
            self.quorum.log.retain(|b| b.last() < hw);
            out.push(format!(
                "log truncated to {hw}: offsets {hw}..{} were never committed",
                end - 1
            ));
        }
        self.release(out);
        Ok(())
    }

    /// `ms` pass: each periodic decision runs at the time it is due (`next_deadline`), then at
    /// the end.
    fn tick(&mut self, ms: u64, out: &mut Vec<String>) -> Result<(), String> {
        let target = self.now + ms;
        for _ in 0..10_000 {
            match self.controller.next_deadline(&self.quorum) {
                Some(due) if due <= target => {
                    self.now = self.now.max(due);
                    let ran = self.run_periodic(out)?;
                    let again = self.controller.next_deadline(&self.quorum);
                    if !ran && again.is_some_and(|d| d <= self.now) {
                        break;
                    }
                }
                _ => break,
            }
        }
        self.now = target;
        self.run_periodic(out)?;
        self.release(out);
        Ok(())
    }

    /// `run_periodic`: the controller's decisions due now, each written before the next.
    fn run_periodic(&mut self, out: &mut Vec<String>) -> Result<bool, String> {
        let mut ran = false;
        while let Some(write) = self.controller.tick(self.now, &self.quorum) {
            let when = format!("t={} ", self.now);
            self.write(write, None, &when, out)?;
            ran = true;
        }
        Ok(ran)
    }
}
