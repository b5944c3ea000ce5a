//! The Java image dumper (`compat/image-dumper`): Kafka's own `MetadataBatchLoader` and
//! `MetadataImage` replaying a `__cluster_metadata-0` directory, printed as the canonical image
//! JSON of `compat/image-dumper/FORMAT.md`. It is the oracle kraftd's controller state is
//! compared with.
//!
//! The sources are compiled with `javac` against the resolved Kafka classpath into
//! `target/compat/kafka-<version>/image-dumper/<hash of the sources>/`, once per source change.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::kafka::Kafka;
use super::process::{run_command, try_run_command, Output};
use super::testdir::scratch_dir;
use super::tool_server::{servable, ToolServers};

/// The dumper's main class (default package).
pub const IMAGE_DUMPER_CLASS: &str = "ImageDumper";

/// Compiling takes a few seconds; a dump of a small log about one. Large synthesized logs take longer.
const COMPILE_TIMEOUT: Duration = Duration::from_secs(300);
const DUMP_TIMEOUT: Duration = Duration::from_secs(600);

/// Heap for large images (a million partitions); a short-lived tool, so C1 only and a serial GC.
const DUMPER_JVM_OPTS: &[&str] = &[
    "-Xmx2g",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
];

/// `compat/image-dumper` in this checkout.
pub fn image_dumper_sources_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("compat")
        .join("image-dumper")
}

/// Java's image of the whole log in `log_dir`, or of the log up to offset `at` (the image after
/// every batch whose last offset is <= `at`), starting from the newest snapshot that fits.
/// Panics, with the dumper's stderr, if it fails.
pub fn dump_java_image(log_dir: &Path, at: Option<i64>) -> Value {
    let dir = path_arg(log_dir);
    let at_text = at.map(|at| at.to_string());
    let mut args = vec![dir];
    if let Some(at) = &at_text {
        args.extend(["--at", at.as_str()]);
    }
    parse_dump(&run_image_dumper(&args))
}

/// Java's image of one `.checkpoint` snapshot file alone.
pub fn dump_java_snapshot(snapshot: &Path) -> Value {
    parse_dump(&run_image_dumper(&["--snapshot", path_arg(snapshot)]))
}

/// Java's image of `snapshot` followed by the batches of `log_dir` after it (up to `at`).
pub fn dump_java_image_from_snapshot(log_dir: &Path, snapshot: &Path, at: Option<i64>) -> Value {
    let at_text = at.map(|at| at.to_string());
    let mut args = vec![path_arg(log_dir), "--snapshot", path_arg(snapshot)];
    if let Some(at) = &at_text {
        args.extend(["--at", at.as_str()]);
    }
    parse_dump(&run_image_dumper(&args))
}

/// What a Java 4.4 controller running with the properties file `config` answers to a
/// DescribeConfigs request, given the metadata log `log_dir` it replayed
/// (`ConfigsDescriber.java`, Kafka's own `ConfigHelper`): Kafka's JSON of the response at
/// `version`, with the image up to offset `at`. `resources` are (type, name, configuration
/// keys).
pub fn describe_configs_offline(
    log_dir: &Path,
    config: &Path,
    at: i64,
    version: i16,
    include_synonyms: bool,
    include_documentation: bool,
    resources: &[(i8, String, Option<Vec<String>>)],
) -> Value {
    let (version_text, at_text) = (version.to_string(), at.to_string());
    let mut args = vec![
        path_arg(log_dir),
        path_arg(config),
        "--version",
        version_text.as_str(),
        "--at",
        at_text.as_str(),
    ];
    if include_synonyms {
        args.push("--synonyms");
    }
    if include_documentation {
        args.push("--documentation");
    }
    let stdin: String = resources
        .iter()
        .map(|(ty, name, keys)| match keys {
            Some(keys) => format!("{ty}\t{name}\t{}\n", keys.join(",")),
            None => format!("{ty}\t{name}\n"),
        })
        .collect();
    let out = run_java_class(CONFIGS_DESCRIBER_CLASS, &args, Some(stdin.as_bytes()));
    parse_dump(&out)
}

/// The DescribeConfigs oracle's main class (default package, beside the dumper).
const CONFIGS_DESCRIBER_CLASS: &str = "ConfigsDescriber";

/// Runs the dumper with raw arguments (compiling it first if needed); the result may be a failure.
pub fn run_image_dumper(args: &[&str]) -> Output {
    run_java_class(IMAGE_DUMPER_CLASS, args, None)
}

/// Runs `class` of the dumper's sources with `args` and `stdin`: on a long-lived dumper JVM
/// (`tool_server.rs`) when it reads no stdin, else in a JVM of its own.
fn run_java_class(class: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let kafka = Kafka::get();
    let classes = compiled_dumper();
    let opts: Vec<String> = DUMPER_JVM_OPTS.iter().map(|s| s.to_string()).collect();
    let display = format!("java {class} {}", args.join(" "));
    if servable(class, stdin, &[]) {
        static SERVERS: OnceLock<ToolServers> = OnceLock::new();
        return SERVERS
            .get_or_init(|| ToolServers::with_classes(classes.to_path_buf(), opts))
            .run(kafka, class, args, DUMP_TIMEOUT, display);
    }
    let mut cmd = kafka.java_command(class, &kafka.tools_log4j_config(), &opts);
    cmd.env(
        "CLASSPATH",
        // Kafka's jars first: the class-data-sharing archive matches a classpath by its prefix.
        format!("{}:{}", kafka.classpath(), classes.display()),
    );
    cmd.args(args);
    run_command(cmd, display, stdin, DUMP_TIMEOUT, &scratch_dir())
}

#[track_caller]
fn parse_dump(out: &Output) -> Value {
    assert!(
        out.success(),
        "the Java image dumper failed; its stderr says why:\n{out}"
    );
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!("the Java image dumper printed something that is not JSON ({e}):\n{out}")
    })
}

fn path_arg(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("{} is not UTF-8", path.display()))
}

/// The directory of compiled dumper classes for the current sources, compiled on first use.
fn compiled_dumper() -> &'static Path {
    static CLASSES: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match CLASSES.get_or_init(compile) {
        Ok(dir) => dir,
        Err(message) => panic!("compat harness: cannot build the Java image dumper: {message}"),
    }
}

fn compile() -> Result<PathBuf, String> {
    let kafka = Kafka::get();
    let sources = java_sources()?;
    let mut hasher = DefaultHasher::new();
    kafka.version().hash(&mut hasher);
    kafka.classpath().hash(&mut hasher);
    for source in &sources {
        source.file_name().hash(&mut hasher);
        fs::read(source)
            .map_err(|e| format!("cannot read {}: {e}", source.display()))?
            .hash(&mut hasher);
    }
    let root = kafka.cache_dir().join("image-dumper");
    let classes = root.join(format!("{:016x}", hasher.finish()));
    if classes
        .join(format!("{IMAGE_DUMPER_CLASS}.class"))
        .is_file()
    {
        return Ok(classes);
    }
    // Compile into a private directory and rename it into place, so that concurrent test
    // binaries never run half-written classes.
    let staging = root.join(format!("staging-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging)
        .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    let mut cmd = Command::new(kafka.javac());
    cmd.args(["-Xlint:all", "-Werror", "-encoding", "UTF-8", "-d"])
        .arg(&staging)
        .arg("-cp")
        .arg(kafka.classpath())
        .args(&sources);
    let display = format!(
        "{} -d {} <Kafka classpath> compat/image-dumper/*.java",
        kafka.javac().display(),
        staging.display()
    );
    let out = try_run_command(cmd, &display, None, COMPILE_TIMEOUT, &scratch_dir()).map_err(|e| {
        format!("cannot run `{display}` ({e}); install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME")
    })?;
    if !out.success() {
        let _ = fs::remove_dir_all(&staging);
        return Err(format!(
            "javac failed on {}; fix the sources (or install a JDK 17 javac, or set JAVA_HOME):\n{out}",
            image_dumper_sources_dir().display()
        ));
    }
    if let Err(e) = fs::rename(&staging, &classes) {
        let _ = fs::remove_dir_all(&staging);
        // Another test binary won the race: its classes are the same.
        if !classes
            .join(format!("{IMAGE_DUMPER_CLASS}.class"))
            .is_file()
        {
            return Err(format!(
                "cannot move {} to {}: {e}",
                staging.display(),
                classes.display()
            ));
        }
    }
    Ok(classes)
}

fn java_sources() -> Result<Vec<PathBuf>, String> {
    let dir = image_dumper_sources_dir();
    let mut sources: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "java"))
        .collect();
    sources.sort();
    if sources.is_empty() {
        return Err(format!("no .java files in {}", dir.display()));
    }
    Ok(sources)
}
