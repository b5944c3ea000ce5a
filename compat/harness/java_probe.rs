//! Small Java programs that ask Kafka's own classes for facts (`compat/java/*.java`): compiled
//! with `javac` against the resolved Kafka classpath once per source change, under
//! `target/compat/kafka-<version>/java-probes/<hash>/`, and run with their input on stdin.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{run_command, Kafka, Output};

const COMPILE_TIMEOUT: Duration = Duration::from_secs(300);
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("compat/java")
}

fn java_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(sources())
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "java"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The compiled probes (compiled now if the sources changed).
fn classes(scratch: &Path) -> PathBuf {
    // One compile at a time in this process; other processes stage under their own pid.
    static COMPILING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = COMPILING.lock().unwrap_or_else(|p| p.into_inner());
    let kafka = Kafka::get();
    let files = java_files();
    assert!(
        !files.is_empty(),
        "no Java sources in {}",
        sources().display()
    );
    let mut hasher = DefaultHasher::new();
    kafka.classpath().hash(&mut hasher);
    for f in &files {
        f.file_name().hash(&mut hasher);
        fs::read(f).unwrap().hash(&mut hasher);
    }
    let root = kafka.cache_dir().join("java-probes");
    let dir = root.join(format!("{:016x}", hasher.finish()));
    let marker = dir.join(".complete");
    if marker.is_file() {
        return dir;
    }
    // Compiled aside and renamed into place, so that concurrent tests never see half of it.
    let staging = root.join(format!("staging-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).unwrap();
    let mut cmd = Command::new(kafka.javac());
    cmd.args(["-nowarn", "-encoding", "UTF-8", "-d"])
        .arg(&staging)
        .arg("-cp")
        .arg(kafka.classpath())
        .args(&files);
    let out = run_command(cmd, "javac <probes>".into(), None, COMPILE_TIMEOUT, scratch);
    assert!(out.success(), "cannot compile the Java probes:\n{out}");
    fs::write(staging.join(".complete"), b"").unwrap();
    if fs::rename(&staging, &dir).is_err() {
        let _ = fs::remove_dir_all(&staging);
        assert!(marker.is_file(), "{} missing", dir.display());
    }
    dir
}

/// Runs probe `main_class` with `args` and `stdin`; panics unless it succeeds.
pub fn run_probe(main_class: &str, args: &[&str], stdin: &str, scratch: &Path) -> Output {
    let kafka = Kafka::get();
    let classes = classes(scratch);
    let opts = vec!["-Xmx512m".to_string(), "-XX:+UseSerialGC".to_string()];
    let mut cmd = kafka.java_command(main_class, &kafka.tools_log4j_config(), &opts);
    cmd.env(
        "CLASSPATH",
        format!("{}:{}", classes.display(), kafka.classpath()),
    );
    cmd.args(args);
    let display = format!("java {main_class} {}", args.join(" "));
    let out = run_command(cmd, display, Some(stdin.as_bytes()), RUN_TIMEOUT, scratch);
    assert!(out.success(), "{out}");
    out
}
