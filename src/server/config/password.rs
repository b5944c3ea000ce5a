//! A secret from the configuration (Kafka's `Password` type): never shown by `Debug` or
//! `Display`, so that a config dumped to a log or put in an error never carries it.

use std::fmt;

/// A password, key or other secret value. Shown as `[hidden]`, as Kafka shows its `PASSWORD`
/// configs; [`Password::expose`] is the one way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn new(value: impl Into<String>) -> Password {
        Password(value.into())
    }

    /// The secret itself, for the code that must use it (a key store's decryption).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[hidden]")
    }
}

impl fmt::Display for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[hidden]")
    }
}

#[cfg(test)]
mod tests {
    use super::Password;

    #[test]
    fn never_shown() {
        let p = Password::new("s3cret");
        assert_eq!(
            format!("{p} {p:?} {:?}", Some(&p)),
            "[hidden] [hidden] Some([hidden])"
        );
        assert_eq!(p.expose(), "s3cret");
    }
}
