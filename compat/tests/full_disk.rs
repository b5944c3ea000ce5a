//! kraftd on a full disk, as a real process: its metadata log lives on a small tmpfs that the
//! controller's own NoOpRecords fill. It must halt with exactly one error line naming the file
//! and the OS error and a non-zero exit code, without a panic; once the space is returned it
//! restarts, and every record committed before the fault is still in its log, at the same
//! offset with the same contents. `kraftd doctor --data-dir` finds the tmpfs roomy once
//! formatted and nearly full once kraftd halted (its `disk` check).
//!
//! Mounting the tmpfs needs root, which CI has: as any other user the test fails, saying so.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::doctor::doctor_offline;
use crate::harness::quorum_probe::describe_quorum;
use crate::harness::{free_port, KraftdProcess, Properties, TestDir, KRAFTD_COMMAND_TIMEOUT};
use kraftd::server::disk_space::disk_space;

/// The tmpfs holding the metadata log directory.
const TMPFS_BYTES: u64 = 4 << 20;
/// Free space left beside the filler file: what the NoOpRecords fill in a few seconds.
const HEADROOM_BYTES: u64 = 48 << 10;
/// How long kraftd may take to fill the headroom and halt (it takes about 5 s).
const FILL_TIMEOUT: Duration = Duration::from_secs(30);
const RESTART_TIMEOUT: Duration = Duration::from_secs(20);
const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// A tmpfs mounted for the test, unmounted when dropped (also while a failed test unwinds).
/// Declare it after the `TestDir` and before the processes that write to it: locals drop in
/// reverse order, so the processes are killed before the unmount.
struct Tmpfs {
    mount_point: PathBuf,
}

impl Tmpfs {
    fn mount(mount_point: &Path, bytes: u64) -> Tmpfs {
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={bytes},mode=0755"),
                "tmpfs",
            ])
            .arg(mount_point)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        assert!(
            out.status.success(),
            "mounting a {bytes}-byte tmpfs on {} failed ({}): {}",
            mount_point.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs {
            mount_point: mount_point.to_path_buf(),
        }
    }

    fn path(&self) -> &Path {
        &self.mount_point
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = |lazy: bool| {
            let mut cmd = Command::new("umount");
            if lazy {
                cmd.arg("-l");
            }
            cmd.arg(&self.mount_point)
                .status()
                .is_ok_and(|s| s.success())
        };
        // Never panic in drop; a busy mount is detached lazily instead.
        if !unmounted(false) && !unmounted(true) {
            eprintln!(
                "full_disk: could not unmount the tmpfs on {}; unmount it by hand",
                self.mount_point.display()
            );
        }
    }
}

#[track_caller]
fn require_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        uid, 0,
        "the full-disk test mounts a tmpfs and so must run as root (CI does); `id -u` is {uid}: \
         run `cargo test --release --features testkit --test compat full_disk` as root"
    );
}

/// Bytes an unprivileged writer can still allocate on the file system holding `path`.
fn free_bytes(path: &Path) -> u64 {
    disk_space(path)
        .unwrap_or_else(|e| panic!("statvfs {}: {e}", path.display()))
        .free_bytes
}

/// Asserts the doctor's `disk` check of `data` (offline) has `verdict`; its summary.
fn doctor_disk(data: &Path, verdict: &str) -> String {
    let d = doctor_offline(data);
    let summary = d.summary("disk");
    assert_eq!(d.check("disk")["verdict"], verdict, "{:#}", d.report);
    summary
}

/// Writes a file of `bytes` bytes and syncs it, so that its pages are taken.
fn write_filler(path: &Path, bytes: u64) {
    let mut f = fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let block = vec![0xa5u8; 64 << 10];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n])
            .unwrap_or_else(|e| panic!("filling {}: {e}", path.display()));
        left -= n as u64;
    }
    f.sync_all().unwrap();
}

/// A record of the metadata log as `kraftd dump-log --json` prints it: the epoch of its batch,
/// and the record itself (timestamp, key and value sizes, decoded payload or control data).
type LoggedRecord = (i64, Value);

/// Every record of the segments in `partition`, by offset (snapshots left out), read back with
/// `kraftd dump-log --json`, which also proves that the segments read cleanly.
fn read_back(partition: &Path) -> BTreeMap<i64, LoggedRecord> {
    let arg = partition.display().to_string();
    let out = KraftdProcess::run(&["dump-log", "--json", &arg], &[], KRAFTD_COMMAND_TIMEOUT);
    out.assert_success();
    let mut records = BTreeMap::new();
    let mut in_segment = false;
    for line in out.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("dump-log printed a line that is not JSON ({e}): {line}"));
        if v.get("file").is_some() {
            in_segment = v["type"] == "segment";
            continue;
        }
        if !in_segment {
            continue;
        }
        let epoch = v["partitionLeaderEpoch"]
            .as_i64()
            .unwrap_or_else(|| panic!("a batch without partitionLeaderEpoch: {line}"));
        for r in v["records"].as_array().expect("a batch has records") {
            let offset = r["offset"].as_i64().expect("a record has an offset");
            assert!(
                records.insert(offset, (epoch, r.clone())).is_none(),
                "offset {offset} is in the log twice"
            );
        }
    }
    records
}

/// The leader's high watermark as DescribeQuorum reports it, if node 1 leads.
fn high_watermark(port: u16) -> Option<i64> {
    describe_quorum(port)
        .filter(|d| d.partition_error.0 == 0 && d.leader_id == 1)
        .map(|d| d.high_watermark)
}

#[test]
fn a_full_disk_halts_kraftd_with_one_error_line_and_keeps_every_committed_record() {
    require_root();
    let begun = Instant::now();
    let dir = TestDir::new();
    let tmpfs = Tmpfs::mount(&dir.subdir("tmpfs"), TMPFS_BYTES);
    let data = tmpfs.path().join("data");
    let partition = data.join("__cluster_metadata-0");
    let port = free_port();
    let mut props = Properties::new();
    props
        .set("process.roles", "controller")
        .set("node.id", "1")
        .set("listeners", format!("CONTROLLER://127.0.0.1:{port}"))
        .set("controller.listener.names", "CONTROLLER")
        .set("listener.security.protocol.map", "CONTROLLER:PLAINTEXT")
        .set(
            "controller.quorum.bootstrap.servers",
            format!("127.0.0.1:{port}"),
        )
        .set("log.dirs", data.display().to_string())
        // A NoOpRecord every millisecond: the controller is its own writer.
        .set("metadata.max.idle.interval.ms", "1");
    let config = KraftdProcess::write_config(&dir, "kraftd", &props);
    let config = config.display().to_string();
    KraftdProcess::run(
        &["format", "--standalone", "-t", CLUSTER_ID, "-c", &config],
        &[],
        KRAFTD_COMMAND_TIMEOUT,
    )
    .assert_success();
    let roomy = doctor_disk(&data, "healthy");
    eprintln!("the doctor, formatted: {roomy}");
    let filler = tmpfs.path().join("filler");
    let free = free_bytes(tmpfs.path());
    assert!(free > HEADROOM_BYTES, "only {free} bytes free after format");
    write_filler(&filler, free - HEADROOM_BYTES);

    // Fill the disk, watching the high watermark until kraftd stops.
    let mut kraftd = KraftdProcess::start(&dir, "kraftd", &["start", &config], &[]);
    let mut committed = -1;
    while kraftd.is_running() {
        assert!(
            begun.elapsed() < FILL_TIMEOUT,
            "kraftd still runs after {FILL_TIMEOUT:?} with {HEADROOM_BYTES} bytes free on its disk"
        );
        if let Some(hw) = high_watermark(port) {
            committed = committed.max(hw);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let filled_after = begun.elapsed();
    let status = kraftd.wait_exit(Duration::from_secs(5));
    let log = fs::read_to_string(kraftd.log_path()).expect("kraftd's log");
    assert!(
        !log.contains("panicked"),
        "kraftd panicked on the full disk"
    );
    let code = status.code();
    assert!(
        code.is_some_and(|c| c != 0),
        "kraftd must exit non-zero on a full disk, not {status}"
    );
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert_eq!(
        errors.len(),
        1,
        "kraftd must print exactly one error line: {errors:#?}"
    );
    let error_line = errors[0];
    let partition_text = partition.display().to_string();
    assert!(
        error_line.contains(&format!("{partition_text}/"))
            && error_line.contains("No space left on device (os error 28)"),
        "the error line must name the file and the OS error: {error_line}"
    );
    let mentions = log
        .lines()
        .filter(|l| l.contains("No space left on device"))
        .count();
    assert_eq!(
        mentions, 1,
        "the fault is reported once, not {mentions} times"
    );
    assert!(
        committed > 100,
        "the high watermark was seen at {committed} only: the NoOpRecords did not commit"
    );

    // The doctor finds the metadata disk nearly full.
    let full = doctor_disk(&data, "degraded");
    assert!(full.starts_with("nearly full: "), "{full}");
    eprintln!("the doctor, halted: {full}");

    // The log as the halted process left it holds every committed offset.
    let before = read_back(&partition);
    let end_before = before.keys().next_back().map_or(0, |o| o + 1);
    assert!(
        (0..committed).all(|o| before.contains_key(&o)),
        "the log left on disk misses committed offsets below {committed}"
    );

    // Return the space and restart: the new epoch commits past the old log end.
    fs::remove_file(&filler).unwrap();
    kraftd.restart(&dir);
    let restarted = Instant::now();
    let hw_after = loop {
        match high_watermark(port) {
            Some(hw) if hw > end_before => break hw,
            _ if !kraftd.is_running() => panic!("kraftd stopped after its restart"),
            _ if restarted.elapsed() > RESTART_TIMEOUT => {
                panic!("kraftd did not commit past offset {end_before} after its restart")
            }
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let stopped = kraftd.stop(Duration::from_secs(20));
    assert!(stopped.success(), "kraftd's clean stop: {stopped}");
    let after = read_back(&partition);
    for (offset, record) in before.range(..committed) {
        assert_eq!(
            after.get(offset),
            Some(record),
            "committed offset {offset} changed or went missing after the restart"
        );
    }
    // Recovery keeps every whole batch, and a lone voter never truncates: the rest stays too.
    let kept = before.iter().all(|(o, r)| after.get(o) == Some(r));
    assert!(
        kept,
        "records on disk past the high watermark {committed} were lost"
    );
    println!(
        "full disk: halted after {filled_after:.1?} with {code:?}; error line: {error_line}\n\
         committed before the fault: offsets [0, {committed}); log end on disk {end_before}; \
         after the restart: high watermark {hw_after}, {} records, all {} records of before \
         unchanged; {:.1?} in all",
        after.len(),
        before.len(),
        begun.elapsed()
    );
}
