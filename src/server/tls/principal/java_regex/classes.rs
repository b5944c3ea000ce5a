//! Character classes with Java's (ASCII) meaning, and the small helpers the parser shares.

use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

pub(super) fn is(c: Option<u32>, ch: char) -> bool {
    c == Some(ch as u32)
}

pub(super) fn ascii(c: u32) -> Option<u8> {
    u8::try_from(c).ok().filter(u8::is_ascii)
}

pub(super) fn hex_digit(c: Option<u32>) -> Option<u32> {
    c.and_then(char::from_u32).and_then(|c| c.to_digit(16))
}

/// The class of code points `lo..=hi` that are Unicode scalar values (a surrogate can match
/// nothing in a Rust string, nor in a name Java builds from a certificate).
pub(super) fn range(lo: u32, hi: u32) -> ClassUnicode {
    let mut ranges = Vec::new();
    let mut push = |a: u32, b: u32| {
        if let (Some(a), Some(b)) = (char::from_u32(a), char::from_u32(b)) {
            if a <= b {
                ranges.push(ClassUnicodeRange::new(a, b));
            }
        }
    };
    if lo < 0xd800 {
        push(lo, hi.min(0xd7ff));
    }
    if hi > 0xdfff {
        push(lo.max(0xe000), hi.min(0x10ffff));
    }
    ClassUnicode::new(ranges)
}

pub(super) fn set(ranges: &[(u32, u32)]) -> ClassUnicode {
    let mut class = ClassUnicode::empty();
    for &(lo, hi) in ranges {
        class.union(&range(lo, hi));
    }
    class
}

pub(super) fn negated(mut class: ClassUnicode) -> ClassUnicode {
    class.negate();
    class
}

pub(super) const LINE_TERMINATORS: &[(u32, u32)] =
    &[(0x0a, 0x0a), (0x0d, 0x0d), (0x85, 0x85), (0x2028, 0x2029)];
pub(super) const SPACE: &[(u32, u32)] = &[(0x09, 0x0d), (0x20, 0x20)];
pub(super) const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
pub(super) const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)];
pub(super) const HORIZONTAL: &[(u32, u32)] = &[
    (0x09, 0x09),
    (0x20, 0x20),
    (0xa0, 0xa0),
    (0x1680, 0x1680),
    (0x180e, 0x180e),
    (0x2000, 0x200a),
    (0x202f, 0x202f),
    (0x205f, 0x205f),
    (0x3000, 0x3000),
];
pub(super) const VERTICAL: &[(u32, u32)] = &[(0x0a, 0x0d), (0x85, 0x85), (0x2028, 0x2029)];

/// Java's POSIX character classes (ASCII-only without UNICODE_CHARACTER_CLASS); with
/// CASE_INSENSITIVE, `Lower` and `Upper` are `Alpha`.
pub(super) fn posix(name: &str, ci: bool) -> Option<ClassUnicode> {
    const ALPHA: &[(u32, u32)] = &[(0x41, 0x5a), (0x61, 0x7a)];
    Some(set(match name {
        "ASCII" => &[(0x00, 0x7f)],
        "Alnum" => &[(0x30, 0x39), (0x41, 0x5a), (0x61, 0x7a)],
        "Alpha" => ALPHA,
        "Blank" => &[(0x09, 0x09), (0x20, 0x20)],
        "Cntrl" => &[(0x00, 0x1f), (0x7f, 0x7f)],
        "Digit" => DIGIT,
        "Graph" => &[(0x21, 0x7e)],
        "Lower" if ci => ALPHA,
        "Lower" => &[(0x61, 0x7a)],
        "Print" => &[(0x20, 0x7e)],
        "Punct" => &[(0x21, 0x2f), (0x3a, 0x40), (0x5b, 0x60), (0x7b, 0x7e)],
        "Space" => SPACE,
        "Upper" if ci => ALPHA,
        "Upper" => &[(0x41, 0x5a)],
        "XDigit" => &[(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
        _ => return None,
    }))
}
