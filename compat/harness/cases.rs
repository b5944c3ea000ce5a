//! A small deterministic generator for the scenarios tests send to Kafka and to kraftd alike
//! (a fixed seed: every run sends the same cases).

pub struct Gen(pub u64);

impl Gen {
    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }

    /// True once in `one_in` draws on average.
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// A random subset of `from`, in a random order.
    pub fn subset(&mut self, from: &[i32]) -> Vec<i32> {
        let mut out: Vec<i32> = from.iter().copied().filter(|_| self.chance(2)).collect();
        for i in (1..out.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            out.swap(i, j);
        }
        out
    }
}
