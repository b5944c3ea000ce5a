//! Scenario scripts in the manner of etcd's datadriven tests (cockroachdb/datadriven): a file
//! of directives, each followed by the output it is expected to print (`format`). The
//! directives (`directive::DIRECTIVES`) build a cluster with fixed timing, so that nothing in
//! a transcript depends on how random numbers are drawn, and drive it; invariants are checked
//! after every event and after every directive.

pub mod args;
pub mod directive;
pub mod format;
mod run;

pub use directive::{Directive, DIRECTIVES};
pub use format::{Case, Script};

use crate::raft::sim::state_machine::MachineFactory;

/// Where a script went wrong: its 1-based line and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub line: usize,
    pub message: String,
}

/// Parses a script, then runs every directive on a fresh cluster: the script and what each
/// directive printed, in order. Every directive is parsed before the first one runs.
pub fn run(text: &str) -> Result<(Script, Vec<Vec<String>>), ScriptError> {
    run_with(text, &[])
}

/// [`run`], where `add-nodes machine=NAME` may also name one of `machines` (`values`, the
/// list of values, is always known).
pub fn run_with(
    text: &str,
    machines: &[(&str, MachineFactory)],
) -> Result<(Script, Vec<Vec<String>>), ScriptError> {
    let script = Script::parse(text).map_err(|(line, message)| ScriptError { line, message })?;
    let directives = script
        .cases
        .iter()
        .map(|case| {
            Directive::parse(&case.directive).map_err(|message| ScriptError {
                line: case.line,
                message,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut runner = run::Runner::new(machines);
    let mut outputs = Vec::new();
    for (case, d) in script.cases.iter().zip(&directives) {
        let output = runner.execute(d).map_err(|message| ScriptError {
            line: case.line,
            message,
        })?;
        outputs.push(output);
    }
    Ok((script, outputs))
}

#[cfg(test)]
mod tests {
    use super::{run, run_with};
    use crate::raft::sim::state_machine::MachineFactory;

    #[test]
    fn add_nodes_names_only_a_machine_the_run_knows() {
        let script = "add-nodes voters=1 machine=controller\n----\nok\n";
        let e = run(script).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.message.contains("knows the machines values"),
            "{}",
            e.message
        );
        let machines = [("controller", MachineFactory::default())];
        let (_, outputs) = run_with(script, &machines).unwrap();
        assert_eq!(outputs[0][0], "t=0 n1: down -> Unattached(e0)");
    }
}
