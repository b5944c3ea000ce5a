//! Scenario scripts: every `tests/raft_scenarios/*.txt` is a script of directives, each
//! followed by the output it must print (cockroachdb/datadriven's format; the directive set is
//! `kraftd::raft::sim::script::DIRECTIVES`). The cluster runs with fixed timing, so no
//! transcript depends on how random numbers are drawn, and invariants are checked after every
//! event. Scripts with `add-nodes machine=controller` replicate the metadata controller
//! (tests/controller_machine) instead of a list of values. After a deliberate behaviour change, rewrite the outputs (the directives and comments
//! stay) with `RAFT_REWRITE=1 cargo test --release --test raft_scenarios` and review
//! `git diff tests/raft_scenarios`.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod controller_machine;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kraftd::raft::sim::script::{self, Case};

const DIR: &str = "tests/raft_scenarios";

fn scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
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

/// Runs one script; compares (or, when `rewrite`, rewrites) its output blocks.
fn check(path: &Path, rewrite: bool) -> Result<(), String> {
    let file = format!("{DIR}/{}", path.file_name().unwrap().to_string_lossy());
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    // `add-nodes machine=controller`: every node replicates the metadata controller.
    let tally = Arc::new(Mutex::new(controller_machine::ControllerTally::default()));
    let machines = [("controller", controller_machine::factory(tally))];
    let (script, outputs) = script::run_with(&text, &machines)
        .map_err(|e| format!("{file}:{}: {}", e.line, e.message))?;
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

#[test]
fn scenario_scripts_print_what_they_expect() {
    let rewrite = std::env::var_os("RAFT_REWRITE").is_some();
    let files = scripts();
    assert!(!files.is_empty(), "no scripts in {DIR}");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| check(f, rewrite).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scripts failed:\n\n{}\n\nafter a deliberate change: RAFT_REWRITE=1 cargo test --release --test raft_scenarios, then review `git diff {DIR}`",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
