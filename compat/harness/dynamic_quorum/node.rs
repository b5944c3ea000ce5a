//! The nodes of a dynamic quorum: a Java or kraftd controller formatted and started for a
//! [`Quorum`], and the VotersRecord history of its log.

use std::fmt;
use std::path::{Path, PathBuf};

use kraftd::protocol::records::{split_batches, ControlRecord};

use crate::harness::mixed_quorum::Member;
use crate::harness::quorum_probe::read_log_batches;
use crate::harness::{
    FormatFlag, JavaController, KraftdProcess, Properties, Quorum, TestDir, Voter,
    KRAFTD_COMMAND_TIMEOUT,
};

/// Which implementation runs a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Java,
    Kraftd,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Java => "java",
            Kind::Kraftd => "kraftd",
        })
    }
}

/// One voter of a VotersRecord, as the tests compare them: id, directory id, endpoints
/// (`NAME://host:port`) and the supported kraft.version range.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct VoterEntry {
    pub id: i32,
    pub directory_id: String,
    pub endpoints: Vec<String>,
    pub kraft_version: (i16, i16),
}

/// A VotersRecord at its log offset.
pub type VotersAt = (i64, Vec<VoterEntry>);

/// A node of a dynamic quorum: its id, kind, controller port and config, and its process.
pub struct Node {
    pub id: i32,
    pub kind: Kind,
    pub port: u16,
    /// The `server.properties` it runs with (`add-controller --command-config` reads it).
    pub config: PathBuf,
    pub member: Member,
}

impl Node {
    pub fn name(&self) -> String {
        format!("{}-{}", self.kind, self.id)
    }

    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The directory holding `meta.properties` and `__cluster_metadata-0`.
    pub fn metadata_dir(&self) -> PathBuf {
        self.member.metadata_dir()
    }

    /// The `directory.id` its format wrote into `meta.properties`.
    pub fn directory_id(&self) -> String {
        self.member.directory_id()
    }

    pub fn is_running(&mut self) -> bool {
        match &mut self.member {
            Member::Java(j) => j.is_running(),
            Member::Kraftd(k, _) => k.is_running(),
        }
    }

    /// Every VotersRecord in the node's log segments (not its snapshots), in offset order.
    pub fn voters_history(&self) -> Vec<VotersAt> {
        voters_history(&self.metadata_dir())
    }
}

/// Decodes every KRaftVoters control record in `<metadata_dir>/__cluster_metadata-0/*.log`.
pub fn voters_history(metadata_dir: &Path) -> Vec<VotersAt> {
    let mut out = Vec::new();
    for (_, _, bytes) in read_log_batches(metadata_dir) {
        for batch in split_batches(&bytes).batches {
            if !batch.is_control() {
                continue;
            }
            let records = batch.records().unwrap_or_else(|e| {
                panic!(
                    "{}: unreadable control batch at {}: {e}",
                    metadata_dir.display(),
                    batch.base_offset()
                )
            });
            for r in records.iter() {
                let r = r.unwrap_or_else(|e| panic!("unreadable control record: {e}"));
                let decoded = ControlRecord::decode(r.key, r.value).unwrap_or_else(|e| {
                    panic!("offset {}: undecodable control record: {e:?}", r.offset)
                });
                if let ControlRecord::KRaftVoters(v) = decoded {
                    let mut voters: Vec<VoterEntry> = v
                        .voters
                        .iter()
                        .map(|v| VoterEntry {
                            id: v.voter_id,
                            directory_id: v.voter_directory_id.to_string(),
                            endpoints: v
                                .endpoints
                                .iter()
                                .map(|e| format!("{}://{}:{}", e.name, e.host, e.port))
                                .collect(),
                            kraft_version: (
                                v.k_raft_version_feature.min_supported_version,
                                v.k_raft_version_feature.max_supported_version,
                            ),
                        })
                        .collect();
                    voters.sort();
                    out.push((r.offset, voters));
                }
            }
        }
    }
    out
}

/// The voter ids of a VotersRecord.
pub fn ids(voters: &[VoterEntry]) -> Vec<i32> {
    voters.iter().map(|v| v.id).collect()
}

/// The properties of a kraftd controller, Kafka's keys; `quorum` as for a Java node.
pub fn kraftd_props(id: i32, port: u16, data: &Path, quorum: &Quorum) -> (Properties, FormatFlag) {
    let join =
        |v: &[Voter], f: &dyn Fn(&Voter) -> String| v.iter().map(f).collect::<Vec<_>>().join(",");
    let mut p = Properties::new();
    p.set("process.roles", "controller")
        .set("node.id", id.to_string())
        .set("listeners", format!("CONTROLLER://127.0.0.1:{port}"))
        .set("controller.listener.names", "CONTROLLER")
        .set("listener.security.protocol.map", "CONTROLLER:PLAINTEXT")
        .set("log.dirs", data.display().to_string());
    let flag = match quorum {
        Quorum::Standalone => {
            p.set(
                "controller.quorum.bootstrap.servers",
                format!("127.0.0.1:{port}"),
            );
            FormatFlag::Standalone
        }
        Quorum::InitialControllers(v) => {
            p.set(
                "controller.quorum.bootstrap.servers",
                join(v, &Voter::endpoint),
            );
            FormatFlag::InitialControllers(join(v, &|v| {
                format!("{}@{}:{}", v.id, v.endpoint(), v.directory_id)
            }))
        }
        Quorum::Bootstrap(servers) => {
            p.set("controller.quorum.bootstrap.servers", servers.join(","));
            FormatFlag::NoInitialControllers
        }
        Quorum::StaticVoters(v) => {
            p.set(
                "controller.quorum.voters",
                join(v, &|v| format!("{}@{}", v.id, v.endpoint())),
            );
            FormatFlag::None
        }
    };
    (p, flag)
}

/// `kraftd format -t <cluster> -c <config> [flag]`, which must succeed.
pub fn kraftd_format(config: &Path, cluster_id: &str, flag: &FormatFlag) {
    kraftd_format_with(config, cluster_id, flag, &[]);
}

/// [`kraftd_format`] with more arguments (e.g. `--release-version 4.0-IV3`).
pub fn kraftd_format_with(config: &Path, cluster_id: &str, flag: &FormatFlag, extra: &[&str]) {
    let config = config.display().to_string();
    let mut args = vec!["format", "-t", cluster_id, "-c", &config];
    match flag {
        FormatFlag::None => {}
        FormatFlag::Standalone => args.push("--standalone"),
        FormatFlag::InitialControllers(v) => args.extend(["--initial-controllers", v.as_str()]),
        FormatFlag::NoInitialControllers => args.push("--no-initial-controllers"),
    }
    args.extend_from_slice(extra);
    KraftdProcess::run(&args, &[], KRAFTD_COMMAND_TIMEOUT).assert_success();
}

/// Formats and starts one controller of `kind`. `extra` properties go on top of the harness's
/// (e.g. a `controller.quorum.bootstrap.servers` listing every node of the test).
pub fn start_node(
    dir: &TestDir,
    kind: Kind,
    id: i32,
    port: u16,
    cluster_id: &str,
    quorum: Quorum,
    extra: &[(&str, String)],
) -> Node {
    start_node_formatted(dir, kind, id, port, cluster_id, quorum, extra, &[])
}

/// [`start_node`] with more `format` arguments (e.g. `--release-version 4.0-IV3`).
#[allow(clippy::too_many_arguments)]
pub fn start_node_formatted(
    dir: &TestDir,
    kind: Kind,
    id: i32,
    port: u16,
    cluster_id: &str,
    quorum: Quorum,
    extra: &[(&str, String)],
    format_args: &[&str],
) -> Node {
    // A replacement node (same id, new disk) gets a directory of its own: `<kind>-<id>-2`, ...
    let mut name = format!("{kind}-{id}");
    let mut n = 1;
    while dir.join(&name).exists() {
        n += 1;
        name = format!("{kind}-{id}-{n}");
    }
    match kind {
        Kind::Java => {
            let mut b = JavaController::builder(id)
                .quorum(quorum)
                .controller_port(port)
                .cluster_id(cluster_id)
                .format_args(format_args)
                .name(&name);
            for (k, v) in extra {
                b = b.prop(k, v);
            }
            let java = b.start(dir);
            Node {
                id,
                kind,
                port,
                config: java.config_path().to_path_buf(),
                member: Member::Java(java),
            }
        }
        Kind::Kraftd => {
            let data = dir.subdir(format!("{name}-data"));
            let (mut props, flag) = kraftd_props(id, port, &data, &quorum);
            for (k, v) in extra {
                props.set(*k, v.clone());
            }
            let config = KraftdProcess::write_config(dir, &name, &props);
            kraftd_format_with(&config, cluster_id, &flag, format_args);
            let arg = config.display().to_string();
            let process = KraftdProcess::start(dir, &name, &["start", &arg], &[]);
            Node {
                id,
                kind,
                port,
                config,
                member: Member::Kraftd(process, data),
            }
        }
    }
}
