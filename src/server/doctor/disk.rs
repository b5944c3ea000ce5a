//! The `disk` check: the metadata log directory's filesystem running out of space (the
//! runbook's "snapshot failures: disk full"). kraftd halts with one error line when a write
//! finds no space, as Java's controller does; the check warns before that.

use super::diagnose::{Check, Verdict};
use crate::server::disk_space::DiskSpace;

/// Below this share of its filesystem free, the metadata log directory is nearly full.
pub const MIN_FREE_PERCENT: f64 = 10.0;

const NEARLY_FULL_FIX: &str = "free space or grow the volume: a controller halts when a log or \
     snapshot write finds no space; lowering metadata.max.retention.bytes lets snapshots delete \
     more of the log";

/// The check for the filesystem holding `dir`, from its space (or why it could not be read).
pub fn disk_check(dir: &str, space: std::io::Result<DiskSpace>) -> Check {
    let space = match space {
        Ok(s) => s,
        Err(e) => {
            return Check {
                name: "disk",
                verdict: Verdict::Degraded,
                summary: format!("cannot read the free space of {dir}'s filesystem: {e}"),
                findings: Vec::new(),
                fix: Some("check that the directory exists and is readable".into()),
            }
        }
    };
    let percent = space.free_percent();
    let summary = format!(
        "{} bytes free of {} ({percent:.1}%) on {dir}'s filesystem",
        space.free_bytes, space.total_bytes
    );
    if percent >= MIN_FREE_PERCENT {
        return Check {
            name: "disk",
            verdict: Verdict::Healthy,
            summary,
            findings: Vec::new(),
            fix: None,
        };
    }
    Check {
        name: "disk",
        verdict: Verdict::Degraded,
        summary: format!("nearly full: {summary}, below {MIN_FREE_PERCENT}%"),
        findings: Vec::new(),
        fix: Some(NEARLY_FULL_FIX.into()),
    }
}

/// The live check: each controller's metadata disk as its metrics report it (kraftd's), the
/// nearly full ones named; None when no endpoint reported one.
pub fn disks_check(disks: &[(i32, DiskSpace)]) -> Option<Check> {
    if disks.is_empty() {
        return None;
    }
    let full: Vec<String> = disks
        .iter()
        .filter(|(_, d)| d.free_percent() < MIN_FREE_PERCENT)
        .map(|(node, d)| {
            format!(
                "controller {node}: {} bytes free of {} ({:.1}%)",
                d.free_bytes,
                d.total_bytes,
                d.free_percent()
            )
        })
        .collect();
    let least = disks
        .iter()
        .map(|(_, d)| d.free_percent())
        .fold(f64::INFINITY, f64::min);
    Some(if full.is_empty() {
        Check {
            name: "disk",
            verdict: Verdict::Healthy,
            summary: format!(
                "{} controllers' metadata disks read; the fullest has {least:.1}% free",
                disks.len()
            ),
            findings: Vec::new(),
            fix: None,
        }
    } else {
        Check {
            name: "disk",
            verdict: Verdict::Degraded,
            summary: format!(
                "{} of {} controllers' metadata disks nearly full (below {MIN_FREE_PERCENT}% free)",
                full.len(),
                disks.len()
            ),
            findings: full,
            fix: Some(NEARLY_FULL_FIX.into()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(free: u64, total: u64) -> std::io::Result<DiskSpace> {
        Ok(DiskSpace {
            free_bytes: free,
            total_bytes: total,
        })
    }

    #[test]
    fn a_roomy_filesystem_is_healthy() {
        let c = disk_check("/var/lib/kraftd", space(900, 1000));
        assert_eq!(c.verdict, Verdict::Healthy);
        assert_eq!(
            c.summary,
            "900 bytes free of 1000 (90.0%) on /var/lib/kraftd's filesystem"
        );
    }

    #[test]
    fn a_nearly_full_filesystem_is_degraded_with_a_fix() {
        let c = disk_check("/var/lib/kraftd", space(49_152, 4_194_304));
        assert_eq!(c.verdict, Verdict::Degraded);
        assert_eq!(
            c.summary,
            "nearly full: 49152 bytes free of 4194304 (1.2%) on /var/lib/kraftd's filesystem, below 10%"
        );
        assert!(c.fix.is_some());
    }

    #[test]
    fn the_live_check_names_the_nearly_full_controller_and_is_absent_without_readings() {
        assert_eq!(disks_check(&[]), None);
        let roomy = DiskSpace {
            free_bytes: 800,
            total_bytes: 1000,
        };
        let full = DiskSpace {
            free_bytes: 20,
            total_bytes: 1000,
        };
        let c = disks_check(&[(1, roomy), (2, full), (3, roomy)]).expect("a check");
        assert_eq!(c.verdict, Verdict::Degraded);
        assert_eq!(c.findings, ["controller 2: 20 bytes free of 1000 (2.0%)"]);
        let c = disks_check(&[(1, roomy)]).expect("a check");
        assert_eq!(c.verdict, Verdict::Healthy);
    }

    #[test]
    fn an_unreadable_directory_says_why() {
        let gone = std::io::Error::from_raw_os_error(libc::ENOENT);
        let c = disk_check("/gone", Err(gone));
        assert_eq!(c.verdict, Verdict::Degraded);
        assert!(c
            .summary
            .ends_with("No such file or directory (os error 2)"));
    }
}
