//! What a controller decision produces (Kafka's `ControllerResult`): the records to append, in
//! one batch, and the reply to release once they are committed.

use crate::protocol::records::MetadataRecordAndVersion;

#[derive(Debug, Clone, PartialEq)]
pub struct ControllerResult<R> {
    /// Appended as one batch: they commit (or are lost) together.
    pub records: Vec<MetadataRecordAndVersion>,
    pub reply: R,
}

impl<R> ControllerResult<R> {
    pub fn new(records: Vec<MetadataRecordAndVersion>, reply: R) -> ControllerResult<R> {
        ControllerResult { records, reply }
    }

    /// A decision that writes nothing. Its reply still waits for every record written before
    /// it to commit, since the decision read them.
    pub fn reply_only(reply: R) -> ControllerResult<R> {
        ControllerResult {
            records: Vec::new(),
            reply,
        }
    }

    /// The record values, encoded for the log.
    pub fn encoded_records(&self) -> Vec<Vec<u8>> {
        self.records
            .iter()
            .map(|r| r.encode().expect("the controller's own records encode"))
            .collect()
    }
}
