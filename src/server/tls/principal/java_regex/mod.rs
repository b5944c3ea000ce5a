//! `java.util.regex` patterns (as `Pattern.compile(p)` with no flags reads them, Java 17) turned
//! into the `regex` crate's syntax tree, with Java's meaning wherever they are accepted:
//!
//! - `.` excludes Java's line terminators (`\n`, `\r`, U+0085, U+2028, U+2029); `\s`, `\d`, `\w`
//!   and the POSIX classes (`\p{Alpha}`, ...) are ASCII-only; `\h` and `\v` are Java's sets;
//! - `(?i)` folds ASCII letters only (Java's CASE_INSENSITIVE without UNICODE_CASE); `(?s)`;
//! - character classes with Java's parse: a `]` first in a class is a literal, nested classes are
//!   unions, `^` negates the whole class, `-` before `[` or `]` is a literal;
//! - `\Q...\E` quoting, octal, `\x`, `\u` (surrogate pairs too), `\c` and the letter escapes;
//! - greedy and lazy quantifiers, `{n}`, `{n,}`, `{n,m}` (and Java's quantifier of nothing,
//!   `{n}` at the start of a sequence), capturing, named and non-capturing groups;
//! - `^` and `\A` (start of input), `\z`; `$` and `\Z` are "end of input" and are reported
//!   ([`Translated::dollar`]) because Java also lets them match before a line terminator that ends
//!   the input, which this engine cannot express.
//!
//! Java features the linear-time engine has no equivalent for, or whose Java meaning would need
//! Java's Unicode tables, are refused ([`RegexError::Unsupported`]): backreferences (`\1`,
//! `\k<name>`), lookahead and lookbehind, atomic groups, possessive quantifiers, `\b`, `\B`,
//! `\G`, `\R`, `\X`, `\N{...}`, Unicode and `java*` properties (`\p{L}`, `\p{IsLatin}`,
//! `\p{javaLowerCase}`, ...), class intersections (`&&`), and the flags `m`, `d`, `u`, `U`, `x`
//! and `c`. Patterns Java itself rejects are [`RegexError::Invalid`].

mod classes;
mod parser;
mod pattern;

use regex_syntax::hir::Hir;

use parser::Parser;
pub(super) use pattern::to_pattern;

/// A pattern translated from Java's syntax.
pub(super) struct Translated {
    pub hir: Hir,
    /// Java's `groupCount()`: capturing groups, named ones included.
    pub groups: usize,
    /// Named groups and their numbers.
    pub names: Vec<(String, usize)>,
    /// Whether the pattern has `$` or `\Z`, which Java also matches before a final line
    /// terminator.
    pub dollar: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RegexError {
    /// Java's `Pattern.compile` throws `PatternSyntaxException`.
    Invalid(String),
    /// Java accepts it; kraftd cannot run it with Java's meaning.
    Unsupported(String),
}

type Result<T> = std::result::Result<T, RegexError>;

fn invalid<T>(what: &str) -> Result<T> {
    Err(RegexError::Invalid(what.to_string()))
}

fn unsupported<T>(what: &str) -> Result<T> {
    Err(RegexError::Unsupported(what.to_string()))
}

/// Translates Java pattern `pattern`.
pub(super) fn translate(pattern: &str) -> Result<Translated> {
    let chars: Vec<u32> = pattern.chars().map(u32::from).collect();
    let mut parser = Parser {
        p: remove_qe_quoting(&chars),
        pos: 0,
        ci: false,
        dotall: false,
        groups: 0,
        names: Vec::new(),
        dollar: false,
        unsupported: None,
        depth: 0,
    };
    let hir = parser.expr()?;
    if parser.pos != parser.p.len() {
        return if parser.peek() == Some(')' as u32) {
            invalid("unmatched closing ')'")
        } else {
            invalid("unexpected internal error")
        };
    }
    if let Some(feature) = parser.unsupported {
        return Err(RegexError::Unsupported(feature));
    }
    Ok(Translated {
        hir,
        groups: parser.groups,
        names: parser.names,
        dollar: parser.dollar,
    })
}

/// Java's `Pattern.RemoveQEQuoting`: `\Q...\E` rewritten as escaped literals, before parsing.
fn remove_qe_quoting(t: &[u32]) -> Vec<u32> {
    const BACKSLASH: u32 = '\\' as u32;
    let len = t.len();
    let mut i = 0;
    while i + 1 < len {
        if t[i] != BACKSLASH {
            i += 1;
        } else if t[i + 1] != 'Q' as u32 {
            i += 2;
        } else {
            break;
        }
    }
    if i + 1 >= len {
        return t.to_vec();
    }
    let mut out = t[..i].to_vec();
    i += 2;
    let (mut in_quote, mut begin_quote) = (true, true);
    while i < len {
        let c = t[i];
        i += 1;
        let ascii = c < 0x80;
        if !ascii || char::from(c as u8).is_ascii_alphabetic() {
            out.push(c);
        } else if char::from(c as u8).is_ascii_digit() {
            if begin_quote {
                out.extend(['\\' as u32, 'x' as u32, '3' as u32]);
            }
            out.push(c);
        } else if c != BACKSLASH {
            if in_quote {
                out.push(BACKSLASH);
            }
            out.push(c);
        } else if in_quote {
            if t.get(i) == Some(&('E' as u32)) {
                i += 1;
                in_quote = false;
            } else {
                out.extend([BACKSLASH, BACKSLASH]);
            }
        } else if t.get(i) == Some(&('Q' as u32)) {
            i += 1;
            in_quote = true;
            begin_quote = true;
            continue;
        } else {
            out.push(c);
            if i != len {
                out.push(t[i]);
                i += 1;
            }
        }
        begin_quote = false;
    }
    out
}
