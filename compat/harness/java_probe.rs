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

/// The `*.java` files of `sources`, compiled against the Kafka classpath into
/// `target/compat/kafka-<version>/<cache>/<hash of the sources>/` (compiled now if they
/// changed). Concurrent callers never see half a compile.
pub fn compile(sources: &Path, cache: &str, scratch: &Path) -> PathBuf {
    let files = java_files(sources);
    assert!(
        !files.is_empty(),
        "no Java sources in {}",
        sources.display()
    );
    compile_on(Kafka::get(), &files, cache, scratch)
}

/// [`compile`] of the source `files` against Kafka release `kafka`'s classpath, into its
/// [`Kafka::cache_dir`].
fn compile_on(kafka: &Kafka, files: &[PathBuf], cache: &str, scratch: &Path) -> PathBuf {
    // One compile at a time in this process; other processes stage under their own pid.
    static COMPILING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = COMPILING.lock().unwrap_or_else(|p| p.into_inner());
    let mut hasher = DefaultHasher::new();
    kafka.classpath().hash(&mut hasher);
    for f in files {
        f.file_name().hash(&mut hasher);
        fs::read(f)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()))
            .hash(&mut hasher);
    }
    let root = kafka.cache_dir().join(cache);
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
        .args(files);
    let what = format!("javac {files:?} (Kafka {})", kafka.version());
    let out = run_command(cmd, what.clone(), None, COMPILE_TIMEOUT, scratch);
    assert!(out.success(), "cannot compile {what}:\n{out}");
    fs::write(staging.join(".complete"), b"").unwrap();
    if dir.is_dir() && !marker.is_file() {
        // Left by an interrupted or older compile: replaced.
        let _ = fs::remove_dir_all(&dir);
    }
    if fs::rename(&staging, &dir).is_err() {
        let _ = fs::remove_dir_all(&staging);
        assert!(marker.is_file(), "{} missing", dir.display());
    }
    dir
}

/// The compiled classes of `compat/java` (compiled now if their sources changed).
pub fn probe_classes(scratch: &Path) -> PathBuf {
    compile(&sources(), "java-probes", scratch)
}

/// The class of program `main_class` (`compat/java/<main_class>.java`, which must need no other
/// source there) compiled alone against Kafka release `kafka`'s classpath: a program can then
/// run on a release other than [`Kafka::get`]'s, whose jars lack classes the other probes use.
pub(super) fn program_classes(kafka: &Kafka, main_class: &str, scratch: &Path) -> PathBuf {
    let source = sources().join(format!("{main_class}.java"));
    compile_on(kafka, &[source], "java-programs", scratch)
}

/// `main_class` of the classes in `classes` (with the Kafka classpath) at heap `xmx`.
pub fn java_command(classes: &Path, main_class: &str, xmx: &str, args: &[&str]) -> Command {
    java_command_on(Kafka::get(), classes, main_class, xmx, args)
}

/// [`java_command`] on Kafka release `kafka`'s classpath (and its class-data-sharing archive).
fn java_command_on(
    kafka: &Kafka,
    classes: &Path,
    main_class: &str,
    xmx: &str,
    args: &[&str],
) -> Command {
    let opts = vec![format!("-Xmx{xmx}"), "-XX:+UseSerialGC".to_string()];
    let mut cmd = kafka.java_command(main_class, &kafka.tools_log4j_config(), &opts);
    cmd.env(
        "CLASSPATH",
        // Kafka's jars first: the class-data-sharing archive matches a classpath by its prefix.
        format!("{}:{}", kafka.classpath(), classes.display()),
    );
    cmd.args(args);
    cmd
}

/// Runs probe `main_class` with `args` and `stdin`; panics unless it succeeds.
pub fn run_probe(main_class: &str, args: &[&str], stdin: &str, scratch: &Path) -> Output {
    let classes = probe_classes(scratch);
    let cmd = java_command(&classes, main_class, "512m", args);
    let display = format!("java {main_class} {}", args.join(" "));
    let out = run_command(cmd, display, Some(stdin.as_bytes()), RUN_TIMEOUT, scratch);
    assert!(out.success(), "{out}");
    out
}

/// Starts program `main_class` of `compat/java` in the background, its output logged in `dir`
/// as `<name>.log` (printed with the test's other logs if it fails).
pub fn spawn_program(
    main_class: &str,
    args: &[&str],
    dir: &super::TestDir,
    name: &str,
) -> super::ChildGuard {
    let classes = probe_classes(dir.path());
    let cmd = java_command(&classes, main_class, "512m", args);
    let log = dir.log_path(name);
    super::ChildGuard::spawn_logged(name, cmd, &log)
        .unwrap_or_else(|e| panic!("cannot start java {main_class}: {e}"))
}

/// A long-running program of `compat/java` that answers each line written to its stdin with
/// one line of JSON on its stdout (other output, such as client warnings, is not JSON). Its
/// JVM starts once, so each question costs only the work it asks for.
pub struct ProbeSession {
    guard: super::ChildGuard,
    stdin: std::process::ChildStdin,
    log: PathBuf,
    answered: usize,
}

impl ProbeSession {
    /// Starts `main_class` with `args`, its output logged in `dir` as `<name>.log`.
    pub fn start(
        main_class: &str,
        args: &[&str],
        dir: &super::TestDir,
        name: &str,
    ) -> ProbeSession {
        Self::start_on(Kafka::get(), main_class, args, dir, name)
    }

    /// [`Self::start`] on Kafka release `kafka`: the program (one self-contained source, see
    /// [`program_classes`]) compiled against and run on that release's jars.
    pub fn start_on(
        kafka: &Kafka,
        main_class: &str,
        args: &[&str],
        dir: &super::TestDir,
        name: &str,
    ) -> ProbeSession {
        let classes = program_classes(kafka, main_class, dir.path());
        let cmd = java_command_on(kafka, &classes, main_class, "256m", args);
        let log = dir.log_path(name);
        let (guard, stdin) = super::ChildGuard::spawn_logged_with_stdin(name, cmd, &log)
            .unwrap_or_else(|e| panic!("cannot start java {main_class}: {e}"));
        ProbeSession {
            guard,
            stdin,
            log,
            answered: 0,
        }
    }

    /// Writes `question` as a line and waits up to `timeout` for the answer.
    #[track_caller]
    pub fn ask(&mut self, question: &str, timeout: Duration) -> serde_json::Value {
        use std::io::Write;
        writeln!(self.stdin, "{question}")
            .and_then(|()| self.stdin.flush())
            .unwrap_or_else(|e| panic!("cannot write to {}: {e}", self.log.display()));
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let text = fs::read_to_string(&self.log).unwrap_or_default();
            let answers: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
            if let Some(answer) = answers.get(self.answered) {
                self.answered += 1;
                return serde_json::from_str(answer).unwrap_or_else(|e| {
                    panic!("{}: not JSON ({e}): {answer}", self.log.display())
                });
            }
            assert!(
                self.guard.is_running(),
                "{} exited before answering {question:?}",
                self.log.display()
            );
            assert!(
                std::time::Instant::now() < deadline,
                "{} did not answer {question:?} within {timeout:?}",
                self.log.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The lines in which a probe's output and kraftd's rendering of the same table differ, as
/// `line N: java | kraftd` entries (empty when they agree line for line).
pub fn line_differences(java: &str, ours: &str) -> Vec<String> {
    let (j, k): (Vec<&str>, Vec<&str>) = (java.lines().collect(), ours.lines().collect());
    (0..j.len().max(k.len()))
        .filter(|&i| j.get(i) != k.get(i))
        .map(|i| {
            format!(
                "line {i}:\n  java:   {:?}\n  kraftd: {:?}",
                j.get(i),
                k.get(i)
            )
        })
        .collect()
}
