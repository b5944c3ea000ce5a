//! kraftd's `PartitionChange` against Kafka 4.4's `PartitionChangeBuilder`
//! (`compat/java/PartitionChangeProbe.java`): the same partition, leader acceptor, metadata
//! version, ELR setting, min ISR, election and targets go to both, and the records they build
//! must be equal field by field (or both build none). The partitions are generated: ISRs of
//! every size, ELRs and last known leaders, leaders fenced or alive, reassignments in flight,
//! unclean shutdowns, recovering leaders, and broker ids whose `HashSet` order differs from
//! their numeric order (the ELR keeps Java's set order).

use kraftd::controller::leadership::{Election, PartitionChange};
use kraftd::controller::metadata_version::MetadataVersion;
use kraftd::controller::replication::{PartitionRegistration, DIRECTORY_UNASSIGNED};
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::records::MetadataRecord;

use crate::harness::cases::Gen;
use crate::harness::java_probe::run_probe;
use crate::harness::TestDir;

/// Broker ids whose `HashSet<Integer>` order (by `id & 15` first) is not their numeric order.
const BROKERS: [i32; 8] = [1, 2, 3, 17, 18, 33, 101, 102];
/// metadata.versions where the builder's gates change: 3.3-IV3, 3.5-IV2, 3.6-IV0, 3.7-IV2,
/// 4.0-IV1, 4.4-IV2.
const LEVELS: [i16; 6] = [7, 11, 12, 17, 23, 33];

fn dir(r: i32) -> Uuid {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&(r as i64).to_be_bytes());
    b[8..].copy_from_slice(&(r as i64).to_be_bytes());
    Uuid(b)
}

#[derive(Debug)]
struct Case {
    level: i16,
    elr: bool,
    min_isr: usize,
    election: Election,
    partition: PartitionRegistration,
    acceptable: Vec<i32>,
    target_isr: Option<Vec<i32>>,
    target_replicas: Option<Vec<i32>>,
    target_removing: Option<Vec<i32>>,
    target_adding: Option<Vec<i32>>,
    target_recovery: Option<i8>,
    unclean_shutdown: Option<Vec<i32>>,
}

fn ids(l: &[i32]) -> String {
    l.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

fn opt(l: &Option<Vec<i32>>) -> String {
    l.as_ref().map_or("-".to_string(), |l| ids(l))
}

impl Case {
    fn generate(g: &mut Gen) -> Case {
        let mut replicas = g.subset(&BROKERS);
        if replicas.is_empty() {
            replicas.push(BROKERS[g.below(BROKERS.len() as u64) as usize]);
        }
        replicas.truncate(5);
        let isr = g.subset(&replicas);
        let outside: Vec<i32> = replicas
            .iter()
            .copied()
            .filter(|r| !isr.contains(r))
            .collect();
        let elr = if g.chance(2) {
            g.subset(&outside)
        } else {
            Vec::new()
        };
        let last_known_elr = match g.below(4) {
            0 => vec![replicas[g.below(replicas.len() as u64) as usize]],
            1 => g.subset(&replicas),
            _ => Vec::new(),
        };
        let leader = match g.below(4) {
            0 => -1,
            1 => replicas[g.below(replicas.len() as u64) as usize],
            _ => isr.first().copied().unwrap_or(-1),
        };
        // Now and then a reassignment in flight: some replicas being added, some removed.
        let (removing, adding) = if replicas.len() > 1 && g.chance(4) {
            let adding = g.subset(&replicas);
            let rest: Vec<i32> = replicas
                .iter()
                .copied()
                .filter(|r| !adding.contains(r))
                .collect();
            let removing = if rest.len() > 1 {
                g.subset(&rest[1..])
            } else {
                Vec::new()
            };
            (removing, adding)
        } else {
            (Vec::new(), Vec::new())
        };
        let partition = PartitionRegistration {
            directories: replicas.iter().map(|r| dir(*r)).collect(),
            replicas: replicas.clone(),
            isr,
            removing_replicas: removing,
            adding_replicas: adding,
            elr,
            last_known_elr,
            leader,
            leader_recovery_state: if g.chance(5) { 1 } else { 0 },
            leader_epoch: g.below(5) as i32,
            partition_epoch: g.below(9) as i32,
        };
        let target_isr = match g.below(5) {
            0 => None,
            1 => Some(Vec::new()),
            _ => Some(g.subset(&replicas)),
        };
        let target_replicas = g.chance(8).then(|| {
            let mut t = g.subset(&BROKERS);
            if t.is_empty() {
                t.push(replicas[0]);
            }
            t
        });
        let (target_removing, target_adding) = if target_replicas.is_some() && g.chance(2) {
            let t = target_replicas.clone().unwrap_or_default();
            (Some(g.subset(&t)), Some(g.subset(&t)))
        } else {
            (None, None)
        };
        Case {
            level: LEVELS[g.below(LEVELS.len() as u64) as usize],
            elr: g.chance(2),
            min_isr: 1 + g.below(3) as usize,
            election: [Election::Preferred, Election::Online, Election::Unclean]
                [g.below(3) as usize],
            acceptable: g.subset(&BROKERS),
            target_isr,
            target_replicas,
            target_removing,
            target_adding,
            target_recovery: match g.below(4) {
                0 => Some(0),
                1 => Some(1),
                _ => None,
            },
            unclean_shutdown: g
                .chance(4)
                .then(|| vec![replicas[g.below(replicas.len() as u64) as usize]]),
            partition,
        }
    }

    fn line(&self) -> String {
        let p = &self.partition;
        let election = match self.election {
            Election::Preferred => "PREFERRED",
            Election::Online => "ONLINE",
            Election::Unclean => "UNCLEAN",
        };
        [
            self.level.to_string(),
            self.elr.to_string(),
            self.min_isr.to_string(),
            election.to_string(),
            ids(&p.replicas),
            ids(&p.isr),
            ids(&p.elr),
            ids(&p.last_known_elr),
            p.leader.to_string(),
            p.leader_epoch.to_string(),
            p.partition_epoch.to_string(),
            p.leader_recovery_state.to_string(),
            ids(&p.removing_replicas),
            ids(&p.adding_replicas),
            ids(&self.acceptable),
            opt(&self.target_isr),
            opt(&self.target_replicas),
            opt(&self.target_removing),
            opt(&self.target_adding),
            self.target_recovery
                .map_or("-".to_string(), |s| s.to_string()),
            opt(&self.unclean_shutdown),
        ]
        .join("|")
    }

    /// kraftd's record, rendered as the probe renders Java's.
    fn ours(&self) -> String {
        let acceptable = |r: i32| self.acceptable.contains(&r);
        let default_dir = |_| DIRECTORY_UNASSIGNED;
        let mv = MetadataVersion::from_level(self.level).expect("a known level");
        let mut change = PartitionChange::new(
            &self.partition,
            Uuid::ZERO,
            0,
            &acceptable,
            mv,
            self.min_isr,
            self.elr,
            &default_dir,
        )
        .election(self.election);
        if let Some(t) = &self.target_isr {
            change = change.target_isr(t.clone());
        }
        if let Some(t) = &self.target_replicas {
            change = change.target_replicas(t.clone());
        }
        if let Some(t) = &self.target_removing {
            change = change.target_removing(t.clone());
        }
        if let Some(t) = &self.target_adding {
            change = change.target_adding(t.clone());
        }
        if let Some(s) = self.target_recovery {
            change = change.target_recovery_state(s);
        }
        if let Some(u) = &self.unclean_shutdown {
            change = change.unclean_shutdown_replicas(u.clone());
        }
        let Some(built) = change.build() else {
            return "none".to_string();
        };
        let MetadataRecord::PartitionChange(r) = &built.record else {
            return format!("not a PartitionChangeRecord: {:?}", built.record);
        };
        let show = |l: &Option<Vec<i32>>| {
            l.as_ref()
                .map_or("-".to_string(), |l| format!("[{}]", ids(l)))
        };
        let dirs = r.directories.as_ref().map_or("-".to_string(), |d| {
            format!(
                "[{}]",
                d.iter().map(Uuid::to_string).collect::<Vec<_>>().join(",")
            )
        });
        format!(
            "v{} leader={} isr={} elr={} lke={} replicas={} removing={} adding={} lrs={} dirs={}",
            built.version,
            r.leader,
            show(&r.isr),
            show(&r.eligible_leader_replicas),
            show(&r.last_known_elr),
            show(&r.replicas),
            show(&r.removing_replicas),
            show(&r.adding_replicas),
            r.leader_recovery_state,
            dirs
        )
    }
}

#[test]
fn partition_changes_are_kafkas_record_for_record() {
    let dir = TestDir::new();
    let mut g = Gen(4_4_0);
    let cases: Vec<Case> = (0..6000).map(|_| Case::generate(&mut g)).collect();
    let input: String = cases.iter().map(|c| c.line() + "\n").collect();
    let java = run_probe("PartitionChangeProbe", &[], &input, dir.path());
    let answers: Vec<&str> = java.stdout.lines().collect();
    assert_eq!(answers.len(), cases.len(), "{java}");
    let mut mismatches = Vec::new();
    let mut built = 0;
    for (case, java) in cases.iter().zip(answers) {
        if java.starts_with("error:") {
            // Java refused the input itself (e.g. a leader acceptor asked about a replica
            // the partition lacks); kraftd is not asked to agree with an exception.
            continue;
        }
        let ours = case.ours();
        if ours != "none" {
            built += 1;
        }
        if ours != java {
            mismatches.push(format!(
                "{}\n  {case:?}\n  java:   {java}\n  kraftd: {ours}",
                case.line()
            ));
        }
    }
    eprintln!(
        "{} partition changes compared with Java 4.4 ({built} built a record)",
        cases.len()
    );
    assert!(built > cases.len() / 2, "too few cases change anything");
    assert!(
        mismatches.is_empty(),
        "{} of {} differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches[..mismatches.len().min(15)].join("\n")
    );
}
