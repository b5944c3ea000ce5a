//! Kafka 4.4's `StripedReplicaPlacer`, draw for draw: racks in sorted order from a random
//! start, the brokers of each rack sorted and walked from a random offset, unfenced brokers
//! before fenced ones, the leader always unfenced, each partition starting one rack further
//! on, and the lists reshuffled once every unfenced broker has led a partition. Given the same
//! `java.util.Random` state and the same brokers it places replicas exactly as Java does.

use std::fmt;

use crate::controller::java::{hash_map_capacity, hash_order, optional_string_hash, JavaRandom};

/// A broker replicas may be placed on (Kafka's `UsableBroker`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsableBroker {
    pub id: i32,
    pub rack: Option<String>,
    pub fenced: bool,
}

/// Why replicas cannot be placed (`InvalidReplicationFactorException`, Java's messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacementError {
    NonPositive(i32),
    AllFenced,
    TooFewBrokers { replicas: i32, brokers: usize },
}

impl fmt::Display for PlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlacementError::NonPositive(rf) => write!(
                f,
                "Invalid replication factor {rf}: the replication factor must be positive."
            ),
            PlacementError::AllFenced => f.write_str(
                "All brokers are currently fenced, or have all their log directories cordoned.",
            ),
            PlacementError::TooFewBrokers { replicas, brokers } => write!(
                f,
                "The target replication factor of {replicas} cannot be reached because only \
                 {brokers} broker(s) are registered or some brokers have all their log \
                 directories cordoned."
            ),
        }
    }
}

impl std::error::Error for PlacementError {}

#[derive(Debug, Default)]
struct BrokerList {
    brokers: Vec<i32>,
    index: usize,
    offset: usize,
    epoch: u32,
}

impl BrokerList {
    fn initialize(&mut self, random: &mut JavaRandom) {
        if !self.brokers.is_empty() {
            self.brokers.sort_unstable();
            self.offset = random.next_int(self.brokers.len() as i32) as usize;
        }
    }

    fn shuffle(&mut self, random: &mut JavaRandom) {
        random.shuffle(&mut self.brokers);
    }

    fn next(&mut self, epoch: u32) -> Option<i32> {
        if self.brokers.is_empty() {
            return None;
        }
        if self.epoch != epoch {
            self.epoch = epoch;
            self.index = 0;
            self.offset = (self.offset + 1) % self.brokers.len();
        }
        if self.index >= self.brokers.len() {
            return None;
        }
        let broker = self.brokers[(self.index + self.offset) % self.brokers.len()];
        self.index += 1;
        Some(broker)
    }
}

#[derive(Debug, Default)]
struct Rack {
    fenced: BrokerList,
    unfenced: BrokerList,
}

impl Rack {
    fn next(&mut self, epoch: u32) -> Option<i32> {
        self.unfenced
            .next(epoch)
            .or_else(|| self.fenced.next(epoch))
    }
}

struct RackList<'r> {
    random: &'r mut JavaRandom,
    /// The racks in the iteration order of Java's `HashMap<Optional<String>, Rack>`.
    racks: Vec<(Option<String>, Rack)>,
    /// Indexes into `racks`, in rack-name order (shuffled later).
    rack_names: Vec<usize>,
    total: usize,
    unfenced: usize,
    epoch: u32,
    offset: usize,
}

impl<'r> RackList<'r> {
    fn new(random: &'r mut JavaRandom, brokers: &[UsableBroker]) -> RackList<'r> {
        let mut by_rack: Vec<(Option<String>, Rack)> = Vec::new();
        let (mut total, mut unfenced) = (0, 0);
        for b in brokers {
            let i = match by_rack.iter().position(|(r, _)| *r == b.rack) {
                Some(i) => i,
                None => {
                    by_rack.push((b.rack.clone(), Rack::default()));
                    by_rack.len() - 1
                }
            };
            let rack = &mut by_rack[i].1;
            if b.fenced {
                rack.fenced.brokers.push(b.id);
            } else {
                unfenced += 1;
                rack.unfenced.brokers.push(b.id);
            }
            total += 1;
        }
        let capacity = hash_map_capacity(by_rack.len());
        let mut racks = hash_order(
            by_rack
                .into_iter()
                .map(|(name, rack)| (optional_string_hash(name.as_deref()), (name, rack)))
                .collect(),
            capacity,
        );
        for (_, rack) in racks.iter_mut() {
            rack.fenced.initialize(random);
            rack.unfenced.initialize(random);
        }
        let mut rack_names: Vec<usize> = (0..racks.len()).collect();
        // `OptionalStringComparator`: no rack first, then by name.
        rack_names.sort_by(|a, b| racks[*a].0.cmp(&racks[*b].0));
        let offset = if rack_names.is_empty() {
            0
        } else {
            random.next_int(rack_names.len() as i32) as usize
        };
        RackList {
            random,
            racks,
            rack_names,
            total,
            unfenced,
            epoch: 0,
            offset,
        }
    }

    fn shuffle(&mut self) {
        self.random.shuffle(&mut self.rack_names);
        for (_, rack) in self.racks.iter_mut() {
            rack.fenced.shuffle(self.random);
            rack.unfenced.shuffle(self.random);
        }
    }

    fn place(&mut self, replicas: i32) -> Result<Vec<i32>, PlacementError> {
        check(replicas, self.total, self.unfenced, false)?;
        if self.epoch as usize == self.unfenced && self.unfenced > 1 {
            self.shuffle();
            self.epoch = 0;
        }
        if self.offset == self.rack_names.len() {
            self.offset = 0;
        }
        let n = self.rack_names.len();
        let mut brokers = Vec::with_capacity(replicas as usize);
        // The leader: the first unfenced broker from the starting rack on.
        let mut index = self.offset;
        loop {
            let rack = &mut self.racks[self.rack_names[index]].1;
            if let Some(b) = rack.unfenced.next(self.epoch) {
                brokers.push(b);
                break;
            }
            index = (index + 1) % n;
        }
        let mut first_rack = Some(index);
        let mut rack_index = self.offset;
        for _ in 1..replicas {
            let broker = loop {
                let mut result = None;
                if Some(rack_index) == first_rack {
                    first_rack = None;
                } else {
                    result = self.racks[self.rack_names[rack_index]].1.next(self.epoch);
                }
                rack_index = (rack_index + 1) % n;
                if let Some(b) = result {
                    break b;
                }
            };
            brokers.push(broker);
        }
        self.epoch += 1;
        self.offset += 1;
        Ok(brokers)
    }
}

/// The placer's checks, in the order of `place` (`first`) or of `RackList.place`.
fn check(replicas: i32, total: usize, unfenced: usize, first: bool) -> Result<(), PlacementError> {
    if replicas <= 0 {
        return Err(PlacementError::NonPositive(replicas));
    }
    let too_few = (replicas as usize > total).then_some(PlacementError::TooFewBrokers {
        replicas,
        brokers: total,
    });
    let all_fenced = (unfenced == 0).then_some(PlacementError::AllFenced);
    let (a, b) = if first {
        (all_fenced, too_few)
    } else {
        (too_few, all_fenced)
    };
    match a.or(b) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Places `partitions` partitions of `replicas` replicas each on `brokers` (given in the order
/// Java's heartbeat manager iterates them), drawing from `random`.
pub fn place(
    partitions: i32,
    replicas: i16,
    brokers: &[UsableBroker],
    random: &mut JavaRandom,
) -> Result<Vec<Vec<i32>>, PlacementError> {
    let mut racks = RackList::new(random, brokers);
    check(i32::from(replicas), racks.total, racks.unfenced, true)?;
    (0..partitions)
        .map(|_| racks.place(i32::from(replicas)))
        .collect()
}
