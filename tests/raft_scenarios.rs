//! Scenario scripts: every `tests/raft_scenarios/*.txt` is a script of directives, each
//! followed by the output it must print (cockroachdb/datadriven's format; the directive set is
//! `kraftd::raft::sim::script::DIRECTIVES`). The cluster runs with fixed timing, so no
//! transcript depends on how random numbers are drawn, and invariants are checked after every
//! event. Scripts with `add-nodes machine=controller` replicate the metadata controller
//! (tests/controller_machine) instead of a list of values.
//!
//! Controller transcripts: every `tests/controller_scenarios/*.txt` drives the quorum
//! controller (`kraftd::controller::quorum::QuorumController`) as the node loop does, over a
//! fake raft and a manual clock, in the same format (directives: tests/quorum_controller).
//!
//! After a deliberate behaviour change, rewrite the outputs of both (the directives and
//! comments stay) with `RAFT_REWRITE=1 cargo test --release --features testkit --test raft_scenarios` and review
//! `git diff tests/raft_scenarios tests/controller_scenarios`.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod controller_machine;
mod controller_requests;
mod quorum_controller;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kraftd::raft::sim::script::{self, Case};
use quorum_controller::Outputs;

const DIR: &str = "tests/raft_scenarios";
const CONTROLLER_DIR: &str = "tests/controller_scenarios";

fn scripts(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// The first differing line of a block, and both blocks.
fn mismatch(file: &str, case: &Case, actual: &[String]) -> String {
    let at = case
        .expected
        .iter()
        .zip(actual)
        .position(|(e, a)| e != a)
        .unwrap_or(case.expected.len().min(actual.len()));
    let block = |lines: &[String]| {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("  {} {l}", if i == at { '>' } else { ' ' }))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "{file}:{}: `{}` printed something else (first difference at output line {}):\n expected:\n{}\n actual:\n{}",
        case.line,
        case.directive,
        at + 1,
        block(&case.expected),
        block(actual)
    )
}

/// A raft scenario script's outputs.
fn run_raft_script(text: &str) -> Outputs {
    // `add-nodes machine=controller`: every node replicates the metadata controller.
    let tally = Arc::new(Mutex::new(controller_machine::ControllerTally::default()));
    let machines = [("controller", controller_machine::factory(tally, 33))];
    script::run_with(text, &machines).map_err(|e| (e.line, e.message))
}

/// Runs one script of `dir` with `run`; compares (or, when `rewrite`, rewrites) its output
/// blocks.
fn check(dir: &str, path: &Path, run: fn(&str) -> Outputs, rewrite: bool) -> Result<(), String> {
    let file = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let (script, outputs) = run(&text).map_err(|(line, why)| format!("{file}:{line}: {why}"))?;
    if rewrite {
        let new = script.render(&outputs);
        if new != text {
            std::fs::write(path, new).map_err(|e| format!("{file}: {e}"))?;
        }
        return Ok(());
    }
    match script
        .cases
        .iter()
        .zip(&outputs)
        .find(|(c, a)| c.expected != **a)
    {
        Some((case, actual)) => Err(mismatch(&file, case, actual)),
        None => Ok(()),
    }
}

/// Every script of `dir` prints what it expects (or is rewritten, with `RAFT_REWRITE`).
fn check_all(dir: &str, run: fn(&str) -> Outputs) {
    let rewrite = std::env::var_os("RAFT_REWRITE").is_some();
    let files = scripts(dir);
    assert!(!files.is_empty(), "no scripts in {dir}");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| check(dir, f, run, rewrite).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scripts failed:\n\n{}\n\nafter a deliberate change: RAFT_REWRITE=1 cargo test --release --features testkit --test raft_scenarios, then review `git diff {dir}`",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn scenario_scripts_print_what_they_expect() {
    check_all(DIR, run_raft_script);
}

#[test]
fn controller_scripts_print_what_they_expect() {
    check_all(CONTROLLER_DIR, quorum_controller::run);
}

/// The stall of issue #36 comes back under the rule before its fix: the transcript of the
/// mixed quorum, with kraftd voter n3 keeping stale refusals, elects nobody, and n3 is still the
/// prospective it became when n1 was killed.
#[test]
fn the_stall_transcript_elects_nobody_under_the_old_rule() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(DIR)
        .join("a_kafka_voter_that_refused_while_following_a_dead_leader_is_asked_again.txt");
    let text = std::fs::read_to_string(&path).expect("the stall transcript");
    let planted = text.replace("n3:kraftd", "n3:stale-refusals");
    assert_ne!(planted, text, "the script names n3's rules");
    let (_, outputs) = script::run_with(&planted, &[]).expect("the script runs");
    let lines: Vec<&String> = outputs.iter().flatten().collect();
    let after_kill = lines
        .iter()
        .skip_while(|l| !l.contains("n1: crash"))
        .collect::<Vec<_>>();
    assert!(!after_kill.is_empty(), "n1 is killed in the script");
    let elected: Vec<_> = after_kill
        .iter()
        .filter(|l| l.contains("Leader(e"))
        .collect();
    assert!(
        elected.is_empty(),
        "a leader under the old rule: {elected:?}"
    );
    let status = lines.last().map(|l| l.as_str()).unwrap_or_default();
    assert!(
        status.starts_with("n3: Prospective(e1"),
        "n3 is still the prospective of e1 at the end: {status}"
    );
    // And with the fix the same script elects n3 (checked line by line by the test above).
    assert!(text.contains("Leader(e2)"));
}
