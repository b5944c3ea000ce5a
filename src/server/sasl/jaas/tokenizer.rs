//! The tokens Kafka 4.4's `JaasConfig` reads a `sasl.jaas.config` value as: a
//! `java.io.StreamTokenizer` with its default syntax (words of letters, numbers, `'` and `"`
//! quotes with C escapes, `/` starting a comment), `//` and `/* */` comments on, and `-`, `_`
//! and `$` as word characters too. Every corner of Java's tokenizer is kept, because an
//! operator's file must mean the same to kraftd as to a Java controller: a number is a token
//! without text (so `key=123` has no value), an unterminated quote ends at the line's end, a
//! `/` not followed by `*` or `/` still comments out the rest of the line, and so on.

/// Character classes of the tokenizer's table (Java's `CT_*` bits).
const WHITESPACE: u8 = 1;
const DIGIT: u8 = 2;
const ALPHA: u8 = 4;
const QUOTE: u8 = 8;
const COMMENT: u8 = 16;

/// The class of `c` in the table `JaasConfig` sets up.
fn class(c: char) -> u8 {
    match c {
        '\0'..=' ' => WHITESPACE,
        'a'..='z' | 'A'..='Z' | '\u{a0}'..='\u{ff}' | '_' | '$' => ALPHA,
        // parseNumbers() marks '-' a digit; wordChars('-', '-') adds the letter bit.
        '-' => DIGIT | ALPHA,
        '0'..='9' | '.' => DIGIT,
        '"' | '\'' => QUOTE,
        '/' => COMMENT,
        // Everything past Latin-1 is a word character (Java's `c >= 256`).
        c if u32::from(c) >= 256 => ALPHA,
        _ => 0,
    }
}

/// One token, as `StreamTokenizer.nextToken` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Eof,
    /// A word (`TT_WORD`): its text.
    Word(String),
    /// A quoted string: the quote character and the text, escapes applied.
    Quoted(char, String),
    /// A number (`TT_NUMBER`): Java keeps its value, not its text.
    Number,
    /// Any other character, alone (`;`, `=`, `{`, ...), with no text.
    Char(char),
}

impl Token {
    /// Java's `sval`: the text of a word or quoted string, `None` for anything else.
    pub(super) fn text(&self) -> Option<&str> {
        match self {
            Token::Word(s) | Token::Quoted(_, s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn is(&self, c: char) -> bool {
        *self == Token::Char(c)
    }
}

/// What the next read starts from (Java's `peekc`).
#[derive(Clone, Copy)]
enum Peek {
    /// Read a fresh character.
    Need,
    /// This character, already read (or the end of input).
    Have(Option<char>),
}

pub(super) struct Tokenizer<'a> {
    chars: std::str::Chars<'a>,
    peek: Peek,
}

impl<'a> Tokenizer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Tokenizer {
            chars: text.chars(),
            peek: Peek::Need,
        }
    }

    fn read(&mut self) -> Option<char> {
        self.chars.next()
    }

    /// The next token. Comments are skipped in a loop where Java recurses.
    pub(super) fn next_token(&mut self) -> Token {
        loop {
            let start = match std::mem::replace(&mut self.peek, Peek::Need) {
                Peek::Need => self.read(),
                Peek::Have(c) => c,
            };
            let Some(mut c) = start else {
                return Token::Eof;
            };
            while class(c) & WHITESPACE != 0 {
                // '\r' then '\n' counts as one line end; with end-of-line insignificant,
                // either way the next character is read.
                match self.read() {
                    Some(next) => c = next,
                    None => return Token::Eof,
                }
            }
            let ct = class(c);
            if ct & DIGIT != 0 {
                return self.number(c);
            }
            if ct & ALPHA != 0 {
                return self.word(c);
            }
            if ct & QUOTE != 0 {
                return self.quoted(c);
            }
            if c == '/' {
                // Comments: `/*...*/`, `//...`, and (as '/' is a comment character) '/'
                // followed by anything else, to the end of the line.
                match self.read() {
                    Some('*') => {
                        if !self.skip_block_comment() {
                            return Token::Eof;
                        }
                    }
                    _ => self.skip_line(),
                }
                continue;
            }
            return Token::Char(c);
        }
    }

    /// A number: Java parses its value; only that it was one matters here. A lone '-' is the
    /// character '-'.
    fn number(&mut self, first: char) -> Token {
        let mut c = Some(first);
        if first == '-' {
            c = self.read();
            if !matches!(c, Some('.' | '0'..='9')) {
                self.peek = Peek::Have(c);
                return Token::Char('-');
            }
        }
        let mut seen_dot = false;
        loop {
            match c {
                Some('.') if !seen_dot => seen_dot = true,
                Some('0'..='9') => {}
                _ => break,
            }
            c = self.read();
        }
        self.peek = Peek::Have(c);
        Token::Number
    }

    fn word(&mut self, first: char) -> Token {
        let mut word = String::from(first);
        loop {
            let c = self.read();
            match c {
                Some(ch) if class(ch) & (ALPHA | DIGIT) != 0 => word.push(ch),
                _ => {
                    self.peek = Peek::Have(c);
                    return Token::Word(word);
                }
            }
        }
    }

    /// A quoted string: ends at the same quote, or (unterminated) before a line end or at
    /// the end of input. Escapes: `\a \b \f \n \r \t \v`, octal `\0`-`\377`, and any other
    /// character stands for itself.
    fn quoted(&mut self, quote: char) -> Token {
        let mut text = String::new();
        let mut d = self.read();
        while let Some(ch) = d.filter(|&x| x != quote && x != '\n' && x != '\r') {
            let value;
            if ch == '\\' {
                let c = self.read();
                match c {
                    Some(first @ '0'..='7') => {
                        let mut v = u32::from(first) - u32::from('0');
                        let c2 = self.read();
                        match c2 {
                            Some(second @ '0'..='7') => {
                                v = (v << 3) + (u32::from(second) - u32::from('0'));
                                let c3 = self.read();
                                match c3 {
                                    // A third digit only after a first of 0-3 (\377 at most).
                                    Some(third @ '0'..='7') if first <= '3' => {
                                        v = (v << 3) + (u32::from(third) - u32::from('0'));
                                        d = self.read();
                                    }
                                    _ => d = c3,
                                }
                            }
                            _ => d = c2,
                        }
                        value = char::from_u32(v).unwrap_or('\u{fffd}');
                    }
                    other => {
                        value = match other {
                            Some('a') => '\u{7}',
                            Some('b') => '\u{8}',
                            Some('f') => '\u{c}',
                            Some('n') => '\n',
                            Some('r') => '\r',
                            Some('t') => '\t',
                            Some('v') => '\u{b}',
                            Some(x) => x,
                            // A backslash at the end of input: Java stores (char) -1.
                            None => '\u{ffff}',
                        };
                        d = self.read();
                    }
                }
            } else {
                value = ch;
                d = self.read();
            }
            text.push(value);
        }
        // The closing quote is consumed; a line end (or the end) is read again next time.
        self.peek = if d == Some(quote) {
            Peek::Need
        } else {
            Peek::Have(d)
        };
        Token::Quoted(quote, text)
    }

    /// Skips to the end of the line; the line end is read again by the next token.
    fn skip_line(&mut self) {
        loop {
            let c = self.read();
            if matches!(c, None | Some('\n' | '\r')) {
                self.peek = Peek::Have(c);
                return;
            }
        }
    }

    /// Skips a `/* */` comment (its opening already read) as Java does, including its quirk:
    /// the character after a line end is taken without being checked for the closing '/'.
    /// False at the end of input.
    fn skip_block_comment(&mut self) -> bool {
        let mut prev: Option<char> = None;
        loop {
            let mut c = self.read();
            if c == Some('/') && prev == Some('*') {
                return true;
            }
            if c == Some('\r') {
                c = self.read();
                if c == Some('\n') {
                    c = self.read();
                }
            } else if c == Some('\n') {
                c = self.read();
            }
            match c {
                None => return false,
                Some(_) => prev = c,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Token::{self, *};
    use super::Tokenizer;

    fn tokens(text: &str) -> Vec<Token> {
        let mut t = Tokenizer::new(text);
        let mut out = Vec::new();
        loop {
            match t.next_token() {
                Eof => return out,
                tok => out.push(tok),
            }
        }
    }

    fn word(s: &str) -> Token {
        Word(s.into())
    }

    #[test]
    fn words_numbers_and_characters() {
        assert_eq!(
            tokens("org.apache.Plain-Module_1$x required a=b;"),
            vec![
                word("org.apache.Plain-Module_1$x"),
                word("required"),
                word("a"),
                Char('='),
                word("b"),
                Char(';')
            ]
        );
        // A number has no text; '-' alone is a character; a word may hold digits and dots.
        assert_eq!(
            tokens("k=123 -x 1.2.3 -.5 x9.1"),
            vec![
                word("k"),
                Char('='),
                Number,
                Char('-'),
                word("x"),
                Number,
                Number,
                Number,
                word("x9.1")
            ]
        );
        assert_eq!(tokens("é漢{"), vec![word("é漢"), Char('{')]);
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(
            tokens(r#""a b" 'c"d' "\n\t\101\0a\477\q""#),
            vec![
                Quoted('"', "a b".into()),
                Quoted('\'', "c\"d".into()),
                Quoted('"', "\n\tA\0a\u{27}7q".into())
            ]
        );
        // Unterminated: ends at the line end, which is then whitespace.
        assert_eq!(
            tokens("\"open\nnext"),
            vec![Quoted('"', "open".into()), word("next")]
        );
        assert_eq!(tokens("\"x\\"), vec![Quoted('"', "x\u{ffff}".into())]);
    }

    #[test]
    fn comments() {
        assert_eq!(tokens("a // c\nb"), vec![word("a"), word("b")]);
        assert_eq!(tokens("a /* c\n */ b"), vec![word("a"), word("b")]);
        assert_eq!(tokens("a / c\nb"), vec![word("a"), word("b")]);
        assert_eq!(tokens("a /* never closed"), vec![word("a")]);
        // A word ends at '/', which starts a comment.
        assert_eq!(tokens("a/b\nc"), vec![word("a"), word("c")]);
        // After a line end inside a comment, the next character is never the closing '/'.
        assert_eq!(tokens("/* *\n/ x */ y"), vec![word("y")]);
    }
}
