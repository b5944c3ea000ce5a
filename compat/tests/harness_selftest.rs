//! Proves the harness itself: process hygiene without Kafka, then real Kafka tools and a real
//! Java controller.

use std::fs;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::netns::{self, Netns};
use crate::harness::quorum_probe::describe_quorum_at;
use crate::harness::{
    free_port, random_kafka_uuid, run_command, voters, ChildGuard, JavaBroker, JavaController,
    Kafka, KraftdProcess, Properties, Quorum, TestDir, Tool, ToolOptions, KRAFTD_COMMAND_TIMEOUT,
};

/// Generous for one JVM on a loaded 2-core machine, still far below "hung".
const START_TIMEOUT: Duration = Duration::from_secs(90);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// True once `pid` is gone or a zombie (a container's pid 1 may never reap orphans).
fn is_dead(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name: "1234 (sleep) S ...".
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

fn wait_dead(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while !is_dead(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn child_guard_kills_the_whole_process_group_on_drop() {
    let dir = TestDir::new();
    let log = dir.log_path("sh");
    let mut cmd = Command::new("sh");
    // A grandchild in the background: killing only `sh` would leave it running.
    cmd.args(["-c", "sleep 300 & echo $!; wait"]);
    let mut guard = ChildGuard::spawn_logged("sh", cmd, &log).expect("spawn sh");
    let started = Instant::now();
    let grandchild: u32 = loop {
        if let Some(pid) = fs::read_to_string(&log)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "sh never printed its background pid"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let child = guard.pid();
    assert!(guard.is_running());
    drop(guard);
    assert!(
        wait_dead(child, Duration::from_secs(5)),
        "sh (pid {child}) survived the guard"
    );
    assert!(
        wait_dead(grandchild, Duration::from_secs(5)),
        "background sleep (pid {grandchild}) survived the guard"
    );
}

#[test]
fn timed_out_command_is_killed_and_reported() {
    let dir = TestDir::new();
    let mut cmd = Command::new("sleep");
    cmd.arg("300");
    let out = run_command(
        cmd,
        "sleep 300".into(),
        None,
        Duration::from_millis(500),
        dir.path(),
    );
    assert!(out.timed_out(), "{out}");
    assert!(!out.success());
    assert!(
        out.elapsed < Duration::from_secs(10),
        "took {:?}",
        out.elapsed
    );
    assert!(out.to_string().contains("timed out"), "{out}");
}

#[test]
fn wait_exit_kills_and_panics_on_timeout() {
    let dir = TestDir::new();
    let mut cmd = Command::new("sleep");
    cmd.arg("300");
    let mut guard =
        ChildGuard::spawn_logged("sleep", cmd, &dir.log_path("sleep")).expect("spawn sleep");
    let pid = guard.pid();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        guard.wait_exit(Duration::from_millis(200))
    }));
    let message = *result
        .expect_err("wait_exit must panic on timeout")
        .downcast::<String>()
        .expect("a String panic");
    assert!(message.contains("did not exit within"), "{message}");
    assert!(
        wait_dead(pid, Duration::from_secs(5)),
        "sleep (pid {pid}) survived wait_exit's timeout"
    );
}

#[test]
fn test_dir_is_kept_with_its_logs_when_the_test_panics() {
    let (path_tx, path_rx) = std::sync::mpsc::channel();
    let result = std::thread::spawn(move || {
        let dir = TestDir::named("selftest-failing");
        fs::write(dir.log_path("proc"), "line 1\nline 2\n").expect("write log");
        path_tx.send(dir.path().to_path_buf()).expect("send path");
        panic!("deliberate failure to exercise TestDir's drop");
    })
    .join();
    assert!(result.is_err());
    let kept = path_rx.recv().expect("the thread sent its dir");
    assert!(
        kept.join("logs/proc.log").exists(),
        "{} was not kept",
        kept.display()
    );
    fs::remove_dir_all(&kept).expect("clean up the kept dir");

    let passing = TestDir::named("selftest-passing");
    let path = passing.path().to_path_buf();
    drop(passing);
    assert!(
        std::env::var_os(crate::harness::KEEP_ENV).is_some() || !path.exists(),
        "a passing test's dir is removed"
    );
}

#[test]
fn free_ports_are_distinct_and_bindable() {
    let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
    let mut unique = ports.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        ports.len(),
        "a port was handed out twice: {ports:?}"
    );
    std::net::TcpListener::bind(("127.0.0.1", ports[0])).expect("a free port can be bound");
}

#[test]
fn kafka_storage_random_uuid_prints_a_22_char_id() {
    let kafka = Kafka::get();
    // Through the generic runner, with the main class from Kafka's bin/kafka-storage.sh ...
    let out = kafka.tool("kafka.tools.StorageTool", &["random-uuid"]);
    out.assert_success();
    let id = out.stdout.trim();
    assert_eq!(id.len(), 22, "not a 22-char id: {id:?}\n{out}");
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{id:?}"
    );
    // ... and through the wrapper, which also checks it decodes to 16 bytes.
    assert_ne!(kafka.random_uuid(), id);
}

#[test]
fn every_tool_main_class_exists_in_the_resolved_jars() {
    // Both releases: the 4.0 compat tests run 4.0's tools, servers and verifying clients.
    for kafka in [Kafka::get(), Kafka::kafka_4_0()] {
        for tool in [
            Tool::Server,
            Tool::Storage,
            Tool::MetadataQuorum,
            Tool::DumpLog,
            Tool::BrokerApiVersions,
            Tool::Topics,
            Tool::Features,
            Tool::Configs,
            Tool::Acls,
            Tool::ConsoleProducer,
            Tool::ConsoleConsumer,
            Tool::DelegationTokens,
            Tool::LeaderElection,
            Tool::ReassignPartitions,
            Tool::Cluster,
            Tool::ClientMetrics,
            Tool::ProducerPerformance,
            Tool::VerifiableProducer,
            Tool::VerifiableConsumer,
        ] {
            let class = kafka.main_class(tool); // panics if none of the candidates exists
            assert!(kafka.has_class(class), "Kafka {}: {class}", kafka.version());
        }
    }
}

/// Each release's JVMs map that release's class-data-sharing archive, never another's: it lies
/// in the release's own directory, and a JVM of the release that must map it (`-Xshare:on`
/// fails when the archive does not match the classpath) runs.
#[test]
fn each_release_maps_its_own_class_data_sharing_archive() {
    let releases = [Kafka::get(), Kafka::kafka_4_0()];
    assert_ne!(releases[0].version(), releases[1].version());
    for kafka in releases {
        let Some(archive) = kafka.class_archive() else {
            eprintln!("Kafka {}: no class-data-sharing archive", kafka.version());
            continue;
        };
        assert!(
            archive.starts_with(kafka.cache_dir()),
            "Kafka {}'s archive {} is not in {}",
            kafka.version(),
            archive.display(),
            kafka.cache_dir().display()
        );
        let options = ToolOptions {
            jvm_opts: vec!["-Xshare:on".to_string()],
            ..ToolOptions::default()
        };
        let out = kafka.tool_with(kafka.main_class(Tool::Storage), &["random-uuid"], &options);
        assert!(
            out.success(),
            "Kafka {}'s JVM cannot map {}:\n{out}",
            kafka.version(),
            archive.display()
        );
    }
}

#[test]
fn standalone_java_controller_leads_then_stops_on_sigterm() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut controller = JavaController::builder(1).start(&dir);

    let status = controller.wait_until_leader(START_TIMEOUT);
    assert_eq!(status.leader_id, 1);
    assert_eq!(status.cluster_id, controller.cluster_id());
    assert!(status.leader_epoch >= 1, "{status:?}");
    let voters = &status.fields["CurrentVoters"];
    assert!(
        voters.contains(&format!(
            "CONTROLLER://{}",
            controller.controller_endpoint()
        )),
        "{voters}"
    );
    assert!(voters.contains(&controller.directory_id()), "{voters}");
    assert!(
        controller.wait_for_log("Completed transition to Leader", Duration::from_secs(5)),
        "no leader line in the server log"
    );

    // --standalone writes a voter set into the log, which needs kraft.version 1.
    let features = kafka.finalized_features(&controller.controller_endpoint());
    assert_eq!(features["kraft.version"], "1", "{features:?}");

    controller.sigterm();
    let exit = controller.wait_exit(STOP_TIMEOUT);
    assert!(!controller.is_running());
    // The JVM runs Kafka's shutdown hook, then exits with status 143.
    assert_eq!(
        exit.code(),
        Some(143),
        "a SIGTERMed JVM exits with 128 + 15 after its shutdown hooks"
    );

    // The stopped controller's metadata log decodes with Kafka's own dump tool.
    let segments = metadata_segments(&controller.metadata_log_dir());
    let paths: Vec<&Path> = segments.iter().map(|p| p.as_path()).collect();
    let dump = kafka.dump_log(&paths, &["--cluster-metadata-decoder"]);
    dump.assert_success();
    assert!(
        dump.stdout.contains("FEATURE_LEVEL_RECORD") || dump.stdout.contains("FeatureLevel"),
        "{dump}"
    );
}

fn metadata_segments(log_dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = fs::read_dir(log_dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", log_dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no .log segment in {}",
        log_dir.display()
    );
    files
}

#[test]
fn java_broker_joins_a_standalone_controller_and_serves_a_topic() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut controller = JavaController::builder(1).start(&dir);
    let mut broker =
        JavaBroker::builder(2, Quorum::Bootstrap(vec![controller.controller_endpoint()]))
            .cluster_id(controller.cluster_id())
            .start(&dir);
    controller.wait_until_leader(START_TIMEOUT);
    broker.wait_until_started(START_TIMEOUT);

    let bootstrap = broker.bootstrap_server();
    kafka.broker_api_versions(&bootstrap).assert_success();
    kafka
        .topics(
            &bootstrap,
            &[
                "--create",
                "--topic",
                "t",
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ],
        )
        .assert_success();
    kafka
        .console_produce(&bootstrap, "t", &["a", "b", "c"])
        .assert_success();
    let consumed = kafka.console_consume(&bootstrap, "t", 3, 20_000);
    consumed.assert_success();
    assert_eq!(
        consumed.stdout.lines().collect::<Vec<_>>(),
        ["a", "b", "c"],
        "{consumed}"
    );
}

#[test]
fn three_java_controllers_with_initial_controllers_elect_a_leader() {
    let dir = TestDir::new();
    let quorum = voters(1..=3);
    let cluster_id = random_kafka_uuid();
    let mut nodes: Vec<JavaController> = quorum
        .iter()
        .map(|v| {
            JavaController::builder(v.id)
                .quorum(Quorum::InitialControllers(quorum.clone()))
                .cluster_id(&cluster_id)
                .start(&dir)
        })
        .collect();
    let status = nodes[0].wait_for_leader(START_TIMEOUT);
    assert!((1..=3).contains(&status.leader_id), "{status:?}");
    for node in &nodes {
        assert_eq!(
            node.directory_id(),
            quorum[(node.node_id() - 1) as usize].directory_id
        );
    }
    nodes.iter_mut().for_each(|n| n.sigterm());
    for node in &mut nodes {
        node.wait_exit(STOP_TIMEOUT);
    }
}

#[test]
fn kraftd_binary_runs_under_the_harness() {
    let dir = TestDir::new();
    // One-shot: `kraftd --help` (every kraftd command has --help; see architecture.md).
    let out = KraftdProcess::run(&["--help"], &[], KRAFTD_COMMAND_TIMEOUT);
    out.assert_success();
    // Long-running launcher: same binary, logged into the TestDir, reaped on exit or drop.
    let mut process =
        KraftdProcess::start(&dir, "kraftd-help", &["--help"], &[("RUST_LOG", "debug")]);
    let status = process.wait_exit(KRAFTD_COMMAND_TIMEOUT);
    assert!(
        status.success(),
        "kraftd --help exited with {status:?}; log {}",
        process.log_path().display()
    );
    assert!(!process.is_running());
}

#[test]
fn static_quorum_java_controller_leads_with_kraft_version_0() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut controller = JavaController::builder(1)
        .quorum(Quorum::StaticVoters(voters([1])))
        .start(&dir);
    controller.wait_until_leader(START_TIMEOUT);
    let voters_prop = controller
        .config()
        .get("controller.quorum.voters")
        .map(str::to_string);
    assert_eq!(
        voters_prop,
        Some(format!("1@{}", controller.controller_endpoint()))
    );
    // A static quorum (no voter set in the log) finalizes kraft.version 0.
    let features = kafka.finalized_features(&controller.controller_endpoint());
    assert_eq!(features["kraft.version"], "0", "{features:?}");
}

/// `netns.rs`: a kraftd started in a namespace listens on the inner address and is reached
/// through the link; a partition cuts it off both ways, a heal joins it again, and dropping the
/// namespace removes it and its link. Leftovers of a dead test binary are removed.
#[test]
fn netns_partition_cuts_a_node_off_and_heal_joins_it_again() {
    // A leftover of a test binary that died (a pid above pid_max never runs).
    let pid_max: u32 = fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dead = format!("kraftd-soak-{}-0", pid_max + 1);
    let dead_if = format!("ks{}-0h", pid_max + 1);
    for args in [
        vec!["netns", "add", dead.as_str()],
        vec![
            "link",
            "add",
            &dead_if,
            "type",
            "veth",
            "peer",
            "name",
            "ksdead-0n",
        ],
    ] {
        let out = Command::new("ip").args(&args).output().unwrap();
        assert!(out.status.success(), "ip {args:?}: {out:?}");
    }

    let dir = TestDir::new();
    let net = Netns::create();
    let ip_out = |args: &[&str]| {
        let out = Command::new("ip").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        !ip_out(&["netns", "list"]).contains(&dead),
        "the dead test's namespace is left"
    );
    assert!(
        !ip_out(&["link", "show"]).contains(&dead_if),
        "the dead test's link is left"
    );

    // A process entered into the namespace has the inner address, not this side's.
    let mut cmd = Command::new("ip");
    cmd.args(["-o", "-4", "addr", "show"]);
    netns::enter(&mut cmd, net.name());
    let addrs = run_command(
        cmd,
        "ip addr in netns".into(),
        None,
        STOP_TIMEOUT,
        dir.path(),
    );
    addrs.assert_success();
    assert!(
        addrs
            .stdout
            .contains(&format!("inet {}/30", net.inside_addr()))
            && !addrs.stdout.contains(&format!("inet {}/", net.host_addr())),
        "{addrs}"
    );

    // kraftd inside, a single-node quorum on the inner address; a listener outside.
    let port = free_port();
    let inside = SocketAddr::from((net.inside_addr(), port));
    let mut props = Properties::new();
    props
        .set("process.roles", "controller")
        .set("node.id", "1")
        .set("listeners", format!("CONTROLLER://{inside}"))
        .set("controller.listener.names", "CONTROLLER")
        .set("controller.quorum.bootstrap.servers", inside.to_string())
        .set("log.dirs", dir.subdir("kraftd-data").display().to_string());
    let config = KraftdProcess::write_config(&dir, "kraftd", &props);
    let config = config.display().to_string();
    let id = random_kafka_uuid();
    KraftdProcess::run(
        &["format", "--standalone", "-t", &id, "-c", &config],
        &[],
        KRAFTD_COMMAND_TIMEOUT,
    )
    .assert_success();
    let mut kraftd = KraftdProcess::start_in_netns(
        &dir,
        "kraftd",
        &["start", &config],
        Vec::new(),
        Some(net.name()),
    );
    let outside = TcpListener::bind((net.host_addr(), 0)).unwrap();
    let outside = outside.local_addr().unwrap();

    // Both ways while the link is up, neither while it is down, both again once healed.
    let from_inside = |to: SocketAddr| {
        netns::run_inside(net.name(), || {
            TcpStream::connect_timeout(&to, Duration::from_secs(2)).is_ok()
        })
    };
    let leads = || describe_quorum_at(inside).is_some_and(|d| d.leader_id == 1);
    let eventually = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + START_TIMEOUT;
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    eventually(
        "kraftd in the namespace does not answer as the leader",
        &leads,
    );
    assert!(from_inside(outside), "the namespace cannot reach {outside}");
    assert!(!net.is_partitioned());

    net.partition();
    assert!(net.is_partitioned());
    assert!(
        describe_quorum_at(inside).is_none(),
        "kraftd answers through a partition"
    );
    assert!(
        !from_inside(outside),
        "the namespace reaches {outside} through a partition"
    );
    assert!(kraftd.is_running());

    net.heal();
    assert!(!net.is_partitioned());
    eventually("kraftd is not reached again after the heal", &leads);
    assert!(
        from_inside(outside),
        "the namespace cannot reach {outside} after the heal"
    );
    kraftd.stop(STOP_TIMEOUT);

    let (name, link) = (net.name().to_string(), format!("ks{}-", std::process::id()));
    let host_if = ip_out(&["-o", "link", "show"])
        .lines()
        .find_map(|l| {
            l.split(": ")
                .nth(1)?
                .split('@')
                .next()
                .filter(|n| n.starts_with(&link))
                .map(str::to_string)
        })
        .expect("the namespace's link on this side");
    drop(net);
    assert!(
        !ip_out(&["netns", "list"]).contains(&name),
        "{name} left after drop"
    );
    assert!(
        !ip_out(&["-o", "link", "show"]).contains(&format!("{host_if}@")),
        "{host_if} left after drop"
    );
}

/// The metrics names check (`harness::metrics`) fails when kraftd lacks a name Java exports or
/// exports it with another type, and spares Java's leader-only metrics on a kraftd follower.
#[test]
fn metrics_check_reports_what_kraftd_lacks() {
    use crate::harness::metrics::{missing_from_kraftd, Scrape};
    let java = Scrape::parse(include_str!("../metrics/java-4.4-controller-leader.prom"));
    assert!(java.signatures().len() > 40, "{:?}", java.signatures());
    assert!(missing_from_kraftd(&java, &java, true, true).is_empty());
    let mut kraftd = java.clone();
    kraftd
        .families
        .remove("kafka_server_raftmetrics_log_end_epoch");
    kraftd
        .families
        .get_mut("kafka_controller_kafkacontroller_globaltopiccount")
        .unwrap()
        .kind = "counter".into();
    let missing = missing_from_kraftd(&java, &kraftd, true, true);
    assert_eq!(
        missing,
        [
            "kafka_controller_kafkacontroller_globaltopiccount: gauge on Java, counter on kraftd",
            "kafka_server_raftmetrics_log_end_epoch (gauge, labels []): not exported by kraftd",
        ]
    );
    // A follower need not export what Java registers on its leader only.
    for name in crate::harness::metrics::LEADER_ONLY {
        kraftd.families.remove(name);
    }
    assert_eq!(missing_from_kraftd(&java, &kraftd, true, false).len(), 2);
    assert_eq!(missing_from_kraftd(&java, &kraftd, true, true).len(), 4);
}

/// The benches' keep-alive scraper (`harness::metrics::KeptScrape`) asks twice on one
/// connection, reads a chunked answer with an extension and trailers, and opens a new connection
/// when the exporter closed the kept one before answering.
#[test]
fn kept_scrapes_reuse_the_connection_and_reopen_a_closed_one() {
    use crate::harness::metrics::KeptScrape;
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("an address");
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        // Two answers per connection, then a close: a chunked one, then one with a length.
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            for answer in [
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nup 1\n\r\n0\r\nX-Trailer: t\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nup 2\n",
            ] {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if stream.read(&mut byte).unwrap_or(0) == 0 {
                        break;
                    }
                    head.push(byte[0]);
                }
                let _ = stream.write_all(answer.as_bytes());
            }
        }
    });
    let mut kept = KeptScrape::new(addr);
    assert_eq!(kept.scrape().as_deref(), Ok("up 1\n"));
    assert_eq!(kept.scrape().as_deref(), Ok("up 2\n"));
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "both on one connection");
    std::thread::sleep(Duration::from_millis(100));
    // The server closed that connection after two answers: asked again on a new one.
    assert_eq!(kept.scrape().as_deref(), Ok("up 1\n"));
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}
