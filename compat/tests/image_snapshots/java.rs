//! The Java program these tests run beside the image dumper (which the harness compiles and
//! runs: compat/harness/image_dumper.rs): `AdminWorkload.java` beside this file, compiled with
//! `javac` against the resolved Kafka classpath once per source change, under
//! `target/compat/kafka-<version>/java-helpers/`.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::harness::{run_command, Kafka, Output};

const COMPILE_TIMEOUT: Duration = Duration::from_secs(300);
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

fn workload_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("compat/tests/image_snapshots")
}

fn javac() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) => Path::new(&home).join("bin/javac"),
        None => PathBuf::from("javac"),
    }
}

fn java_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
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

/// Compiles the workload (once per source change).
fn classes(scratch: &Path) -> PathBuf {
    let kafka = Kafka::get();
    let sources = java_files(&workload_sources());
    assert!(
        !sources.is_empty(),
        "no Java sources in {}",
        workload_sources().display()
    );
    let mut hasher = DefaultHasher::new();
    kafka.classpath().hash(&mut hasher);
    for s in &sources {
        s.file_name().hash(&mut hasher);
        fs::read(s).unwrap().hash(&mut hasher);
    }
    let root = kafka.cache_dir().join("java-helpers");
    let dir = root.join(format!("{:016x}", hasher.finish()));
    if dir.join("AdminWorkload.class").is_file() {
        return dir;
    }
    // Compiled aside and renamed into place, so that concurrent tests never see half of it.
    let staging = root.join(format!("staging-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).unwrap();
    let mut cmd = Command::new(javac());
    cmd.args(["-nowarn", "-encoding", "UTF-8", "-d"])
        .arg(&staging)
        .arg("-cp")
        .arg(kafka.classpath())
        .args(&sources);
    let out = run_command(
        cmd,
        "javac <helpers>".into(),
        None,
        COMPILE_TIMEOUT,
        scratch,
    );
    assert!(out.success(), "cannot compile the Java helpers:\n{out}");
    if fs::rename(&staging, &dir).is_err() {
        let _ = fs::remove_dir_all(&staging);
        assert!(
            dir.join("AdminWorkload.class").is_file(),
            "{} missing",
            dir.display()
        );
    }
    dir
}

/// Runs `main_class` of the helpers with `args`.
pub fn run(main_class: &str, args: &[&str], scratch: &Path) -> Output {
    let kafka = Kafka::get();
    let classes = classes(scratch);
    let opts = vec!["-Xmx2g".to_string(), "-XX:+UseSerialGC".to_string()];
    let mut cmd = kafka.java_command(main_class, &kafka.tools_log4j_config(), &opts);
    cmd.env(
        "CLASSPATH",
        format!("{}:{}", classes.display(), kafka.classpath()),
    );
    cmd.args(args);
    let display = format!("java {main_class} {}", args.join(" "));
    run_command(cmd, display, None, RUN_TIMEOUT, scratch)
}
