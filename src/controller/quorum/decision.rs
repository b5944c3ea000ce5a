//! What the quorum controller decides: an answer now, or records to write and the answer to
//! release once they commit. Decisions are data; the node loop carries them out.

use super::request::ControllerReply;
use crate::controller::ControllerResult;
use crate::protocol::errors::ErrorCode;
use crate::protocol::records::{MetadataRecordAndVersion, Offset};

/// The quorum controller's answer to one request.
#[derive(Debug, PartialEq)]
pub enum Decision {
    /// Answer at once: not the active controller, or decided without waiting for writes.
    Answer(ControllerReply),
    /// Write records, then answer.
    Write(Write),
}

/// Records to write, and what to answer once they commit.
#[derive(Debug, PartialEq)]
pub struct Write {
    /// The records' values (Kafka's encoding of each `MetadataRecordAndVersion`), in order,
    /// as one batch. None: the answer still waits for the records written before it, which
    /// its decision read.
    pub records: Vec<Vec<u8>>,
    /// The answer (None for a periodic decision, which answers nobody).
    pub reply: Option<Reply>,
    /// What the controller does once it hears where the records landed.
    pub then: Option<Then>,
}

/// An answer released when its write commits, or `lost` when the leadership it was decided
/// under ends first (NOT_CONTROLLER, in the shape the API answers it).
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub committed: ControllerReply,
    pub lost: ControllerReply,
}

/// The leadership a write was decided under ended before the write committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeadershipLost;

/// What follows a write, once its offsets are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// A broker entered controlled shutdown: its shutdown waits for the decision's last offset.
    ControlledShutdown { broker: i32 },
    /// One line naming the decision and the offset its records end at.
    Log(String),
    /// The activation records: a line for the open transaction they abort (begun at that
    /// offset) and one for the bootstrap records, if they hold them.
    Activated {
        aborted: Option<Offset>,
        bootstrap: bool,
    },
}

/// Where proposed records landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landed {
    pub epoch: i32,
    pub base_offset: Offset,
    pub last_offset: Offset,
}

impl Write {
    /// A periodic decision's records: nobody waits for them.
    pub fn periodic(records: Vec<MetadataRecordAndVersion>, then: Option<Then>) -> Write {
        Write {
            records: encode(&records),
            reply: None,
            then,
        }
    }
}

impl Decision {
    /// Writes `result`'s records and answers `committed` built from its reply once they commit,
    /// `lost` if leadership is lost first.
    pub fn write<R>(
        result: ControllerResult<R>,
        committed: impl FnOnce(R) -> ControllerReply,
        lost: ControllerReply,
    ) -> Decision {
        let ControllerResult { records, reply } = result;
        Decision::Write(Write {
            records: encode(&records),
            reply: Some(Reply {
                committed: committed(reply),
                lost,
            }),
            then: None,
        })
    }

    /// [`Decision::write`] with one function for both answers: it is asked with the
    /// decision's reply for the committed answer, and with [`LeadershipLost`] for the other.
    pub fn write_either<R>(
        result: ControllerResult<R>,
        answer: impl Fn(Result<&R, LeadershipLost>) -> ControllerReply,
    ) -> Decision {
        let ControllerResult { records, reply } = result;
        Decision::Write(Write {
            records: encode(&records),
            reply: Some(Reply {
                committed: answer(Ok(&reply)),
                lost: answer(Err(LeadershipLost)),
            }),
            then: None,
        })
    }

    /// An answer decided by reads of the latest state, released after the records written
    /// before it commit (its decision read them); `NOT_CONTROLLER` if they never do.
    pub fn after_pending(reply: ControllerReply) -> Decision {
        let lost = reply.with_error(ErrorCode::NOT_CONTROLLER);
        Decision::after_pending_or(reply, lost)
    }

    /// [`Decision::after_pending`] with the API's own answer for a lost leadership.
    pub fn after_pending_or(reply: ControllerReply, lost: ControllerReply) -> Decision {
        Decision::Write(Write {
            records: Vec::new(),
            reply: Some(Reply {
                committed: reply,
                lost,
            }),
            then: None,
        })
    }

    /// The same decision, with `then` once its records land.
    pub fn then(self, then: Then) -> Decision {
        match self {
            Decision::Write(w) => Decision::Write(Write {
                then: Some(then),
                ..w
            }),
            answer => answer,
        }
    }
}

/// The values of the controller's own records.
fn encode(records: &[MetadataRecordAndVersion]) -> Vec<Vec<u8>> {
    records
        .iter()
        .map(|r| r.encode().expect("the controller's own records encode"))
        .collect()
}
