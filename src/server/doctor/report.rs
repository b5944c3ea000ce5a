//! The doctor's output: a verdict per check in text for people, or JSON for scripts.

use serde_json::{json, Value};

use super::diagnose::{Check, Verdict};

/// The worst verdict of `checks` (healthy when there are none).
pub fn overall(checks: &[Check]) -> Verdict {
    checks
        .iter()
        .map(|c| c.verdict)
        .max()
        .unwrap_or(Verdict::Healthy)
}

/// What an operator reads: one line per check, its findings indented below, then the fix.
/// `target` is the quorum's bootstrap endpoints (watched for `window_s`) or a data directory.
pub fn text(target: &str, window_s: Option<u64>, checks: &[Check]) -> String {
    let mut out = match window_s {
        Some(w) => format!("kraftd doctor: the quorum at {target}, watched for {w} s\n"),
        None => format!("kraftd doctor: the metadata log directory {target}\n"),
    };
    for c in checks {
        let tag = match c.verdict {
            Verdict::Healthy => "ok",
            Verdict::Degraded => "DEGRADED",
            Verdict::Down => "DOWN",
        };
        out.push_str(&format!("{tag:<9} {:<16} {}\n", c.name, c.summary));
        for f in &c.findings {
            out.push_str(&format!("{:<26} - {f}\n", ""));
        }
        if let Some(fix) = &c.fix {
            out.push_str(&format!("{:<26} fix: {fix}\n", ""));
        }
    }
    let verdict = overall(checks);
    out.push_str(&format!(
        "verdict: {} (exit {})\n",
        verdict.name(),
        verdict.exit_code()
    ));
    out
}

/// The same as JSON: `{"target", "window_s", "verdict", "checks": [{"name", "verdict",
/// "summary", "findings", "fix"}]}`.
pub fn json(target: &str, window_s: Option<u64>, checks: &[Check]) -> Value {
    json!({
        "target": target,
        "window_s": window_s,
        "verdict": overall(checks).name(),
        "checks": checks.iter().map(|c| json!({
            "name": c.name,
            "verdict": c.verdict.name(),
            "summary": c.summary,
            "findings": c.findings,
            "fix": c.fix,
        })).collect::<Vec<_>>(),
    })
}
