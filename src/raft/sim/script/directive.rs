//! The directives of scenario scripts, parsed strictly: an unknown directive, argument or
//! value is an error before anything runs.

use std::collections::BTreeMap;
use std::time::Duration;

use super::args::{self, Args, Link};
use crate::log::memory_faults::{FaultKind, FaultPlan, StorageOp};
use crate::raft::config::ElectionRules;
use crate::raft::sim::wire::WireVersions;
use crate::raft::sim::{FixedTiming, SimOptions, Verbosity};
use crate::raft::types::{Epoch, NodeId};

/// The directive set, one line each (also the reply to an unknown directive).
pub const DIRECTIVES: &[&str] = &[
    "add-nodes voters=N [observers=N] [kraft-version=0|1] [auto-join=true] [observers-flush=true] [refused-connections=true] [election-jitter=n1:MS,..] [rules=n1:kraftd|kafka|stale-refusals,..] [delay=MS] [snapshot-every=N] [segment-bytes=N] [fetch-max-bytes=N] [fetch-snapshot-max-bytes=N] [election-timeout=MS] [fetch-timeout=MS] [wire=latest|API:V,..] [verbosity=roles|messages|quiet] [machine=values|NAME]",
    "tick MS",
    "propose [n=N] [epoch=E]",
    "resign",
    "crash nX",
    "restart nX [election-jitter=MS]",
    "stop nX",
    "fail-storage nX op=append|flush|truncate|snapshot error=eio|enospc|torn [after=N] [torn=PERMILLE]",
    "partition nA nB | nC ..",
    "isolate nX",
    "cut nA->nB",
    "heal",
    "hold nA->nB",
    "deliver nA->nB",
    "drop nA->nB",
    "delay [nA->nB] ms=MS",
    "clean-log nX ..",
    "add-voter nX [ack=committed|written]",
    "remove-voter nX",
    "upgrade-kraft-version [validate-only=true]",
    "set verbosity=quiet|roles|messages",
    "status",
    "log nX",
    "converged",
    "machines",
];

#[derive(Debug, Clone)]
pub enum Directive {
    /// Builds and starts the cluster: voters n1..nV, then observers. Nothing is random: each
    /// voter's election timeout is `election-timeout` plus its jitter (0 unless given), and
    /// every message takes `delay` ms (1 unless given). Every node replicates the machine
    /// named `machine`: `values` (the default), or one the caller of `script::run_with` names.
    /// `rules` gives nodes other election rules than kraftd's: `kafka` (a stand-in for a Java
    /// voter) or `stale-refusals` (the planted rule before issue #36).
    AddNodes {
        opts: Box<SimOptions>,
        machine: Option<String>,
    },
    /// Runs the cluster for this many virtual milliseconds.
    Tick(u64),
    /// The leader appends this many values, one batch each, as decided in `epoch` (default:
    /// the leader's current epoch; another one is refused).
    Propose { n: u64, epoch: Option<Epoch> },
    /// The leader resigns gracefully (EndQuorumEpoch).
    Resign,
    /// Hard kill: unflushed data and queued messages are lost.
    Crash(NodeId),
    /// Starts a crashed node from its durable state, optionally with a new election jitter.
    Restart {
        node: NodeId,
        election_jitter: Option<Duration>,
    },
    /// Graceful shutdown, then the process exits.
    Stop(NodeId),
    /// The node's storage fails: its `after`+1-th operation `op` (default: the next) fails with
    /// `error`; a torn write lets `torn` thousandths of its bytes reach the medium (default
    /// 500). The node halts on it and its process exits; `restart` brings it back.
    FailStorage { node: NodeId, plan: FaultPlan },
    /// Cuts every link between the groups, both ways.
    Partition(Vec<Vec<NodeId>>),
    /// Cuts a node off from every other, both ways.
    Isolate(NodeId),
    /// Cuts one direction of a link.
    Cut(Link),
    /// Lifts every cut and hold; held messages arrive at once.
    Heal,
    /// Messages on the link wait until `deliver`, `drop` or `heal`.
    Hold(Link),
    /// Delivers now every message on the link, held or in flight.
    Deliver(Link),
    /// Loses every message on the link, held or in flight.
    Drop(Link),
    /// Sets the delay of one link, or of every link (forgetting per-link delays).
    Delay { link: Option<Link>, ms: u64 },
    /// Moves each node's log start up to its latest snapshot.
    CleanLog(Vec<NodeId>),
    /// The operator asks the leader to add node X (its id, directory id and listener) as a
    /// voter; `ack=written` answers once the VotersRecord is written rather than committed.
    AddVoter {
        node: NodeId,
        ack_when_committed: bool,
    },
    /// The operator asks the leader to remove voter X.
    RemoveVoter(NodeId),
    /// The operator upgrades kraft.version to 1 at the leader (UpdateFeatures, as the
    /// controller hands it to raft); `validate-only=true` only checks it.
    UpgradeKraftVersion { validate_only: bool },
    /// How much of the run the outputs show.
    SetVerbosity(Verbosity),
    /// Prints each node's role, log end, high watermark and log start.
    Status,
    /// Prints a node's log: batches (by segment when modelled) and snapshots.
    Log(NodeId),
    /// Prints whether one leader is followed by every node with equal logs and HWs.
    Converged,
    /// Prints each node's replicated machine: the offset it has applied through, its committed
    /// state (a letter per distinct state), whether it holds writes ahead of the commit, and
    /// what its latest state holds.
    Machines,
}

impl Directive {
    pub fn parse(line: &str) -> Result<Directive, String> {
        let mut a = Args::parse(line)?;
        let d = match a.name.as_str() {
            "add-nodes" => Directive::AddNodes {
                opts: Box::new(add_nodes(&mut a)?),
                machine: a.key("machine"),
            },
            "tick" => Directive::Tick(millis("tick", &a.word("a duration in ms")?)?),
            "propose" => Directive::Propose {
                n: positive(a.number("n")?.unwrap_or(1), "n")?,
                epoch: a.number("epoch")?,
            },
            "resign" => Directive::Resign,
            "crash" => Directive::Crash(a.node()?),
            "restart" => Directive::Restart {
                node: a.node()?,
                election_jitter: a
                    .number::<u64>("election-jitter")?
                    .map(Duration::from_millis),
            },
            "stop" => Directive::Stop(a.node()?),
            "fail-storage" => fail_storage(&mut a)?,
            "partition" => Directive::Partition(groups(&a.rest())?),
            "isolate" => Directive::Isolate(a.node()?),
            "cut" => Directive::Cut(a.link()?),
            "heal" => Directive::Heal,
            "hold" => Directive::Hold(a.link()?),
            "deliver" => Directive::Deliver(a.link()?),
            "drop" => Directive::Drop(a.link()?),
            "delay" => {
                let link = match a.rest().as_slice() {
                    [] => None,
                    [link] => Some(args::link(link)?),
                    _ => return Err("`delay` takes at most one link".into()),
                };
                let ms = a.number("ms")?.ok_or("`delay` needs ms=MS")?;
                Directive::Delay {
                    link,
                    ms: positive(ms, "ms")?,
                }
            }
            "clean-log" => {
                let nodes = a.rest();
                if nodes.is_empty() {
                    return Err("`clean-log` needs at least one node".into());
                }
                Directive::CleanLog(
                    nodes
                        .iter()
                        .map(|n| args::node(n))
                        .collect::<Result<_, _>>()?,
                )
            }
            "set" => {
                let v = a.key("verbosity").ok_or("`set` needs verbosity=..")?;
                Directive::SetVerbosity(verbosity(&v)?)
            }
            "add-voter" => {
                let node = a.node()?;
                let ack_when_committed = match a.key("ack").as_deref() {
                    None | Some("committed") => true,
                    Some("written") => false,
                    Some(other) => {
                        return Err(format!("ack={other}: expected committed or written"))
                    }
                };
                Directive::AddVoter {
                    node,
                    ack_when_committed,
                }
            }
            "remove-voter" => Directive::RemoveVoter(a.node()?),
            "upgrade-kraft-version" => {
                let validate_only = match a.key("validate-only").as_deref() {
                    None | Some("false") => false,
                    Some("true") => true,
                    Some(other) => {
                        return Err(format!("validate-only={other}: expected true or false"))
                    }
                };
                Directive::UpgradeKraftVersion { validate_only }
            }
            "status" => Directive::Status,
            "log" => Directive::Log(a.node()?),
            "converged" => Directive::Converged,
            "machines" => Directive::Machines,
            other => {
                return Err(format!(
                    "unknown directive `{other}`; the directives are:\n  {}",
                    DIRECTIVES.join("\n  ")
                ))
            }
        };
        a.finish()?;
        Ok(d)
    }
}

fn fail_storage(a: &mut Args) -> Result<Directive, String> {
    let node = a.node()?;
    let op = match a.key("op").as_deref() {
        Some("append") => StorageOp::Append,
        Some("flush") => StorageOp::Flush,
        Some("truncate") => StorageOp::Truncate,
        Some("snapshot") => StorageOp::Snapshot,
        Some(other) => {
            return Err(format!(
                "`op={other}`: the operations are append, flush, truncate and snapshot"
            ))
        }
        None => return Err("`fail-storage` needs op=append|flush|truncate|snapshot".into()),
    };
    let kind = match a.key("error").as_deref() {
        Some("eio") => FaultKind::Eio,
        Some("enospc") => FaultKind::Enospc,
        Some("torn") => FaultKind::TornWrite,
        Some(other) => {
            return Err(format!(
                "`error={other}`: the errors are eio, enospc and torn"
            ))
        }
        None => return Err("`fail-storage` needs error=eio|enospc|torn".into()),
    };
    if !kind.applies_to(op) {
        return Err(format!(
            "a {op} cannot be torn: it writes no bytes (use eio or enospc)"
        ));
    }
    let torn_permille: u16 = a.number("torn")?.unwrap_or(500);
    if !(1..=999).contains(&torn_permille) {
        return Err("`torn` is in thousandths: 1..=999".into());
    }
    let plan = FaultPlan {
        op,
        after: a.number("after")?.unwrap_or(0),
        kind,
        torn_permille,
    };
    Ok(Directive::FailStorage { node, plan })
}

fn positive(n: u64, what: &str) -> Result<u64, String> {
    if n == 0 {
        Err(format!("`{what}` must be at least 1"))
    } else {
        Ok(n)
    }
}

fn millis(what: &str, word: &str) -> Result<u64, String> {
    word.parse()
        .map_err(|_| format!("`{what}`: `{word}` is not a number of milliseconds"))
}

fn verbosity(v: &str) -> Result<Verbosity, String> {
    match v {
        "quiet" => Ok(Verbosity::Quiet),
        "roles" => Ok(Verbosity::Roles),
        "messages" => Ok(Verbosity::Messages),
        _ => Err(format!("verbosity `{v}` is not quiet, roles or messages")),
    }
}

/// `n1 | n2 n3` -> [[1], [2, 3]].
fn groups(words: &[String]) -> Result<Vec<Vec<NodeId>>, String> {
    let groups: Vec<Vec<NodeId>> = words
        .split(|w| w == "|")
        .map(|g| g.iter().map(|n| args::node(n)).collect())
        .collect::<Result<_, _>>()?;
    if groups.len() < 2 || groups.iter().any(Vec::is_empty) {
        return Err("`partition` needs groups of nodes split by `|`, e.g. n1 | n2 n3".into());
    }
    let mut all: Vec<NodeId> = groups.concat();
    all.sort_unstable();
    if all.windows(2).any(|w| w[0] == w[1]) {
        return Err("`partition` names a node twice".into());
    }
    Ok(groups)
}

fn add_nodes(a: &mut Args) -> Result<SimOptions, String> {
    let voters: usize = a.number("voters")?.ok_or("`add-nodes` needs voters=N")?;
    positive(voters as u64, "voters")?;
    let mut o = SimOptions {
        voters,
        observers: a.number("observers")?.unwrap_or(0),
        kraft_version: a.number("kraft-version")?.unwrap_or(0),
        auto_join: a.key("auto-join").as_deref() == Some("true"),
        observers_flush: a.key("observers-flush").as_deref() == Some("true"),
        refused_connections: a.key("refused-connections").as_deref() == Some("true"),
        snapshot_every: a.number("snapshot-every")?.unwrap_or(0),
        segment_bytes: a.number("segment-bytes")?,
        verbosity: a
            .key("verbosity")
            .as_deref()
            .map_or(Ok(Verbosity::Roles), verbosity)?,
        ..SimOptions::default()
    };
    if !(0..=1).contains(&o.kraft_version) {
        return Err("`kraft-version` is 0 or 1".into());
    }
    if o.segment_bytes == Some(0) {
        return Err("`segment-bytes` must be at least 1".into());
    }
    if let Some(ms) = a.number("election-timeout")? {
        o.election_timeout = Duration::from_millis(positive(ms, "election-timeout")?);
    }
    if let Some(ms) = a.number("fetch-timeout")? {
        o.fetch_timeout = Duration::from_millis(positive(ms, "fetch-timeout")?);
    }
    if let Some(b) = a.number::<u32>("fetch-max-bytes")? {
        o.fetch_max_bytes = positive(b.into(), "fetch-max-bytes")? as u32;
    }
    if let Some(b) = a.number::<u32>("fetch-snapshot-max-bytes")? {
        o.fetch_snapshot_max_bytes = positive(b.into(), "fetch-snapshot-max-bytes")? as u32;
    }
    o.wire = a.key("wire").map(|w| wire(&w)).transpose()?;
    let delay_ms = positive(a.number("delay")?.unwrap_or(1), "delay")?;
    let mut election_jitter = BTreeMap::new();
    if let Some(value) = a.key("election-jitter") {
        for (id, ms) in args::per_node("election-jitter", &value)? {
            if id as usize > voters {
                return Err(format!(
                    "`election-jitter`: n{id} is not a voter (voters are n1..n{voters})"
                ));
            }
            let ms = millis("election-jitter", &ms)?;
            if ms >= o.election_timeout.as_millis() as u64 {
                return Err(format!(
                    "`election-jitter`: n{id}:{ms} is not below the election timeout ({} ms)",
                    o.election_timeout.as_millis()
                ));
            }
            if election_jitter
                .insert(id, Duration::from_millis(ms))
                .is_some()
            {
                return Err(format!("`election-jitter` names n{id} twice"));
            }
        }
    }
    if let Some(value) = a.key("rules") {
        for (id, name) in args::per_node("rules", &value)? {
            let rules = match name.as_str() {
                "kraftd" => ElectionRules::Kraftd,
                "kafka" => ElectionRules::Kafka,
                "stale-refusals" => ElectionRules::KraftdKeepingStaleRefusals,
                other => {
                    return Err(format!(
                        "`rules`: n{id}:{other} is not kraftd, kafka or stale-refusals"
                    ))
                }
            };
            if id as usize > voters + o.observers {
                return Err(format!("`rules`: n{id} is not a node of this cluster"));
            }
            if o.election_rules.insert(id, rules).is_some() {
                return Err(format!("`rules` names n{id} twice"));
            }
        }
    }
    o.fixed_timing = Some(FixedTiming {
        election_jitter,
        delay_ms,
    });
    Ok(o)
}

/// `latest`, or `api:version,..` overriding the latest versions.
fn wire(value: &str) -> Result<WireVersions, String> {
    let mut w = WireVersions::latest();
    if value == "latest" {
        return Ok(w);
    }
    for entry in value.split(',') {
        let (api, v) = entry
            .split_once(':')
            .ok_or_else(|| format!("`wire`: `{entry}` is not api:version (e.g. vote:1)"))?;
        let v: i16 = v
            .parse()
            .map_err(|_| format!("`wire`: `{v}` is not a version"))?;
        let slot = match api {
            "vote" => &mut w.vote,
            "begin-quorum-epoch" => &mut w.begin_quorum_epoch,
            "end-quorum-epoch" => &mut w.end_quorum_epoch,
            "fetch" => &mut w.fetch,
            "fetch-snapshot" => &mut w.fetch_snapshot,
            "describe-quorum" => &mut w.describe_quorum,
            _ => return Err(format!("`wire`: unknown api `{api}` (vote, begin-quorum-epoch, end-quorum-epoch, fetch, fetch-snapshot, describe-quorum)")),
        };
        *slot = v;
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(line: &str) -> String {
        Directive::parse(line).unwrap_err()
    }

    #[test]
    fn add_nodes_builds_fixed_timing() {
        let Directive::AddNodes { opts: o, machine } =
            Directive::parse("add-nodes voters=3 election-jitter=n1:0,n3:800 delay=2 wire=vote:1")
                .unwrap()
        else {
            panic!("not add-nodes");
        };
        assert_eq!(machine, None);
        let fixed = o.fixed_timing.expect("scripts never draw");
        assert_eq!(fixed.delay_ms, 2);
        assert_eq!(fixed.election_jitter[&3], Duration::from_millis(800));
        assert!(!fixed.election_jitter.contains_key(&2));
        assert_eq!(o.wire.map(|w| (w.vote, w.fetch)), Some((1, 18)));
    }

    #[test]
    fn unknown_directives_and_arguments_are_refused() {
        assert!(err("teleport n1").contains("unknown directive `teleport`"));
        assert!(err("tick 100 fast").contains("no argument `fast`"));
        assert!(err("crash n1 hard=yes").contains("hard=yes"));
        assert!(err("add-nodes voters=3 seed=7").contains("seed=7"));
        assert!(err("add-nodes voters=3 election-jitter=n4:10").contains("not a voter"));
        assert!(err("add-nodes voters=3 election-jitter=n1:1000").contains("not below"));
        assert!(err("add-nodes voters=1 wire=votes:1").contains("unknown api"));
        assert!(err("partition n1 n2").contains("groups"));
        assert!(err("partition n1 | n1").contains("twice"));
        assert!(err("set verbosity=loud").contains("loud"));
        assert!(err("delay n1->n2").contains("ms="));
        assert!(err("propose n=0").contains("at least 1"));
        assert!(err("tick").contains("needs"));
        assert!(err("fail-storage n1 op=fsync error=eio").contains("append, flush"));
        assert!(err("fail-storage n1 op=flush error=full").contains("eio, enospc"));
        assert!(err("fail-storage n1 op=truncate error=torn").contains("cannot be torn"));
        assert!(err("fail-storage n1 op=append error=torn torn=1000").contains("1..=999"));
        assert!(err("fail-storage n1 error=eio").contains("needs op="));
    }

    #[test]
    fn every_listed_directive_parses() {
        for line in [
            "tick 5",
            "propose",
            "propose n=2",
            "propose epoch=1",
            "restart n2 election-jitter=10",
            "partition n1 | n2 n3",
            "delay ms=3",
            "delay n1->n2 ms=3",
            "clean-log n1 n2",
            "fail-storage n2 op=flush error=enospc",
            "fail-storage n1 op=append error=torn after=2 torn=300",
            "set verbosity=messages",
            "add-nodes voters=1 machine=controller",
            "machines",
        ] {
            Directive::parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }
}
