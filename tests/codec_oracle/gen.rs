//! A seeded generator of field values, and the trait that codegen implements for every request
//! and response struct (`arbitrary/`, written by `make codegen`). Values lean towards the edges
//! where encoders go wrong: 0, -1 and the extremes of each integer, empty and multi-byte
//! strings, strings and bytes long enough for a two-byte varint length, null where the version
//! allows it, and unknown tagged fields where the version is flexible.

use kraftd::protocol::codec::{RawTaggedField, Uuid};

/// A value valid for one version: fields that version lacks stay at their default.
pub trait Arbitrary {
    fn arbitrary(g: &mut Gen, version: i16) -> Self;
}

/// SplitMix64: tiny, seedable, and the same on every platform, so a seed replays a case.
pub struct Gen {
    state: u64,
    /// How deeply nested the array being generated is; deep arrays are kept short.
    depth: u32,
}

const STRINGS: &[&str] = &[
    "",
    "a",
    "topic-1",
    "ü",
    "トピック",
    "🦀 crab",
    "with\0nul",
    "__consumer_offsets",
];

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen {
            state: seed,
            depth: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// An edge value (a third of the time), a small one, or any bit pattern.
    fn int(&mut self, edges: &[i64]) -> u64 {
        match self.below(3) {
            0 => edges[self.below(edges.len() as u64) as usize] as u64,
            1 => self.below(300),
            _ => self.next(),
        }
    }

    pub fn bool(&mut self) -> bool {
        self.percent(50)
    }
    pub fn i8(&mut self) -> i8 {
        self.int(&[0, -1, 1, i8::MIN as i64, i8::MAX as i64]) as i8
    }
    pub fn i16(&mut self) -> i16 {
        self.int(&[0, -1, 1, i16::MIN as i64, i16::MAX as i64]) as i16
    }
    pub fn u16(&mut self) -> u16 {
        self.int(&[0, 1, u16::MAX as i64]) as u16
    }
    pub fn i32(&mut self) -> i32 {
        self.int(&[0, -1, 1, i32::MIN as i64, i32::MAX as i64]) as i32
    }
    // No request or response of Kafka 4.4 has a uint32 or float64 field; kept for when one does.
    #[allow(dead_code)]
    pub fn u32(&mut self) -> u32 {
        self.int(&[0, 1, u32::MAX as i64]) as u32
    }
    pub fn i64(&mut self) -> i64 {
        self.int(&[0, -1, 1, i64::MIN, i64::MAX]) as i64
    }

    /// Finite doubles only: NaN would make the struct comparison in compare.rs fail on its own,
    /// and both codecs write the IEEE bits unchanged anyway.
    #[allow(dead_code)]
    pub fn f64(&mut self) -> f64 {
        const EDGES: &[f64] = &[0.0, -0.0, 1.5, -2.25, f64::MIN_POSITIVE, f64::MAX, f64::MIN];
        if self.percent(50) {
            return EDGES[self.below(EDGES.len() as u64) as usize];
        }
        let x = f64::from_bits(self.next());
        if x.is_finite() {
            x
        } else {
            0.5
        }
    }

    pub fn uuid(&mut self) -> Uuid {
        if self.percent(20) {
            return Uuid::ZERO;
        }
        Uuid::from_u64s(self.next(), self.next())
    }

    /// A fixed sample, a random mix of scripts, or one past 127 bytes (two-byte varint length).
    pub fn string(&mut self) -> String {
        match self.below(4) {
            0 | 1 => STRINGS[self.below(STRINGS.len() as u64) as usize].to_string(),
            2 => {
                let n = self.below(12);
                (0..n)
                    .map(|_| {
                        let s = STRINGS[1 + self.below(STRINGS.len() as u64 - 1) as usize];
                        s.to_string()
                    })
                    .collect()
            }
            _ => "k".repeat(120 + self.below(100) as usize),
        }
    }

    pub fn bytes(&mut self) -> Vec<u8> {
        let n = match self.below(4) {
            0 => 0,
            1 | 2 => self.below(24),
            _ => 120 + self.below(200),
        };
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// Records fields as opaque bytes: neither codec parses them inside a message.
    pub fn records(&mut self) -> Vec<u8> {
        self.bytes()
    }

    /// 0 to 3 elements, at most 1 once arrays are nested three deep.
    pub fn vec<T>(&mut self, mut element: impl FnMut(&mut Gen) -> T) -> Vec<T> {
        let most = if self.depth >= 3 { 1 } else { 3 };
        let n = self.below(most + 1);
        self.depth += 1;
        let items = (0..n).map(|_| element(self)).collect();
        self.depth -= 1;
        items
    }

    /// Null a quarter of the time where the version allows null, else a value.
    pub fn maybe_null<T>(&mut self, null_ok: bool, value: impl FnOnce(&mut Gen) -> T) -> Option<T> {
        if null_ok && self.percent(25) {
            None
        } else {
            Some(value(self))
        }
    }

    /// Usually none; else one or two tags from 100 up (above every known tag, which codegen
    /// checks), one of them past the one-byte varint range.
    pub fn unknown_tagged_fields(&mut self) -> Vec<RawTaggedField> {
        if !self.percent(30) {
            return Vec::new();
        }
        let mut tags = vec![100 + self.below(20) as u32];
        if self.percent(50) {
            tags.push(16_384 + self.below(1000) as u32);
        }
        tags.into_iter()
            .map(|tag| RawTaggedField {
                tag,
                data: (0..self.below(6)).map(|_| self.next() as u8).collect(),
            })
            .collect()
    }
}
