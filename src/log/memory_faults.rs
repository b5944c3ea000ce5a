//! Storage faults on demand, for the simulation: a [`FaultPlan`] makes one operation of a
//! [`super::memory_log::MemoryStorage`] fail as a disk fails (EIO, ENOSPC, or a write torn short
//! by an I/O error). A failed disk stays failed: every later write fails the same way, until
//! the crash that restarts the node clears the faults.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::error::LogError;

/// `EIO` and `ENOSPC` on Linux (what `io::Error::raw_os_error` reports).
const EIO: i32 = 5;
const ENOSPC: i32 = 28;

/// The storage operations a plan can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StorageOp {
    /// Appending batches to the active segment.
    Append,
    /// fsyncing segments that hold unflushed batches.
    Flush,
    /// Removing log data: truncating to an offset or fully to a snapshot, and deleting the
    /// segments below a new log start.
    Truncate,
    /// Making a snapshot durable (written, fsynced and renamed into place), made locally or
    /// downloaded.
    Snapshot,
}

impl StorageOp {
    pub const ALL: [StorageOp; 4] = [
        StorageOp::Append,
        StorageOp::Flush,
        StorageOp::Truncate,
        StorageOp::Snapshot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StorageOp::Append => "append",
            StorageOp::Flush => "flush",
            StorageOp::Truncate => "truncate",
            StorageOp::Snapshot => "snapshot",
        }
    }

    /// What the error says the log was doing.
    fn action(self) -> &'static str {
        match self {
            StorageOp::Append => "append to segment",
            StorageOp::Flush => "fsync segment",
            StorageOp::Truncate => "truncate segment",
            StorageOp::Snapshot => "write snapshot",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for StorageOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an operation fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// The device fails (EIO).
    Eio,
    /// No space is left on the device (ENOSPC).
    Enospc,
    /// A prefix of the bytes reaches the medium, then the write fails with EIO. After a crash,
    /// recovery finds the tail torn and cuts it. Writes only: append, flush, snapshot.
    TornWrite,
}

impl FaultKind {
    pub const ALL: [FaultKind; 3] = [FaultKind::Eio, FaultKind::Enospc, FaultKind::TornWrite];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Eio => "eio",
            FaultKind::Enospc => "enospc",
            FaultKind::TornWrite => "torn",
        }
    }

    /// The OS error the failed operation returns.
    pub fn errno(self) -> i32 {
        match self {
            FaultKind::Eio | FaultKind::TornWrite => EIO,
            FaultKind::Enospc => ENOSPC,
        }
    }

    /// Whether this kind of fault can happen to `op` (a truncation writes no bytes to tear).
    pub fn applies_to(self, op: StorageOp) -> bool {
        !(self == FaultKind::TornWrite && op == StorageOp::Truncate)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which operation fails, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultPlan {
    pub op: StorageOp,
    /// How many `op` operations succeed before the one that fails.
    pub after: u64,
    pub kind: FaultKind,
    /// For a torn write: how much of the bytes reach the medium, in thousandths (at least one
    /// byte does, and at least one does not).
    pub torn_permille: u16,
}

/// A plan that cannot be carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a {kind} fault cannot happen to a {op}: a truncation writes no bytes to tear; plan eio or enospc")]
pub struct ImpossibleFault {
    pub op: StorageOp,
    pub kind: FaultKind,
}

/// A fault that fired: what failed, how, and the file it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault {
    pub op: StorageOp,
    pub kind: FaultKind,
    pub file: PathBuf,
}

/// What one operation meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strike {
    /// The planned fault, now; a torn write lets `torn_permille` of its bytes through.
    Planned { kind: FaultKind, torn_permille: u16 },
    /// The disk failed earlier: this operation fails too, with nothing written.
    Again(FaultKind),
}

impl Strike {
    /// The error `op` on `file` returns.
    pub(super) fn error(self, op: StorageOp, file: &Path) -> LogError {
        self.error_doing(op.action(), file)
    }

    /// The error another write (`action`, e.g. "write") on `file` returns.
    pub(super) fn error_doing(self, action: &'static str, file: &Path) -> LogError {
        let (Strike::Planned { kind, .. } | Strike::Again(kind)) = self;
        LogError::Io {
            op: action,
            path: file.to_path_buf(),
            source: io::Error::from_raw_os_error(kind.errno()),
        }
    }
}

/// The fault plan of one storage and what it did.
#[derive(Debug, Clone, Default)]
pub(super) struct Faults {
    plan: Option<FaultPlan>,
    /// Operations of each kind seen since the plan was armed.
    seen: [u64; 4],
    fired: Option<InjectedFault>,
}

impl Faults {
    pub(super) fn arm(&mut self, plan: FaultPlan) -> Result<(), ImpossibleFault> {
        if !plan.kind.applies_to(plan.op) {
            return Err(ImpossibleFault {
                op: plan.op,
                kind: plan.kind,
            });
        }
        self.plan = Some(plan);
        self.seen = [0; 4];
        Ok(())
    }

    /// Forgets the plan if it has not fired.
    pub(super) fn cancel(&mut self) {
        self.plan = None;
    }

    /// A plan is armed, or has fired.
    pub(super) fn is_planned(&self) -> bool {
        self.plan.is_some() || self.fired.is_some()
    }

    pub(super) fn fired(&self) -> Option<&InjectedFault> {
        self.fired.as_ref()
    }

    /// Whether `op` on `file` fails: the planned fault when its turn comes, then every write.
    pub(super) fn strike(&mut self, op: StorageOp, file: &Path) -> Option<Strike> {
        if let Some(again) = self.again() {
            return Some(again);
        }
        let plan = self.plan.filter(|p| p.op == op)?;
        let seen = &mut self.seen[op.index()];
        *seen += 1;
        if *seen <= plan.after {
            return None;
        }
        self.plan = None;
        self.fired = Some(InjectedFault {
            op,
            kind: plan.kind,
            file: file.to_path_buf(),
        });
        Some(Strike::Planned {
            kind: plan.kind,
            torn_permille: plan.torn_permille,
        })
    }

    /// After a fault every write fails with its OS error; nothing more reaches the medium.
    pub(super) fn again(&self) -> Option<Strike> {
        self.fired.as_ref().map(|f| match f.kind {
            FaultKind::TornWrite => Strike::Again(FaultKind::Eio),
            kind => Strike::Again(kind),
        })
    }
}

/// How many of `total` bytes a write torn at `permille` lets through: at least one, and fewer
/// than all when there are two or more.
pub(super) fn torn_len(total: usize, permille: u16) -> usize {
    (total * permille as usize / 1000).clamp(1, total.saturating_sub(1).max(1))
}
