//! Issue 13's soak: the rolling replacement of `rolling_replacement.rs` (every Java controller
//! replaced by kraftd on its own directory, one at a time, then back to Java, under a verifying
//! producer and consumer) in a loop, with faults drawn from a seeded random generator:
//! - a step stops the voter it replaces with SIGKILL instead of SIGTERM;
//! - a controller, any of the three (Java or kraftd, leading or not), is killed with SIGKILL and
//!   started again, the same kind on the same directory: between steps, or within a step (once
//!   the replacement was started, or once it registered);
//! - voter 3 runs in a network namespace of its own (see `harness/netns.rs`; the other voters
//!   listen on the host end of its link, the brokers and clients stay on 127.0.0.1) and is cut
//!   off for 10-20 s, longer than the fetch timeout, between steps or within one.
//!
//! After every fault: a controller leads (during a partition, one of the two others), the voters
//! catch up (a restarted one registered again, a cut-off one is back at the leader's log end),
//! no broker was fenced, no broker or Java controller logged a metadata fault, every process
//! runs, and the clients got further (during a partition too). Each step makes its own checks
//! (`Rolling::step`), and the end makes rolling_replacement's: every acknowledged message
//! consumed exactly once, identical logs, Java's image equal to kraftd's on every node.
//!
//! Each step's topic is named after the step's number in the whole run, never reused: Kafka
//! 4.4 can keep a deleted topic's configs in a node's image and write them into its snapshots
//! (see `without_orphan_topic_configs`); a controller, Java's or kraftd, that loads such a
//! snapshot holds them for a topic re-created with that name, takes a SET of the same value as
//! no change (`ConfigurationControlManager` writes no record for it) and answers it, and the
//! brokers, whose images dropped the configs, never see the value. The first soak run met
//! exactly that (step-4 of loop 2, after a SIGKILLed Java voter's snapshot reached kraftd).
//!
//! In `make test` the test runs one loop with one kill and one partition, the steps stopping
//! their voters as `rolling_replacement.rs`'s same-directory plan does (so it is that test with
//! faults on top; Kafka 4.4's plain run is not repeated). With
//! `KRAFTD_SOAK_MINUTES=n` (`make soak SOAK_MINUTES=n`) it starts loops until n minutes have
//! passed. `KRAFTD_SOAK_SEED` (`SOAK_SEED`) replays a run's draws (the timing still varies);
//! the seed is printed first. Any failed check fails the test, after a summary of the run so far.

use std::panic::{self, AssertUnwindSafe};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use kraftd::protocol::codec::Uuid;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::harness::mixed_quorum::Stop;
use crate::harness::netns::Netns;
use crate::harness::quorum_probe::leader_view_at;
use crate::harness::workload::Cluster;
use crate::rolling_replacement::{
    Point, Rolling, Step, Swap, CLIENT_TIMEOUT, JAVA, KRAFTD, SAME_DIRECTORIES,
};

/// The voter in the network namespace: the one a partition cuts off.
const CUT_OFF: i32 = 3;

#[test]
fn replacement_loop_with_kill9_and_partition() {
    let started = Instant::now();
    let plan = Plan::from_env();
    eprintln!(
        "rolling soak: seed {} (KRAFTD_SOAK_SEED={0} replays the draws), {}",
        plan.seed,
        match plan.minutes {
            Some(m) => format!("loops for {m} minutes"),
            None => "one loop with one kill -9 and one partition".to_string(),
        }
    );
    // Declared first, dropped last: after every process in it was killed.
    let net = Netns::create();
    let mut r = Rolling::start_placed(net.placement(1..=3, CUT_OFF));
    r.log(&format!(
        "voter {CUT_OFF} in network namespace {} at {}; voters 1-2 at {}",
        net.name(),
        net.inside_addr(),
        net.host_addr()
    ));
    let mut soak = Soak::new(&net, &plan, started, &r);
    let run = panic::catch_unwind(AssertUnwindSafe(|| {
        soak.run(&mut r);
    }));
    if let Err(anomaly) = run {
        let what = anomaly
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| anomaly.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        eprintln!("{}", soak.summary(None, Some(&what)));
        panic::resume_unwind(anomaly);
    }
    let tally = r.finish();
    eprintln!("{}", soak.summary(Some(tally.acked), None));
}

/// How long to soak and the generator's seed.
struct Plan {
    /// `None`: one loop (CI).
    minutes: Option<u64>,
    seed: u64,
}

impl Plan {
    fn from_env() -> Plan {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let minutes = var("KRAFTD_SOAK_MINUTES").map(|m| match m.parse::<u64>() {
            Ok(m) if m > 0 => m,
            _ => panic!("KRAFTD_SOAK_MINUTES must be a positive number of minutes, not {m:?}"),
        });
        let seed = var("KRAFTD_SOAK_SEED").map_or_else(
            || {
                let now = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default();
                now.as_nanos() as u64 ^ u64::from(std::process::id()) << 32
            },
            |s| {
                s.parse()
                    .unwrap_or_else(|_| panic!("KRAFTD_SOAK_SEED must be a number, not {s:?}"))
            },
        );
        Plan { minutes, seed }
    }
}

/// A fault and when in a step it strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// SIGKILL to a controller, then the same kind started on its directory.
    Kill(i32),
    /// Voter [`CUT_OFF`] cut off for this long.
    Partition(Duration),
}

/// Before the step, or at a point within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    Before,
    At(Point),
}

/// A fault that struck: what the cluster was like then, and the voter it restarted (with its
/// incarnation before), if any.
struct Struck {
    fault: Fault,
    /// The leader when it struck, if one was seen.
    leader: Option<i32>,
    /// The kind of the voter it hit.
    kind: &'static str,
    restarted: Option<(i32, Option<Uuid>)>,
}

impl Struck {
    fn describe(&self) -> String {
        let role = |id| {
            if self.leader == Some(id) {
                "the leader"
            } else {
                "a follower"
            }
        };
        match self.fault {
            Fault::Kill(id) => format!("kill -9 of {} {id} ({})", self.kind, role(id)),
            Fault::Partition(time) => format!(
                "partition of {} {CUT_OFF} ({}) for {time:?}",
                self.kind,
                role(CUT_OFF)
            ),
        }
    }
}

/// What a step does: how it stops the voter it replaces, and the fault that strikes during it.
struct StepPlan {
    stop: Stop,
    fault: Option<(Fault, When)>,
}

/// The soak's generator, counters and what its checks remember.
struct Soak<'a> {
    net: &'a Netns,
    rng: StdRng,
    minutes: Option<u64>,
    seed: u64,
    /// When the test started (the cluster's start counts towards the minutes).
    started: Instant,
    loops: usize,
    steps: usize,
    sigkill_stops: usize,
    kills: usize,
    kills_of_leader: usize,
    partitions: usize,
    partitions_of_leader: usize,
    mid_step: usize,
    /// The leader (id, epoch) last seen, the first epoch seen and the changes seen.
    leader: (i32, i32),
    first_epoch: i32,
    leader_changes: usize,
    kraftd_led: usize,
    /// Threads that heal a partition made within a step, once its time is up.
    healers: Vec<JoinHandle<Result<(), String>>>,
}

impl<'a> Soak<'a> {
    fn new(net: &'a Netns, plan: &Plan, started: Instant, r: &Rolling) -> Soak<'a> {
        let d = r.c.q.wait_caught_up(0);
        Soak {
            net,
            rng: StdRng::seed_from_u64(plan.seed),
            minutes: plan.minutes,
            seed: plan.seed,
            started,
            loops: 0,
            steps: 0,
            sigkill_stops: 0,
            kills: 0,
            kills_of_leader: 0,
            partitions: 0,
            partitions_of_leader: 0,
            mid_step: 0,
            leader: (d.leader_id, d.leader_epoch),
            first_epoch: d.leader_epoch,
            leader_changes: 0,
            kraftd_led: 0,
            healers: Vec::new(),
        }
    }

    /// Loops until the time is up (one loop in CI).
    fn run(&mut self, r: &mut Rolling) {
        loop {
            let plans = self.draw_loop();
            for (i, p) in plans.into_iter().enumerate() {
                let n = i + 1;
                let to = if n <= 3 { KRAFTD } else { JAVA };
                self.step(r, n, to, p);
            }
            self.loops += 1;
            r.log(&format!("loop {} done: {}", self.loops, self.counts()));
            let out_of_time = match self.minutes {
                Some(m) => self.started.elapsed() >= Duration::from_secs(m * 60),
                None => true,
            };
            if out_of_time {
                return;
            }
        }
    }

    /// The six steps of a loop. In CI: one kill and one partition, in two different steps, at
    /// drawn points. Soaking: each step has a fault with probability 2/3, a kill or a partition.
    fn draw_loop(&mut self) -> Vec<StepPlan> {
        let rng = &mut self.rng;
        let mut plans: Vec<StepPlan> = (0..6)
            .map(|_| StepPlan {
                stop: if rng.gen_bool(0.5) {
                    Stop::Kill9
                } else {
                    Stop::Sigterm
                },
                fault: None,
            })
            .collect();
        let when = |rng: &mut StdRng| match rng.gen_range(0..3) {
            0 => When::Before,
            1 => When::At(Point::Swapped),
            _ => When::At(Point::Registered),
        };
        let partition =
            |rng: &mut StdRng| Fault::Partition(Duration::from_secs(rng.gen_range(10..=20)));
        if self.minutes.is_none() {
            // The plain rolling replacement's stops (a SIGKILL in the second step of each
            // direction): this loop is that test, with a kill and a partition on top.
            for (p, (_, swap)) in plans.iter_mut().zip(SAME_DIRECTORIES) {
                if let Swap::SameDirectory(stop) = swap {
                    p.stop = stop;
                }
            }
            let kill_step = rng.gen_range(0..6);
            let partition_step = (kill_step + rng.gen_range(1..6)) % 6;
            plans[kill_step].fault = Some((Fault::Kill(rng.gen_range(1..=3)), when(rng)));
            plans[partition_step].fault = Some((partition(rng), when(rng)));
        } else {
            for p in &mut plans {
                p.fault = match rng.gen_range(0..3) {
                    0 => None,
                    1 => Some((Fault::Kill(rng.gen_range(1..=3)), when(rng))),
                    _ => Some((partition(rng), when(rng))),
                };
            }
        }
        plans
    }

    /// One step of the rolling replacement with its fault.
    fn step(&mut self, r: &mut Rolling, n: usize, to: &'static str, p: StepPlan) {
        if let Some((fault, When::Before)) = p.fault {
            self.strike(r, fault, "between steps");
        }
        let mid = match p.fault {
            Some((fault, When::At(point))) => Some((fault, point)),
            _ => None,
        };
        let acked_before = r.clients.tally().acked;
        let mut struck = None;
        let s: Step = {
            let net = self.net;
            let healers = &mut self.healers;
            // Numbered through the run, so that each step's topic has a name of its own (see
            // the module documentation).
            r.step_with(
                self.steps + 1,
                to,
                Swap::SameDirectory(p.stop),
                |c, point| {
                    let Some((fault, at)) = mid else { return };
                    if at != point {
                        return;
                    }
                    let leader = leader_view_at(&c.q.addrs()).map(|d| d.leader_id);
                    struck = Some((point, strike_within(c, net, fault, leader, healers)));
                },
            )
        };
        self.steps += 1;
        if p.stop == Stop::Kill9 {
            self.sigkill_stops += 1;
        }
        self.observe_leader(s.leader_after.0, s.epoch_after);
        if s.leader_after.1 == KRAFTD {
            self.kraftd_led += 1;
        }
        r.log(&format!(
            "loop {} step {n} (topic step-{}): {s}",
            self.loops + 1,
            self.steps
        ));
        if let Some((point, struck)) = struck {
            self.mid_step += 1;
            self.count(&struck);
            for h in self.healers.drain(..) {
                let healed = h.join().expect("the healing thread");
                healed.unwrap_or_else(|e| panic!("cannot heal the partition: {e}"));
            }
            let what = format!(
                "{} at {point:?} of loop {} step {n}",
                struck.describe(),
                self.loops + 1
            );
            self.check(r, &what, struck.restarted, acked_before);
        }
    }

    /// A fault between steps, and the checks after it.
    fn strike(&mut self, r: &mut Rolling, fault: Fault, when: &str) {
        let d = r.c.q.wait_caught_up(0);
        let leader = Some(d.leader_id);
        self.observe_leader(d.leader_id, d.leader_epoch);
        let acked_before = r.clients.tally().acked;
        let struck = match fault {
            Fault::Kill(id) => {
                let kind = kind(&mut r.c, id);
                let incarnation = r.c.view().controllers.get(&id).copied();
                kill_and_restart(&mut r.c, id);
                Struck {
                    fault,
                    leader,
                    kind,
                    restarted: Some((id, incarnation)),
                }
            }
            Fault::Partition(time) => {
                let cut_off = kind(&mut r.c, CUT_OFF);
                let cut = Instant::now();
                self.net.partition();
                // The two others lead (a new leader if the cut-off voter led), and the
                // clients get further, while the partition lasts.
                let during = r.c.q.wait_for_leader(if d.leader_id == CUT_OFF {
                    d.leader_epoch
                } else {
                    0
                });
                assert_ne!(
                    during.leader_id, CUT_OFF,
                    "voter {CUT_OFF} cut off but reported as the leader"
                );
                let elected = cut.elapsed();
                r.clients.wait_beyond(acked_before, CLIENT_TIMEOUT);
                let progressed = r.clients.tally().acked - acked_before;
                thread::sleep(time.saturating_sub(cut.elapsed()));
                self.net.heal();
                let leader_kind = kind(&mut r.c, during.leader_id);
                r.log(&format!(
                    "  cut off for {:.1?}: meanwhile {} {} led in epoch {} ({elected:.1?} after \
                     the cut) and {progressed}+ messages were acknowledged",
                    cut.elapsed(),
                    leader_kind,
                    during.leader_id,
                    during.leader_epoch
                ));
                Struck {
                    fault,
                    leader,
                    kind: cut_off,
                    restarted: None,
                }
            }
        };
        self.count(&struck);
        let what = format!("{} {when}", struck.describe());
        self.check(r, &what, struck.restarted, acked_before);
    }

    /// The checks after a fault: see the module documentation.
    fn check(
        &mut self,
        r: &mut Rolling,
        what: &str,
        restarted: Option<(i32, Option<Uuid>)>,
        acked_before: usize,
    ) {
        let t0 = Instant::now();
        assert!(!self.net.is_partitioned(), "{what}: still cut off");
        let c = &mut r.c;
        if let Some((id, incarnation)) = restarted {
            c.wait_for(&format!("{what}: voter {id} registered again"), |v| {
                v.controllers
                    .get(&id)
                    .is_some_and(|&i| Some(i) != incarnation)
            });
        }
        let end = c.view().end_offset;
        let d = c.q.wait_caught_up(end);
        let caught_up = t0.elapsed();
        assert_eq!(
            c.view().fencings,
            r.fenced_at_start,
            "{what}: brokers fenced"
        );
        for b in &mut c.brokers {
            assert!(b.is_running(), "{what}: broker {} exited", b.node_id());
            b.assert_no_metadata_faults();
        }
        c.assert_running();
        c.q.assert_java_healthy();
        let acked = r.clients.wait_beyond(acked_before, CLIENT_TIMEOUT).acked;
        let leader = (d.leader_id, kind(&mut r.c, d.leader_id));
        self.observe_leader(d.leader_id, d.leader_epoch);
        r.log(&format!(
            "{what}: {} {} leads in epoch {}; every voter caught up {caught_up:.1?} after; no \
             broker fenced, no metadata fault; {acked} acknowledged",
            leader.1, leader.0, d.leader_epoch
        ));
    }

    fn count(&mut self, struck: &Struck) {
        match struck.fault {
            Fault::Kill(id) => {
                self.kills += 1;
                self.kills_of_leader += usize::from(struck.leader == Some(id));
            }
            Fault::Partition(_) => {
                self.partitions += 1;
                self.partitions_of_leader += usize::from(struck.leader == Some(CUT_OFF));
            }
        }
    }

    fn observe_leader(&mut self, id: i32, epoch: i32) {
        if (id, epoch) != self.leader {
            self.leader_changes += 1;
            self.leader = (id, epoch);
        }
    }

    fn counts(&self) -> String {
        format!(
            "{} steps ({} stopped with SIGKILL), {} kill -9s ({} of the leader), {} partitions \
             ({} of the leader), {} of the faults within a step; {} leader changes seen (epochs \
             {} to {}), kraftd led after {} steps",
            self.steps,
            self.sigkill_stops,
            self.kills,
            self.kills_of_leader,
            self.partitions,
            self.partitions_of_leader,
            self.mid_step,
            self.leader_changes,
            self.first_epoch,
            self.leader.1,
            self.kraftd_led
        )
    }

    /// The closing line: the run's counts, the messages acknowledged (once the end checks
    /// passed) and the anomaly that stopped it, if any.
    fn summary(&self, acked: Option<usize>, anomaly: Option<&str>) -> String {
        let acked = acked.map_or(String::new(), |a| {
            format!(", {a} messages acknowledged and consumed exactly once")
        });
        format!(
            "rolling soak summary: seed {}, {:.1} min, {} loops, {}{acked}; anomalies: {}",
            self.seed,
            self.started.elapsed().as_secs_f64() / 60.0,
            self.loops,
            self.counts(),
            anomaly.map_or("none".to_string(), |a| format!("1: {a}"))
        )
    }
}

/// A fault within a step: a kill at once (the voter restarted); a partition started, healed by
/// a thread once its time is up (the step's waits go on meanwhile).
fn strike_within(
    c: &mut Cluster,
    net: &Netns,
    fault: Fault,
    leader: Option<i32>,
    healers: &mut Vec<JoinHandle<Result<(), String>>>,
) -> Struck {
    let (victim, restarted) = match fault {
        Fault::Kill(id) => {
            let incarnation = c.view().controllers.get(&id).copied();
            (id, Some((id, incarnation)))
        }
        Fault::Partition(_) => (CUT_OFF, None),
    };
    let kind = kind(c, victim);
    match fault {
        Fault::Kill(id) => kill_and_restart(c, id),
        Fault::Partition(time) => {
            net.partition();
            let link = net.link();
            healers.push(thread::spawn(move || {
                thread::sleep(time);
                link.try_up()
            }));
        }
    }
    Struck {
        fault,
        leader,
        kind,
        restarted,
    }
}

/// SIGKILL to voter `id`, then the same kind started on its directory.
fn kill_and_restart(c: &mut Cluster, id: i32) {
    let q = &mut c.q;
    let m = &mut q.members[(id - 1) as usize];
    m.kill9();
    m.restart(&q.dir);
}

fn kind(c: &mut Cluster, id: i32) -> &'static str {
    c.q.member(id).kind()
}
