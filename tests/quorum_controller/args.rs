//! A directive line as its name, positional words and `key=value` arguments, taken strictly: a
//! directive takes what it understands, and `finish` refuses whatever is left.

use std::collections::{BTreeMap, VecDeque};
use std::str::FromStr;

#[derive(Debug)]
pub struct Args {
    pub name: String,
    words: VecDeque<String>,
    keys: BTreeMap<String, String>,
}

impl Args {
    pub fn parse(line: &str) -> Result<Args, String> {
        let mut tokens = line.split_whitespace();
        let name = tokens.next().ok_or("empty directive")?.to_string();
        let (mut words, mut keys) = (VecDeque::new(), BTreeMap::new());
        for token in tokens {
            match token.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    if keys.insert(k.to_string(), v.to_string()).is_some() {
                        return Err(format!("`{k}` is given twice"));
                    }
                }
                Some(_) => return Err(format!("malformed argument `{token}`")),
                None => words.push_back(token.to_string()),
            }
        }
        Ok(Args { name, words, keys })
    }

    /// The next positional word.
    pub fn word(&mut self, what: &str) -> Result<String, String> {
        self.words
            .pop_front()
            .ok_or_else(|| format!("`{}` needs {what}", self.name))
    }

    /// Whether the positional word `flag` is given (taken if so).
    pub fn flag(&mut self, flag: &str) -> bool {
        match self.words.iter().position(|w| w == flag) {
            Some(i) => {
                self.words.remove(i);
                true
            }
            None => false,
        }
    }

    /// The next positional word as a number.
    pub fn id(&mut self, what: &str) -> Result<i32, String> {
        let w = self.word(what)?;
        w.parse()
            .map_err(|_| format!("`{}`: `{w}` is not {what}", self.name))
    }

    pub fn key(&mut self, key: &str) -> Option<String> {
        self.keys.remove(key)
    }

    /// `key=<number>`, if given.
    pub fn number<T: FromStr>(&mut self, key: &str) -> Result<Option<T>, String> {
        self.key(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("`{key}={v}`: `{v}` is not a valid number here"))
            })
            .transpose()
    }

    /// `key=1,2,3`, if given (`key=` is the empty list).
    pub fn ids(&mut self, key: &str) -> Result<Option<Vec<i32>>, String> {
        self.key(key).map(|v| id_list(key, &v)).transpose()
    }

    /// Every `key=value` whose key satisfies `pick`, taken, in key order.
    pub fn take_keys(&mut self, pick: impl Fn(&str) -> bool) -> Vec<(String, String)> {
        let picked: Vec<String> = self.keys.keys().filter(|k| pick(k)).cloned().collect();
        picked
            .into_iter()
            .map(|k| {
                let v = self.keys.remove(&k).expect("picked");
                (k, v)
            })
            .collect()
    }

    /// Every positional word not taken yet.
    pub fn rest(&mut self) -> Vec<String> {
        self.words.drain(..).collect()
    }

    /// Fails on any word or key nobody took.
    pub fn finish(self) -> Result<(), String> {
        if let Some((k, v)) = self.keys.iter().next() {
            return Err(format!("`{}` takes no argument `{k}={v}`", self.name));
        }
        if let Some(w) = self.words.front() {
            return Err(format!("`{}` takes no argument `{w}`", self.name));
        }
        Ok(())
    }
}

/// `1,2,3` -> [1, 2, 3]; the empty string is the empty list.
pub fn id_list(key: &str, value: &str) -> Result<Vec<i32>, String> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    value
        .split(',')
        .map(|n| {
            n.parse()
                .map_err(|_| format!("`{key}={value}`: `{n}` is not a number"))
        })
        .collect()
}

/// `foo-2` -> ("foo", 2).
pub fn topic_partition(word: &str) -> Result<(String, i32), String> {
    word.rsplit_once('-')
        .and_then(|(t, p)| Some((t.to_string(), p.parse().ok()?)))
        .filter(|(t, _)| !t.is_empty())
        .ok_or_else(|| format!("`{word}` is not a partition (e.g. foo-0)"))
}
