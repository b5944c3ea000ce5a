//! The parser of Java's pattern syntax, building the `regex` crate's syntax tree.

use regex_syntax::hir::{Capture, Class, ClassUnicode, Hir, Look, Repetition};

use super::classes::*;
use super::pattern::can_match_empty;
use super::{invalid, unsupported, Result};

/// What an escape sequence stands for.
enum Escape {
    Char(u32),
    Class(ClassUnicode),
    Look(Look, bool),
}

pub(super) struct Parser {
    pub(super) p: Vec<u32>,
    pub(super) pos: usize,
    pub(super) ci: bool,
    pub(super) dotall: bool,
    pub(super) groups: usize,
    pub(super) names: Vec<(String, usize)>,
    pub(super) dollar: bool,
    /// The first feature met that kraftd does not run; parsing goes on, so that a pattern Java
    /// rejects is reported as invalid rather than unsupported.
    pub(super) unsupported: Option<String>,
    /// Groups and classes open around the parser.
    pub(super) depth: usize,
}

/// Deeper nesting of groups or classes than this is refused (the parser recurses).
const MAX_DEPTH: usize = 100;

impl Parser {
    /// Notes a feature kraftd does not run, the first one only.
    fn unsupported(&mut self, what: &str) {
        self.unsupported.get_or_insert_with(|| what.to_string());
    }
}

impl Parser {
    pub(super) fn peek(&self) -> Option<u32> {
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

    pub(super) fn expr(&mut self) -> Result<Hir> {
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
