//! `kraftd format`: what `kafka-storage.sh format` (Kafka 4.4) does for a controller.
//!
//! Writes `meta.properties` (version 1, a fresh `directory.id`) into every unformatted log dir
//! and the bootstrap checkpoint (see `log::bootstrap`) into the metadata log dir's
//! `__cluster_metadata-0/`. Messages and refusals follow Java's `Formatter`; `--add-scram`
//! is Java's `ScramParser` (see [`scram`]).

pub mod scram;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;

use super::initial_controllers::InitialControllersError;
use super::LoadConfigError;
use crate::log::bootstrap::{
    self, Bootstrap, FeatureLevelError, ScramRecords, KRAFT_VERSION, METADATA_VERSION,
};
use crate::log::error::LogError;
use crate::log::meta_properties::{MetaProperties, MetaPropertiesError};
use crate::log::metadata_dir::random_directory_id;
use crate::log::{fsutil, PARTITION_DIR_NAME};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use crate::protocol::records::BuildError;
use crate::server::config::ControllerConfig;

pub use super::initial_controllers::{parse_initial_controllers, InitialController};
pub use scram::{AddScramError, ScramArgument};

/// The zero checkpoint's file name.
pub const BOOTSTRAP_CHECKPOINT: &str = "00000000000000000000-0000000000.checkpoint";

#[derive(Debug, Args, PartialEq, Eq)]
#[command(group(clap::ArgGroup::new("quorum").args(["standalone", "initial_controllers", "no_initial_controllers"])))]
pub struct FormatArgs {
    /// The cluster id (e.g. from `kraftd random-uuid`)
    #[arg(short = 't', long = "cluster-id", value_name = "CLUSTER_ID")]
    pub cluster_id: String,
    /// The node's configuration (server.properties)
    #[arg(short = 'c', long = "config", value_name = "CONFIG")]
    pub config: PathBuf,
    /// Format a single-node dynamic quorum made of this controller
    #[arg(short = 's', long)]
    pub standalone: bool,
    /// The initial dynamic quorum: id@host:port:directoryId,...
    #[arg(short = 'I', long = "initial-controllers", value_name = "VOTERS")]
    pub initial_controllers: Option<String>,
    /// A controller that joins an existing dynamic quorum later (add-controller)
    #[arg(short = 'N', long = "no-initial-controllers")]
    pub no_initial_controllers: bool,
    /// The metadata.version to bootstrap (e.g. 4.4-IV2 or 3.9); default the latest production one
    #[arg(short = 'r', long = "release-version", value_name = "RELEASE_VERSION")]
    pub release_version: Option<String>,
    /// A feature level to bootstrap, name=level; repeatable
    #[arg(short = 'f', long = "feature", value_name = "FEATURE")]
    pub features: Vec<String>,
    /// Skip directories that are already formatted instead of failing
    #[arg(short = 'g', long = "ignore-formatted")]
    pub ignore_formatted: bool,
    /// A SCRAM credential to bootstrap, e.g. 'SCRAM-SHA-256=[name=alice,password=alice-secret]'
    /// or 'SCRAM-SHA-512=[name=alice,salt=BASE64,saltedpassword=BASE64,iterations=8192]';
    /// repeatable
    #[arg(short = 'S', long = "add-scram", value_name = "SCRAM_CREDENTIAL")]
    pub add_scram: Vec<ScramArgument>,
}

/// Why `kraftd format` refused or failed. The refusals have the messages of Java's `Formatter`
/// (kafka-storage.sh format), so that scripts written for one read the other.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error(transparent)]
    Config(#[from] LoadConfigError),
    #[error("Cluster ID string must not be empty")]
    EmptyClusterId,
    #[error(
        "You cannot specify controller.quorum.voters and format the node with \
         --initial-controllers or --standalone. If you want to use dynamic quorum, \
         please remove controller.quorum.voters and specify \
         controller.quorum.bootstrap.servers instead."
    )]
    StaticQuorumWithVoterFlag,
    #[error(
        "Because controller.quorum.voters is not set on this controller, you must \
         specify one of the following: --standalone, --initial-controllers, or \
         --no-initial-controllers."
    )]
    NoQuorumFlag,
    #[error("Can't parse feature={feature}. The format must be name=level")]
    FeatureNotNameLevel { feature: String },
    #[error("Can't parse feature={feature}. The level must be a number")]
    FeatureLevelNotANumber { feature: String },
    #[error("Use --release-version instead of --feature metadata.version=X to avoid ambiguity.")]
    MetadataVersionTwice,
    #[error("Unknown metadata.version {level}: supported levels are 7 to 33")]
    UnknownMetadataVersionLevel { level: i16 },
    #[error(transparent)]
    FeatureLevel(#[from] FeatureLevelError),
    #[error(
        "Cannot set kraft.version to 0 if controller.quorum.voters is empty and \
         one of the flags --standalone, --initial-controllers, or \
         --no-initial-controllers is used. For dynamic controllers support, try \
         removing the --feature flag for kraft.version."
    )]
    KraftVersion0Dynamic,
    #[error(
        "Cannot set kraft.version to 1 with controller.quorum.voters (a static \
         quorum): use controller.quorum.bootstrap.servers instead."
    )]
    KraftVersion1Static,
    #[error("controller listener {listener} is not in listeners: add it to listeners, or name a listener there in controller.listener.names")]
    NoControllerListener { listener: String },
    #[error(transparent)]
    InitialControllers(#[from] InitialControllersError),
    #[error(transparent)]
    AddScram(#[from] AddScramError),
    #[error("Invalid cluster.id in: {}. Expected {expected}, but read {}", .path.display(), .found.as_deref().unwrap_or("(none)"))]
    ClusterIdMismatch {
        path: PathBuf,
        expected: String,
        found: Option<String>,
    },
    #[error(
        "Stored node id {} doesn't match previous node id {configured} in {}. If you \
         moved your data, make sure your configured node id matches.",
        .stored.map_or("(none)".into(), |n| n.to_string()), .path.display()
    )]
    NodeIdMismatch {
        path: PathBuf,
        stored: Option<i32>,
        configured: i32,
    },
    #[error(transparent)]
    MetaProperties(#[from] MetaPropertiesError),
    #[error(
        "Log directory {} is already formatted. Use --ignore-formatted to ignore this \
         directory and format the others.",
        .dir.display()
    )]
    AlreadyFormatted { dir: PathBuf },
    /// A file system call failed; `op` says which ("cannot create", "cannot chmod", ...).
    #[error("{op} {}: {source}", .path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("cannot build the bootstrap checkpoint: {0} (this is a kraftd bug: report it with the command line)")]
    Checkpoint(#[source] BuildError),
    #[error("{} already exists: the directory holds a metadata log but no meta.properties; restore its meta.properties, or empty the directory if its data is not needed", .path.display())]
    CheckpointExists { path: PathBuf },
}

/// A closure turning an `io::Error` into [`FormatError::Io`] for `op` on `path`.
fn io_error<'a>(
    op: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> FormatError + 'a {
    move |source| FormatError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Runs the command; the message of `Err` is printed by the caller and exits 1.
pub fn run(args: &FormatArgs) -> Result<(), FormatError> {
    let config = super::load_config(&args.config)?;
    let now = SystemTime::now();
    let plan = plan(args, &config, &mut rand::random)?;
    execute(&plan, args, &config, now)
}

/// Everything decided before touching the disk.
#[derive(Debug)]
pub struct Plan {
    pub bootstrap: Bootstrap,
    /// The metadata dir's directory.id when fixed by the voter set.
    pub metadata_dir_id: Option<Uuid>,
    /// Whether this node is an initial voter.
    pub is_voter: bool,
    pub dynamic: bool,
}

/// `draw`: fresh randomness, one draw per `--add-scram` salt not given.
pub fn plan(
    args: &FormatArgs,
    config: &ControllerConfig,
    draw: &mut dyn FnMut() -> [u8; 17],
) -> Result<Plan, FormatError> {
    if args.cluster_id.trim().is_empty() {
        return Err(FormatError::EmptyClusterId);
    }
    let static_quorum = config.is_static_quorum();
    let flagged = args.standalone || args.initial_controllers.is_some();
    if static_quorum && flagged {
        return Err(FormatError::StaticQuorumWithVoterFlag);
    }
    if !static_quorum && !flagged && !args.no_initial_controllers {
        return Err(FormatError::NoQuorumFlag);
    }
    let mut overrides = BTreeMap::new();
    for f in &args.features {
        let (name, level) = f
            .split_once('=')
            .ok_or_else(|| FormatError::FeatureNotNameLevel { feature: f.clone() })?;
        let level: i16 = level
            .trim()
            .parse()
            .map_err(|_| FormatError::FeatureLevelNotANumber { feature: f.clone() })?;
        overrides.insert(name.trim().to_owned(), level);
    }
    let mv = match (overrides.remove(METADATA_VERSION), &args.release_version) {
        (Some(_), Some(_)) => return Err(FormatError::MetadataVersionTwice),
        (Some(level), None) => {
            bootstrap::metadata_version_name(level)
                .ok_or(FormatError::UnknownMetadataVersionLevel { level })?;
            level
        }
        (None, Some(rv)) => bootstrap::parse_metadata_version(rv)?,
        (None, None) => bootstrap::LATEST_PRODUCTION_LEVEL,
    };
    let mut levels = bootstrap::resolve_features(mv, &overrides)?;
    // Java 4.4: a dynamic quorum (no controller.quorum.voters) is always kraft.version 1, whatever
    // the metadata.version; a static one always 0.
    let kraft_version = if static_quorum { 0 } else { 1 };
    match overrides.get(KRAFT_VERSION) {
        Some(0) if !static_quorum => return Err(FormatError::KraftVersion0Dynamic),
        Some(l) if *l > 0 && static_quorum => return Err(FormatError::KraftVersion1Static),
        _ => {}
    }
    levels.insert(KRAFT_VERSION, kraft_version);
    let listener = config.default_listener_name().to_owned();
    let mut metadata_dir_id = None;
    let mut is_voter = false;
    let voters = if args.standalone {
        let endpoint = config
            .advertised_controller_endpoints()
            .into_iter()
            .find(|e| e.listener_name == listener)
            .ok_or_else(|| FormatError::NoControllerListener {
                listener: listener.clone(),
            })?;
        let id = random_directory_id();
        metadata_dir_id = Some(id);
        is_voter = true;
        let host = if endpoint.host.is_empty() {
            "localhost".to_owned()
        } else {
            endpoint.host
        };
        Some(vec![voter(
            config.node_id,
            id,
            &listener,
            host,
            endpoint.port,
        )])
    } else if let Some(text) = &args.initial_controllers {
        let parsed = parse_initial_controllers(text)?;
        let mut voters = Vec::new();
        for v in parsed {
            if v.id == config.node_id {
                metadata_dir_id = Some(v.directory_id);
                is_voter = true;
            }
            voters.push(voter(v.id, v.directory_id, &listener, v.host, v.port));
        }
        Some(voters)
    } else {
        None
    };
    // Java parses the voters before it runs the formatter, which builds the SCRAM records last.
    let scram = scram::scram_records(&args.add_scram, mv, draw)?;
    Ok(Plan {
        bootstrap: Bootstrap {
            metadata_version: mv,
            features: levels.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            kraft_version,
            voters,
            scram: ScramRecords(scram),
        },
        metadata_dir_id,
        is_voter,
        dynamic: flagged,
    })
}

fn voter(id: i32, dir: Uuid, listener: &str, host: String, port: u16) -> Voter {
    Voter {
        voter_id: id,
        voter_directory_id: dir,
        endpoints: vec![Endpoint {
            name: listener.to_owned(),
            host,
            port,
            ..Default::default()
        }],
        k_raft_version_feature: KRaftVersionFeature {
            min_supported_version: 0,
            max_supported_version: 1,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The log dirs Java formats: `log.dirs` and `metadata.log.dir`, without duplicates.
pub fn all_dirs(config: &ControllerConfig) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in config
        .log_dirs
        .iter()
        .chain(std::iter::once(&config.metadata_log_dir))
    {
        if !dirs.contains(d) {
            dirs.push(d.clone());
        }
    }
    dirs
}

fn execute(
    plan: &Plan,
    args: &FormatArgs,
    config: &ControllerConfig,
    now: SystemTime,
) -> Result<(), FormatError> {
    let dirs = all_dirs(config);
    let mut unformatted = Vec::new();
    let mut formatted = Vec::new();
    for dir in &dirs {
        match MetaProperties::read_from_dir(dir) {
            Err(MetaPropertiesError::Missing { .. }) => unformatted.push(dir.clone()),
            Ok(meta) => {
                let path = dir.join("meta.properties");
                if meta.cluster_id.as_deref() != Some(args.cluster_id.as_str()) {
                    return Err(FormatError::ClusterIdMismatch {
                        path,
                        expected: args.cluster_id.clone(),
                        found: meta.cluster_id,
                    });
                }
                if meta.node_id != Some(config.node_id) {
                    return Err(FormatError::NodeIdMismatch {
                        path,
                        stored: meta.node_id,
                        configured: config.node_id,
                    });
                }
                // Java checks every directory's identity before refusing a formatted one.
                formatted.push(dir.clone());
            }
            Err(e) => return Err(e.into()),
        }
    }
    if let (Some(dir), false) = (formatted.first(), args.ignore_formatted) {
        return Err(FormatError::AlreadyFormatted { dir: dir.clone() });
    }
    if unformatted.is_empty() {
        println!("All of the log directories are already formatted.");
        return Ok(());
    }
    let mv_name = bootstrap::metadata_version_name(plan.bootstrap.metadata_version).unwrap_or("?");
    println!(
        "Bootstrap metadata: {} (kraft.version {}{})",
        plan.bootstrap
            .metadata_records()
            .iter()
            .map(|r| scram::shown_json(r).to_string())
            .collect::<Vec<_>>()
            .join(", "),
        plan.bootstrap.kraft_version,
        match &plan.bootstrap.voters {
            Some(v) => format!(", {} initial voter(s)", v.len()),
            None => String::new(),
        }
    );
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    // Java formats them in the iteration order of a HashSet of path strings.
    let unformatted = java_hash_set_order(unformatted);
    for dir in &unformatted {
        let is_metadata = *dir == config.metadata_log_dir;
        let kind = match (is_metadata, plan.dynamic, plan.is_voter) {
            (false, _, _) => "data directory",
            (true, true, true) => "dynamic metadata voter directory",
            (true, true, false) => "dynamic metadata directory",
            (true, false, _) => "metadata directory",
        };
        println!(
            "Formatting {kind} {} with metadata.version {mv_name}.",
            dir.display()
        );
        fs::create_dir_all(dir).map_err(io_error("cannot create", dir))?;
        let directory_id = match plan.metadata_dir_id {
            Some(id) if is_metadata => id,
            _ => random_directory_id(),
        };
        MetaProperties::v1(&args.cluster_id, config.node_id, Some(directory_id))
            .write_to_dir(dir)?;
        if is_metadata {
            let bytes = plan
                .bootstrap
                .checkpoint_bytes(now_ms)
                .map_err(FormatError::Checkpoint)?;
            write_checkpoint(&dir.join(PARTITION_DIR_NAME), &bytes)?;
        }
    }
    Ok(())
}

/// Writes the zero checkpoint as Java's snapshot writer does: a `.part` file, fsync, read-only
/// (0400), rename, fsync the directory.
pub fn write_checkpoint(partition_dir: &Path, bytes: &[u8]) -> Result<(), FormatError> {
    fs::create_dir_all(partition_dir).map_err(io_error("cannot create", partition_dir))?;
    let path = partition_dir.join(BOOTSTRAP_CHECKPOINT);
    if path.exists() {
        return Err(FormatError::CheckpointExists { path });
    }
    let part = partition_dir.join(format!(
        "00000000000000000000-0000000000-{}.checkpoint.part",
        rand::random::<u32>()
    ));
    let mut f = fs::File::create(&part).map_err(io_error("cannot create", &part))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(io_error("cannot write", &part))?;
    drop(f);
    fs::set_permissions(&part, fs::Permissions::from_mode(0o400))
        .map_err(io_error("cannot chmod", &part))?;
    fs::rename(&part, &path).map_err(io_error("cannot rename", &part))?;
    fsutil::fsync_dir(partition_dir)?;
    Ok(())
}

/// `dirs` in the order a `java.util.HashSet<String>` holding them iterates: by bucket of the
/// spread `String.hashCode`, then insertion order within a bucket.
pub fn java_hash_set_order(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut buckets = 16usize;
    while dirs.len() as f64 > buckets as f64 * 0.75 {
        buckets *= 2;
    }
    let bucket = |p: &PathBuf| {
        let h = p
            .to_string_lossy()
            .encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32));
        let spread = (h ^ ((h as u32) >> 16) as i32) as u32;
        spread as usize & (buckets - 1)
    };
    let mut indexed: Vec<(usize, usize, PathBuf)> = dirs
        .into_iter()
        .enumerate()
        .map(|(i, d)| (bucket(&d), i, d))
        .collect();
    indexed.sort();
    indexed.into_iter().map(|(_, _, d)| d).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_in_java_hash_set_order() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        // Observed from Kafka 4.4's kafka-storage format.
        assert_eq!(
            java_hash_set_order(p(&[
                "/tmp/fmt/x/b",
                "/tmp/fmt/x/a",
                "/tmp/fmt/x/c",
                "/tmp/fmt/x/aa"
            ])),
            p(&[
                "/tmp/fmt/x/a",
                "/tmp/fmt/x/b",
                "/tmp/fmt/x/c",
                "/tmp/fmt/x/aa"
            ])
        );
        assert_eq!(
            java_hash_set_order(p(&["/tmp/fmt/d1", "/tmp/fmt/d2"])),
            p(&["/tmp/fmt/d2", "/tmp/fmt/d1"])
        );
    }
}
