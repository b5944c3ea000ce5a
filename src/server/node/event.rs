//! What reaches the node loop, and the handle other tasks use to reach it. Everything the loop
//! reacts to arrives on one channel, so its order is the order of events.

use std::sync::mpsc;

use tokio::sync::{oneshot, watch};

use crate::controller::principal::RequestPrincipal;
use crate::controller::quorum::{ControllerReply, ControllerRequest};
use crate::raft::{Epoch, Offset, ProposeError, Request, Response};
use crate::server::peer::Completion;

/// One thing for the node loop to handle.
pub enum Event {
    /// A raft request from a connection; the answer goes back on `reply`.
    Inbound {
        listener: String,
        request: Request,
        reply: oneshot::Sender<Response>,
    },
    /// An outbound request finished.
    Completion(Completion),
    /// Data records for the log (leader only). The reply is where they landed.
    Append {
        records: Vec<Vec<u8>>,
        reply: oneshot::Sender<Result<Appended, ProposeError>>,
    },
    /// A request the quorum controller decides (any API but raft's).
    Node {
        listener: String,
        /// Who sent it (authorization, and who owns what it creates).
        principal: RequestPrincipal,
        request: ControllerRequest,
        reply: oneshot::Sender<ControllerReply>,
        /// When it was queued (the controller event manager's queue time).
        queued: std::time::Instant,
    },
    /// A scrape of `/metrics`: the loop's state, read between two events.
    Metrics {
        reply: oneshot::Sender<Box<crate::server::metrics::Sample>>,
        /// Whose filesystem the sample's disk gauges read (the metadata log dir).
        disk_of: std::path::PathBuf,
    },
    /// A snapshot of the image was written on its own thread (or could not be).
    SnapshotWritten(Box<super::snapshot_job::SnapshotOutcome>),
    /// SIGTERM or SIGINT: resign if leading, flush, stop.
    Shutdown,
}

/// Where appended records landed. They are committed once the high watermark passes
/// `last_offset` while `epoch` is still the leader's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub epoch: Epoch,
    pub last_offset: Offset,
}

/// The node loop is gone (a graceful shutdown, or a halt on a fatal error): it takes no call,
/// or stopped before answering one. The loop's own log says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NodeStopped {
    #[error("the node loop has stopped")]
    Stopped,
    #[error("the node loop stopped before answering")]
    BeforeAnswering,
}

/// Why records handed to [`NodeHandle::append`] were not appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    #[error(transparent)]
    Stopped(#[from] NodeStopped),
    /// Raft refused them (this node does not lead, or leads another epoch).
    #[error("the records were not appended: {0}")]
    Refused(#[from] ProposeError),
}

/// The node loop as other tasks see it: cheap to clone.
#[derive(Clone)]
pub struct NodeHandle {
    pub(super) events: mpsc::Sender<Event>,
    pub(super) high_watermark: watch::Receiver<Offset>,
    pub(super) leader: watch::Receiver<LeaderView>,
}

/// The epoch and its leader as this node last knew them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderView {
    pub epoch: Epoch,
    pub leader_id: Option<crate::raft::NodeId>,
}

impl std::fmt::Debug for NodeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeHandle(hw {})", self.high_watermark())
    }
}

impl NodeHandle {
    /// Hands an inbound raft request to the loop. `Err` when the loop has stopped.
    pub fn submit(
        &self,
        listener: &str,
        request: Request,
    ) -> Result<oneshot::Receiver<Response>, NodeStopped> {
        let (reply, rx) = oneshot::channel();
        self.events
            .send(Event::Inbound {
                listener: listener.to_string(),
                request,
                reply,
            })
            .map_err(|_| NodeStopped::Stopped)?;
        Ok(rx)
    }

    /// Hands a controller request (any API the node loop decides) to the loop.
    pub fn call(
        &self,
        listener: &str,
        principal: RequestPrincipal,
        request: ControllerRequest,
    ) -> Result<oneshot::Receiver<ControllerReply>, NodeStopped> {
        let (reply, rx) = oneshot::channel();
        self.events
            .send(Event::Node {
                listener: listener.to_string(),
                principal,
                request,
                reply,
                queued: std::time::Instant::now(),
            })
            .map_err(|_| NodeStopped::Stopped)?;
        Ok(rx)
    }

    /// Asks the loop for its metrics (`/metrics`), with the space of `disk_of`'s filesystem.
    pub fn metrics(
        &self,
        disk_of: std::path::PathBuf,
    ) -> Result<oneshot::Receiver<Box<crate::server::metrics::Sample>>, NodeStopped> {
        let (reply, rx) = oneshot::channel();
        self.events
            .send(Event::Metrics { reply, disk_of })
            .map_err(|_| NodeStopped::Stopped)?;
        Ok(rx)
    }

    /// Appends data records as the leader (the local append API).
    pub async fn append(&self, records: Vec<Vec<u8>>) -> Result<Appended, AppendError> {
        let landed = self
            .append_queued(records)?
            .await
            .map_err(|_| NodeStopped::BeforeAnswering)?;
        Ok(landed?)
    }

    /// Queues records for the leader's next batch without waiting: the receiver says where
    /// they land as soon as the core assigned their offsets (Kafka's `prepareAppend`; the
    /// core's accumulator appends the batch after `controller.quorum.append.linger.ms`).
    pub fn append_queued(
        &self,
        records: Vec<Vec<u8>>,
    ) -> Result<oneshot::Receiver<Result<Appended, ProposeError>>, NodeStopped> {
        let (reply, rx) = oneshot::channel();
        self.events
            .send(Event::Append { records, reply })
            .map_err(|_| NodeStopped::Stopped)?;
        Ok(rx)
    }

    /// Follows leadership changes.
    pub fn leader(&self) -> watch::Receiver<LeaderView> {
        self.leader.clone()
    }

    /// Follows the high watermark.
    pub fn high_watermark_updates(&self) -> watch::Receiver<Offset> {
        self.high_watermark.clone()
    }

    /// Waits until every offset up to `offset` is committed.
    pub async fn wait_committed(&self, offset: Offset) -> Result<(), NodeStopped> {
        let mut hw = self.high_watermark.clone();
        hw.wait_for(|hw| *hw > offset)
            .await
            .map(|_| ())
            .map_err(|_| NodeStopped::Stopped)
    }

    /// The high watermark last published (-1 before one is known).
    pub fn high_watermark(&self) -> Offset {
        *self.high_watermark.borrow()
    }

    /// Asks the loop to shut down gracefully.
    pub fn shutdown(&self) {
        let _ = self.events.send(Event::Shutdown);
    }
}
