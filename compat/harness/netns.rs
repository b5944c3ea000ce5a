//! A network namespace for one node of a test, joined to the test's own namespace by a veth
//! pair, so that the node can be cut off from the others and joined again: a network partition
//! without netem, iptables or tc.
//!
//! ```text
//!   test's namespace                      namespace kraftd-soak-<pid>-<n>
//!   every other node, on HOST  <--veth-->  the node, on INSIDE
//!   ks<pid>-<n>h   10.199.x.y+1/30          ks<pid>-<n>n   10.199.x.y+2/30
//! ```
//!
//! [`Netns::partition`] takes the inner end of the link down: the node's sends fail at once (no
//! route), and the host end loses its carrier and silently drops what is sent to the node, as
//! with a pulled cable (connections from outside hang until their timeouts).
//! [`Netns::heal`] brings the link up again. Every node the inner one talks to must listen on
//! [`Netns::host_addr`] (127.0.0.1 inside the namespace is its own loopback); see
//! [`Netns::placement`].
//!
//! Needs root (CI runs as root). Dropping the [`Netns`] deletes the namespace and the veth pair,
//! on a panic too; a test binary that died without unwinding leaves them behind, and
//! [`Netns::create`] removes such leftovers of dead processes first.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Namespace names: `kraftd-soak-<pid>-<n>`.
const PREFIX: &str = "kraftd-soak-";

/// The addresses are taken from 10.199.0.0/24, one /30 per namespace (64 at a time): the
/// harness's certificates name each of them (`pki.rs`), so TLS with hostname verification
/// works across a namespace's link.
const NET: [u8; 3] = [10, 199, 0];

/// Every address a namespace's link may use.
pub fn link_addresses() -> impl Iterator<Item = Ipv4Addr> {
    (1..=254).map(|last| Ipv4Addr::new(NET[0], NET[1], NET[2], last))
}

/// One network namespace and the veth pair into it.
pub struct Netns {
    name: String,
    link: Link,
    host_if: String,
    host_addr: Ipv4Addr,
    inside_addr: Ipv4Addr,
}

/// The inner end of a namespace's veth pair: what [`Netns::partition`] and [`Netns::heal`]
/// switch. A clone can heal from another thread (e.g. after a delay while a test waits).
#[derive(Debug, Clone)]
pub struct Link {
    netns: String,
    ifname: String,
}

impl Link {
    /// Takes the link down: the node inside is cut off.
    pub fn down(&self) {
        ip(&["-n", &self.netns, "link", "set", &self.ifname, "down"]);
    }

    /// Brings the link up again (its address and route come back with it).
    pub fn up(&self) {
        ip(&["-n", &self.netns, "link", "set", &self.ifname, "up"]);
    }

    /// [`Self::up`] saying why it failed instead of panicking (for a thread that heals later,
    /// when the namespace may be gone with a failed test).
    pub fn try_up(&self) -> Result<(), String> {
        try_ip(&["-n", &self.netns, "link", "set", &self.ifname, "up"]).map(drop)
    }

    /// Whether the link is up (administratively).
    pub fn is_up(&self) -> bool {
        let out = ip(&["-n", &self.netns, "-o", "link", "show", &self.ifname]);
        // e.g. "2: ks1-0n@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ..."
        out.split(['<', '>'])
            .nth(1)
            .is_some_and(|flags| flags.split(',').any(|f| f == "UP"))
    }
}

impl Netns {
    /// Creates a namespace with a veth pair to this one, both ends up, loopback up inside.
    /// Removes leftovers of test binaries that died first.
    pub fn create() -> Netns {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        remove_leftovers();
        let pid = std::process::id();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{pid}-{n}");
        // Interface names have at most 15 characters: "ks" + 7 pid digits + "-" + n + "h".
        let host_if = format!("ks{pid}-{n}h");
        let inside_if = format!("ks{pid}-{n}n");
        let (host_addr, inside_addr) = free_subnet(pid, n);
        // From here on, Drop cleans up whatever was created.
        let netns = Netns {
            link: Link {
                netns: name.clone(),
                ifname: inside_if.clone(),
            },
            name,
            host_if,
            host_addr,
            inside_addr,
        };
        let name = netns.name.as_str();
        // Left by an earlier test binary that had the same pid.
        let _ = try_ip(&["link", "del", &netns.host_if]);
        let _ = try_ip(&["netns", "del", name]);
        ip(&["netns", "add", name]);
        ip(&[
            "link",
            "add",
            &netns.host_if,
            "type",
            "veth",
            "peer",
            "name",
            &inside_if,
            "netns",
            name,
        ]);
        ip(&[
            "addr",
            "add",
            &format!("{host_addr}/30"),
            "dev",
            &netns.host_if,
        ]);
        ip(&["link", "set", &netns.host_if, "up"]);
        ip(&[
            "-n",
            name,
            "addr",
            "add",
            &format!("{inside_addr}/30"),
            "dev",
            &inside_if,
        ]);
        ip(&["-n", name, "link", "set", "lo", "up"]);
        netns.link.up();
        netns
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address of this side of the link: nodes the one inside talks to listen on it.
    pub fn host_addr(&self) -> Ipv4Addr {
        self.host_addr
    }

    /// The address inside the namespace, reached from this side through the link.
    pub fn inside_addr(&self) -> Ipv4Addr {
        self.inside_addr
    }

    /// The inner end of the link.
    pub fn link(&self) -> Link {
        self.link.clone()
    }

    /// Cuts the node inside off (see the module documentation).
    pub fn partition(&self) {
        self.link.down();
    }

    /// Joins the node inside again.
    pub fn heal(&self) {
        self.link.up();
    }

    pub fn is_partitioned(&self) -> bool {
        !self.link.is_up()
    }

    /// Voters `ids` on [`Self::host_addr`], but voter `inside` on [`Self::inside_addr`] and run
    /// in this namespace.
    pub fn placement(&self, ids: impl IntoIterator<Item = i32>, inside: i32) -> Placement {
        let mut p = Placement::default();
        for id in ids {
            p.hosts.insert(id, self.host_addr);
        }
        p.hosts.insert(inside, self.inside_addr);
        p.netns.insert(inside, self.name.clone());
        p
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the host end deletes the pair at once; deleting the namespace's name lets it
        // go once no process runs in it (the test's processes are killed before, see
        // `ChildGuard`). Never panic in drop; say what is left instead.
        for args in [
            vec!["link", "del", self.host_if.as_str()],
            vec!["netns", "del", self.name.as_str()],
        ] {
            if let Err(e) = try_ip(&args) {
                eprintln!("compat harness: cannot remove {}: {e}", self.name);
            }
        }
    }
}

/// Where a quorum's voters listen and run, by voter id: 127.0.0.1, the test's own network
/// namespace and the machine's clock for any id not listed (the default for every id).
#[derive(Debug, Clone, Default)]
pub struct Placement {
    pub hosts: BTreeMap<i32, Ipv4Addr>,
    pub netns: BTreeMap<i32, String>,
    /// Voters whose wall clock runs this far ahead (see `faketime.rs`).
    pub clock_ahead: BTreeMap<i32, std::time::Duration>,
}

impl Placement {
    /// Every voter on 127.0.0.1, voter `id`'s clock `ahead` of the others'.
    pub fn clock_ahead(id: i32, ahead: std::time::Duration) -> Placement {
        Placement {
            clock_ahead: BTreeMap::from([(id, ahead)]),
            ..Placement::default()
        }
    }

    /// The environment voter `id` runs with: its clock's.
    pub fn env(&self, id: i32) -> Vec<(String, String)> {
        self.clock_ahead
            .get(&id)
            .map(|ahead| super::faketime::clock_ahead_env(*ahead))
            .unwrap_or_default()
    }

    pub fn host(&self, id: i32) -> Ipv4Addr {
        self.hosts.get(&id).copied().unwrap_or(Ipv4Addr::LOCALHOST)
    }

    pub fn netns(&self, id: i32) -> Option<&str> {
        self.netns.get(&id).map(String::as_str)
    }
}

/// Makes `cmd` run in network namespace `name` (entered between fork and exec, so the pid and
/// signals are the program's own, as with `ip netns exec`, without its mount changes).
pub fn enter(cmd: &mut Command, name: &str) {
    let path = Path::new("/run/netns").join(name);
    assert!(path.exists(), "no network namespace {name}");
    let path = CString::new(path.display().to_string()).expect("a path without NUL");
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls
    // (open, setns, close) on memory allocated before the fork; its error is built without
    // allocating.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let entered = libc::setns(fd, libc::CLONE_NEWNET);
            libc::close(fd);
            if entered != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Moves the calling thread into namespace `name` (a test's helper thread: sockets it opens
/// afterwards live there).
fn enter_thread(name: &str) {
    let path = Path::new("/run/netns").join(name);
    let ns = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    use std::os::fd::AsRawFd;
    // SAFETY: setns(2) on a file descriptor we own; it only changes this thread's namespace.
    let entered = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    assert!(
        entered == 0,
        "setns into {name}: {}",
        io::Error::last_os_error()
    );
}

/// Runs `f` on a thread inside namespace `name` (what a process there sees, e.g. its own
/// listeners while a partition cuts it off) and returns what it returns.
pub fn run_inside<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter_thread(name);
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Deletes the namespaces and host-side veths of test binaries that no longer run.
pub fn remove_leftovers() {
    let dead = |pid: &str| {
        pid.parse::<u32>()
            .is_ok_and(|p| !Path::new(&format!("/proc/{p}")).exists())
    };
    // e.g. "kraftd-soak-1234-0 (id: 3)"
    for line in ip(&["netns", "list"]).lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()) else {
            continue;
        };
        if dead(pid) {
            eprintln!("compat harness: removing network namespace {name}, left by a dead test");
            let _ = try_ip(&["netns", "del", name]);
        }
    }
    // e.g. "7: ks1234-0h@if2: <...> ..."
    for line in ip(&["-o", "link", "show"]).lines() {
        let Some(ifname) = line.split(": ").nth(1).and_then(|n| n.split('@').next()) else {
            continue;
        };
        let Some(pid) = ifname
            .strip_prefix("ks")
            .and_then(|r| r.strip_suffix('h'))
            .and_then(|r| r.split('-').next())
        else {
            continue;
        };
        if dead(pid) {
            eprintln!("compat harness: removing interface {ifname}, left by a dead test");
            let _ = try_ip(&["link", "del", ifname]);
        }
    }
}

/// A /30 of 10.199.0.0/24 that no address of this namespace is in, starting from one drawn
/// from the pid and counter (concurrent test binaries start apart): (host end, inner end).
fn free_subnet(pid: u32, n: u32) -> (Ipv4Addr, Ipv4Addr) {
    let used = ip(&["-4", "-o", "addr", "show"]);
    let start = pid.wrapping_mul(31).wrapping_add(n.wrapping_mul(7919)) % 64;
    for k in 0..64u32 {
        let y = (((start + k) % 64) * 4) as u8;
        let prefix = format!("{}.{}.{}.", NET[0], NET[1], NET[2]);
        let taken = (0..4u8).any(|i| used.contains(&format!("inet {prefix}{}/", y + i)));
        if !taken {
            return (
                Ipv4Addr::new(NET[0], NET[1], NET[2], y + 1),
                Ipv4Addr::new(NET[0], NET[1], NET[2], y + 2),
            );
        }
    }
    panic!("no free /30 left in {}.{}.{}.0/24", NET[0], NET[1], NET[2]);
}

/// Runs `ip <args>`; panics with its output unless it succeeds. Returns its stdout.
#[track_caller]
fn ip(args: &[&str]) -> String {
    try_ip(args).unwrap_or_else(|e| panic!("{e}"))
}

fn try_ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        format!(
            "cannot run `ip {}` (iproute2 installed?): {e}",
            args.join(" ")
        )
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`ip {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
