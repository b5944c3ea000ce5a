//! The `kraftd` command line.
//!
//! ```text
//! kraftd start <server.properties> [--override key=value]...
//! kraftd <server.properties> [--override key=value]...     (as kafka-server-start.sh takes it)
//! kraftd random-uuid                                        (as kafka-storage.sh random-uuid)
//! kraftd version
//! kraftd format -t <cluster id> -c <server.properties> [--standalone | --initial-controllers ... | --no-initial-controllers] ...
//! kraftd storage-info -c <server.properties>                (as kafka-storage.sh info)
//! kraftd dump-log <files or dirs>... [--json]               (as kafka-dump-log.sh --cluster-metadata-decoder)
//! kraftd metadata-state <metadata log dir> [--at OFFSET] [--json] [--write-snapshot OUT_DIR]
//!                                                           (the metadata image there, or its snapshot)
//! kraftd doctor --bootstrap-controller HOST:PORT[,...] [--command-config FILE] [--window S] [--json]
//!                                                           (a live quorum against the incident runbook)
//! kraftd test-raft-server --config <file> --replica-directory-id <uuid> [--throughput N] [--record-size B]
//!                                                           (as kafka.tools.TestRaftServer, for `make bench`)
//! ```
//!
//! Exit codes: 0 success, 1 failure (e.g. invalid configuration), 2 bad command-line usage.
//! Planned subcommands (`format`, `storage-info`, `dump-log`) become new [`Command`] variants and
//! are listed in [`SUBCOMMANDS`] so that the bare-file form never mistakes them for a file.

pub mod checkpoint;
pub mod dump_log;
pub mod format;
pub mod initial_controllers;
pub mod logging;
pub mod metadata_state;
pub mod storage_info;
pub mod test_raft_server;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::config::{ConfigError, ControllerConfig};
use crate::protocol::codec::Uuid;

pub use logging::component_span;

/// The Apache Kafka release kraftd is built and tested against.
pub const KAFKA_VERSION: &str = crate::protocol::messages::KAFKA_VERSION;

/// Subcommand names, including planned ones, which a bare config-file argument must not shadow.
pub const SUBCOMMANDS: &[&str] = &[
    "start",
    "random-uuid",
    "version",
    "help",
    "format",
    "storage-info",
    "dump-log",
    "test-raft-server",
    "metadata-state",
    "doctor",
];

#[derive(Debug, Parser, PartialEq, Eq)]
#[command(
    name = "kraftd",
    version,
    about = "A KRaft controller that speaks Kafka's protocol and stands in for Java Kafka controllers",
    after_help = "`kraftd <server.properties> [--override key=value]...` is short for `kraftd start ...`.",
    arg_required_else_help = true
)]
pub struct Cli {
    /// Log level; without it RUST_LOG is used if set, else info
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    pub log_level: Option<LogLevel>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum Command {
    /// Run a controller configured by a Kafka server.properties file, until SIGTERM or SIGINT
    Start(StartArgs),
    /// Print a new random Kafka Uuid (e.g. a cluster id for formatting)
    RandomUuid,
    /// Print kraftd's version and the Kafka version and protocol it is compatible with
    Version,
    /// Format the node's log directories (as kafka-storage.sh format)
    Format(format::FormatArgs),
    /// Describe the node's log directories (as kafka-storage.sh info)
    StorageInfo(storage_info::StorageInfoArgs),
    /// Print the batches and records of metadata log segments and snapshots
    DumpLog(dump_log::DumpLogArgs),
    /// Print what a controller replaying a metadata log directory holds at an offset
    MetadataState(metadata_state::MetadataStateArgs),
    /// Run a bare raft node under load, as Kafka's TestRaftServer (the raft benchmark)
    TestRaftServer(test_raft_server::TestRaftServerArgs),
    /// Check a live quorum against the KRaft incident runbook: a verdict per check, its cause
    /// and fix; exit 0 healthy, 1 degraded, 2 down
    Doctor(super::doctor::DoctorArgs),
}

#[derive(Debug, Args, PartialEq, Eq)]
pub struct StartArgs {
    /// The node's configuration in Kafka's .properties format and key names
    #[arg(value_name = "server.properties")]
    pub config: PathBuf,

    /// Set a configuration key, winning over the file; repeatable
    #[arg(long = "override", value_name = "KEY=VALUE", value_parser = parse_override)]
    pub overrides: Vec<(String, String)>,
}

/// `key=value`, split at the first `=`; the value may be empty or contain `=`.
fn parse_override(s: &str) -> Result<(String, String), BadOverride> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        Some(_) => Err(BadOverride::EmptyKey),
        None => Err(BadOverride::NoEquals {
            argument: s.to_owned(),
        }),
    }
}

/// An `--override` that is not `key=value`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadOverride {
    /// No `=`: the argument holds no value, so it is shown.
    #[error("'{argument}' is not key=value (e.g. --override node.id=2)")]
    NoEquals { argument: String },
    /// `=value` without a key: the value is not shown, as it may be a secret.
    #[error("'=...' is not key=value: the key before '=' is empty (e.g. --override node.id=2)")]
    EmptyKey,
}

/// Entry point of the binary: returns the process exit code.
pub fn main() -> i32 {
    run_with_args(std::env::args_os())
}

/// Runs the command line given (including the program name first).
pub fn run_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match parse_args(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and --version land here too, with exit code 0; usage errors give 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    logging::init(cli.log_level.map(LogLevel::as_str));
    match cli.command {
        Command::Start(args) => start(&args),
        Command::RandomUuid => {
            println!("{}", random_uuid());
            0
        }
        Command::Version => {
            println!("{}", version_text());
            0
        }
        Command::Format(args) => match format::run(&args) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("kraftd format: {}", one_line(&e.to_string()));
                1
            }
        },
        Command::StorageInfo(args) => match storage_info::run(&args) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("kraftd storage-info: {}", one_line(&e.to_string()));
                1
            }
        },
        Command::DumpLog(args) => dump_log::run(&args),
        Command::Doctor(args) => super::doctor::run(&args),
        Command::MetadataState(args) => match metadata_state::run(&args) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("kraftd metadata-state: {}", one_line(&e.to_string()));
                1
            }
        },
        Command::TestRaftServer(args) => match test_raft_server::run(&args) {
            Ok(()) => 0,
            Err(super::run::RunError::Halted(_)) => 1,
            Err(e) => {
                let e = e.to_string();
                eprintln!("kraftd test-raft-server: {}", one_line(&e));
                1
            }
        },
    }
}

/// Loads a configuration for a tool command, with the message `start` gives.
pub(crate) fn load_config(path: &Path) -> Result<ControllerConfig, LoadConfigError> {
    ControllerConfig::load(path, &[]).map_err(|e| LoadConfigError::new(path, e))
}

/// Why a command could not load its configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadConfigError {
    /// The file cannot be read or is not `.properties` syntax: the error names the file.
    #[error(transparent)]
    Unreadable(ConfigError),
    /// A key's value is wrong, or keys contradict each other.
    #[error("invalid configuration in {}: {source}", .path.display())]
    Invalid {
        path: PathBuf,
        #[source]
        source: ConfigError,
    },
}

impl LoadConfigError {
    pub fn new(path: &Path, e: ConfigError) -> LoadConfigError {
        match e {
            ConfigError::Io { .. } | ConfigError::Syntax { .. } => LoadConfigError::Unreadable(e),
            _ => LoadConfigError::Invalid {
                path: path.to_path_buf(),
                source: e,
            },
        }
    }
}

/// Parses arguments, accepting `kraftd <file> ...` as `kraftd start <file> ...`.
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(insert_implicit_start(args.into_iter().collect()))
}

/// If the first positional argument is a config file rather than a subcommand, put `start`
/// before it. A file is "a config" when it exists or its name ends in `.properties`.
fn insert_implicit_start(mut args: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while let Some(a) = args.get(i).and_then(|a| a.to_str()) {
        match a {
            "--log-level" => i += 2,
            _ if a.starts_with("--log-level=") => i += 1,
            _ => break,
        }
    }
    if let Some(arg) = args.get(i) {
        let s = arg.to_string_lossy();
        let looks_like_config = !s.starts_with('-')
            && !SUBCOMMANDS.contains(&s.as_ref())
            && (s.ends_with(".properties") || Path::new(arg).is_file());
        if looks_like_config {
            args.insert(i, "start".into());
        }
    }
    args
}

fn start(args: &StartArgs) -> i32 {
    let config = match ControllerConfig::load(&args.config, &args.overrides) {
        Ok(config) => config,
        Err(e) => {
            let msg = LoadConfigError::new(&args.config, e).to_string();
            eprintln!("kraftd: {}", one_line(&msg));
            return 1;
        }
    };
    // Kafka's own prefix for this component is "[KafkaRaftServer nodeId=N]".
    let prefix = format!("KafkaRaftServer nodeId={}", config.node_id);
    let _span = tracing::error_span!("component", component = prefix.as_str()).entered();
    tracing::info!(
        "kraftd {} (Kafka {KAFKA_VERSION}) starting: listeners={} quorum={} metadata.log.dir={}",
        env!("CARGO_PKG_VERSION"),
        join(&config.listeners),
        describe_quorum(&config),
        config.metadata_log_dir.display()
    );
    tracing::debug!("effective configuration: {config:?}");
    match super::run(config) {
        Ok(()) => 0,
        // The halt line is already out: exactly one error line.
        Err(super::run::RunError::Halted(_)) => 1,
        Err(e) => {
            tracing::error!("{}", one_line(&e.to_string()));
            1
        }
    }
}

fn describe_quorum(c: &ControllerConfig) -> String {
    if c.is_static_quorum() {
        format!("static voters {}", join(&c.quorum.voters))
    } else {
        format!(
            "dynamic, bootstrap servers {}",
            join(&c.quorum.bootstrap_servers)
        )
    }
}

fn join<T: ToString>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Keeps an error on one line even if a configured value held a newline.
fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// A new random Kafka Uuid, by Kafka's rules (see [`random_uuid_from`]).
pub fn random_uuid() -> Uuid {
    random_uuid_from(rand::random)
}

/// Draws 16-byte candidates as a version-4 UUID until one is neither of Kafka's reserved ids
/// (zero, one) nor one whose base64 form starts with '-' (which would read as a command-line
/// option; Kafka avoids those too).
pub fn random_uuid_from(mut next: impl FnMut() -> [u8; 16]) -> Uuid {
    loop {
        let mut b = next();
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // IETF variant
        let id = Uuid(b);
        if id != Uuid::ZERO && id != Uuid::ONE && !id.to_string().starts_with('-') {
            return id;
        }
    }
}

/// What `kraftd version` prints.
pub fn version_text() -> String {
    let features: Vec<String> = super::api::supported_features()
        .iter()
        .map(|f| format!("{} {}-{}", f.name, f.min, f.max))
        .collect();
    let apis: Vec<String> = super::api::served_apis()
        .into_iter()
        .map(|a| format!("{} v{}-{}", a.name, a.min_version, a.max_version))
        .collect();
    format!(
        "kraftd {}\n\
         Compatible with Apache Kafka {KAFKA_VERSION} as a KRaft controller (process.roles=controller)\n\
         Protocol: Kafka binary protocol over PLAINTEXT; features {}\n\
         APIs on controller listeners: {}",
        env!("CARGO_PKG_VERSION"),
        features.join(", "),
        apis.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        parse_args(
            std::iter::once("kraftd")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    fn start_args(args: &[&str]) -> StartArgs {
        match parse(args)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .command
        {
            Command::Start(s) => s,
            other => panic!("{args:?} parsed as {other:?}"),
        }
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn start_forms_are_equivalent() {
        let explicit = start_args(&["start", "server.properties", "--override", "node.id=2"]);
        let bare = start_args(&["server.properties", "--override", "node.id=2"]);
        assert_eq!(explicit, bare);
        assert_eq!(explicit.config, PathBuf::from("server.properties"));
        assert_eq!(explicit.overrides, vec![pair("node.id", "2")]);
        // An existing file with any name also means start.
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
        assert_eq!(start_args(&[manifest]).config, PathBuf::from(manifest));
        let c = parse(&["--log-level", "debug", "my.properties"]).unwrap();
        assert_eq!(c.log_level, Some(LogLevel::Debug));
        assert!(matches!(c.command, Command::Start(_)));
        let c = parse(&["--log-level=warn", "my.properties", "--log-level", "trace"]).unwrap();
        assert_eq!(
            c.log_level,
            Some(LogLevel::Trace),
            "global flag after the subcommand"
        );
    }

    #[test]
    fn overrides() {
        let s = start_args(&[
            "c.properties",
            "--override",
            "a=1",
            "--override=b=x=y",
            "--override",
            "c=",
        ]);
        assert_eq!(
            s.overrides,
            vec![pair("a", "1"), pair("b", "x=y"), pair("c", "")]
        );
        for bad in ["novalue", "=1"] {
            let e = parse(&["c.properties", "--override", bad]).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("is not key=value"), "{e}");
        }
    }

    #[test]
    fn bad_usage_exits_2_with_usage() {
        for args in [
            &[][..],
            &["strat"],
            &["start"],
            &["start", "a.properties", "--bogus"],
            &["--log-level", "loud", "version"],
            &["random-uuid", "extra"],
        ] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            // clap shows the usage line, or for a bad value points at --help.
            let text = e.render().to_string();
            assert!(
                text.contains("Usage:") || text.contains("try '--help'"),
                "{args:?}: {text}"
            );
        }
    }

    #[test]
    fn help_and_subcommands() {
        for args in [
            &["--help"][..],
            &["start", "--help"],
            &["random-uuid", "--help"],
            &["version", "--help"],
        ] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.exit_code(), 0, "{args:?}");
        }
        assert_eq!(
            parse(&["random-uuid"]).unwrap().command,
            Command::RandomUuid
        );
        assert_eq!(parse(&["version"]).unwrap().command, Command::Version);
        // A subcommand name is never taken for a file.
        assert!(parse(&["format"]).is_err());
        assert!(parse(&[
            "format",
            "-t",
            "x",
            "-c",
            "c.properties",
            "--standalone",
            "-N"
        ])
        .is_err());
        assert!(matches!(
            parse(&["dump-log", "a.log", "--json"]).unwrap().command,
            Command::DumpLog(_)
        ));
    }

    #[test]
    fn start_with_invalid_config_exits_1() {
        let dir = std::env::temp_dir().join(format!("kraftd-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.properties");
        std::fs::write(&file, "process.roles=controller\nnode.id=abc\n").unwrap();
        let args = ["kraftd".into(), file.clone().into_os_string()];
        assert_eq!(run_with_args(args), 1);
        assert_eq!(
            run_with_args(["kraftd", "start", "/nonexistent/x.properties"].map(OsString::from)),
            1
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn random_uuids_parse_back_and_never_start_with_dash() {
        for _ in 0..2000 {
            let id = random_uuid();
            let text = id.to_string();
            assert_eq!(text.len(), 22);
            assert!(!text.starts_with('-'), "{text}");
            assert_eq!(Uuid::parse(&text).unwrap(), id);
            assert_eq!(id.0[6] >> 4, 4, "version 4");
        }
    }

    #[test]
    fn random_uuid_redraws_rejected_candidates() {
        // 0xF8.. encodes to a leading '-' in URL-safe base64; the second draw is accepted.
        let mut draws = vec![[0x11; 16], [0xF8; 16]];
        let id = random_uuid_from(|| draws.pop().unwrap());
        assert!(draws.is_empty(), "the '-' candidate was redrawn");
        assert!(id.to_string().starts_with("ERER"), "{id}");
    }

    #[test]
    fn version_mentions_kafka_and_protocol() {
        let v = version_text();
        assert!(
            v.starts_with(&format!("kraftd {}\n", env!("CARGO_PKG_VERSION"))),
            "{v}"
        );
        assert!(
            v.contains("Apache Kafka 4.4.0") && v.contains("ApiVersions v0-"),
            "{v}"
        );
    }

    #[test]
    fn one_line_escapes_newlines() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
    }
}
