//! A reader for Java's `.properties` format with the semantics of `java.util.Properties.load`,
//! which is how Kafka reads `server.properties`.
//!
//! Rules implemented (from the `Properties.load` contract):
//! * natural lines end at `\n`, `\r` or `\r\n`; a line whose last character is an unescaped
//!   backslash continues on the next line, whose leading whitespace is dropped;
//! * leading whitespace (space, tab, form feed) is skipped; blank lines are ignored;
//! * a line whose first non-blank character is `#` or `!` is a comment (and never continues),
//!   also when it follows continuations that left the logical line empty (JDK 9+);
//! * the key ends at the first unescaped `=`, `:` or whitespace; whitespace and at most one
//!   `=`/`:` after it are skipped, the rest of the line is the value (trailing blanks kept);
//! * escapes: `\t \n \r \f`, `\uXXXX`, and `\x` = `x` for any other `x`;
//! * a key given twice keeps the last value.
//!
//! Differences from Java, on purpose: a malformed `\uXXXX` is an error carrying the line number
//! (Java throws without one), and a lone UTF-16 surrogate becomes U+FFFD because Rust strings
//! cannot hold one.

use std::collections::BTreeMap;

/// One parsed entry: its value and the (1-based) line where its logical line starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub value: String,
    pub line: usize,
}

/// Parsed properties, keyed by name. Later duplicates have replaced earlier ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    entries: BTreeMap<String, Entry>,
}

/// A syntax error, with the line of the logical line that contains it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct SyntaxError {
    pub line: usize,
    #[source]
    pub reason: MalformedEscape,
}

/// A `\u` escape not followed by four hex digits (Java's `Properties.load` throws on it). The
/// characters after `\u`, at most four, are shown as Java shows them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed \\uXXXX escape '\\u{digits}'")]
pub struct MalformedEscape {
    pub digits: String,
}

impl Properties {
    /// Parses the text of a properties file. Never panics; the only error is a bad `\u` escape.
    pub fn parse(text: &str) -> Result<Properties, SyntaxError> {
        let mut props = Properties::default();
        for logical in LogicalLines::new(text) {
            let (key, value) = split_key_value(&logical.chars);
            let key = unescape(key).map_err(|reason| SyntaxError {
                line: logical.line,
                reason,
            })?;
            let value = unescape(value).map_err(|reason| SyntaxError {
                line: logical.line,
                reason,
            })?;
            props.entries.insert(
                key,
                Entry {
                    value,
                    line: logical.line,
                },
            );
        }
        Ok(props)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|e| e.value.as_str())
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Sets a value (e.g. from `--override`); line 0 marks "not from the file".
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.entries.insert(
            key.into(),
            Entry {
                value: value.into(),
                line: 0,
            },
        );
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, e)| (k.as_str(), e))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Decodes file bytes: UTF-8 when valid, else ISO-8859-1 like Java's `load(InputStream)`.
/// (Java always uses ISO-8859-1; accepting UTF-8 first is kinder to hand-edited files.)
pub fn decode_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// A logical line (continuations joined, escapes still raw) and the line it starts on.
struct Logical {
    chars: Vec<char>,
    line: usize,
}

struct LogicalLines<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
}

impl<'a> LogicalLines<'a> {
    fn new(text: &'a str) -> Self {
        LogicalLines {
            chars: text.chars().peekable(),
            line: 1,
        }
    }

    /// Consumes one line terminator (`\n`, `\r` or `\r\n`) whose first char was `c`.
    fn end_natural_line(&mut self, c: char) {
        if c == '\r' && self.chars.peek() == Some(&'\n') {
            self.chars.next();
        }
        self.line += 1;
    }
}

impl Iterator for LogicalLines<'_> {
    type Item = Logical;

    // The state machine of Java's `Properties.LineReader` (JDK 9+), so that odd inputs split
    // into the same entries: e.g. `#` or `!` starts a comment whenever the logical line is still
    // empty, even right after a continuation that left it empty.
    fn next(&mut self) -> Option<Logical> {
        let mut buf: Vec<char> = Vec::new();
        let mut start_line = self.line;
        let mut skip_blanks = true;
        let mut continuing = false; // just after a continuation: a line end ends the logical line
        let mut odd_backslashes = false;
        loop {
            let Some(c) = self.chars.next() else {
                // At end of input a dangling continuation backslash is dropped.
                if buf.is_empty() {
                    return None;
                }
                if odd_backslashes {
                    buf.pop();
                }
                return Some(Logical {
                    chars: buf,
                    line: start_line,
                });
            };
            if skip_blanks {
                if is_blank(c) {
                    continue;
                }
                if !continuing && (c == '\n' || c == '\r') {
                    self.end_natural_line(c);
                    continue;
                }
                skip_blanks = false;
                continuing = false;
            }
            if buf.is_empty() && (c == '#' || c == '!') {
                // A comment runs to the end of its natural line, backslash or not.
                while let Some(c) = self.chars.next() {
                    if c == '\n' || c == '\r' {
                        self.end_natural_line(c);
                        break;
                    }
                }
                skip_blanks = true;
                continue;
            }
            if c != '\n' && c != '\r' {
                if buf.is_empty() {
                    start_line = self.line;
                }
                odd_backslashes = c == '\\' && !odd_backslashes;
                buf.push(c);
                continue;
            }
            // Java looks for end of input before it skips the '\n' of a "\r\n".
            let input_ended = self.chars.peek().is_none();
            self.end_natural_line(c);
            if buf.is_empty() {
                // Emptied by continuations: nothing to yield yet.
                skip_blanks = true;
                continue;
            }
            if odd_backslashes {
                buf.pop();
                odd_backslashes = false;
                // Java returns the line if input ends right after the continuation, even empty.
                if input_ended {
                    return Some(Logical {
                        chars: buf,
                        line: start_line,
                    });
                }
                skip_blanks = true;
                continuing = true;
            } else {
                return Some(Logical {
                    chars: buf,
                    line: start_line,
                });
            }
        }
    }
}

/// Splits a logical line into raw key and raw value (escapes not yet applied).
fn split_key_value(line: &[char]) -> (&[char], &[char]) {
    let mut key_len = 0;
    let mut value_start = line.len();
    let mut has_separator = false;
    let mut escaped = false;
    while key_len < line.len() {
        let c = line[key_len];
        if !escaped && (c == '=' || c == ':') {
            value_start = key_len + 1;
            has_separator = true;
            break;
        }
        if !escaped && is_blank(c) {
            value_start = key_len + 1;
            break;
        }
        escaped = c == '\\' && !escaped;
        key_len += 1;
    }
    while value_start < line.len() {
        let c = line[value_start];
        if is_blank(c) {
            value_start += 1;
        } else if !has_separator && (c == '=' || c == ':') {
            has_separator = true;
            value_start += 1;
        } else {
            break;
        }
    }
    (&line[..key_len], &line[value_start..])
}

/// Applies Java's escapes. A trailing lone backslash is dropped.
fn unescape(raw: &[char]) -> Result<String, MalformedEscape> {
    let mut out = String::with_capacity(raw.len());
    let mut pending_high: Option<u16> = None;
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        let unit = if c != '\\' {
            None
        } else {
            match raw.get(i).copied() {
                None => break,
                Some('u') => {
                    let digits: String = raw.iter().skip(i + 1).take(4).collect();
                    let unit = (digits.len() == 4 && digits.chars().all(|d| d.is_ascii_hexdigit()))
                        .then(|| u16::from_str_radix(&digits, 16).ok())
                        .flatten()
                        .ok_or(MalformedEscape { digits })?;
                    i += 5;
                    Some(unit)
                }
                Some(e) => {
                    i += 1;
                    flush_surrogate(&mut out, &mut pending_high);
                    out.push(match e {
                        't' => '\t',
                        'n' => '\n',
                        'r' => '\r',
                        'f' => '\u{c}',
                        other => other,
                    });
                    continue;
                }
            }
        };
        match unit {
            // \uXXXX escapes are UTF-16 code units: join surrogate pairs.
            Some(u) if (0xD800..0xDC00).contains(&u) => {
                flush_surrogate(&mut out, &mut pending_high);
                pending_high = Some(u);
            }
            Some(u) if (0xDC00..0xE000).contains(&u) => match pending_high.take() {
                Some(high) => {
                    let cp = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(u) - 0xDC00);
                    out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                }
                None => out.push('\u{FFFD}'),
            },
            Some(u) => {
                flush_surrogate(&mut out, &mut pending_high);
                out.push(char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}'));
            }
            None => {
                flush_surrogate(&mut out, &mut pending_high);
                out.push(c);
            }
        }
    }
    flush_surrogate(&mut out, &mut pending_high);
    Ok(out)
}

fn flush_surrogate(out: &mut String, pending_high: &mut Option<u16>) {
    if pending_high.take().is_some() {
        out.push('\u{FFFD}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, String)> {
        let p = Properties::parse(text).expect("parses");
        p.iter()
            .map(|(k, e)| (k.to_owned(), e.value.clone()))
            .collect()
    }

    fn one(text: &str) -> (String, String) {
        let all = parse(text);
        assert_eq!(all.len(), 1, "{text:?} gave {all:?}");
        all.into_iter().next().unwrap()
    }

    fn kv(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn separators() {
        assert_eq!(one("a=b"), kv("a", "b"));
        assert_eq!(one("a:b"), kv("a", "b"));
        assert_eq!(one("a b"), kv("a", "b"));
        assert_eq!(one("a \t = \t b"), kv("a", "b"));
        assert_eq!(
            one("a = = b"),
            kv("a", "= b"),
            "only one separator is skipped"
        );
        assert_eq!(one("a b=c"), kv("a", "b=c"));
        assert_eq!(one("a=b:c=d"), kv("a", "b:c=d"));
        assert_eq!(one("a"), kv("a", ""));
        assert_eq!(one("a="), kv("a", ""));
        assert_eq!(one("=b"), kv("", "b"));
    }

    #[test]
    fn whitespace_and_comments() {
        assert_eq!(
            one("   \t\u{c}key=value  "),
            kv("key", "value  "),
            "trailing blanks are kept"
        );
        assert_eq!(parse("# c\n! c\n  # indented\n\n   \n"), vec![]);
        assert_eq!(
            parse("a=1 # not a comment"),
            vec![kv("a", "1 # not a comment")]
        );
        assert_eq!(
            parse("#comment \\\na=1"),
            vec![kv("a", "1")],
            "comments never continue"
        );
    }

    #[test]
    fn line_endings_and_continuations() {
        assert_eq!(
            parse("a=1\nb=2\r\nc=3\rd=4"),
            vec![kv("a", "1"), kv("b", "2"), kv("c", "3"), kv("d", "4")]
        );
        assert_eq!(one("a=x\\\n    y"), kv("a", "xy"));
        assert_eq!(one("a=x\\\r\n  y\\\r  z"), kv("a", "xyz"));
        assert_eq!(
            one("a=x\\\n  # y"),
            kv("a", "x# y"),
            "a continued line is not a comment"
        );
        assert_eq!(parse("a=x\\\n\nb=2"), vec![kv("a", "x"), kv("b", "2")]);
        assert_eq!(one("a=x\\"), kv("a", "x"), "dangling backslash at EOF");
        assert_eq!(
            one("a=x\\\\"),
            kv("a", "x\\"),
            "an even run of backslashes is literal"
        );
        assert_eq!(one("a=x\\\\\\\ny"), kv("a", "x\\y"));
        assert_eq!(one("key\\\n  name=v"), kv("keyname", "v"));
    }

    #[test]
    fn jdk9_line_reader_corner_cases() {
        // Each expectation was checked against java.util.Properties (JDK 17).
        assert_eq!(
            parse("\\\n#comment\na=1"),
            vec![kv("a", "1")],
            "comment after an emptied line"
        );
        assert_eq!(parse("\\\n\\\n!x=1\nb=2"), vec![kv("b", "2")]);
        assert_eq!(parse("\\\r\n"), vec![]);
        assert_eq!(
            parse(" \\\n"),
            vec![kv("", "")],
            "continuation right at end of input"
        );
        assert_eq!(parse("a=1\\\n\\\n"), vec![kv("a", "1")]);
    }

    #[test]
    fn escapes() {
        assert_eq!(one(r"a=\t\n\r\f"), kv("a", "\t\n\r\u{c}"));
        assert_eq!(one(r"a=\q\\\#"), kv("a", "q\\#"));
        assert_eq!(one(r"a\=b\:c\ d=e"), kv("a=b:c d", "e"));
        assert_eq!(one(r"a=\u0041\u00e9"), kv("a", "Aé"));
        assert_eq!(
            one(r"a=\uD83D\uDE00"),
            kv("a", "😀"),
            "surrogate pairs join"
        );
        assert_eq!(
            one(r"a=\uD83Dx"),
            kv("a", "\u{FFFD}x"),
            "a lone surrogate is replaced"
        );
        assert_eq!(one(r"a=\uDE00"), kv("a", "\u{FFFD}"));
    }

    #[test]
    fn bad_unicode_escape_names_the_line() {
        let err = Properties::parse("a=1\n\nb=\\u12G4").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.to_string().contains("malformed \\uXXXX"), "{err}");
        assert!(Properties::parse("a=\\u12").is_err());
    }

    #[test]
    fn last_duplicate_wins_and_lines_are_tracked() {
        let p = Properties::parse("a=1\nb=2\n\\\n a=3").unwrap();
        assert_eq!(p.get("a"), Some("3"));
        assert_eq!(
            p.entry("a").unwrap().line,
            4,
            "the line where the key text is"
        );
        assert_eq!(p.entry("b").unwrap().line, 2);
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn decode_falls_back_to_latin1() {
        assert_eq!(decode_bytes("é".as_bytes()), "é");
        assert_eq!(decode_bytes(&[b'a', 0xE9]), "aé");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = Properties::parse(&s);
        }

        #[test]
        fn never_panics_on_escape_heavy_input(s in "[a-z=:# \\\\u0-9A-Fa-f\\n\\r\\t!]{0,64}") {
            let _ = Properties::parse(&s);
        }

        #[test]
        fn simple_pairs_round_trip(k in "[a-z][a-z.]{0,20}", v in "[a-zA-Z0-9:/,.@]{0,30}") {
            let p = Properties::parse(&format!("{k}={v}\n")).unwrap();
            proptest::prop_assert_eq!(p.get(&k), Some(v.as_str()));
        }
    }
}
