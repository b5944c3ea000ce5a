//! A directive line as its name, positional words and `key=value` arguments, taken strictly: a
//! directive takes what it understands, and `finish` refuses whatever is left.

use std::collections::{BTreeMap, VecDeque};
use std::str::FromStr;

use crate::raft::types::NodeId;

/// A directed link `from -> to`.
pub type Link = (NodeId, NodeId);

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

    pub fn node(&mut self) -> Result<NodeId, String> {
        node(&self.word("a node (e.g. n1)")?)
    }

    pub fn link(&mut self) -> Result<Link, String> {
        link(&self.word("a link (e.g. n1->n2)")?)
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

/// `n3` -> 3.
pub fn node(word: &str) -> Result<NodeId, String> {
    word.strip_prefix('n')
        .and_then(|id| id.parse::<NodeId>().ok())
        .filter(|id| *id > 0)
        .ok_or_else(|| format!("`{word}` is not a node (e.g. n1)"))
}

/// `n1->n2` -> (1, 2).
pub fn link(word: &str) -> Result<Link, String> {
    let (from, to) = word
        .split_once("->")
        .ok_or_else(|| format!("`{word}` is not a link (e.g. n1->n2)"))?;
    let (from, to) = (node(from)?, node(to)?);
    if from == to {
        return Err(format!("`{word}` links a node to itself"));
    }
    Ok((from, to))
}

/// `n1:0,n2:400` -> [(1, "0"), (2, "400")].
pub fn per_node(key: &str, value: &str) -> Result<Vec<(NodeId, String)>, String> {
    value
        .split(',')
        .map(|entry| {
            let (n, v) = entry
                .split_once(':')
                .filter(|(_, v)| !v.is_empty())
                .ok_or_else(|| format!("`{key}`: `{entry}` is not node:value (e.g. n1:400)"))?;
            Ok((node(n)?, v.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_keys_are_taken_strictly() {
        let mut a = Args::parse("restart n2 election-jitter=300").unwrap();
        assert_eq!(a.name, "restart");
        assert_eq!(a.node(), Ok(2));
        assert_eq!(a.number::<u64>("election-jitter"), Ok(Some(300)));
        assert_eq!(a.finish(), Ok(()));

        let mut a = Args::parse("crash n2 n3 speed=9").unwrap();
        assert_eq!(a.node(), Ok(2));
        let err = a.finish().unwrap_err();
        assert!(err.contains("speed=9"), "{err}");
        assert!(Args::parse("tick x=1 x=2").unwrap_err().contains("twice"));
        assert!(Args::parse("tick =1").is_err());
    }

    #[test]
    fn nodes_and_links() {
        assert_eq!(link("n1->n3"), Ok((1, 3)));
        assert!(link("n1->n1").is_err());
        assert!(node("3").is_err());
        assert!(node("n0").is_err());
        assert_eq!(
            per_node("j", "n1:0,n2:400"),
            Ok(vec![(1, "0".into()), (2, "400".into())])
        );
        assert!(per_node("j", "n1=0").is_err());
    }
}
