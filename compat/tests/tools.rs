//! kraftd's storage tools against Kafka 4.4.0's: `kraftd format` writes what `kafka-storage
//! format` writes (batch by batch, record by record; only timestamps and random directory ids
//! differ), `kafka-storage info` accepts the result and `kraftd storage-info` prints what it
//! prints, a Java controller leads on a kraftd-formatted dir; bad input fails cleanly.
//! `kraftd dump-log` against `kafka-dump-log`: see tools/dump.rs.

mod add_scram;
mod checkpoint;
mod dump;
mod release_versions;

use checkpoint::compare_checkpoints;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kraftd::log::meta_properties::MetaProperties;
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::records::{split_batches, ControlRecord};

use crate::harness::{
    free_port, random_kafka_uuid, FormatFlag, JavaController, Kafka, KraftdProcess, Output,
    Properties, TestDir, Tool, KRAFTD_COMMAND_TIMEOUT,
};

const START_TIMEOUT: Duration = Duration::from_secs(90);
const CHECKPOINT: &str = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint";

pub(crate) fn kraftd(args: &[&str]) -> Output {
    KraftdProcess::run(args, &[], KRAFTD_COMMAND_TIMEOUT)
}

/// Output that must not come from a panic.
#[track_caller]
pub(crate) fn assert_clean_failure(out: &Output, needle: &str) {
    out.assert_failure();
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(!all.contains("panicked"), "{out}");
    assert!(all.contains(needle), "expected {needle:?} in:\n{out}");
}

/// A controller config with its own data dirs (two: the metadata dir first, and one more).
fn config(dir: &TestDir, name: &str, quorum_key: &str, quorum: &str, port: u16) -> PathBuf {
    let mut p = Properties::new();
    p.set("process.roles", "controller")
        .set("node.id", "1")
        .set("listeners", format!("CONTROLLER://127.0.0.1:{port}"))
        .set("controller.listener.names", "CONTROLLER")
        .set("listener.security.protocol.map", "CONTROLLER:PLAINTEXT")
        .set(quorum_key, quorum)
        .set(
            "log.dirs",
            format!(
                "{},{}",
                dir.join(format!("{name}/meta")).display(),
                dir.join(format!("{name}/data")).display()
            ),
        );
    let path = dir.subdir(name).join("server.properties");
    p.write(&path);
    path
}

fn flag_args(flag: &FormatFlag) -> Vec<String> {
    match flag {
        FormatFlag::None => vec![],
        FormatFlag::Standalone => vec!["--standalone".into()],
        FormatFlag::InitialControllers(v) => vec!["--initial-controllers".into(), v.clone()],
        FormatFlag::NoInitialControllers => vec!["--no-initial-controllers".into()],
    }
}

fn kraftd_format(config: &Path, cluster_id: &str, flag: &FormatFlag, extra: &[&str]) -> Output {
    let cfg = config.to_str().unwrap();
    let mut args = vec!["format", "-t", cluster_id, "-c", cfg];
    let flags = flag_args(flag);
    args.extend(flags.iter().map(String::as_str));
    args.extend_from_slice(extra);
    kraftd(&args)
}

fn meta(dir: &Path) -> MetaProperties {
    MetaProperties::read_from_dir(dir).unwrap()
}

#[test]
fn kraftd_format_writes_what_kafka_storage_format_writes_in_every_mode() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let (port, port2) = (free_port(), free_port());
    let cluster = random_kafka_uuid();
    let (id1, id2) = (random_kafka_uuid(), random_kafka_uuid());
    let initial = format!("1@127.0.0.1:{port}:{id1},2@127.0.0.1:{port2}:{id2}");
    let bootstrap = format!("127.0.0.1:{port}");
    let modes = [
        (
            "standalone",
            "controller.quorum.bootstrap.servers",
            bootstrap.clone(),
            FormatFlag::Standalone,
            3,
        ),
        (
            "initial",
            "controller.quorum.bootstrap.servers",
            bootstrap.clone(),
            FormatFlag::InitialControllers(initial),
            3,
        ),
        (
            "joining",
            "controller.quorum.bootstrap.servers",
            bootstrap.clone(),
            FormatFlag::NoInitialControllers,
            2,
        ),
        (
            "static",
            "controller.quorum.voters",
            format!("1@127.0.0.1:{port}"),
            FormatFlag::None,
            1,
        ),
    ];
    for (name, key, value, flag, control_records) in modes {
        let ours = config(&dir, &format!("kraftd-{name}"), key, &value, port);
        let java = config(&dir, &format!("java-{name}"), key, &value, port);
        let out = kraftd_format(&ours, &cluster, &flag, &[]);
        out.assert_success();
        let jout = kafka.storage_format(&java, &cluster, &flag, &[]);
        jout.assert_success();
        // Same "Formatting ..." lines, paths aside.
        let formatting = |o: &Output, who: &str| -> Vec<String> {
            o.stdout
                .lines()
                .filter(|l| l.starts_with("Formatting"))
                .map(|l| l.replace(&format!("{who}-{name}"), "X"))
                .collect::<std::collections::BTreeSet<String>>()
                .into_iter()
                .collect()
        };
        // (Both print them in Java's HashSet order of the full paths, which differ here; the
        // order itself is unit-tested in src/server/cli/format.rs.)
        assert_eq!(
            formatting(&out, "kraftd"),
            formatting(&jout, "java"),
            "{name}"
        );
        let (meta_ours, meta_java) = (
            dir.join(format!("kraftd-{name}/meta")),
            dir.join(format!("java-{name}/meta")),
        );
        let a = fs::read(meta_ours.join(CHECKPOINT)).unwrap();
        let b = fs::read(meta_java.join(CHECKPOINT)).unwrap();
        let exact = matches!(
            flag,
            FormatFlag::InitialControllers(_) | FormatFlag::None | FormatFlag::NoInitialControllers
        );
        let described = compare_checkpoints(&a, &b, exact);
        assert_eq!(
            described.iter().filter(|d| *d != "metadata").count(),
            control_records + 1,
            "{name}: {described:?}"
        );
        // Only the metadata dir holds a checkpoint, in both.
        for root in [&meta_ours, &meta_java] {
            let data = root.parent().unwrap().join("data");
            assert!(
                !data.join("__cluster_metadata-0").exists(),
                "{}",
                data.display()
            );
        }
        let mode = fs::metadata(meta_ours.join(CHECKPOINT))
            .unwrap()
            .permissions();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode.mode() & 0o777, 0o400, "read-only, as Java leaves it");
        // meta.properties in both dirs, with the voter's directory id where it is a voter.
        let m = meta(&meta_ours);
        assert_eq!(
            (m.version, m.node_id, m.cluster_id.as_deref()),
            (1, Some(1), Some(cluster.as_str()))
        );
        let d = meta(&dir.join(format!("kraftd-{name}/data")));
        assert_ne!(d.directory_id, m.directory_id);
        match &flag {
            FormatFlag::InitialControllers(_) => {
                assert_eq!(m.directory_id.unwrap().to_string(), id1);
                assert_eq!(meta(&meta_java).directory_id, m.directory_id);
            }
            FormatFlag::Standalone => {
                let split = split_batches(&a);
                let recs = split.batches[0].records().unwrap();
                let voters = recs.iter().map(|r| r.unwrap()).last().unwrap();
                match ControlRecord::decode(voters.key, voters.value).unwrap() {
                    ControlRecord::KRaftVoters(v) => {
                        assert_eq!(Some(v.voters[0].voter_directory_id), m.directory_id)
                    }
                    other => panic!("{other:?}"),
                }
            }
            _ => {}
        }
        // Java's `kafka-storage info` accepts kraftd's dirs; `kraftd storage-info` says the same.
        let cfg = ours.to_str().unwrap();
        let info = kafka.run(Tool::Storage, &["info", "-c", cfg]);
        info.assert_success();
        let mine = kraftd(&["storage-info", "-c", cfg]);
        mine.assert_success();
        assert_eq!(mine.stdout, info.stdout, "{name}");
        // A second format is refused; --ignore-formatted accepts it, as Java does.
        let again = kraftd_format(&ours, &cluster, &flag, &[]);
        assert_clean_failure(&again, "is already formatted. Use --ignore-formatted");
        let jagain = kafka.storage_format(&ours, &cluster, &flag, &[]);
        jagain.assert_failure();
        let ignored = kraftd_format(&ours, &cluster, &flag, &["--ignore-formatted"]);
        ignored.assert_success();
        assert!(ignored
            .stdout
            .contains("All of the log directories are already formatted."));
    }
}

#[test]
fn storage_info_matches_java_on_unformatted_and_mismatched_dirs() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let cfg = config(
        &dir,
        "n",
        "controller.quorum.bootstrap.servers",
        &format!("127.0.0.1:{port}"),
        port,
    );
    let cfg_s = cfg.to_str().unwrap();
    let compare = |what: &str| {
        let java = kafka.run(Tool::Storage, &["info", "-c", cfg_s]);
        let ours = kraftd(&["storage-info", "-c", cfg_s]);
        assert_eq!(
            ours.code(),
            java.code(),
            "{what}: exit code\n{ours}\n{java}"
        );
        assert_eq!(ours.stdout, java.stdout, "{what}");
    };
    compare("missing dirs");
    fs::create_dir_all(dir.join("n/meta")).unwrap();
    fs::create_dir_all(dir.join("n/data")).unwrap();
    compare("unformatted dirs");
    let cluster = random_kafka_uuid();
    kraftd_format(&cfg, &cluster, &FormatFlag::Standalone, &[]).assert_success();
    compare("formatted");
    MetaProperties::v1(
        &random_kafka_uuid(),
        1,
        Some(Uuid::parse(&random_kafka_uuid()).unwrap()),
    )
    .write_to_dir(&dir.join("n/data"))
    .unwrap();
    compare("mismatched cluster ids");
}

#[test]
fn a_java_controller_leads_on_a_dir_formatted_by_kraftd() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let data = dir.join("controller-1/data");
    let mut p = Properties::new();
    p.set("process.roles", "controller")
        .set("node.id", "1")
        .set("listeners", format!("CONTROLLER://127.0.0.1:{port}"))
        .set("controller.listener.names", "CONTROLLER")
        .set("listener.security.protocol.map", "CONTROLLER:PLAINTEXT")
        .set(
            "controller.quorum.bootstrap.servers",
            format!("127.0.0.1:{port}"),
        )
        .set("log.dirs", data.display().to_string());
    let cfg = dir.subdir("format").join("server.properties");
    p.write(&cfg);
    let cluster = random_kafka_uuid();
    kraftd_format(&cfg, &cluster, &FormatFlag::Standalone, &[]).assert_success();
    let dir_id = meta(&data).directory_id.unwrap();
    let mut java = JavaController::builder(1)
        .controller_port(port)
        .cluster_id(cluster.clone())
        .prop("log.dirs", data.display().to_string())
        .skip_format()
        .start(&dir);
    let status = java.wait_until_leader(START_TIMEOUT);
    assert_eq!(status.leader_id, 1);
    assert_eq!(status.cluster_id, cluster);
    assert!(
        status.fields["CurrentVoters"].contains(&dir_id.to_string()),
        "{status:?}"
    );
    let features = kafka.finalized_features(&format!("127.0.0.1:{port}"));
    assert_eq!(features["metadata.version"], "4.4-IV2");
    assert_eq!(features["kraft.version"], "1");
    assert_eq!(features["group.version"], "1");
}

#[test]
fn bad_arguments_corrupt_or_foreign_files_fail_cleanly() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let port = free_port();
    let dynamic = format!("127.0.0.1:{port}");
    let cfg = config(
        &dir,
        "n",
        "controller.quorum.bootstrap.servers",
        &dynamic,
        port,
    );
    let cluster = random_kafka_uuid();
    // The same refusals as Java, with its messages.
    let cases: [(&[&str], &str); 5] = [
        (&[], "you must specify one of the following: --standalone"),
        (
            &["--standalone", "--release-version", "9.9"],
            "Unknown metadata.version '9.9'",
        ),
        (
            &["--standalone", "--feature", "foo.version=1"],
            "Unsupported feature: foo.version",
        ),
        (
            &[
                "--standalone",
                "--release-version",
                "3.9",
                "--feature",
                "metadata.version=21",
            ],
            "Use --release-version instead",
        ),
        (
            &["--initial-controllers", "1@127.0.0.1:9093"],
            "No colon following port could be found",
        ),
    ];
    for (extra, message) in cases {
        let out = kraftd_format(&cfg, &cluster, &FormatFlag::None, extra);
        assert_clean_failure(&out, message);
        let mut java_args = vec![
            "format",
            "-c",
            cfg.to_str().unwrap(),
            "-t",
            cluster.as_str(),
        ];
        java_args.extend_from_slice(extra);
        kafka.run(Tool::Storage, &java_args).assert_failure();
    }
    let static_cfg = config(
        &dir,
        "s",
        "controller.quorum.voters",
        &format!("1@127.0.0.1:{port}"),
        port,
    );
    let out = kraftd_format(&static_cfg, &cluster, &FormatFlag::Standalone, &[]);
    assert_clean_failure(&out, "You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone");
    assert!(
        !dir.join("n/meta").exists() && !dir.join("s/meta").exists(),
        "nothing written"
    );
    // `start` refuses an unformatted dir, as Java does, pointing at `kraftd format`.
    let out = kraftd(&["start", cfg.to_str().unwrap()]);
    assert_clean_failure(&out, "kraftd format");
    // A foreign config file, a foreign meta.properties.
    let junk = dir.join("junk.properties");
    fs::write(&junk, [0xffu8, 0xfe, 0, 1, 2, b'=', b'\n', 0x80]).unwrap();
    assert_clean_failure(
        &kraftd_format(&junk, &cluster, &FormatFlag::Standalone, &[]),
        "kraftd format:",
    );
    fs::create_dir_all(dir.join("n/meta")).unwrap();
    fs::write(
        dir.join("n/meta/meta.properties"),
        "this is not\u{0}a properties file\nversion=7\n",
    )
    .unwrap();
    assert_clean_failure(
        &kraftd_format(
            &cfg,
            &cluster,
            &FormatFlag::Standalone,
            &["--ignore-formatted"],
        ),
        "meta.properties",
    );
    assert_clean_failure(
        &kraftd(&["start", cfg.to_str().unwrap()]),
        "meta.properties",
    );
    assert_clean_failure(
        &kraftd(&["storage-info", "-c", cfg.to_str().unwrap()]),
        "meta.properties",
    );
    // dump-log: foreign and corrupt files, missing paths.
    let foreign = dir.join("00000000000000000000.log");
    fs::write(
        &foreign,
        b"#!/bin/sh\necho this is a shell script, not a Kafka segment\n",
    )
    .unwrap();
    assert_clean_failure(
        &kraftd(&["dump-log", foreign.to_str().unwrap()]),
        "does not start with a Kafka record batch",
    );
    let other = dir.join("notes.txt");
    fs::write(&other, b"hello").unwrap();
    assert_clean_failure(
        &kraftd(&["dump-log", other.to_str().unwrap()]),
        "is not a Kafka log segment",
    );
    assert_clean_failure(
        &kraftd(&["dump-log", dir.join("missing.log").to_str().unwrap()]),
        "missing.log",
    );
    let empty = dir.subdir("empty");
    assert_clean_failure(
        &kraftd(&["dump-log", empty.to_str().unwrap()]),
        "holds no log segment",
    );
}
