//! `process_*`: the families every Prometheus client library exports for its own process, read
//! from /proc/self with as few system calls as a scrape can afford: one `pread` of `stat`, one
//! `fstat` of `fd` (Linux 6.2+ gives the open descriptors as its size; older kernels list it),
//! `getrlimit`, and the process CPU clock. Both files are opened once (a path walk through
//! /proc costs more than the read), and the start time is read once.
//!
//! The `prometheus` crate's collector (procfs) opens and parses five files a scrape, listing
//! /proc/self/fd whole; `make bench-scrape` times both ways (`process_us`,
//! `crate_process_collector_us`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use super::text::Exposition;

/// What a scrape reads of this process.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSample {
    pub cpu_seconds: f64,
    pub open_fds: Option<u64>,
    pub max_fds: Option<u64>,
    pub virtual_bytes: u64,
    pub resident_bytes: u64,
    pub threads: u64,
    pub start_time_seconds: Option<f64>,
}

/// This process, as `/metrics` reads it.
#[derive(Debug)]
pub struct ProcessMetrics {
    /// Seconds since the epoch at which the process started (`None`: /proc did not say).
    start_time_seconds: Option<f64>,
    page_bytes: u64,
    /// /proc/self/stat and /proc/self/fd, open for the process's life (`None`: /proc is not
    /// there, and `process_*` are left out). Reading a /proc file again from offset 0 reads
    /// it anew; the fd directory's open descriptor counts itself among the open ones.
    stat: Option<File>,
    fd_dir: Option<File>,
}

/// /proc/self/stat is about 300 bytes; this leaves room for a command name of 64.
const STAT_BYTES: usize = 1024;

impl ProcessMetrics {
    pub fn for_self() -> ProcessMetrics {
        let stat = std::fs::read_to_string("/proc/self/stat").ok();
        let started_ticks = stat.as_deref().and_then(|s| stat_field(s, STARTTIME));
        let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("btime "))
                .and_then(|v| v.trim().parse::<u64>().ok())
        });
        let start_time_seconds = started_ticks
            .zip(boot)
            .map(|(ticks, boot)| boot as f64 + ticks as f64 / clock_ticks_per_second() as f64);
        ProcessMetrics {
            start_time_seconds,
            page_bytes: sysconf(libc::_SC_PAGESIZE, 4096),
            stat: File::open("/proc/self/stat").ok(),
            fd_dir: File::open("/proc/self/fd").ok(),
        }
    }

    /// `None` when /proc/self/stat cannot be read or parsed.
    pub fn sample(&self) -> Option<ProcessSample> {
        let mut buf = [0u8; STAT_BYTES];
        let n = self.stat.as_ref()?.read_at(&mut buf, 0).ok()?;
        let stat = std::str::from_utf8(&buf[..n]).ok()?;
        Some(ProcessSample {
            cpu_seconds: cpu_time(None)?.as_secs_f64(),
            open_fds: self.fd_dir.as_ref().and_then(open_fds),
            max_fds: max_fds(),
            virtual_bytes: stat_field(stat, VSIZE)?,
            resident_bytes: stat_field(stat, RSS)? * self.page_bytes,
            threads: stat_field(stat, NUM_THREADS)?,
            start_time_seconds: self.start_time_seconds,
        })
    }
}

impl ProcessSample {
    /// The families, under the names Prometheus's client libraries give them.
    pub fn families(&self, f: &mut Exposition) {
        f.counter(
            "process_cpu_seconds_total",
            "User and system CPU time of the process, in seconds.",
            self.cpu_seconds,
        );
        if let Some(n) = self.open_fds {
            f.gauge("process_open_fds", "File descriptors open.", n as f64);
        }
        if let Some(n) = self.max_fds {
            f.gauge(
                "process_max_fds",
                "The most file descriptors the process may open (soft limit).",
                n as f64,
            );
        }
        f.gauge(
            "process_virtual_memory_bytes",
            "Virtual memory size, in bytes.",
            self.virtual_bytes as f64,
        );
        f.gauge(
            "process_resident_memory_bytes",
            "Resident memory size, in bytes.",
            self.resident_bytes as f64,
        );
        if let Some(at) = self.start_time_seconds {
            f.gauge(
                "process_start_time_seconds",
                "When the process started, in seconds since the Unix epoch.",
                at,
            );
        }
        f.gauge(
            "process_threads",
            "Threads of the process.",
            self.threads as f64,
        );
    }
}

// Fields of proc_pid_stat(5), numbered from 1 (pid) as the manual numbers them.
pub const UTIME: usize = 14;
pub const STIME: usize = 15;
const NUM_THREADS: usize = 20;
const STARTTIME: usize = 22;
const VSIZE: usize = 23;
const RSS: usize = 24;

/// Field `n` of a /proc/<pid>/stat line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from after its last ')': field 3 is the first there.
pub fn stat_field(stat: &str, n: usize) -> Option<u64> {
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    after_name
        .split(' ')
        .nth(n.checked_sub(3)?)?
        .trim()
        .parse()
        .ok()
}

/// The clock ticks a second that /proc's times count in.
pub fn clock_ticks_per_second() -> u64 {
    sysconf(libc::_SC_CLK_TCK, 100)
}

/// The CPU time of every thread a process has run, living or exited, to the nanosecond: this
/// process's (`None`), or another's (`clock_getcpuclockid`; the benches read controllers so).
pub fn cpu_time(pid: Option<u32>) -> Option<Duration> {
    let clock = match pid {
        None => libc::CLOCK_PROCESS_CPUTIME_ID,
        Some(pid) => {
            let mut clock: libc::clockid_t = 0;
            // SAFETY: clock_getcpuclockid only writes into the clock id we own.
            let rc =
                unsafe { libc::clock_getcpuclockid(libc::pid_t::try_from(pid).ok()?, &mut clock) };
            if rc != 0 {
                return None;
            }
            clock
        }
    };
    let mut at = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(clock, &mut at) };
    (rc == 0).then(|| Duration::new(at.tv_sec as u64, at.tv_nsec as u32))
}

/// The descriptors open: the size of /proc/self/fd (Linux 6.2 and later), else its entries.
fn open_fds(dir: &File) -> Option<u64> {
    match dir.metadata().ok()?.len() {
        0 => std::fs::read_dir("/proc/self/fd")
            .ok()
            .map(|d| d.count() as u64),
        n => Some(n),
    }
}

fn max_fds() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes into the rlimit we own.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    // RLIM_INFINITY too, as its number (as the crate and Prometheus's Go client report it).
    (rc == 0).then_some(limit.rlim_cur)
}

fn sysconf(name: libc::c_int, fallback: u64) -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let v = unsafe { libc::sysconf(name) };
    u64::try_from(v).ok().filter(|v| *v > 0).unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::metrics::text::Format;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        // A command name with a space and a ')' in it, as a process may choose.
        let line = "42 (we ird) x) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 5 0 1234 \
                    567890 321 18446744073709551615";
        assert_eq!(stat_field(line, NUM_THREADS), Some(5));
        assert_eq!(stat_field(line, STARTTIME), Some(1234));
        assert_eq!(stat_field(line, VSIZE), Some(567890));
        assert_eq!(stat_field(line, RSS), Some(321));
        assert_eq!(stat_field("no name here", RSS), None);
    }

    /// The `prometheus` crate's collector (procfs) is the oracle: the same families, and the
    /// same values where they hold still between the two reads.
    #[test]
    fn agrees_with_the_prometheus_crates_process_collector() {
        use prometheus::core::Collector;
        use prometheus::proto::MetricType;
        let theirs = prometheus::process_collector::ProcessCollector::for_self().collect();
        let ours = ProcessMetrics::for_self().sample().expect("/proc/self");
        let mut f = Exposition::new(Format::Text, 0);
        ours.families(&mut f);
        let text = String::from_utf8(f.finish()).expect("UTF-8");
        // (name, type) of each family, and each sample's value.
        let mut kinds = Vec::new();
        let mut values = std::collections::BTreeMap::new();
        for line in text.lines() {
            if let Some(typed) = line.strip_prefix("# TYPE ") {
                let (name, kind) = typed.split_once(' ').expect("# TYPE name kind");
                kinds.push((name.to_string(), kind.to_string()));
            } else if !line.starts_with('#') {
                let (name, value) = line.split_once(' ').expect("name value");
                values.insert(name.to_string(), value.parse::<f64>().expect(line));
            }
        }
        let theirs_of = |name: &str| {
            theirs
                .iter()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("the crate exports {name}"))
        };
        let value = |name: &str| {
            let family = theirs_of(name);
            let m = &family.get_metric()[0];
            match family.get_field_type() {
                MetricType::COUNTER => m.get_counter().get_value(),
                _ => m.get_gauge().get_value(),
            }
        };
        for (name, kind) in &kinds {
            let theirs = match theirs_of(name).get_field_type() {
                MetricType::COUNTER => "counter",
                _ => "gauge",
            };
            assert_eq!(kind, theirs, "{name}");
        }
        assert_eq!(kinds.len(), theirs.len(), "the same families");
        let ours_of = |name: &str| *values.get(name).expect(name);
        assert_eq!(ours_of("process_max_fds"), value("process_max_fds"));
        // The crate truncates the start time to whole seconds; kraftd keeps the ticks' 10 ms,
        // as Prometheus's Go client does.
        let started = ours_of("process_start_time_seconds");
        assert_eq!(started.floor(), value("process_start_time_seconds"));
        // Other tests open and close files and threads meanwhile: near, not equal.
        let near = |name: &str, slack: f64| {
            let (a, b) = (ours_of(name), value(name));
            assert!((a - b).abs() <= slack, "{name}: ours {a}, theirs {b}");
        };
        near("process_open_fds", 64.0);
        near("process_threads", 64.0);
        near("process_cpu_seconds_total", 5.0);
        near("process_virtual_memory_bytes", 512.0 * 1024.0 * 1024.0);
        near("process_resident_memory_bytes", 256.0 * 1024.0 * 1024.0);
    }

    #[test]
    fn open_fds_agrees_with_a_listing() {
        let dir = File::open("/proc/self/fd").expect("/proc/self/fd");
        let own = open_fds(&dir).expect("/proc/self/fd");
        let listed = std::fs::read_dir("/proc/self/fd").expect("fd").count() as u64;
        // The listing holds one more, the descriptor reading it; other tests' come and go.
        assert!(own.abs_diff(listed) <= 16, "{own} vs {listed}");
    }
}
