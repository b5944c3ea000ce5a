//! What Java does that a Kafka controller's observable behaviour depends on: the iteration order
//! of a `java.util.HashMap` / `HashSet` (which error a request reports first, the order of
//! records and response entries), `String.trim`, `java.util.Random` with
//! `Collections.shuffle` (the striped replica placer draws from one), and `Base64.getDecoder()`
//! ([`base64`]).
//!
//! Randomness stays an argument: a [`JavaRandom`] is seeded by its owner and handed to the
//! decisions that draw from it.

pub mod base64;

use crate::protocol::codec::Uuid;

/// Java's `String.hashCode`: over the UTF-16 code units.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Kafka's `Uuid.hashCode`: the two halves xored, then the two ints of that.
pub fn uuid_hash(u: &Uuid) -> i32 {
    let msb = i64::from_be_bytes(u.0[..8].try_into().expect("8 bytes"));
    let lsb = i64::from_be_bytes(u.0[8..].try_into().expect("8 bytes"));
    let h = msb ^ lsb;
    ((h >> 32) as i32) ^ (h as i32)
}

/// `Optional<String>.hashCode`: the string's, or 0 when empty.
pub fn optional_string_hash(s: Option<&str>) -> i32 {
    s.map_or(0, string_hash)
}

/// The table capacity of a `HashMap` built with the default capacity (16) that held at most
/// `max_len` entries at once (it doubles once more than 3/4 full and never shrinks).
pub fn hash_map_capacity(max_len: usize) -> usize {
    let mut capacity = 16usize;
    while max_len * 4 > capacity * 3 {
        capacity *= 2;
    }
    capacity
}

/// The order in which a `HashMap` of table size `capacity` iterates entries inserted in the
/// order given, each with its key's `hashCode`: by bucket (the spread hash masked by the
/// capacity), then by insertion within a bucket.
pub fn hash_order<T>(entries: Vec<(i32, T)>, capacity: usize) -> Vec<T> {
    debug_assert!(capacity.is_power_of_two());
    let bucket = |h: i32| {
        let spread = h ^ ((h as u32) >> 16) as i32;
        (spread as u32 as usize) & (capacity - 1)
    };
    let mut indexed: Vec<(usize, usize, T)> = entries
        .into_iter()
        .enumerate()
        .map(|(i, (h, t))| (bucket(h), i, t))
        .collect();
    indexed.sort_by_key(|(b, i, _)| (*b, *i));
    indexed.into_iter().map(|(_, _, t)| t).collect()
}

/// `new HashMap<>()`'s initial capacity.
pub const DEFAULT_HASH_MAP_CAPACITY: usize = 16;

/// The table capacity of a `HashMap` built with `new HashMap<>(initial)` once `len` entries
/// were put in it: the power of two at or above `initial` (at least 1), doubled whenever the
/// size passes 3/4 of it.
pub fn sized_hash_map_capacity(initial: usize, len: usize) -> usize {
    let mut capacity = initial.max(1).next_power_of_two();
    for size in 1..=len {
        if size > capacity * 3 / 4 {
            capacity *= 2;
        }
    }
    capacity
}

/// A `HashMap<String, V>` built with `new HashMap<>(initial)` and `puts` in order: its entries
/// as it iterates them (a key put twice keeps its first place and its last value).
pub fn string_map_order<V: Clone>(initial: usize, puts: &[(String, V)]) -> Vec<(String, V)> {
    let mut unique: Vec<(String, V)> = Vec::new();
    for (k, v) in puts {
        match unique.iter_mut().find(|(u, _)| u == k) {
            Some(slot) => slot.1 = v.clone(),
            None => unique.push((k.clone(), v.clone())),
        }
    }
    let capacity = sized_hash_map_capacity(initial, unique.len());
    hash_order(
        unique.into_iter().map(|e| (string_hash(&e.0), e)).collect(),
        capacity,
    )
}

/// The iteration order of a `HashSet<String>` (default capacity) of `names`, added in order
/// (a name added twice keeps its first place).
pub fn string_set_order<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    let mut unique: Vec<&str> = Vec::new();
    for n in names {
        if !unique.contains(&n.as_ref()) {
            unique.push(n.as_ref());
        }
    }
    let capacity = hash_map_capacity(unique.len());
    hash_order(
        unique
            .into_iter()
            .map(|n| (string_hash(n), n.to_string()))
            .collect(),
        capacity,
    )
}

/// A `java.util.HashMap<String, V>` built with `new HashMap<>()` through puts and removes, kept
/// for its iteration order: a new key goes last in its bucket (a key removed and put again too),
/// a key put again keeps its place, and the table doubles once more than 3/4 full, never
/// shrinking.
#[derive(Debug, Clone)]
pub struct JavaStringMap<V> {
    /// In insertion order.
    entries: Vec<(String, V)>,
    capacity: usize,
}

impl<V> Default for JavaStringMap<V> {
    fn default() -> Self {
        JavaStringMap {
            entries: Vec::new(),
            capacity: DEFAULT_HASH_MAP_CAPACITY,
        }
    }
}

impl<V> JavaStringMap<V> {
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    pub fn put(&mut self, key: &str, value: V) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => {
                self.entries.push((key.to_string(), value));
                if self.entries.len() * 4 > self.capacity * 3 {
                    self.capacity *= 2;
                }
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// The entries as the map iterates them.
    pub fn into_ordered(self) -> Vec<(String, V)> {
        hash_order(
            self.entries
                .into_iter()
                .map(|e| (string_hash(&e.0), e))
                .collect(),
            self.capacity,
        )
    }
}

/// `Integer.parseInt`: an optional sign and ASCII digits, within range.
pub fn parse_int(s: &str) -> Option<i32> {
    integer_syntax(s).then(|| s.parse().ok()).flatten()
}

/// `Long.parseLong`.
pub fn parse_long(s: &str) -> Option<i64> {
    integer_syntax(s).then(|| s.parse().ok()).flatten()
}

fn integer_syntax(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Java's `String.trim`: strips every leading and trailing char at or below U+0020.
pub fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// `java.util.Random`: the 48-bit linear congruential generator, draw for draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5DEECE66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    /// `new Random(seed)`.
    pub fn new(seed: i64) -> JavaRandom {
        JavaRandom {
            seed: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND)) & MASK;
        (self.seed >> (48 - bits)) as i64 as i32
    }

    /// `nextInt(bound)`, `bound > 0`.
    pub fn next_int(&mut self, bound: i32) -> i32 {
        assert!(bound > 0, "bound must be positive");
        let mut r = self.next(31);
        let m = bound - 1;
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as i32;
        }
        let mut u = r;
        loop {
            r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r;
            }
            u = self.next(31);
        }
    }

    /// `nextLong()`.
    pub fn next_long(&mut self) -> i64 {
        (i64::from(self.next(32)) << 32).wrapping_add(i64::from(self.next(32)))
    }

    /// `Collections.shuffle(list, this)` for a random-access list.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (2..=items.len()).rev() {
            let j = self.next_int(i as i32) as usize;
            items.swap(i - 1, j);
        }
    }

    /// A random version-4 id that is none of Kafka's reserved ids (zero, one) and whose text
    /// does not start with '-' (Kafka's `Uuid.randomUuid`).
    pub fn uuid(&mut self) -> Uuid {
        loop {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&self.next_long().to_be_bytes());
            b[8..].copy_from_slice(&self.next_long().to_be_bytes());
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            let id = Uuid(b);
            if id != Uuid::ZERO && id != Uuid::ONE && !id.to_string().starts_with('-') {
                return id;
            }
        }
    }
}

/// Whether `java.time.Duration.parse(text)` succeeds with a negative duration: `Some(true)`
/// negative, `Some(false)` zero or positive, `None` where Java throws (the ISO-8601
/// `PnDTnHnMn.nS` grammar, letters in either case, each number optionally signed, a fraction of
/// up to nine digits after `.` or `,`; any `long` overflow on the way throws too).
pub fn duration_is_negative(text: &str) -> Option<bool> {
    let b = text.as_bytes();
    let mut i = 0;
    let sign = |i: &mut usize| -> bool {
        match b.get(*i) {
            Some(b'-') => {
                *i += 1;
                true
            }
            Some(b'+') => {
                *i += 1;
                false
            }
            _ => false,
        }
    };
    let negate = sign(&mut i);
    if !matches!(b.get(i), Some(b'P' | b'p')) {
        return None;
    }
    i += 1;
    // One `[-+]?[0-9]+` followed by `unit`, or nothing (the index left where it was).
    let number = |i: &mut usize, units: &[u8]| -> Option<Option<(i64, bool, u8)>> {
        let start = *i;
        let mut j = *i;
        let negative = sign(&mut j);
        let digits = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == digits {
            return Some(None);
        }
        match b.get(j).map(u8::to_ascii_uppercase) {
            Some(u) if units.contains(&u) => {
                let value: i64 = text[start..j].parse().ok()?;
                *i = j + 1;
                Some(Some((value, negative, u)))
            }
            _ => Some(None),
        }
    };
    let mut seconds: i64 = 0;
    let mut any = false;
    if let Some((days, _, _)) = number(&mut i, b"D")? {
        seconds = days.checked_mul(86_400)?;
        any = true;
    }
    let mut nanos: i64 = 0;
    if matches!(b.get(i), Some(b'T' | b't')) {
        i += 1;
        let mut time_any = false;
        let mut secs: i64 = 0;
        if let Some((h, _, _)) = number(&mut i, b"H")? {
            secs = h.checked_mul(3_600)?;
            time_any = true;
        }
        if let Some((m, _, _)) = number(&mut i, b"M")? {
            secs = m.checked_mul(60)?.checked_add(secs)?;
            time_any = true;
        }
        // Seconds, with an optional fraction before the `S`.
        let start = i;
        let mut j = i;
        let negative = sign(&mut j);
        let digits = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > digits {
            let whole_end = j;
            let mut fraction = "";
            if matches!(b.get(j), Some(b'.' | b',')) {
                let f = j + 1;
                let mut k = f;
                while k - f < 9 && b.get(k).is_some_and(u8::is_ascii_digit) {
                    k += 1;
                }
                fraction = &text[f..k];
                j = k;
            }
            if matches!(b.get(j), Some(b'S' | b's')) {
                let whole: i64 = text[start..whole_end].parse().ok()?;
                secs = whole.checked_add(secs)?;
                let padded = format!("{fraction:0<9}");
                let n: i64 = padded.parse().ok()?;
                nanos = if negative { -n } else { n };
                i = j + 1;
                time_any = true;
            }
        }
        if !time_any {
            return None;
        }
        seconds = seconds.checked_add(secs)?;
        any = true;
    }
    if i != b.len() || !any {
        return None;
    }
    // `Duration.ofSeconds(seconds, nanos)`, then `negated()` if the text starts with `-`.
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    let whole = total.div_euclid(1_000_000_000);
    i64::try_from(whole).ok()?;
    let total = if negate {
        if whole == i128::from(i64::MIN) && total.rem_euclid(1_000_000_000) == 0 {
            return None;
        }
        -total
    } else {
        total
    };
    Some(total < 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_draws_as_java_does() {
        // `new Random(42)`: nextInt(10) x5 and nextLong(), printed by a Java 17 program.
        let mut r = JavaRandom::new(42);
        let ints: Vec<i32> = (0..5).map(|_| r.next_int(10)).collect();
        assert_eq!(ints, vec![0, 3, 8, 4, 0]);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_long(), -5025562857975149833);
        // A power-of-two bound takes the high bits.
        let mut r = JavaRandom::new(7);
        assert_eq!(r.next_int(16), 11);
    }

    #[test]
    fn shuffle_follows_collections_shuffle() {
        // `Collections.shuffle([1..6], new Random(1))` is [5, 3, 1, 2, 6, 4] on Java 17.
        let mut v = vec![1, 2, 3, 4, 5, 6];
        JavaRandom::new(1).shuffle(&mut v);
        assert_eq!(v, vec![5, 3, 1, 2, 6, 4]);
    }

    #[test]
    fn hash_sets_iterate_by_bucket() {
        assert_eq!(string_hash("foo"), 101574);
        // "Aa" and "BB" collide (bucket 0): insertion order inside the bucket. Java 17 prints
        // this HashSet as [BB, Aa, a, b].
        assert_eq!(
            string_set_order(&["BB", "Aa", "b", "a"]),
            vec!["BB", "Aa", "a", "b"]
        );
        assert_eq!(trim("\t x \n"), "x");
        assert_eq!(hash_map_capacity(12), 16);
        assert_eq!(hash_map_capacity(13), 32);
    }

    #[test]
    fn a_key_removed_and_put_again_goes_last_in_its_bucket() {
        let mut m = JavaStringMap::default();
        for k in ["Aa", "BB", "a"] {
            m.put(k, ());
        }
        m.remove("Aa");
        m.put("Aa", ());
        m.put("BB", ());
        let keys: Vec<String> = m.into_ordered().into_iter().map(|e| e.0).collect();
        assert_eq!(keys, ["BB", "Aa", "a"]);
    }

    #[test]
    fn durations_parse_as_java_time_does() {
        // Duration.parse on Java 17: (text, isNegative) or a DateTimeParseException (None).
        for (text, expected) in [
            ("PT1S", Some(false)),
            ("pt0s", Some(false)),
            ("P1DT2H3M4.5S", Some(false)),
            ("-PT1S", Some(true)),
            ("PT-1S", Some(true)),
            ("-PT-1S", Some(false)),
            ("PT-0.5S", Some(true)),
            ("PT1,5S", Some(false)),
            ("P-1DT25H", Some(false)),
            ("PT1.S", Some(false)),
            ("P", None),
            ("PT", None),
            ("P1D T1H", None),
            ("PT1.1234567890S", None),
            ("P1Y", None),
            ("PT1H1", None),
            ("P106751991167301D", None),
            ("", None),
        ] {
            assert_eq!(duration_is_negative(text), expected, "{text}");
        }
    }
}
