//! `kraftd storage-info -c <config>`: what `kafka-storage.sh info -c <config>` prints (Kafka
//! 4.4): the log directories found, the metadata of the first formatted one, and any problems
//! (missing, unformatted, unreadable or mismatched directories), exiting 1 when there are some.

use std::path::PathBuf;

use clap::Args;

use crate::log::meta_properties::{MetaProperties, MetaPropertiesError};

#[derive(Debug, Args, PartialEq, Eq)]
pub struct StorageInfoArgs {
    /// The node's configuration (server.properties)
    #[arg(short = 'c', long = "config", value_name = "CONFIG")]
    pub config: PathBuf,
}

/// Runs the command: prints the report, returns the exit code.
pub fn run(args: &StorageInfoArgs) -> Result<i32, super::LoadConfigError> {
    let config = super::load_config(&args.config)?;
    let dirs = super::format::all_dirs(&config);
    let (text, problems) = report(&dirs, config.node_id);
    print!("{text}");
    Ok(if problems { 1 } else { 0 })
}

/// The report's text and whether it found problems.
pub fn report(dirs: &[PathBuf], node_id: i32) -> (String, bool) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut metas: Vec<(PathBuf, MetaProperties)> = Vec::new();
    // Java walks the directories in sorted order (a TreeSet).
    let mut dirs = dirs.to_vec();
    dirs.sort();
    for dir in &dirs {
        if !dir.exists() {
            problems.push(format!("{} does not exist", dir.display()));
            continue;
        }
        if !dir.is_dir() {
            problems.push(format!("{} is not a directory", dir.display()));
            continue;
        }
        found.push(dir.clone());
        match MetaProperties::read_from_dir(dir) {
            Ok(meta) => metas.push((dir.clone(), meta)),
            Err(MetaPropertiesError::Missing { .. }) => {
                problems.push(format!("{} is not formatted.", dir.display()))
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    let ids = |get: &dyn Fn(&MetaProperties) -> Option<String>| {
        let mut seen: Vec<Option<String>> = metas.iter().map(|(_, m)| get(m)).collect();
        seen.dedup();
        seen.len() > 1
    };
    if ids(&|m| m.cluster_id.clone()) {
        problems.push("Mismatched cluster IDs between storage directories.".into());
    }
    if ids(&|m| m.node_id.map(|n| n.to_string())) {
        problems.push("Mismatched node IDs between storage directories.".into());
    }
    for (dir, meta) in &metas {
        if meta.version == 0 {
            problems.push(format!(
                "{} is formatted for ZooKeeper mode (meta.properties version 0); a KRaft \
                 controller needs version 1",
                dir.display()
            ));
        } else if meta.node_id.is_some_and(|n| n != node_id) {
            problems.push(format!(
                "{} belongs to node {}, but node.id is {node_id}",
                dir.join("meta.properties").display(),
                meta.node_id.unwrap_or(-1)
            ));
        }
    }
    let mut out = String::new();
    if !found.is_empty() {
        out.push_str(if found.len() == 1 {
            "Found log directory:\n"
        } else {
            "Found log directories:\n"
        });
        for d in &found {
            out.push_str(&format!("  {}\n", d.display()));
        }
        out.push('\n');
    }
    if let Some((_, meta)) = metas.first() {
        out.push_str(&format!("Found metadata: {}\n\n", describe(meta)));
    }
    if !problems.is_empty() {
        out.push_str(if problems.len() == 1 {
            "Found problem:\n"
        } else {
            "Found problems:\n"
        });
        for p in &problems {
            out.push_str(&format!("  {p}\n"));
        }
        out.push('\n');
    }
    (out, !problems.is_empty())
}

/// `{cluster.id=..., directory.id=..., node.id=1, version=1}`, keys sorted, as Java prints.
fn describe(meta: &MetaProperties) -> String {
    let mut kv: Vec<(String, String)> = Vec::new();
    if let Some(c) = &meta.cluster_id {
        kv.push(("cluster.id".into(), c.clone()));
    }
    if let Some(d) = &meta.directory_id {
        kv.push(("directory.id".into(), d.to_string()));
    }
    if let Some(n) = meta.node_id {
        let key = if meta.version == 0 {
            "broker.id"
        } else {
            "node.id"
        };
        kv.push((key.into(), n.to_string()));
    }
    kv.push(("version".into(), meta.version.to_string()));
    kv.sort();
    let items: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_like_kafka_storage_info() {
        let root = std::env::temp_dir().join(format!("kraftd-info-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (a, b) = (root.join("a"), root.join("b"));
        let (text, bad) = report(std::slice::from_ref(&a), 1);
        assert!(bad);
        assert_eq!(
            text,
            format!("Found problem:\n  {} does not exist\n\n", a.display())
        );
        std::fs::create_dir_all(&a).unwrap();
        let (text, bad) = report(std::slice::from_ref(&a), 1);
        assert!(bad && text.contains("is not formatted."), "{text}");
        MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 1, None)
            .write_to_dir(&a)
            .unwrap();
        let (text, bad) = report(std::slice::from_ref(&a), 1);
        assert!(!bad, "{text}");
        assert_eq!(
            text,
            format!(
                "Found log directory:\n  {}\n\nFound metadata: {{cluster.id=MkU3OEVBNTcwNTJENDM2Qg, \
                 node.id=1, version=1}}\n\n",
                a.display()
            )
        );
        std::fs::create_dir_all(&b).unwrap();
        MetaProperties::v1("other", 1, None)
            .write_to_dir(&b)
            .unwrap();
        let (text, bad) = report(&[a, b], 1);
        assert!(bad && text.contains("Mismatched cluster IDs"), "{text}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
