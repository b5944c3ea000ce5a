//! A `sasl.jaas.config` value read as Kafka 4.4's `JaasConfig` reads it:
//! `<login module> <flag> (<option>=<value>)* ;`, once or more, with `StreamTokenizer`'s
//! words, quotes and comments ([`tokenizer`]). Option values are secrets (`user_alice="..."`,
//! `password="..."`): they are kept as [`Password`]s, which never print.

mod tokenizer;

use std::fmt;

use crate::server::config::Password;
use tokenizer::{Token, Tokenizer};

/// A login module's control flag (`LoginModuleControlFlag`); any case is accepted, as Java
/// upper-cases it first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlFlag {
    Required,
    Requisite,
    Sufficient,
    Optional,
}

impl ControlFlag {
    pub fn name(self) -> &'static str {
        match self {
            ControlFlag::Required => "required",
            ControlFlag::Requisite => "requisite",
            ControlFlag::Sufficient => "sufficient",
            ControlFlag::Optional => "optional",
        }
    }
}

/// One `<module> <flag> options;` entry (Java's `AppConfigurationEntry`).
#[derive(Clone, PartialEq, Eq)]
pub struct JaasEntry {
    pub login_module: String,
    pub flag: ControlFlag,
    /// Option names and values, each name once (a repeated name keeps its last value, as
    /// Java's `HashMap` does), in first-appearance order. A name is `None` where Java's is
    /// null: a token without text (a number, `=`) stood in its place.
    pub options: Vec<(Option<String>, Password)>,
}

impl JaasEntry {
    /// The value of option `key`.
    pub fn option(&self, key: &str) -> Option<&Password> {
        self.options
            .iter()
            .find(|(k, _)| k.as_deref() == Some(key))
            .map(|(_, v)| v)
    }
}

/// Names and flags only: values are secrets.
impl fmt::Debug for JaasEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self
            .options
            .iter()
            .map(|(k, _)| k.as_deref().unwrap_or("null"))
            .collect();
        write!(
            f,
            "{} {} (options {})",
            self.login_module,
            self.flag.name(),
            keys.join(", ")
        )
    }
}

/// Why a `sasl.jaas.config` value does not parse. Each case is one of Java's
/// `IllegalArgumentException`s, in the order Java checks them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JaasError {
    #[error("no login module: write `<module class> required <option>=\"<value>\" ...;`")]
    NoLoginModule,
    #[error("login module {module} has no control flag: follow it with required, requisite, sufficient or optional")]
    NoControlFlag { module: String },
    #[error("login module {module}: its control flag is not a word; write required, requisite, sufficient or optional")]
    ControlFlagNotAWord { module: String },
    #[error("login module {module}: invalid control flag '{flag}'; write required, requisite, sufficient or optional")]
    InvalidControlFlag { module: String, flag: String },
    #[error("login module {module}: no value for option '{name}'; write <option>=\"<value>\" (quote a value that is a number)", name = .key.as_deref().unwrap_or("null"))]
    NoValue { module: String, key: Option<String> },
    #[error(
        "login module {module}: the entry does not end with ';'; end each entry with a semicolon"
    )]
    NotTerminated { module: String },
    #[error("a login module name is missing or empty; each entry starts with the login module's class name")]
    EmptyLoginModule,
}

/// A parsed `sasl.jaas.config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasConfig {
    pub entries: Vec<JaasEntry>,
}

/// How an entry's module is shown in errors before it is known to be a name.
fn shown(module: &Option<String>) -> String {
    module.clone().unwrap_or_else(|| "null".to_string())
}

impl JaasConfig {
    pub fn parse(text: &str) -> Result<JaasConfig, JaasError> {
        let mut tokens = Tokenizer::new(text);
        let mut entries = Vec::new();
        loop {
            let first = tokens.next_token();
            if first == Token::Eof {
                break;
            }
            entries.push(entry(first, &mut tokens)?);
        }
        if entries.is_empty() {
            return Err(JaasError::NoLoginModule);
        }
        Ok(JaasConfig { entries })
    }
}

/// One entry, from its first token on (Java's `parseAppConfigurationEntry`).
fn entry(first: Token, tokens: &mut Tokenizer<'_>) -> Result<JaasEntry, JaasError> {
    let module = first.text().map(str::to_string);
    let flag_token = tokens.next_token();
    if flag_token == Token::Eof {
        return Err(JaasError::NoControlFlag {
            module: shown(&module),
        });
    }
    let Some(flag_text) = flag_token.text() else {
        return Err(JaasError::ControlFlagNotAWord {
            module: shown(&module),
        });
    };
    let flag = match flag_text.to_uppercase().as_str() {
        "REQUIRED" => ControlFlag::Required,
        "REQUISITE" => ControlFlag::Requisite,
        "SUFFICIENT" => ControlFlag::Sufficient,
        "OPTIONAL" => ControlFlag::Optional,
        _ => {
            return Err(JaasError::InvalidControlFlag {
                module: shown(&module),
                flag: flag_text.to_string(),
            })
        }
    };
    let mut options: Vec<(Option<String>, Password)> = Vec::new();
    let mut last;
    loop {
        last = tokens.next_token();
        if last == Token::Eof || last.is(';') {
            break;
        }
        let key = last.text().map(str::to_string);
        let value = if tokens.next_token().is('=') {
            match tokens.next_token() {
                Token::Eof => None,
                t => t.text().map(str::to_string),
            }
        } else {
            None
        };
        let Some(value) = value else {
            return Err(JaasError::NoValue {
                module: shown(&module),
                key,
            });
        };
        let value = Password::new(value);
        match options.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => options.push((key, value)),
        }
    }
    if !last.is(';') {
        return Err(JaasError::NotTerminated {
            module: shown(&module),
        });
    }
    // `AppConfigurationEntry`'s own check, last.
    let login_module = module
        .filter(|m| !m.is_empty())
        .ok_or(JaasError::EmptyLoginModule)?;
    Ok(JaasEntry {
        login_module,
        flag,
        options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> JaasEntry {
        let mut c = JaasConfig::parse(text).unwrap();
        assert_eq!(c.entries.len(), 1);
        c.entries.remove(0)
    }

    #[test]
    fn a_plain_module_with_users() {
        let e = one(
            "org.apache.kafka.common.security.plain.PlainLoginModule required \
             username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" \
             user_alice='alice;pw';",
        );
        assert_eq!(
            e.login_module,
            "org.apache.kafka.common.security.plain.PlainLoginModule"
        );
        assert_eq!(e.flag, ControlFlag::Required);
        assert_eq!(e.option("user_alice").unwrap().expose(), "alice;pw");
        assert_eq!(e.option("username").unwrap().expose(), "admin");
        assert!(e.option("user_bob").is_none());
        // Values never show.
        assert!(!format!("{e:?}").contains("secret"));
    }

    #[test]
    fn flags_any_case_several_modules_last_value_wins() {
        let c = JaasConfig::parse("A Sufficient; B OPTIONAL k=v k=w; C 'requisite';").unwrap();
        let flags: Vec<_> = c.entries.iter().map(|e| e.flag).collect();
        assert_eq!(
            flags,
            [
                ControlFlag::Sufficient,
                ControlFlag::Optional,
                ControlFlag::Requisite
            ]
        );
        assert_eq!(c.entries[1].options.len(), 1);
        assert_eq!(c.entries[1].option("k").unwrap().expose(), "w");
    }

    #[test]
    fn rejections_in_javas_order() {
        let err = |t: &str| JaasConfig::parse(t).unwrap_err();
        assert_eq!(err(""), JaasError::NoLoginModule);
        assert_eq!(err(" // only a comment"), JaasError::NoLoginModule);
        assert!(matches!(err("M"), JaasError::NoControlFlag { .. }));
        assert!(matches!(err("M 1;"), JaasError::ControlFlagNotAWord { .. }));
        assert!(matches!(
            err("M needed;"),
            JaasError::InvalidControlFlag { flag, .. } if flag == "needed"
        ));
        assert!(matches!(
            err("M required k=123;"),
            JaasError::NoValue { key: Some(k), .. } if k == "k"
        ));
        assert!(matches!(err("M required k v;"), JaasError::NoValue { .. }));
        assert!(matches!(
            err("M required k=v"),
            JaasError::NotTerminated { .. }
        ));
        // The module name is checked last, after the semicolon.
        assert_eq!(err("'' required;"), JaasError::EmptyLoginModule);
        assert_eq!(err("1 required;"), JaasError::EmptyLoginModule);
        assert!(matches!(err("1 required"), JaasError::NotTerminated { .. }));
    }

    #[test]
    fn a_name_without_text_is_null() {
        // `=` as a name, then `=` and a value: twice the null name, whose last value stays.
        let e = one("M required = = v = = w;");
        assert_eq!(e.options.len(), 1);
        assert_eq!(e.options[0].0, None);
        assert_eq!(e.options[0].1.expose(), "w");
        assert!(JaasConfig::parse("M required =v;").is_err());
        let e = one("M required 5=v;");
        assert_eq!(e.options[0].0, None);
    }
}
