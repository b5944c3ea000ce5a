//! The translated tree written back as a pattern for the `regex` crate.

use regex_syntax::hir::{Class, Hir, Look};

/// `hir` in the `regex` crate's syntax, every repetition and alternation in a group of its own
/// (`regex_syntax`'s own printer writes `(?:A{2})?` as `A{2}?`, which reads back as lazy).
pub(crate) fn to_pattern(hir: &Hir) -> String {
    let mut out = String::new();
    write_pattern(hir, &mut out);
    out
}

fn write_char(c: char, out: &mut String) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", u32::from(c)));
    }
}

fn write_pattern(hir: &Hir, out: &mut String) {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty => out.push_str("(?:)"),
        HirKind::Literal(lit) => {
            for c in String::from_utf8_lossy(&lit.0).chars() {
                write_char(c, out);
            }
        }
        HirKind::Class(Class::Unicode(class)) => {
            if class.ranges().is_empty() {
                // Matches nothing.
                out.push_str("[^\\x{0}-\\x{10FFFF}]");
                return;
            }
            out.push('[');
            for r in class.ranges() {
                write_char(r.start(), out);
                if r.end() != r.start() {
                    out.push('-');
                    write_char(r.end(), out);
                }
            }
            out.push(']');
        }
        HirKind::Class(Class::Bytes(class)) => {
            // Hir::fail() is an empty byte class; no other byte class is built.
            out.push_str("[^\\x{0}-\\x{10FFFF}]");
            debug_assert!(class.ranges().is_empty(), "only Unicode classes are built");
        }
        HirKind::Look(Look::Start) => out.push_str("\\A"),
        HirKind::Look(Look::End) => out.push_str("\\z"),
        HirKind::Look(_) => unreachable!("only \\A and \\z are built"),
        HirKind::Repetition(rep) => {
            out.push_str("(?:");
            write_pattern(&rep.sub, out);
            out.push(')');
            match rep.max {
                Some(max) => out.push_str(&format!("{{{},{max}}}", rep.min)),
                None => out.push_str(&format!("{{{},}}", rep.min)),
            }
            if !rep.greedy {
                out.push('?');
            }
        }
        HirKind::Capture(cap) => {
            match &cap.name {
                Some(name) => out.push_str(&format!("(?P<{name}>")),
                None => out.push('('),
            }
            write_pattern(&cap.sub, out);
            out.push(')');
        }
        HirKind::Concat(subs) => {
            out.push_str("(?:");
            for sub in subs {
                write_pattern(sub, out);
            }
            out.push(')');
        }
        HirKind::Alternation(subs) => {
            out.push_str("(?:");
            for (i, sub) in subs.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_pattern(sub, out);
            }
            out.push(')');
        }
    }
}

/// Whether `hir` can match the empty string.
pub(super) fn can_match_empty(hir: &Hir) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(lit) => lit.0.is_empty(),
        HirKind::Class(_) => false,
        HirKind::Repetition(rep) => rep.min == 0 || can_match_empty(&rep.sub),
        HirKind::Capture(cap) => can_match_empty(&cap.sub),
        HirKind::Concat(subs) => subs.iter().all(can_match_empty),
        HirKind::Alternation(subs) => subs.iter().any(can_match_empty),
    }
}
