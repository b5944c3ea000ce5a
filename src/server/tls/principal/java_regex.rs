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

use regex_syntax::hir::{Capture, Class, ClassUnicode, ClassUnicodeRange, Hir, Look, Repetition};

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

impl Parser {
    /// Notes a feature kraftd does not run, the first one only.
    fn unsupported(&mut self, what: &str) {
        self.unsupported.get_or_insert_with(|| what.to_string());
    }
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

/// What an escape sequence stands for.
enum Escape {
    Char(u32),
    Class(ClassUnicode),
    Look(Look, bool),
}

struct Parser {
    p: Vec<u32>,
    pos: usize,
    ci: bool,
    dotall: bool,
    groups: usize,
    names: Vec<(String, usize)>,
    dollar: bool,
    /// The first feature met that kraftd does not run; parsing goes on, so that a pattern Java
    /// rejects is reported as invalid rather than unsupported.
    unsupported: Option<String>,
    /// Groups and classes open around the parser.
    depth: usize,
}

/// Deeper nesting of groups or classes than this is refused (the parser recurses).
const MAX_DEPTH: usize = 100;

fn is(c: Option<u32>, ch: char) -> bool {
    c == Some(ch as u32)
}

fn ascii(c: u32) -> Option<u8> {
    u8::try_from(c).ok().filter(u8::is_ascii)
}

fn hex_digit(c: Option<u32>) -> Option<u32> {
    c.and_then(char::from_u32).and_then(|c| c.to_digit(16))
}

/// The class of code points `lo..=hi` that are Unicode scalar values (a surrogate can match
/// nothing in a Rust string, nor in a name Java builds from a certificate).
fn range(lo: u32, hi: u32) -> ClassUnicode {
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

fn set(ranges: &[(u32, u32)]) -> ClassUnicode {
    let mut class = ClassUnicode::empty();
    for &(lo, hi) in ranges {
        class.union(&range(lo, hi));
    }
    class
}

fn negated(mut class: ClassUnicode) -> ClassUnicode {
    class.negate();
    class
}

const LINE_TERMINATORS: &[(u32, u32)] =
    &[(0x0a, 0x0a), (0x0d, 0x0d), (0x85, 0x85), (0x2028, 0x2029)];
const SPACE: &[(u32, u32)] = &[(0x09, 0x0d), (0x20, 0x20)];
const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)];
const HORIZONTAL: &[(u32, u32)] = &[
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
const VERTICAL: &[(u32, u32)] = &[(0x0a, 0x0d), (0x85, 0x85), (0x2028, 0x2029)];

/// Java's POSIX character classes (ASCII-only without UNICODE_CHARACTER_CLASS); with
/// CASE_INSENSITIVE, `Lower` and `Upper` are `Alpha`.
fn posix(name: &str, ci: bool) -> Option<ClassUnicode> {
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

impl Parser {
    fn peek(&self) -> Option<u32> {
        self.p.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<u32> {
        self.p.get(self.pos + offset).copied()
    }

    fn read(&mut self) -> Option<u32> {
        let c = self.peek();
        self.pos += 1;
        c
    }

    /// One character as Java matches it: ASCII letters both cases under `(?i)`.
    fn single(&self, c: u32) -> ClassUnicode {
        match ascii(c) {
            Some(b) if self.ci && b.is_ascii_alphabetic() => {
                let (l, u) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
                set(&[(u32::from(l), u32::from(l)), (u32::from(u), u32::from(u))])
            }
            _ => range(c, c),
        }
    }

    /// A class range as Java matches it (`CIRange` under `(?i)`).
    fn span(&self, lo: u32, hi: u32) -> ClassUnicode {
        let mut class = range(lo, hi);
        if self.ci {
            for b in (b'A'..=b'Z').chain(b'a'..=b'z') {
                let (l, u) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
                if (lo..=hi).contains(&u32::from(l)) || (lo..=hi).contains(&u32::from(u)) {
                    class.union(&range(u32::from(b), u32::from(b)));
                }
            }
        }
        class
    }

    fn expr(&mut self) -> Result<Hir> {
        let mut branches = vec![self.sequence()?];
        while is(self.peek(), '|') {
            self.pos += 1;
            branches.push(self.sequence()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or_else(Hir::empty)
        } else {
            Hir::alternation(branches)
        })
    }

    fn sequence(&mut self) -> Result<Hir> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            let node = match char::from_u32(c) {
                Some('(') => {
                    if let Some(group) = self.group()? {
                        items.push(group);
                    }
                    continue;
                }
                Some('[') => {
                    self.pos += 1;
                    Hir::class(Class::Unicode(self.class()?))
                }
                Some('\\') => match self.escape(false, false)? {
                    Escape::Char(c) => Hir::class(Class::Unicode(self.single(c))),
                    Escape::Class(class) => Hir::class(Class::Unicode(class)),
                    Escape::Look(look, dollar) => {
                        self.dollar |= dollar;
                        Hir::look(look)
                    }
                },
                Some('^') => {
                    self.pos += 1;
                    Hir::look(Look::Start)
                }
                Some('$') => {
                    self.pos += 1;
                    self.dollar = true;
                    Hir::look(Look::End)
                }
                Some('.') => {
                    self.pos += 1;
                    if self.dotall {
                        Hir::class(Class::Unicode(negated(ClassUnicode::empty())))
                    } else {
                        Hir::class(Class::Unicode(negated(set(LINE_TERMINATORS))))
                    }
                }
                Some('|') | Some(')') => break,
                Some('?') | Some('*') | Some('+') => return invalid("dangling meta character"),
                // Java's atom of no characters, which the `{n}` that must follow repeats.
                Some('{') => Hir::empty(),
                _ => {
                    self.pos += 1;
                    Hir::class(Class::Unicode(self.single(c)))
                }
            };
            items.push(self.closure(node)?);
        }
        Ok(Hir::concat(items))
    }

    /// A group, from its `(`; `None` for flags alone (`(?i)`), which hold to the end of the
    /// enclosing group.
    fn group(&mut self) -> Result<Option<Hir>> {
        self.depth += 1;
        let group = self.group_inner();
        self.depth -= 1;
        group
    }

    fn group_inner(&mut self) -> Result<Option<Hir>> {
        if self.depth > MAX_DEPTH {
            return unsupported("groups nested more than 100 deep");
        }
        self.pos += 1;
        let saved = (self.ci, self.dotall);
        let mut capture = None;
        if is(self.peek(), '?') {
            self.pos += 1;
            match self.read().and_then(char::from_u32) {
                Some(':') => {}
                Some('=') | Some('!') => self.unsupported("lookahead (?= or (?!"),
                Some('>') => self.unsupported("atomic group (?>"),
                Some('<') => {
                    let c = self.read();
                    if is(c, '=') || is(c, '!') {
                        self.unsupported("lookbehind (?<= or (?<!");
                    } else {
                        let name = self.group_name(c)?;
                        if self.names.iter().any(|(n, _)| *n == name) {
                            return invalid("named capturing group is already defined");
                        }
                        self.groups += 1;
                        self.names.push((name.clone(), self.groups));
                        capture = Some((self.groups, Some(name)));
                    }
                }
                Some('$') | Some('@') => return invalid("unknown group type"),
                _ => {
                    self.pos -= 1;
                    self.flags()?;
                    match self.read().and_then(char::from_u32) {
                        Some(')') => return Ok(None),
                        Some(':') => {}
                        _ => return invalid("unknown inline modifier"),
                    }
                }
            }
        } else {
            self.groups += 1;
            capture = Some((self.groups, None));
        }
        let inner = self.expr()?;
        if !is(self.peek(), ')') {
            return invalid("unclosed group");
        }
        self.pos += 1;
        (self.ci, self.dotall) = saved;
        let node = match capture {
            Some((index, name)) => Hir::capture(Capture {
                index: index as u32,
                name: name.map(String::into_boxed_str),
                sub: Box::new(inner),
            }),
            None => inner,
        };
        Ok(Some(self.closure(node)?))
    }

    fn group_name(&mut self, first: Option<u32>) -> Result<String> {
        let letter = |c: Option<u32>| c.and_then(ascii).filter(u8::is_ascii_alphabetic);
        let alnum = |c: Option<u32>| c.and_then(ascii).filter(u8::is_ascii_alphanumeric);
        let Some(first) = letter(first) else {
            return invalid("capturing group name does not start with a Latin letter");
        };
        let mut name = String::from(char::from(first));
        let mut c = self.read();
        while let Some(b) = alnum(c) {
            name.push(char::from(b));
            c = self.read();
        }
        if !is(c, '>') {
            return invalid("named capturing group is missing trailing '>'");
        }
        Ok(name)
    }

    /// Java's `addFlag` and `subFlag`: the flags before `)` or `:`.
    fn flags(&mut self) -> Result<()> {
        let mut on = true;
        loop {
            match self.peek().and_then(char::from_u32) {
                Some('i') => self.ci = on,
                Some('s') => self.dotall = on,
                Some('x') if on => return unsupported("flag (?x) (COMMENTS)"),
                Some(f @ ('m' | 'd' | 'u' | 'c' | 'x' | 'U')) => {
                    if on {
                        self.unsupported(match f {
                            'm' => "flag (?m) (MULTILINE)",
                            'd' => "flag (?d) (UNIX_LINES)",
                            'u' => "flag (?u) (UNICODE_CASE)",
                            'c' => "flag (?c) (CANON_EQ)",
                            'x' => "flag (?x) (COMMENTS)",
                            _ => "flag (?U) (UNICODE_CHARACTER_CLASS)",
                        })
                    }
                }
                Some('-') if on => on = false,
                _ => return Ok(()),
            }
            self.pos += 1;
        }
    }

    /// A quantifier after `node`, if any.
    fn closure(&mut self, node: Hir) -> Result<Hir> {
        let (min, max) = match self.peek().and_then(char::from_u32) {
            Some('?') => {
                self.pos += 1;
                (0, Some(1))
            }
            Some('*') => {
                self.pos += 1;
                (0, None)
            }
            Some('+') => {
                self.pos += 1;
                (1, None)
            }
            Some('{') => {
                self.pos += 1;
                if !self.peek_is_digit() {
                    return invalid("illegal repetition");
                }
                let min = self.number()?;
                let max = if is(self.peek(), ',') {
                    self.pos += 1;
                    if is(self.peek(), '}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(min)
                };
                if !is(self.peek(), '}') {
                    return invalid("unclosed counted closure");
                }
                if max.is_some_and(|max| max < min) {
                    return invalid("illegal repetition range");
                }
                self.pos += 1;
                (min, max)
            }
            _ => return Ok(node),
        };
        let greedy = match self.peek().and_then(char::from_u32) {
            Some('?') => {
                self.pos += 1;
                false
            }
            Some('+') => {
                self.pos += 1;
                self.unsupported("possessive quantifier (*+, ++, ?+, {n}+)");
                true
            }
            _ => true,
        };
        if max == Some(0) {
            // Matches only the empty string. Hir::repetition would drop `node` and with it any
            // group inside, renumbering the groups after it: keep it, unreachable.
            return Ok(Hir::alternation(vec![
                Hir::empty(),
                Hir::concat(vec![
                    Hir::class(Class::Unicode(ClassUnicode::empty())),
                    node,
                ]),
            ]));
        }
        if max != Some(1) && can_match_empty(&node) && node.properties().explicit_captures_len() > 0
        {
            // Java's loops record a group's empty last iteration (`(a|)*` on "a" leaves group 1
            // empty); this engine never runs an empty iteration.
            self.unsupported("a repeated group that can match the empty string");
        }
        Ok(Hir::repetition(Repetition {
            min,
            max,
            greedy,
            sub: Box::new(node),
        }))
    }

    fn peek_is_digit(&self) -> bool {
        self.peek()
            .and_then(ascii)
            .is_some_and(|b| b.is_ascii_digit())
    }

    /// Decimal digits (none is 0), within Java's int.
    fn number(&mut self) -> Result<u32> {
        let mut n: u32 = 0;
        while let Some(b) = self.peek().and_then(ascii).filter(u8::is_ascii_digit) {
            n = match n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u32::from(b - b'0')))
            {
                Some(n) if n <= i32::MAX as u32 => n,
                _ => return invalid("illegal repetition range"),
            };
            self.pos += 1;
        }
        Ok(n)
    }

    /// A character class, from after its `[` to after its `]`.
    fn class(&mut self) -> Result<ClassUnicode> {
        self.depth += 1;
        let class = self.class_inner();
        self.depth -= 1;
        class
    }

    fn class_inner(&mut self) -> Result<ClassUnicode> {
        if self.depth > MAX_DEPTH {
            return unsupported("character classes nested more than 100 deep");
        }
        let negate = is(self.peek(), '^');
        if negate {
            self.pos += 1;
        }
        let mut class = ClassUnicode::empty();
        let mut any = false;
        loop {
            if self.peek().is_none() {
                return invalid("unclosed character class");
            }
            match self.peek().and_then(char::from_u32) {
                Some('[') => {
                    self.pos += 1;
                    class.union(&self.class()?);
                    any = true;
                    continue;
                }
                Some('&') if is(self.peek_at(1), '&') => {
                    self.unsupported("character class intersection &&");
                    self.pos += 2;
                    continue;
                }
                Some(']') if any => {
                    self.pos += 1;
                    return Ok(if negate { negated(class) } else { class });
                }
                _ => {}
            }
            class.union(&self.class_item()?);
            any = true;
        }
    }

    /// A character, range, escape or property inside a class (Java's `range`).
    fn class_item(&mut self) -> Result<ClassUnicode> {
        let first = if is(self.peek(), '\\') {
            let is_range = is(self.peek_at(2), '-');
            match self.escape(true, is_range)? {
                Escape::Char(c) => c,
                Escape::Class(class) => return Ok(class),
                Escape::Look(..) => return invalid("illegal/unsupported escape sequence"),
            }
        } else {
            match self.read() {
                Some(c) => c,
                None => return invalid("unclosed character class"),
            }
        };
        if is(self.peek(), '-') {
            let end = self.peek_at(1);
            if !is(end, '[') && !is(end, ']') {
                self.pos += 1;
                let last = if is(self.peek(), '\\') {
                    // Java reads no property at the end of a range.
                    if is(self.peek_at(1), 'p') || is(self.peek_at(1), 'P') {
                        return invalid("illegal/unsupported escape sequence");
                    }
                    match self.escape(true, true)? {
                        Escape::Char(c) => c,
                        _ => return invalid("illegal character range"),
                    }
                } else {
                    match self.read() {
                        Some(c) => c,
                        None => return invalid("illegal character range"),
                    }
                };
                if last < first {
                    return invalid("illegal character range");
                }
                return Ok(self.span(first, last));
            }
        }
        Ok(self.single(first))
    }

    /// An escape sequence, from its backslash.
    fn escape(&mut self, in_class: bool, is_range: bool) -> Result<Escape> {
        self.pos += 1;
        let Some(c) = self.read() else {
            return invalid("unexpected internal error (a trailing backslash)");
        };
        let Some(letter) = ascii(c).map(char::from).filter(char::is_ascii_alphanumeric) else {
            return Ok(Escape::Char(c));
        };
        let class = |ranges: &[(u32, u32)], negate: bool| {
            let class = set(ranges);
            Ok(Escape::Class(if negate { negated(class) } else { class }))
        };
        if in_class && "123456789ABGRXZbkz".contains(letter) {
            return invalid("illegal/unsupported escape sequence");
        }
        // What an unsupported escape leaves in the tree (the pattern is refused anyway).
        let nothing = || Ok(Escape::Look(Look::Start, false));
        match letter {
            '0' => self.octal(),
            '1'..='9' => {
                self.unsupported("backreference \\1 ... \\9");
                while self.peek_is_digit() {
                    self.pos += 1;
                }
                nothing()
            }
            'A' => Ok(Escape::Look(Look::Start, false)),
            'Z' => Ok(Escape::Look(Look::End, true)),
            'z' => Ok(Escape::Look(Look::End, false)),
            'b' | 'B' => {
                self.unsupported("word boundary \\b or \\B");
                nothing()
            }
            'G' => {
                self.unsupported("\\G");
                nothing()
            }
            'R' => {
                self.unsupported("linebreak matcher \\R");
                nothing()
            }
            'X' => {
                self.unsupported("grapheme cluster \\X");
                nothing()
            }
            'k' => {
                if !is(self.read(), '<') {
                    return invalid("\\k is not followed by '<' for named capturing group");
                }
                let first = self.read();
                let name = self.group_name(first)?;
                if !self.names.iter().any(|(n, _)| *n == name) {
                    return invalid("named capturing group does not exist");
                }
                self.unsupported("named backreference \\k<name>");
                nothing()
            }
            'N' => unsupported("character name \\N{...}"),
            'p' | 'P' => self.property(letter == 'P'),
            'd' => class(DIGIT, false),
            'D' => class(DIGIT, true),
            's' => class(SPACE, false),
            'S' => class(SPACE, true),
            'w' => class(WORD, false),
            'W' => class(WORD, true),
            'h' => class(HORIZONTAL, false),
            'H' => class(HORIZONTAL, true),
            'v' if is_range => Ok(Escape::Char(0x0b)),
            'v' => class(VERTICAL, false),
            'V' => class(VERTICAL, true),
            'a' => Ok(Escape::Char(0x07)),
            'e' => Ok(Escape::Char(0x1b)),
            'f' => Ok(Escape::Char(0x0c)),
            'n' => Ok(Escape::Char(0x0a)),
            'r' => Ok(Escape::Char(0x0d)),
            't' => Ok(Escape::Char(0x09)),
            'c' => match self.read() {
                Some(c) => Ok(Escape::Char(c ^ 64)),
                None => invalid("illegal control escape sequence"),
            },
            'x' => self.hex(),
            'u' => self.unicode(),
            _ => invalid("illegal/unsupported escape sequence"),
        }
    }

    /// `\p{Name}` / `\pN` (and `\P`), after the `p`.
    fn property(&mut self, negate: bool) -> Result<Escape> {
        let name: String = if is(self.peek(), '{') {
            self.pos += 1;
            let start = self.pos;
            while !is(self.peek(), '}') {
                if self.peek().is_none() {
                    return invalid("unclosed character family");
                }
                self.pos += 1;
            }
            let name: String = self.p[start..self.pos]
                .iter()
                .filter_map(|&c| char::from_u32(c))
                .collect();
            self.pos += 1;
            if name.is_empty() {
                return invalid("empty character family");
            }
            name
        } else {
            match self.read().and_then(char::from_u32) {
                Some(c) => c.to_string(),
                None => return invalid("unknown character property name"),
            }
        };
        match posix(&name, self.ci) {
            Some(class) => Ok(Escape::Class(if negate { negated(class) } else { class })),
            None => {
                self.unsupported(&format!(
                    "character property \\p{{{name}}} (only the ASCII POSIX classes \\p{{Alpha}}, \
                     \\p{{Digit}}, \\p{{Lower}}, ... are supported)"
                ));
                Ok(Escape::Class(ClassUnicode::empty()))
            }
        }
    }

    /// Java's `o()`: up to three octal digits after `\0` (three only if the first is 0-3).
    fn octal(&mut self) -> Result<Escape> {
        let oct = |c: Option<u32>| c.filter(|c| (0x30..=0x37).contains(c)).map(|c| c - 0x30);
        let Some(n) = oct(self.read()) else {
            return invalid("illegal octal escape sequence");
        };
        let Some(m) = oct(self.peek()) else {
            return Ok(Escape::Char(n));
        };
        self.pos += 1;
        match oct(self.peek()) {
            Some(o) if n <= 3 => {
                self.pos += 1;
                Ok(Escape::Char(n * 64 + m * 8 + o))
            }
            _ => Ok(Escape::Char(n * 8 + m)),
        }
    }

    /// Java's `x()`: `\xhh` or `\x{h...}`, after the `x`.
    fn hex(&mut self) -> Result<Escape> {
        let n = self.read();
        if let Some(hi) = hex_digit(n) {
            if let Some(lo) = hex_digit(self.read()) {
                return Ok(Escape::Char(hi * 16 + lo));
            }
        } else if is(n, '{') && hex_digit(self.peek()).is_some() {
            let mut c: u32 = 0;
            let mut d = self.read();
            while let Some(v) = hex_digit(d) {
                c = (c << 4) + v;
                if c > 0x10ffff {
                    return invalid("hexadecimal codepoint is too big");
                }
                d = self.read();
            }
            if !is(d, '}') {
                return invalid("unclosed hexadecimal escape sequence");
            }
            return Ok(Escape::Char(c));
        }
        invalid("illegal hexadecimal escape sequence")
    }

    fn four_hex(&mut self) -> Result<u32> {
        let mut n = 0;
        for _ in 0..4 {
            match hex_digit(self.read()) {
                Some(d) => n = n * 16 + d,
                None => return invalid("illegal Unicode escape sequence"),
            }
        }
        Ok(n)
    }

    /// Java's `u()`: `\uhhhh`, a high surrogate joined with a `\uhhhh` low one after it.
    fn unicode(&mut self) -> Result<Escape> {
        let n = self.four_hex()?;
        if (0xd800..0xdc00).contains(&n) {
            let at = self.pos;
            if is(self.read(), '\\') && is(self.read(), 'u') {
                let low = self.four_hex()?;
                if (0xdc00..0xe000).contains(&low) {
                    return Ok(Escape::Char(
                        0x10000 + ((n - 0xd800) << 10) + (low - 0xdc00),
                    ));
                }
            }
            self.pos = at;
        }
        Ok(Escape::Char(n))
    }
}

/// `hir` in the `regex` crate's syntax, every repetition and alternation in a group of its own
/// (`regex_syntax`'s own printer writes `(?:A{2})?` as `A{2}?`, which reads back as lazy).
pub(super) fn to_pattern(hir: &Hir) -> String {
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
fn can_match_empty(hir: &Hir) -> bool {
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
