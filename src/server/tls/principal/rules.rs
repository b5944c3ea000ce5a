//! `ssl.principal.mapping.rules`, as Kafka's `SslPrincipalMapper` reads and applies them.
//!
//! Reading the rules string (Kafka's `RULE_SPLITTER` and `RULE_PARSER` regexes, reproduced):
//!
//! - the string is trimmed of characters up to U+0020 (Java's `String.trim`), then rules are
//!   found one after another, each `DEFAULT`, or `RULE:` pattern `/` replacement `/` and an
//!   optional `L` or `U`, and ended by a comma (whitespace around it allowed) or the end of the
//!   string. A `/` or any character can be escaped with `\` in the pattern and replacement, and
//!   those backslashes stay (the pattern is compiled, and the replacement expanded, with them);
//! - anything else between commas is an invalid rule (a start-up error), including text after a
//!   rule's flags (`RULE:a/b/Lx`) and lowercase `default`; empty rules (`,,`) are ignored, so an
//!   empty string means no rules at all and every name fails;
//! - a line break inside the rules string that is not after a comma drops the text before it on
//!   that line (Java's `.` does not cross it): `DEFAULT\nRULE:...` is the RULE alone, as in Kafka.
//!
//! Applying them: the first rule that applies gives the name. `DEFAULT` gives the whole name. A
//! `RULE` applies when its pattern matches the *whole* name (Java's `Matcher.matches()`); the name
//! is then rewritten by Java's `String.replaceAll(pattern, replacement)` — every match, found
//! left to right, not only the whole-name one, so a pattern that can match the empty string
//! also inserts the replacement at the end — after Kafka's treatment of `$n` for a group `n` the
//! pattern lacks (taken as a literal `$n`, with Kafka's quirks: `$12` is group 1 then `2` when
//! there is no group 12), then lowercased (`/L`) or uppercased (`/U`). In the replacement `$n`
//! and `${name}` insert a group (nothing for a group that did not take part in the match), `\x`
//! is `x`. When no rule applies Kafka throws `NoMatchingRule` and the client fails
//! authentication: [`MapError::NoMatchingRule`].
//!
//! Where kraftd departs from Java, it refuses rather than answers differently:
//!
//! - a pattern with a Java regex feature the linear-time `regex` crate lacks (backreferences,
//!   lookaround, possessive quantifiers, `\b`, Unicode properties, the flags `m`, `u`, `x`, ...:
//!   see [`super::java_regex`]) is a start-up error naming the rule
//!   ([`MappingRulesError::UnsupportedRegex`]); Java would accept it;
//! - a replacement Java cannot expand (`$` at its end or before a non-digit, a `\` at its end,
//!   `${name}` of no group, `$1` in a pattern without groups, a group number beyond Java's int)
//!   makes Java throw for every name the rule matches, so the rule can never authenticate anyone:
//!   kraftd refuses it at start-up ([`MappingRulesError::Replacement`]);
//! - a name ending with a line terminator (`\n`, `\r`, U+0085, U+2028, U+2029), reaching a rule
//!   whose pattern has `$` or `\Z` (which Java also matches before that terminator), and a
//!   replacement inserted before a character outside the BMP after an empty match (where Java
//!   goes on matching between the two halves of a surrogate pair) fail the client with
//!   [`MapError::Unrepresentable`].
//!
//! Case mapping is Rust's full Unicode mapping, which is Java's `toLowerCase(Locale.ENGLISH)` /
//! `toUpperCase(Locale.ENGLISH)` (special casing, final sigma) up to the Unicode version.

use std::fmt;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use super::java_regex::{self, RegexError};

/// A rules string kraftd cannot use: a configuration error at start-up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingRulesError {
    #[error(
        "ssl.principal.mapping.rules: invalid rule `{rule}`: `{unmatched}` is not part of a rule. \
         Each rule is DEFAULT or RULE:pattern/replacement/ (optionally followed by L or U to \
         lowercase or uppercase the result), rules separated by commas"
    )]
    InvalidRule { rule: String, unmatched: String },
    #[error(
        "ssl.principal.mapping.rules: the pattern of rule `{rule}` is not a valid Java regular \
         expression ({reason}); fix the pattern"
    )]
    InvalidRegex { rule: String, reason: String },
    #[error(
        "ssl.principal.mapping.rules: the pattern of rule `{rule}` uses {feature}, which kraftd's \
         regular expression engine (linear time, no backtracking) cannot run with Java's \
         meaning; rewrite the rule without it"
    )]
    UnsupportedRegex { rule: String, feature: String },
    #[error(
        "ssl.principal.mapping.rules: the replacement of rule `{rule}` cannot be expanded \
         ({reason}); Java throws {java_exception} for every name the rule matches, so the rule \
         could never give a principal. Fix the replacement: `$n` inserts group n, `\\$` is a \
         literal `$` and `\\\\` a backslash"
    )]
    Replacement {
        rule: String,
        reason: String,
        /// The exception Java's `SslPrincipalMapper.getName` throws for names the rule matches.
        java_exception: &'static str,
    },
}

/// A client certificate subject no rule gives a principal: the client fails authentication.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error(
        "no rule of ssl.principal.mapping.rules ({rules}) applies to the client certificate \
         subject {name:?}, so the client fails authentication (Kafka's NoMatchingRule); add a \
         rule that matches it, or end the rules with DEFAULT to keep unmatched subjects whole"
    )]
    NoMatchingRule { name: String, rules: String },
    #[error(
        "rule `{rule}` of ssl.principal.mapping.rules cannot be applied to the client \
         certificate subject {name:?} as Java would ({why}), so the client fails authentication"
    )]
    Unrepresentable {
        name: String,
        rule: String,
        why: &'static str,
    },
}

/// Parsed `ssl.principal.mapping.rules`.
#[derive(Clone)]
pub struct PrincipalMapper {
    rules: Vec<Rule>,
}

#[derive(Clone)]
enum Rule {
    Default,
    Pattern(Box<PatternRule>),
}

#[derive(Clone)]
struct PatternRule {
    /// The rule as written, for messages.
    text: String,
    /// The pattern anchored at both ends (`Matcher.matches()`).
    whole: Regex,
    /// The pattern itself (`replaceAll`'s `find()`).
    find: Regex,
    replacement: Vec<Part>,
    lower: bool,
    upper: bool,
    /// The pattern has `$` or `\Z`.
    dollar: bool,
}

/// A piece of an expanded replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Text(String),
    Group(usize),
}

impl fmt::Debug for PrincipalMapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrincipalMapper({})", self.describe())
    }
}

impl Default for PrincipalMapper {
    /// Kafka's default, `DEFAULT`: the whole subject.
    fn default() -> Self {
        PrincipalMapper {
            rules: vec![Rule::Default],
        }
    }
}

// Kafka's RULE_PATTERN, with java.util.regex's meaning spelled out: Java's `.` excludes its line
// terminators, `\s` is ASCII whitespace, and (the only `$`, in the splitter) `$` also matches
// before a line terminator ending the (trimmed) input, which here consumes it.
const DOT: &str = r"[^\n\r\x{85}\x{2028}\x{2029}]";
const SPACE: &str = r"[\t\n\x0B\x0C\r ]";

fn rule_pattern() -> String {
    format!(r"(DEFAULT)|RULE:((?:\\{DOT}|[^\\/])*)/((?:\\{DOT}|[^\\/])*)/([LU]?){DOT}*?|({DOT}*?)")
}

fn splitter() -> &'static Regex {
    static SPLITTER: OnceLock<Regex> = OnceLock::new();
    SPLITTER.get_or_init(|| {
        let pattern = format!(
            r"{SPACE}*({}){SPACE}*(?:,{SPACE}*|[\x{{85}}\x{{2028}}\x{{2029}}]?\z)",
            rule_pattern()
        );
        Regex::new(&pattern).expect("the rule splitter compiles")
    })
}

fn rule_parser() -> &'static Regex {
    static PARSER: OnceLock<Regex> = OnceLock::new();
    PARSER.get_or_init(|| {
        Regex::new(&format!(r"\A(?:{})", rule_pattern())).expect("the rule parser compiles")
    })
}

/// The next place Java's `Matcher.find()` searches after a match `start..end` of `text`: its end,
/// or one character on after an empty match (past the end when there is none).
fn next_search(text: &str, start: usize, end: usize) -> usize {
    if start != end {
        end
    } else {
        end + text[end..].chars().next().map_or(1, char::len_utf8)
    }
}

impl PrincipalMapper {
    /// Parses `ssl.principal.mapping.rules` as Kafka's `SslPrincipalMapper` constructor does.
    pub fn parse(rules: &str) -> Result<PrincipalMapper, MappingRulesError> {
        let text = rules.trim_matches(|c: char| c <= ' ');
        let mut found = Vec::new();
        let mut at = 0;
        while at <= text.len() {
            let Some(caps) = splitter().captures_at(text, at) else {
                break;
            };
            let whole = caps.get(0).expect("group 0");
            found.push(caps.get(1).map_or("", |m| m.as_str()));
            at = next_search(text, whole.start(), whole.end());
        }
        let mut parsed = Vec::new();
        // Java throws at the first rule it cannot read; a rule kraftd refuses but Java reads is
        // reported only if Java would start, so that the error is Java's when there is one.
        let mut refused = None;
        for rule in found {
            let caps = rule_parser()
                .captures(rule)
                .expect("the rule parser matches every string");
            let end = caps.get(0).map_or(0, |m| m.end());
            if end != rule.len() {
                return Err(MappingRulesError::InvalidRule {
                    rule: rule.to_string(),
                    unmatched: rule[end..].to_string(),
                });
            }
            if caps.get(1).is_some() {
                parsed.push(Rule::Default);
            } else if let (Some(pattern), Some(replacement)) = (caps.get(2), caps.get(3)) {
                let flag = caps.get(4).map_or("", |m| m.as_str());
                match PatternRule::new(rule, pattern.as_str(), replacement.as_str(), flag) {
                    Ok(rule) => parsed.push(Rule::Pattern(Box::new(rule))),
                    Err(e @ MappingRulesError::InvalidRegex { .. }) => return Err(e),
                    Err(e) => {
                        refused.get_or_insert(e);
                    }
                }
            }
            // Otherwise an empty rule, ignored.
        }
        match refused {
            Some(e) => Err(e),
            None => Ok(PrincipalMapper { rules: parsed }),
        }
    }

    /// The principal name for certificate subject `name` (as [`super::subject_name`] gives it),
    /// as Kafka's `SslPrincipalMapper.getName` computes it.
    pub fn map(&self, name: &str) -> Result<String, MapError> {
        for rule in &self.rules {
            match rule {
                Rule::Default => return Ok(name.to_string()),
                Rule::Pattern(rule) => {
                    if let Some(mapped) = rule.apply(name)? {
                        return Ok(mapped);
                    }
                }
            }
        }
        Err(MapError::NoMatchingRule {
            name: name.to_string(),
            rules: self.describe(),
        })
    }

    fn describe(&self) -> String {
        let rules: Vec<&str> = self
            .rules
            .iter()
            .map(|r| match r {
                Rule::Default => "DEFAULT",
                Rule::Pattern(p) => p.text.as_str(),
            })
            .collect();
        format!("[{}]", rules.join(", "))
    }
}

/// Java's line terminators, before the last of which `$` also matches.
fn ends_with_line_terminator(name: &str) -> bool {
    name.ends_with(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
}

impl PatternRule {
    fn new(
        text: &str,
        pattern: &str,
        replacement: &str,
        flag: &str,
    ) -> Result<PatternRule, MappingRulesError> {
        let rule = || text.to_string();
        let translated = java_regex::translate(pattern).map_err(|e| match e {
            RegexError::Invalid(reason) => MappingRulesError::InvalidRegex {
                rule: rule(),
                reason,
            },
            RegexError::Unsupported(feature) => MappingRulesError::UnsupportedRegex {
                rule: rule(),
                feature,
            },
        })?;
        let too_big = |e: regex::Error| MappingRulesError::UnsupportedRegex {
            rule: rule(),
            feature: format!("a pattern too large for the regex engine ({e})"),
        };
        let pattern = java_regex::to_pattern(&translated.hir);
        let find = RegexBuilder::new(&pattern).build().map_err(too_big)?;
        let whole = RegexBuilder::new(&format!(r"\A{pattern}\z"))
            .build()
            .map_err(too_big)?;
        if find.captures_len() != translated.groups + 1 {
            return Err(MappingRulesError::UnsupportedRegex {
                rule: rule(),
                feature: "groups this translation numbers differently from Java".to_string(),
            });
        }
        let replacement = expand_template(replacement, translated.groups, &translated.names)
            .map_err(|(reason, java_exception)| MappingRulesError::Replacement {
                rule: rule(),
                reason,
                java_exception,
            })?;
        Ok(PatternRule {
            text: rule(),
            whole,
            find,
            replacement,
            lower: flag == "L",
            upper: flag == "U",
            dollar: translated.dollar,
        })
    }

    /// Kafka's `Rule.apply`: `None` when the pattern does not match the whole name.
    fn apply(&self, name: &str) -> Result<Option<String>, MapError> {
        let unrepresentable = |why| MapError::Unrepresentable {
            name: name.to_string(),
            rule: self.text.clone(),
            why,
        };
        if self.dollar && ends_with_line_terminator(name) {
            return Err(unrepresentable(
                "the subject ends with a line terminator, before which Java's `$` also matches",
            ));
        }
        if !self.whole.is_match(name) {
            return Ok(None);
        }
        // Java's Matcher.replaceAll.
        let mut out = String::new();
        let (mut appended, mut at) = (0, 0);
        while at <= name.len() {
            let Some(caps) = self.find.captures_at(name, at) else {
                break;
            };
            let m = caps.get(0).expect("group 0");
            out.push_str(&name[appended..m.start()]);
            for part in &self.replacement {
                match part {
                    Part::Text(text) => out.push_str(text),
                    Part::Group(g) => out.push_str(caps.get(*g).map_or("", |g| g.as_str())),
                }
            }
            appended = m.end();
            at = next_search(name, m.start(), m.end());
            if m.is_empty()
                && name[m.end()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.len_utf16() == 2)
            {
                return Err(unrepresentable(
                    "an empty match before a character outside the BMP, where Java would \
                     search between the halves of its surrogate pair",
                ));
            }
        }
        out.push_str(&name[appended..]);
        if self.lower && out.contains('\u{3a3}') {
            return Err(unrepresentable(
                "Java lowercases a capital sigma to final or medial form by its word breaks",
            ));
        }
        Ok(Some(if self.lower {
            out.to_lowercase()
        } else if self.upper {
            out.to_uppercase()
        } else {
            out
        }))
    }
}

type ReplacementError = (String, &'static str);

const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";

/// The replacement as Java expands it for a pattern with `groups` groups: Kafka's
/// `escapeLiteralBackReferences` (on UTF-16 indices, quirks included), then
/// `Matcher.appendReplacement`'s reading of it.
fn expand_template(
    replacement: &str,
    groups: usize,
    names: &[(String, usize)],
) -> Result<Vec<Part>, ReplacementError> {
    let units: Vec<u16> = replacement.encode_utf16().collect();
    let escaped = escape_literal_back_references(&units, groups)?;
    let mut parts = Vec::new();
    let mut text: Vec<u16> = Vec::new();
    let digit = |u: Option<&u16>| {
        u.copied()
            .filter(|u| (u16::from(b'0')..=u16::from(b'9')).contains(u))
            .map(|u| usize::from(u - u16::from(b'0')))
    };
    let mut i = 0;
    while i < escaped.len() {
        let c = escaped[i];
        if c == u16::from(b'\\') {
            i += 1;
            match escaped.get(i) {
                Some(&next) => text.push(next),
                None => {
                    return Err((
                        "a backslash at its end escapes nothing".into(),
                        ILLEGAL_ARGUMENT,
                    ))
                }
            }
            i += 1;
        } else if c == u16::from(b'$') {
            i += 1;
            let group = match escaped.get(i) {
                None => return Err(("`$` at its end names no group".into(), ILLEGAL_ARGUMENT)),
                Some(&brace) if brace == u16::from(b'{') => {
                    i += 1;
                    let start = i;
                    while escaped
                        .get(i)
                        .is_some_and(|&u| u < 0x80 && (u as u8).is_ascii_alphanumeric())
                    {
                        i += 1;
                    }
                    let name: String = escaped[start..i].iter().map(|&u| u as u8 as char).collect();
                    if name.is_empty() {
                        return Err(("`${}` names no group".into(), ILLEGAL_ARGUMENT));
                    }
                    if escaped.get(i) != Some(&u16::from(b'}')) {
                        return Err((
                            format!("`${{{name}` is missing its closing `}}`"),
                            ILLEGAL_ARGUMENT,
                        ));
                    }
                    i += 1;
                    if name.starts_with(|c: char| c.is_ascii_digit()) {
                        return Err((
                            format!("group name `{name}` starts with a digit"),
                            ILLEGAL_ARGUMENT,
                        ));
                    }
                    match names.iter().find(|(n, _)| *n == name) {
                        Some((_, g)) => *g,
                        None => {
                            return Err((
                                format!("the pattern has no group named `{name}`"),
                                ILLEGAL_ARGUMENT,
                            ))
                        }
                    }
                }
                Some(u) => {
                    let Some(mut group) = digit(Some(u)) else {
                        return Err((
                            "`$` is followed by neither a group number nor `{`".into(),
                            ILLEGAL_ARGUMENT,
                        ));
                    };
                    i += 1;
                    while let Some(d) = digit(escaped.get(i)) {
                        let longer = group * 10 + d;
                        if longer > groups {
                            break;
                        }
                        group = longer;
                        i += 1;
                    }
                    if group > groups {
                        return Err((
                            format!("`${group}` names a group the pattern lacks"),
                            "java.lang.IndexOutOfBoundsException",
                        ));
                    }
                    group
                }
            };
            if !text.is_empty() {
                parts.push(Part::Text(utf16_text(&text)?));
                text.clear();
            }
            parts.push(Part::Group(group));
        } else {
            text.push(c);
            i += 1;
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(utf16_text(&text)?));
    }
    Ok(parts)
}

fn utf16_text(units: &[u16]) -> Result<String, ReplacementError> {
    String::from_utf16(units).map_err(|_| {
        (
            "Kafka's escaping of `$n` splits a surrogate pair in it".into(),
            "(an unpaired surrogate in the principal)",
        )
    })
}

/// Kafka's `SslPrincipalMapper.Rule.escapeLiteralBackReferences`: a backslash before each
/// `$n` naming a group beyond `groups` (after dropping trailing digits while that number is
/// above `groups` and at least 10). The insertion points are the `$`s' places in the original
/// text, not shifted by earlier insertions, as in Kafka.
fn escape_literal_back_references(
    units: &[u16],
    groups: usize,
) -> Result<Vec<u16>, ReplacementError> {
    if groups == 0 {
        return Ok(units.to_vec());
    }
    let is_digit = |u: u16| (u16::from(b'0')..=u16::from(b'9')).contains(&u);
    let mut value = units.to_vec();
    let mut i = 0;
    while i < units.len() {
        if units[i] != u16::from(b'$') || !units.get(i + 1).is_some_and(|&u| is_digit(u)) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < units.len() && is_digit(units[end]) {
            end += 1;
        }
        i = end;
        let digits: String = units[start..end].iter().map(|&u| u as u8 as char).collect();
        if digits.starts_with('0') {
            continue;
        }
        let mut index: usize = match digits.parse::<i32>() {
            Ok(n) => n as usize,
            Err(_) => {
                return Err((
                    format!("`${digits}` is beyond Java's int"),
                    "java.lang.NumberFormatException",
                ))
            }
        };
        while index > groups && index >= 10 {
            index /= 10;
        }
        if index > groups {
            value.insert(start - 1, u16::from(b'\\'));
        }
    }
    Ok(value)
}
