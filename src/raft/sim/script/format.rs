//! The file format of scenario scripts, after cockroachdb/datadriven: a directive line, a
//! `----` line, then the output the directive is expected to print, up to a blank line or the
//! end of the file. Blank lines and lines starting with `#` between cases are comments, kept
//! verbatim when the outputs are rewritten.

pub const SEPARATOR: &str = "----";

/// One directive and what the file expects it to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The comment and blank lines before the directive, verbatim.
    pub prelude: Vec<String>,
    /// 1-based line number of the directive.
    pub line: usize,
    pub directive: String,
    /// Never contains a blank line (a blank line ends the block).
    pub expected: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub cases: Vec<Case>,
    /// Comment and blank lines after the last case.
    pub epilogue: Vec<String>,
}

fn is_comment(line: &str) -> bool {
    let line = line.trim();
    line.is_empty() || line.starts_with('#')
}

impl Script {
    /// Splits a script into cases; `Err((line, why))` for a directive without `----`.
    pub fn parse(text: &str) -> Result<Script, (usize, String)> {
        let mut cases = Vec::new();
        let mut prelude = Vec::new();
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).peekable();
        while let Some((line, directive)) = lines.next() {
            if is_comment(directive) {
                prelude.push(directive.to_string());
                continue;
            }
            let directive = directive.trim();
            if directive == SEPARATOR {
                return Err((line, format!("`{SEPARATOR}` without a directive")));
            }
            if lines.next_if(|(_, l)| l.trim_end() == SEPARATOR).is_none() {
                return Err((
                    line,
                    format!("`{directive}` is not followed by a `{SEPARATOR}` line"),
                ));
            }
            let mut expected = Vec::new();
            while let Some((_, out)) = lines.next_if(|(_, l)| !l.trim().is_empty()) {
                expected.push(out.to_string());
            }
            lines.next_if(|(_, l)| l.trim().is_empty()); // the blank line that ends the block
            cases.push(Case {
                prelude: std::mem::take(&mut prelude),
                line,
                directive: directive.to_string(),
                expected,
            });
        }
        Ok(Script {
            cases,
            epilogue: prelude,
        })
    }

    /// The script with `outputs[i]` as the output of case `i` (cases without one keep theirs).
    pub fn render(&self, outputs: &[Vec<String>]) -> String {
        let mut text = String::new();
        let mut push = |line: &str| {
            text.push_str(line);
            text.push('\n');
        };
        for (i, case) in self.cases.iter().enumerate() {
            case.prelude.iter().for_each(|l| push(l));
            push(&case.directive);
            push(SEPARATOR);
            let output = outputs.get(i).unwrap_or(&case.expected);
            output.iter().for_each(|l| push(l));
            if i + 1 < self.cases.len() || !self.epilogue.is_empty() {
                push("");
            }
        }
        self.epilogue.iter().for_each(|l| push(l));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "# a comment\n\ntick 10\n----\nt=5 n1: x\nt=6 n2: y\n\n# two\nheal\n----\nok\n";

    #[test]
    fn parses_cases_with_their_comments_and_lines() {
        let s = Script::parse(TEXT).unwrap();
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.cases[0].prelude, ["# a comment", ""]);
        assert_eq!(s.cases[0].line, 3);
        assert_eq!(s.cases[0].expected, ["t=5 n1: x", "t=6 n2: y"]);
        assert_eq!(s.cases[1].prelude, ["# two"]);
        assert_eq!(s.cases[1].directive, "heal");
        assert_eq!(s.cases[1].line, 9);
    }

    #[test]
    fn renders_back_byte_for_byte_and_replaces_outputs() {
        let s = Script::parse(TEXT).unwrap();
        assert_eq!(s.render(&[]), TEXT);
        let new = s.render(&[vec!["ok".into()], vec!["done".into()]]);
        assert_eq!(Script::parse(&new).unwrap().cases[0].expected, ["ok"]);
        assert!(new.ends_with("heal\n----\ndone\n"), "{new}");
    }

    #[test]
    fn a_directive_needs_its_separator() {
        assert_eq!(Script::parse("tick 10\nheal\n").unwrap_err().0, 1);
        assert_eq!(Script::parse("# c\n----\n").unwrap_err().0, 2);
    }
}
