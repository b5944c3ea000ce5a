//! The resolved Apache Kafka release: classpath, logging configs, and running its tools.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::cds;
use super::process::{run_command, try_run_command, Output};
use super::testdir::scratch_dir;
use super::tool_server::{servable, ToolServers};
use super::transport;

/// Kafka release used when `KAFKA_VERSION` is not set.
pub const DEFAULT_KAFKA_VERSION: &str = "4.4.0";

/// The Kafka 4.0 release the 4.0 compat tests run next to the main one (`KAFKA_4_0_VERSION`
/// overrides it). 4.0.1 cannot be resolved from Maven Central (its connect-api, connect-json and
/// connect-transforms jars are missing there), 4.0.2 can.
pub const DEFAULT_KAFKA_4_0_VERSION: &str = "4.0.2";

/// Default timeout of one tool run (a JVM start is 1-2 s on a quiet 2-core machine).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(90);

/// Resolving may download ~55 MB from Maven Central on a first run.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(900);

/// JVM options for tools (and the tool servers that run them): short-lived, so favour start-up
/// time over peak speed.
pub(super) fn tool_jvm_opts() -> Vec<String> {
    TOOL_JVM_OPTS.iter().map(|s| s.to_string()).collect()
}

const TOOL_JVM_OPTS: &[&str] = &[
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
];

/// Admin-client settings for tools polling a quorum that may not be up yet: fail fast instead of
/// retrying for the default 60 s, so that a wait loop can poll again (and notice a dead process).
const FAST_ADMIN_PROPS: &str = "request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n\
                                 socket.connection.setup.timeout.ms=2000\nsocket.connection.setup.timeout.max.ms=3000\n";

/// Kafka's command-line tools, by the main class of their `bin/*.sh` script. Some classes moved
/// between releases, so each tool lists candidates and [`Kafka::main_class`] picks the first one
/// present in the resolved jars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `kafka-server-start.sh`
    Server,
    /// `kafka-storage.sh`
    Storage,
    /// `kafka-metadata-quorum.sh`
    MetadataQuorum,
    /// `kafka-dump-log.sh`
    DumpLog,
    /// `kafka-broker-api-versions.sh`
    BrokerApiVersions,
    /// `kafka-topics.sh`
    Topics,
    /// `kafka-features.sh`
    Features,
    /// `kafka-configs.sh`
    Configs,
    /// `kafka-acls.sh`
    Acls,
    /// `kafka-console-producer.sh`
    ConsoleProducer,
    /// `kafka-console-consumer.sh`
    ConsoleConsumer,
    /// `kafka-delegation-tokens.sh`
    DelegationTokens,
    /// `kafka-leader-election.sh`
    LeaderElection,
    /// `kafka-reassign-partitions.sh`
    ReassignPartitions,
    /// `kafka-cluster.sh`
    Cluster,
    /// `kafka-client-metrics.sh`
    ClientMetrics,
    /// `kafka-producer-perf-test.sh`
    ProducerPerformance,
    /// `kafka-consumer-perf-test.sh`
    ConsumerPerformance,
    /// `kafka-verifiable-producer.sh`
    VerifiableProducer,
    /// `kafka-verifiable-consumer.sh`
    VerifiableConsumer,
}

impl Tool {
    pub fn candidates(self) -> &'static [&'static str] {
        match self {
            Tool::Server => &["kafka.Kafka"],
            Tool::Storage => &[
                "kafka.tools.StorageTool",
                "org.apache.kafka.tools.StorageTool",
            ],
            Tool::MetadataQuorum => &["org.apache.kafka.tools.MetadataQuorumCommand"],
            // kafka.tools.* up to 4.0; org.apache.kafka.tools.* in 4.4.
            Tool::DumpLog => &[
                "org.apache.kafka.tools.DumpLogSegments",
                "kafka.tools.DumpLogSegments",
            ],
            Tool::BrokerApiVersions => &["org.apache.kafka.tools.BrokerApiVersionsCommand"],
            Tool::Topics => &["org.apache.kafka.tools.TopicCommand"],
            Tool::Features => &["org.apache.kafka.tools.FeatureCommand"],
            // kafka.admin.* up to 3.x; org.apache.kafka.tools.* in 4.x.
            Tool::Configs => &[
                "org.apache.kafka.tools.ConfigCommand",
                "kafka.admin.ConfigCommand",
            ],
            Tool::Acls => &[
                "org.apache.kafka.tools.AclCommand",
                "kafka.admin.AclCommand",
            ],
            Tool::ConsoleProducer => &[
                "org.apache.kafka.tools.ConsoleProducer",
                "kafka.tools.ConsoleProducer",
            ],
            Tool::ConsoleConsumer => &[
                "org.apache.kafka.tools.consumer.ConsoleConsumer",
                "kafka.tools.ConsoleConsumer",
            ],
            Tool::DelegationTokens => &["org.apache.kafka.tools.DelegationTokenCommand"],
            Tool::LeaderElection => &["org.apache.kafka.tools.LeaderElectionCommand"],
            Tool::ReassignPartitions => {
                &["org.apache.kafka.tools.reassign.ReassignPartitionsCommand"]
            }
            Tool::Cluster => &["org.apache.kafka.tools.ClusterTool"],
            Tool::ClientMetrics => &["org.apache.kafka.tools.ClientMetricsCommand"],
            Tool::ProducerPerformance => &["org.apache.kafka.tools.ProducerPerformance"],
            Tool::ConsumerPerformance => &["org.apache.kafka.tools.ConsumerPerformance"],
            Tool::VerifiableProducer => &["org.apache.kafka.tools.VerifiableProducer"],
            Tool::VerifiableConsumer => &["org.apache.kafka.tools.VerifiableConsumer"],
        }
    }
}

/// Options of one tool run.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    pub timeout: Duration,
    /// Bytes fed to the tool's stdin (stdin is empty otherwise).
    pub stdin: Option<Vec<u8>>,
    /// Extra JVM options, e.g. `-Dfoo=bar`.
    pub jvm_opts: Vec<String>,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            timeout: TOOL_TIMEOUT,
            stdin: None,
            jvm_opts: Vec::new(),
        }
    }
}

/// The Kafka release under test, resolved once per test binary by `compat/resolve-kafka`.
pub struct Kafka {
    version: String,
    java: PathBuf,
    classpath: String,
    cache_dir: PathBuf,
    classes: HashSet<String>,
    /// Kafka's classes as a class-data-sharing archive every JVM maps, when one could be made.
    class_archive: Option<PathBuf>,
    /// The JVMs that run this release's tools (see `tool_server.rs`).
    tool_servers: ToolServers,
}

impl std::fmt::Debug for Kafka {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kafka {}", self.version)
    }
}

impl Kafka {
    /// The resolved release. The first call runs `compat/resolve-kafka` (Maven; reuses its cache)
    /// and checks Java; if either fails, this and every later call panics saying why: compat
    /// tests fail loudly rather than skip.
    pub fn get() -> &'static Kafka {
        static KAFKA: OnceLock<Result<Kafka, String>> = OnceLock::new();
        let version =
            std::env::var("KAFKA_VERSION").unwrap_or_else(|_| DEFAULT_KAFKA_VERSION.to_string());
        match KAFKA.get_or_init(|| Kafka::resolve(version)) {
            Ok(kafka) => kafka,
            Err(message) => panic!("compat harness: cannot use Apache Kafka: {message}"),
        }
    }

    /// A Kafka 4.0.x release as a second Kafka next to [`Kafka::get`]'s, resolved the same way
    /// (its jars in `target/compat/kafka-<version>/`), e.g. for stock 4.0 brokers.
    pub fn kafka_4_0() -> &'static Kafka {
        static KAFKA: OnceLock<Result<Kafka, String>> = OnceLock::new();
        let version = std::env::var("KAFKA_4_0_VERSION")
            .unwrap_or_else(|_| DEFAULT_KAFKA_4_0_VERSION.to_string());
        match KAFKA.get_or_init(|| Kafka::resolve(version)) {
            Ok(kafka) => kafka,
            Err(message) => panic!("compat harness: cannot use Apache Kafka 4.0: {message}"),
        }
    }

    fn resolve(version: String) -> Result<Kafka, String> {
        let java = match std::env::var_os("JAVA_HOME") {
            Some(home) => Path::new(&home).join("bin").join("java"),
            None => PathBuf::from("java"),
        };
        let java_version = check_java(&java)?;

        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("compat")
            .join("resolve-kafka");
        let mut cmd = Command::new(&script);
        cmd.env("KAFKA_VERSION", &version);
        let out = run_command(
            cmd,
            script.display().to_string(),
            None,
            RESOLVE_TIMEOUT,
            &scratch_dir(),
        );
        if !out.success() {
            return Err(format!("compat/resolve-kafka failed for Kafka {version}; run it by hand to see why.\n{out}"));
        }
        let classpath_file = PathBuf::from(out.stdout.trim().lines().last().unwrap_or_default());
        let classpath = read(&classpath_file)?.trim().to_string();
        let cache_dir = classpath_file
            .parent()
            .ok_or("classpath file has no parent directory")?
            .to_path_buf();
        let classes = read(&cache_dir.join("classes.txt"))?
            .lines()
            .map(str::to_string)
            .collect();
        write_atomically(&cache_dir.join("admin-fast.properties"), FAST_ADMIN_PROPS)?;
        let class_archive = cds::archive(&java, &java_version, &classpath, &classes, &cache_dir);
        Ok(Kafka {
            version,
            java,
            classpath,
            cache_dir,
            classes,
            class_archive,
            tool_servers: ToolServers::default(),
        })
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// The class-data-sharing archive this release's JVMs map, if one could be trained (each
    /// release has its own, in its [`Self::cache_dir`]).
    pub fn class_archive(&self) -> Option<&Path> {
        self.class_archive.as_deref()
    }

    pub fn classpath(&self) -> &str {
        &self.classpath
    }

    /// The `javac` next to the `java` in use (`JAVA_HOME/bin/javac`, else `javac` on PATH).
    pub fn javac(&self) -> PathBuf {
        self.java.with_file_name("javac")
    }

    /// `target/compat/kafka-<version>/`, where the classpath and logging configs live.
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// log4j2 config for servers: stdout, WARN, with Kafka's server/raft/controller loggers at INFO.
    pub fn server_log4j_config(&self) -> PathBuf {
        self.cache_dir.join("log4j2.properties")
    }

    /// log4j2 config for tools: WARN on stderr, so tools' stdout holds only their output.
    pub fn tools_log4j_config(&self) -> PathBuf {
        self.cache_dir.join("log4j2-tools.properties")
    }

    /// Prometheus's JMX exporter javaagent jar (resolved by `compat/resolve-kafka`).
    pub fn jmx_exporter_agent(&self) -> PathBuf {
        let listed = self.cache_dir.join("jmx-exporter-agent.txt");
        let jar = read(&listed).unwrap_or_else(|e| panic!("compat harness: {e}"));
        PathBuf::from(jar.trim())
    }

    /// Admin-client config (`--command-config`) with short timeouts, for polling.
    pub fn fast_admin_config(&self) -> PathBuf {
        self.cache_dir.join("admin-fast.properties")
    }

    /// Whether a class (e.g. `kafka.tools.StorageTool`) is in the resolved Kafka jars.
    pub fn has_class(&self, class: &str) -> bool {
        self.classes.contains(class)
    }

    /// The main class of `tool` in this release.
    pub fn main_class(&self, tool: Tool) -> &'static str {
        let candidates = tool.candidates();
        main_class_in(&self.classes, tool).unwrap_or_else(|| {
            panic!("none of {candidates:?} ({tool:?}) is in the Kafka {} jars; update Tool::candidates", self.version)
        })
    }

    /// A `java` command running `main_class` with the Kafka classpath (passed as `CLASSPATH`, to
    /// keep command lines readable), the given log4j2 config and JVM options. Add the arguments.
    pub fn java_command(
        &self,
        main_class: &str,
        log4j_config: &Path,
        jvm_opts: &[String],
    ) -> Command {
        let mut cmd = Command::new(&self.java);
        cmd.env("CLASSPATH", &self.classpath);
        if let Some(archive) = &self.class_archive {
            cmd.args(cds::jvm_opts(archive));
        }
        cmd.args(jvm_opts);
        cmd.arg(format!(
            "-Dlog4j2.configurationFile={}",
            log4j_config.display()
        ));
        cmd.arg(main_class);
        cmd
    }

    /// Runs a Kafka tool by main class, e.g. `kafka.tool("kafka.tools.StorageTool", &["random-uuid"])`,
    /// with the default timeout; the result may be a failure (see [`Output::assert_success`]).
    pub fn tool(&self, main_class: &str, args: &[&str]) -> Output {
        self.tool_with(main_class, args, &ToolOptions::default())
    }

    pub fn tool_with(&self, main_class: &str, args: &[&str], options: &ToolOptions) -> Output {
        assert!(
            self.has_class(main_class),
            "{main_class} is not in the Kafka {} jars",
            self.version
        );
        // A controller listener on TLS is reached with the harness's TLS client settings.
        let secured = transport::secure_tool_args(args);
        let args: Vec<&str> = match &secured {
            Some(secured) => secured.iter().map(String::as_str).collect(),
            None => args.to_vec(),
        };
        let display = format!("java {main_class} {}", args.join(" "));
        if servable(main_class, options.stdin.as_deref(), &options.jvm_opts) {
            return self
                .tool_servers
                .run(self, main_class, &args, options.timeout, display);
        }
        let mut jvm_opts = tool_jvm_opts();
        jvm_opts.extend(options.jvm_opts.iter().cloned());
        let mut cmd = self.java_command(main_class, &self.tools_log4j_config(), &jvm_opts);
        cmd.args(&args);
        run_command(
            cmd,
            display,
            options.stdin.as_deref(),
            options.timeout,
            &scratch_dir(),
        )
    }

    /// Runs `tool` (main class picked for this release) with the default options.
    pub fn run(&self, tool: Tool, args: &[&str]) -> Output {
        self.tool(self.main_class(tool), args)
    }
}

/// The first of `tool`'s candidate main classes among `classes` (a release's).
pub(super) fn main_class_in(classes: &HashSet<String>, tool: Tool) -> Option<&'static str> {
    tool.candidates()
        .iter()
        .copied()
        .find(|class| classes.contains(*class))
}

/// Fails unless `java -version` runs and reports Java 17 or newer (Kafka 4 servers need 17);
/// returns what it printed.
fn check_java(java: &Path) -> Result<String, String> {
    let mut cmd = Command::new(java);
    cmd.arg("-version");
    let display = format!("{} -version", java.display());
    let out = try_run_command(cmd, &display, None, Duration::from_secs(60), &scratch_dir()).map_err(|e| {
        format!("cannot run `{display}` ({e}); install Java 17 (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME")
    })?;
    let text = &out.stderr;
    // e.g. `openjdk version "17.0.15" 2025-04-15`; Java 8 said "1.8.0_392".
    let major = text
        .split('"')
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .ok_or_else(|| {
            format!(
                "cannot read the version from `{} -version`:\n{text}",
                java.display()
            )
        })?;
    if major < 17 {
        return Err(format!(
            "{} is Java {major}; Kafka 4 needs Java 17 or newer (set JAVA_HOME)",
            java.display()
        ));
    }
    Ok(out.stderr)
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes via a temporary file and a rename, so concurrent test binaries never see half a file.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&tmp, contents)
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
