//! The active controller's sweep of expired delegation tokens, on a Java 4.4 controller and on
//! kraftd, the same scenario on each: the controller sweeps every second
//! (`delegation.token.expiry.check.interval.ms`) with a 20 s renew period
//! (`delegation.token.expiry.time.ms`); through a stock broker `kafka-delegation-tokens`
//! creates token A living 5 s at most and token B, then renews B half way to its expiry. Each token
//! disappears from DescribeDelegationToken after its expiry (B's renewed one: B is still there
//! past its first expiry), and each controller's log holds one RemoveDelegationTokenRecord per
//! token, written after the token's last expiry and within a few sweeps of it, and logs the
//! removal in Java's words. Last, Java's image of each log equals kraftd's.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::tokens::{start_token_cluster, token_rows};
use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::{Kafka, TestDir};

const CHECK_INTERVAL_MS: i64 = 1_000;
const RENEW_PERIOD_MS: i64 = 20_000;
const A_MAX_LIFETIME_MS: i64 = 5_000;
/// How late after a token's expiry its removal may be written: a sweep interval, plus the
/// scheduling and commit slack of a loaded machine.
const REMOVAL_SLACK_MS: i64 = CHECK_INTERVAL_MS + 4_000;

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn sleep_until(wall: i64) {
    let wait = wall - wall_ms();
    std::thread::sleep(Duration::from_millis(wait.max(0) as u64));
}

/// A token record of the log: its batch's append time and Kafka's decoding of it.
#[derive(Debug)]
struct Logged {
    create_time: i64,
    kind: String,
    data: Value,
}

/// The token records of the metadata log in `metadata_dir`, decoded by `kafka-dump-log`.
fn token_records(kafka: &Kafka, metadata_dir: &Path) -> Vec<Logged> {
    let part = metadata_dir.join("__cluster_metadata-0");
    let mut segments: Vec<_> = std::fs::read_dir(&part)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    let files: Vec<&Path> = segments.iter().map(|p| p.as_path()).collect();
    let out = kafka.dump_log(&files, &["--cluster-metadata-decoder"]);
    out.assert_success();
    let mut records = Vec::new();
    for line in out.stdout.lines().filter(|l| l.starts_with("| offset:")) {
        let create_time = line
            .split("CreateTime: ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no CreateTime in {line}"));
        let Some((_, payload)) = line.split_once("payload: ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(payload) else {
            continue;
        };
        let kind = v["type"].as_str().unwrap_or_default().to_string();
        if kind.contains("DELEGATION_TOKEN") {
            records.push(Logged {
                create_time,
                kind,
                data: v["data"].clone(),
            });
        }
    }
    records
}

/// Checks `token`'s records: `writes` DelegationTokenRecords, then one removal written past
/// the last expiry (bounded by the max) and within the slack of it. Returns that expiry.
fn assert_swept(kind: Kind, records: &[Logged], token: &str, writes: usize) -> i64 {
    let mine: Vec<&Logged> = records
        .iter()
        .filter(|r| r.data["tokenId"] == token)
        .collect();
    let kinds: Vec<&str> = mine.iter().map(|r| r.kind.as_str()).collect();
    let mut expected = vec!["DELEGATION_TOKEN_RECORD"; writes];
    expected.push("REMOVE_DELEGATION_TOKEN_RECORD");
    assert_eq!(
        kinds, expected,
        "{kind}: the log's records of token {token}"
    );
    let last = &mine[writes - 1].data;
    let expiry = last["expirationTimestamp"]
        .as_i64()
        .unwrap()
        .min(last["maxTimestamp"].as_i64().unwrap());
    let removed_at = mine[writes].create_time;
    assert!(
        removed_at > expiry,
        "{kind}: token {token} was removed at {removed_at}, before its expiry {expiry}"
    );
    assert!(
        removed_at <= expiry + REMOVAL_SLACK_MS,
        "{kind}: token {token} expired at {expiry} but was removed only at {removed_at}"
    );
    eprintln!(
        "{kind}: token {token} expired at {expiry}, removed {} ms later",
        removed_at - expiry
    );
    expiry
}

fn sweep_scenario(kind: Kind) {
    let dir = TestDir::new();
    let props = [
        (
            "delegation.token.expiry.check.interval.ms",
            CHECK_INTERVAL_MS.to_string(),
        ),
        (
            "delegation.token.expiry.time.ms",
            RENEW_PERIOD_MS.to_string(),
        ),
    ];
    let (mut c, clients) = start_token_cluster(&dir, kind, &props);
    let create = |args: &[&str]| {
        let mut all = vec!["--create"];
        all.extend_from_slice(args);
        let out = clients.tokens(&all);
        out.assert_success();
        let rows = token_rows(&out.stdout);
        assert_eq!(rows.len(), 1, "{out}");
        (rows[0][0].clone(), rows[0][1].clone())
    };
    let (a, _) = create(&["--max-life-time-period", &A_MAX_LIFETIME_MS.to_string()]);
    let (b, b_hmac) = create(&["--max-life-time-period", "-1"]);
    // B expires RENEW_PERIOD_MS after the controller created it, before this.
    let b_first_expiry_bound = wall_ms() + RENEW_PERIOD_MS;
    eprintln!("{kind}: created token A {a} (5 s at most) and token B {b}");

    // Once the broker describes B, it applied A's creation too (A's record is first in the
    // log); then A goes, and B stays.
    clients.describe_until(|o| o.contains(&b));
    let listed = clients.describe_until(|o| !o.contains(&a));
    assert!(listed.contains(&b), "{kind}: B went with A:\n{listed}");
    eprintln!("{kind}: A is no longer described; B is");

    sleep_until(b_first_expiry_bound - RENEW_PERIOD_MS / 2);
    let renewed = clients.tokens(&[
        "--renew",
        "--hmac",
        &b_hmac,
        "--renew-time-period",
        &RENEW_PERIOD_MS.to_string(),
    ]);
    renewed.assert_success();
    assert!(
        wall_ms() < b_first_expiry_bound - 5 * CHECK_INTERVAL_MS,
        "{kind}: the renewal came too late to tell anything"
    );
    // Past B's first expiry and two sweeps: the renewal keeps it.
    sleep_until(b_first_expiry_bound + 2 * CHECK_INTERVAL_MS);
    let listed = clients.describe_until(|_| true);
    assert!(
        listed.contains(&b),
        "{kind}: B was removed before its renewed expiry:\n{listed}"
    );
    clients.describe_until(|o| !o.contains(&b));
    eprintln!("{kind}: B stayed past its first expiry and went after its renewed one");

    let text = c.controller.member.log_text();
    for token in [&a, &b] {
        let line = format!("Delegation token expired for token: {token} for owner: User:admin");
        assert!(text.contains(&line), "{kind} did not log {line:?}");
    }

    drop(clients);
    let metadata_dir = c.controller.metadata_dir();
    c.stop();
    let records = token_records(Kafka::get(), &metadata_dir);
    assert_swept(kind, &records, &a, 1);
    let renewed_expiry = assert_swept(kind, &records, &b, 2);
    let first_expiry = records
        .iter()
        .find(|r| r.data["tokenId"] == b.as_str())
        .and_then(|r| r.data["expirationTimestamp"].as_i64())
        .unwrap();
    assert!(
        first_expiry <= b_first_expiry_bound
            && renewed_expiry > first_expiry + 5 * CHECK_INTERVAL_MS,
        "{kind}: B's expiry {first_expiry} was renewed to {renewed_expiry}"
    );
    let (offset, _, _) =
        assert_image_equals_javas(&metadata_dir.join("__cluster_metadata-0"), None);
    eprintln!("{kind}: Java's image of the log equals kraftd's at offset {offset}");
}

#[test]
fn expired_tokens_are_swept_by_a_java_controller_and_by_kraftd() {
    // Each scenario mostly waits for tokens to expire, so both run at once; a thread is named
    // after the test and its kind, as its TestDir is.
    let test = std::thread::current()
        .name()
        .unwrap_or("token_sweep")
        .to_string();
    std::thread::scope(|s| {
        let runs: Vec<_> = [Kind::Java, Kind::Kraftd]
            .into_iter()
            .map(|kind| {
                std::thread::Builder::new()
                    .name(format!("{test}-{kind}"))
                    .spawn_scoped(s, move || sweep_scenario(kind))
                    .expect("cannot start a scenario thread")
            })
            .collect();
        for run in runs {
            if let Err(panic) = run.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}
