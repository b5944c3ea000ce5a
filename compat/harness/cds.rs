//! A class-data-sharing archive of the Kafka classes that servers and tools load, so that the
//! hundreds of JVMs a compat run starts map those classes instead of loading, parsing and
//! verifying them each time (a tool's start-up costs about half the CPU with it). It changes
//! nothing Kafka does: the JVM checks the archive against the classpath and the jars, and
//! ignores it when they differ.
//!
//! The archive is trained once per Kafka release and Java: a combined broker and controller is
//! formatted and started, the tools the tests use run against it, and the classes every JVM
//! loaded become `target/compat/kafka-<version>/kafka.jsa`. A failed training is reported and
//! the run goes on without an archive (slower, never different).

use super::kafka::{main_class_in, Tool};
use super::ports::free_port;
use super::process::{try_run_command, ChildGuard};
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// How long the trained broker may take to serve its first tool request.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// JVM options that use `archive`; `-Xlog:cds=off` keeps a stale archive's warnings out of the
/// tools' stdout (the JVM then just loads classes as usual).
pub fn jvm_opts(archive: &Path) -> [String; 2] {
    [
        format!("-XX:SharedArchiveFile={}", archive.display()),
        "-Xlog:cds=off,cds+dynamic=off".to_string(),
    ]
}

/// The archive for `classpath` (whose jars hold `classes`) and `java` (which printed
/// `java_version` for `-version`) in `cache_dir`, trained now unless one for the same jars and
/// Java is there. `None` (said on stderr) when training fails.
pub fn archive(
    java: &Path,
    java_version: &str,
    classpath: &str,
    classes: &HashSet<String>,
    cache_dir: &Path,
) -> Option<PathBuf> {
    let archive = cache_dir.join("kafka.jsa");
    let stamp_file = cache_dir.join("kafka.jsa.stamp");
    let stamp = stamp(java_version, classpath);
    if archive.is_file() && fs::read_to_string(&stamp_file).ok().as_deref() == Some(&stamp) {
        return Some(archive);
    }
    let started = Instant::now();
    say(&format!(
        "training a class-data-sharing archive of Kafka's classes in {} (once per release and Java)",
        cache_dir.display()
    ));
    match train(java, classpath, classes, cache_dir, &archive) {
        Ok(()) => {
            if let Err(e) = fs::write(&stamp_file, &stamp) {
                say(&format!(
                    "cannot write {}: {e}; the archive is retrained next run",
                    stamp_file.display()
                ));
            }
            say(&format!(
                "class-data-sharing archive {} ready in {:.0?}",
                archive.display(),
                started.elapsed()
            ));
            Some(archive)
        }
        Err(e) => {
            say(&format!(
                "no class-data-sharing archive ({e}); JVMs load Kafka's classes as usual"
            ));
            None
        }
    }
}

/// What the archive was made from: Java's version, and every jar with its size and mtime.
fn stamp(java_version: &str, classpath: &str) -> String {
    let mut s = java_version.to_string();
    for jar in classpath.split(':') {
        let meta = fs::metadata(jar).ok();
        let size = meta.as_ref().map_or(0, |m| m.len());
        let mtime = meta
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        s.push_str(&format!("{jar} {size} {mtime}\n"));
    }
    s
}

/// Runs the training workload, each JVM listing the classes it loads, then dumps the archive.
fn train(
    java: &Path,
    classpath: &str,
    classes: &HashSet<String>,
    cache_dir: &Path,
    archive: &Path,
) -> Result<(), String> {
    let dir = cache_dir.join(format!("cds-training-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = Training::new(java, classpath, classes, &dir).run(archive);
    if result.is_ok() {
        let _ = fs::remove_dir_all(&dir);
    }
    result.map_err(|e| format!("{e}; its files are in {}", dir.display()))
}

struct Training<'a> {
    java: &'a Path,
    classpath: &'a str,
    classes: &'a HashSet<String>,
    dir: &'a Path,
    lists: Vec<PathBuf>,
}

impl<'a> Training<'a> {
    fn new(
        java: &'a Path,
        classpath: &'a str,
        classes: &'a HashSet<String>,
        dir: &'a Path,
    ) -> Self {
        Training {
            java,
            classpath,
            classes,
            dir,
            lists: Vec::new(),
        }
    }

    /// A JVM running `tool`'s main class in these jars that lists the classes it loads in `<name>.classes`.
    fn jvm(&mut self, name: &str, tool: Tool, args: &[&str]) -> Result<Command, String> {
        let main_class = main_class_in(self.classes, tool)
            .ok_or_else(|| format!("no main class of {tool:?} in these jars"))?;
        let list = self.dir.join(format!("{name}.classes"));
        let mut cmd = Command::new(self.java);
        cmd.env("CLASSPATH", self.classpath)
            .arg("-Xmx512m")
            .arg("-XX:+UseSerialGC")
            .arg(format!("-XX:DumpLoadedClassList={}", list.display()))
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                self.dir.join("log4j2.properties").display()
            ))
            .arg(main_class)
            .args(args);
        self.lists.push(list);
        Ok(cmd)
    }

    fn tool(&mut self, name: &str, tool: Tool, args: &[&str]) -> Result<bool, String> {
        let cmd = self.jvm(name, tool, args)?;
        let out = try_run_command(cmd, name, None, Duration::from_secs(90), self.dir)
            .map_err(|e| format!("cannot run {name}: {e}"))?;
        Ok(out.success())
    }

    fn run(mut self, archive: &Path) -> Result<(), String> {
        let (broker, controller) = (free_port(), free_port());
        let props = self.dir.join("server.properties");
        let data = self.dir.join("data");
        write(
            &self.dir.join("log4j2.properties"),
            "rootLogger.level=WARN\nrootLogger.appenderRef.out.ref=OUT\nappender.out.type=Console\nappender.out.name=OUT\nappender.out.layout.type=PatternLayout\nappender.out.layout.pattern=%m%n\n",
        )?;
        write(
            &props,
            &format!(
                "process.roles=broker,controller\nnode.id=1\n\
                 controller.quorum.voters=1@127.0.0.1:{controller}\n\
                 listeners=PLAINTEXT://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}\n\
                 controller.listener.names=CONTROLLER\ninter.broker.listener.name=PLAINTEXT\n\
                 log.dirs={}\noffsets.topic.replication.factor=1\n\
                 transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n",
                data.display()
            ),
        )?;
        let props_arg = props.display().to_string();
        if !self.tool(
            "format",
            Tool::Storage,
            &["format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", &props_arg],
        )? {
            return Err("kafka-storage format failed".into());
        }
        let cmd = self.jvm("server", Tool::Server, &[&props_arg])?;
        let mut server =
            ChildGuard::spawn_logged("cds-training-server", cmd, &self.dir.join("server.log"))
                .map_err(|e| format!("cannot start the training broker: {e}"))?;
        let bootstrap = format!("127.0.0.1:{broker}");
        let controllers = format!("127.0.0.1:{controller}");
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut created = false;
        let mut attempt = 0;
        while !created {
            if Instant::now() > deadline || !server.is_running() {
                return Err("the training broker never served a topic creation".into());
            }
            attempt += 1;
            created = self.tool(
                &format!("topics-{attempt}"),
                Tool::Topics,
                &[
                    "--bootstrap-server",
                    &bootstrap,
                    "--create",
                    "--topic",
                    "t",
                    "--partitions",
                    "2",
                    "--replication-factor",
                    "1",
                ],
            )?;
        }
        self.tool(
            "topics-describe",
            Tool::Topics,
            &["--bootstrap-server", &bootstrap, "--describe"],
        )?;
        self.tool(
            "configs",
            Tool::Configs,
            &[
                "--bootstrap-server",
                &bootstrap,
                "--describe",
                "--entity-type",
                "brokers",
                "--entity-name",
                "1",
            ],
        )?;
        self.tool(
            "quorum",
            Tool::MetadataQuorum,
            &[
                "--bootstrap-controller",
                &controllers,
                "describe",
                "--status",
            ],
        )?;
        self.tool(
            "features",
            Tool::Features,
            &["--bootstrap-controller", &controllers, "describe"],
        )?;
        self.tool(
            "producer",
            Tool::VerifiableProducer,
            &[
                "--bootstrap-server",
                &bootstrap,
                "--topic",
                "t",
                "--max-messages",
                "20",
            ],
        )?;
        self.tool(
            "consumer",
            Tool::VerifiableConsumer,
            &[
                "--bootstrap-server",
                &bootstrap,
                "--topic",
                "t",
                "--group-id",
                "g",
                "--max-messages",
                "20",
            ],
        )?;
        server.sigterm();
        if server.wait_timeout(Duration::from_secs(60)).is_none() {
            server.kill9();
        }
        self.dump(archive)
    }

    /// Merges the class lists (first occurrence first) and dumps the archive next to `archive`,
    /// then renames it into place, so a concurrent run never maps half a file.
    fn dump(&self, archive: &Path) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        let mut merged = String::new();
        for list in &self.lists {
            let Ok(text) = fs::read_to_string(list) else {
                continue;
            };
            for line in text.lines() {
                if seen.insert(line.to_string()) {
                    merged.push_str(line);
                    merged.push('\n');
                }
            }
        }
        if seen.len() < 1000 {
            return Err(format!(
                "the training JVMs listed only {} classes",
                seen.len()
            ));
        }
        let all = self.dir.join("all.classes");
        write(&all, &merged)?;
        let tmp = self.dir.join("kafka.jsa");
        let mut cmd = Command::new(self.java);
        cmd.env("CLASSPATH", self.classpath)
            .arg("-Xshare:dump")
            .arg(format!("-XX:SharedClassListFile={}", all.display()))
            .arg(format!("-XX:SharedArchiveFile={}", tmp.display()));
        let out = try_run_command(
            cmd,
            "java -Xshare:dump",
            None,
            Duration::from_secs(300),
            self.dir,
        )
        .map_err(|e| format!("cannot run java -Xshare:dump: {e}"))?;
        if !out.success() || !tmp.is_file() {
            return Err(format!("java -Xshare:dump failed:\n{out}"));
        }
        fs::rename(&tmp, archive)
            .map_err(|e| format!("cannot move the archive to {}: {e}", archive.display()))
    }
}

/// A line on the run's own stderr: the test harness captures `eprintln!` of a test thread,
/// and this half-minute step should show while it happens.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "compat harness: {line}");
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
