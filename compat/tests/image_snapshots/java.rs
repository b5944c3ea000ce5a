//! The Java program these tests run beside the image dumper (which the harness compiles and
//! runs: compat/harness/image_dumper.rs): `AdminWorkload.java` beside this file, compiled with
//! `javac` against the resolved Kafka classpath once per source change, under
//! `target/compat/kafka-<version>/java-helpers/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::java_probe::{compile, java_command};
use crate::harness::{run_command, Output};

const RUN_TIMEOUT: Duration = Duration::from_secs(600);

fn workload_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("compat/tests/image_snapshots")
}

/// Runs `main_class` of the helpers with `args`.
pub fn run(main_class: &str, args: &[&str], scratch: &Path) -> Output {
    let classes = compile(&workload_sources(), "java-helpers", scratch);
    let cmd = java_command(&classes, main_class, "2g", args);
    let display = format!("java {main_class} {}", args.join(" "));
    run_command(cmd, display, None, RUN_TIMEOUT, scratch)
}
