//! The directive arguments of the raft scenario scripts (`kraftd::raft::sim::script::args`),
//! and what only the controller's directives name: a topic's partition.

pub use kraftd::raft::sim::script::args::{id_list, Args};

/// `foo-2` -> ("foo", 2).
pub fn topic_partition(word: &str) -> Result<(String, i32), String> {
    word.rsplit_once('-')
        .and_then(|(t, p)| Some((t.to_string(), p.parse().ok()?)))
        .filter(|(t, _)| !t.is_empty())
        .ok_or_else(|| format!("`{word}` is not a partition (e.g. foo-0)"))
}
