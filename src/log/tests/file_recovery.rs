//! Recovery of the file log on open: torn tails, garbage, corrupt batches, stale segments.

use std::fs::{self, OpenOptions};
use std::io::Write;

use super::*;

fn flushed_log(name: &str, batches: usize) -> (PathBuf, Vec<PathBuf>, Vec<u8>) {
    let dir = scratch(name);
    let mut log = FileLog::open(&dir, small_segments()).unwrap();
    append_n(&mut log, batches, 2);
    log.flush().unwrap();
    let all = read_all(&log);
    (dir, log.segment_paths(), all)
}

fn reopen(dir: &Path) -> FileLog {
    FileLog::open(dir, small_segments()).unwrap()
}

#[test]
fn a_torn_tail_is_cut_and_reported() {
    let (dir, segments, all) = flushed_log("torn", 3);
    assert_eq!(segments.len(), 1);
    let seg = &segments[0];
    let full = fs::metadata(seg).unwrap().len();
    // Half of a fourth batch reached the disk.
    let extra = batch(6, 2, 2, 1_000);
    OpenOptions::new()
        .append(true)
        .open(seg)
        .unwrap()
        .write_all(&extra[..extra.len() / 2])
        .unwrap();
    let log = reopen(&dir);
    assert_eq!(log.end_offset(), 6);
    assert_eq!(read_all(&log), all);
    assert_eq!(fs::metadata(seg).unwrap().len(), full, "the file was cut");
    let cut = &log.open_report().cuts[0];
    assert_eq!(&cut.path, seg);
    assert_eq!(cut.stop.position(), full);
    assert!(cut.stop.to_string().contains("torn"), "{}", cut.stop);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn garbage_after_the_last_batch_is_cut() {
    for garbage in [
        vec![0u8; 100],
        vec![0xffu8; 7],
        b"\0\0\0\0\0\0\0\x06\0\0\0\x40garbage-garbage".to_vec(),
    ] {
        let (dir, segments, all) = flushed_log("garbage", 2);
        OpenOptions::new()
            .append(true)
            .open(&segments[0])
            .unwrap()
            .write_all(&garbage)
            .unwrap();
        let log = reopen(&dir);
        assert_eq!(read_all(&log), all);
        assert_eq!(log.open_report().cuts.len(), 1);
        fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn a_corrupt_batch_cuts_its_segment_and_deletes_later_ones() {
    let (dir, segments, _) = flushed_log("corrupt", 20);
    assert!(segments.len() >= 3);
    // Flip a byte in the second batch of the first segment.
    let mut bytes = fs::read(&segments[0]).unwrap();
    let first_len = crate::protocol::records::split_batches(&bytes).batches[0].size();
    bytes[first_len + 70] ^= 0x55;
    fs::write(&segments[0], &bytes).unwrap();
    let log = reopen(&dir);
    assert_eq!(log.end_offset(), 2);
    assert_eq!(log.segment_paths(), &segments[..1]);
    let report = log.open_report();
    assert!(
        report.cuts[0].stop.to_string().contains("CRC"),
        "{:?}",
        report.cuts
    );
    assert_eq!(report.deleted_segments, &segments[1..]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_segment_that_does_not_continue_the_log_is_deleted() {
    let (dir, segments, all) = flushed_log("gap", 20);
    let last = segments.last().unwrap();
    // The previous segment lost its tail (never flushed); the later one survived a crash.
    let prev = &segments[segments.len() - 2];
    let prev_bytes = fs::read(prev).unwrap();
    let split = crate::protocol::records::split_batches(&prev_bytes);
    let keep = split.batches[0].size();
    fs::write(prev, &prev_bytes[..keep]).unwrap();
    let log = reopen(&dir);
    assert!(!last.exists());
    assert_eq!(log.segment_paths(), &segments[..segments.len() - 1]);
    assert!(read_all(&log).len() < all.len());
    assert!(all.starts_with(&read_all(&log)));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn stray_files_are_cleaned_and_java_files_kept() {
    let (dir, segments, _) = flushed_log("strays", 1);
    for name in [
        "00000000000000000007.log.deleted",
        "00000000000000000007.index.deleted",
        "00000000000000000099.index",
        "00000000000000000099.timeindex",
    ] {
        fs::write(dir.join(name), b"x").unwrap();
    }
    fs::write(segments[0].with_extension("index"), [0u8; 16]).unwrap();
    let log = reopen(&dir);
    for name in [
        "00000000000000000007.log.deleted",
        "00000000000000000007.index.deleted",
        "00000000000000000099.index",
        "00000000000000000099.timeindex",
    ] {
        assert!(!dir.join(name).exists(), "{name}");
    }
    assert!(
        segments[0].with_extension("index").exists(),
        "an intact segment's index stays"
    );
    assert_eq!(log.end_offset(), 2);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_empty_directory_starts_at_zero_and_a_wrong_checkpoint_is_rewritten() {
    let (dir, _, _) = flushed_log("epochs", 2);
    fs::write(dir.join("leader-epoch-checkpoint"), "0\n1\n9 3\n").unwrap();
    let log = reopen(&dir);
    assert_eq!(
        log.epoch_entries(),
        &[EpochEntry {
            epoch: 2,
            start_offset: 0
        }]
    );
    assert_eq!(
        fs::read_to_string(dir.join("leader-epoch-checkpoint")).unwrap(),
        "0\n1\n2 0\n"
    );
    drop(log);
    fs::write(dir.join("leader-epoch-checkpoint"), "garbage").unwrap();
    reopen(&dir);
    assert_eq!(
        fs::read_to_string(dir.join("leader-epoch-checkpoint")).unwrap(),
        "0\n1\n2 0\n"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_log_starting_above_zero_needs_a_snapshot() {
    let dir = scratch("inconsistent");
    fs::write(dir.join("00000000000000000010.log"), batch(10, 2, 1, 0)).unwrap();
    let err = FileLog::open(&dir, small_segments())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Inconsistent snapshot state") && err.contains("offset 10"),
        "{err}"
    );
    fs::remove_dir_all(dir).unwrap();
}
