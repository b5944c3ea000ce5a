//! AllocateProducerIds transcripts: a leader's controller deciding against its latest state and
//! replaying what it decides, as the node's pipeline does.

use super::*;
use crate::controller::Controller;
use crate::protocol::messages::RegisterBrokerRecord;
use crate::protocol::records::{MetadataRecord, Offset};

/// Broker 1 at epoch 10 (fenced: Java lets a fenced broker allocate), broker 2 at epoch 12.
fn cluster() -> Controller {
    let mut c = Controller::new();
    for (i, (id, epoch, fenced)) in [(1, 10, true), (2, 12, false)].into_iter().enumerate() {
        let r: MetadataRecord = RegisterBrokerRecord {
            broker_id: id,
            broker_epoch: epoch,
            fenced,
            ..Default::default()
        }
        .into();
        c.replay(&r, i as Offset).unwrap();
    }
    c.on_committed(1);
    c
}

/// Decides for (broker, epoch) and writes the records at the next offset.
fn allocate(
    c: &mut Controller,
    broker: i32,
    epoch: i64,
) -> Result<ProducerIdBlock, ProducerIdsError> {
    let result = allocate_producer_ids(c.image(), broker, epoch)?;
    let records: Vec<_> = result.records.iter().map(|r| r.record.clone()).collect();
    c.replay_written_batch(c.last_applied() + 1, &records)
        .unwrap();
    Ok(result.reply)
}

#[test]
fn the_first_block_starts_at_zero_and_each_next_one_follows_the_latest_uncommitted_one() {
    let mut c = cluster();
    let first = allocate_producer_ids(c.image(), 2, 12).unwrap();
    assert_eq!(
        first.reply,
        ProducerIdBlock {
            start: 0,
            len: 1000
        }
    );
    assert_eq!(
        first.records,
        vec![MetadataRecordAndVersion::new(
            ProducerIdsRecord {
                broker_id: 2,
                broker_epoch: 12,
                next_producer_id: 1000,
                ..Default::default()
            },
            0
        )]
    );
    let records: Vec<_> = first.records.iter().map(|r| r.record.clone()).collect();
    c.replay_written_batch(2, &records).unwrap();
    // Nothing committed yet: the next decision still reads the block handed out.
    assert_eq!(allocate(&mut c, 1, 10).unwrap().start, 1000);
    assert_eq!(allocate(&mut c, 2, 12).unwrap().start, 2000);
    assert_eq!(c.image().producer_ids.next_producer_id, 3000);
}

#[test]
fn an_unknown_broker_or_another_epoch_is_a_stale_broker_epoch_and_writes_nothing() {
    let c = cluster();
    let unknown = allocate_producer_ids(c.image(), 7, 1).unwrap_err();
    assert_eq!(unknown.error_code(), ErrorCode::STALE_BROKER_EPOCH);
    assert_eq!(
        unknown.to_string(),
        "No broker registration found for broker id 7"
    );
    let stale = allocate_producer_ids(c.image(), 2, 11).unwrap_err();
    assert_eq!(stale.error_code(), ErrorCode::STALE_BROKER_EPOCH);
    assert_eq!(
        stale.to_string(),
        "Expected broker epoch 12, but got broker epoch 11"
    );
    assert_eq!(c.image().producer_ids.next_producer_id, -1);
}

#[test]
fn a_new_leader_reverts_to_the_committed_block_whose_successor_was_never_answered() {
    let mut c = cluster();
    assert_eq!(allocate(&mut c, 2, 12).unwrap().start, 0);
    c.on_committed(2);
    // Handed out, never committed: its reply is NOT_CONTROLLER when the leadership goes.
    assert_eq!(allocate(&mut c, 2, 12).unwrap().start, 1000);
    c.renounce().unwrap();
    assert_eq!(c.image().producer_ids.next_producer_id, 1000);
    // The next leader (this node again, say) hands out [1000, 2000) once, after the commit.
    assert_eq!(allocate(&mut c, 1, 10).unwrap().start, 1000);
}

#[test]
fn the_last_block_that_fits_in_an_int64_is_handed_out_and_then_none() {
    let mut c = cluster();
    let last = i64::MAX - 1000;
    let r: MetadataRecord = ProducerIdsRecord {
        broker_id: 2,
        broker_epoch: 12,
        next_producer_id: last,
        ..Default::default()
    }
    .into();
    c.replay(&r, 2).unwrap();
    assert_eq!(allocate(&mut c, 2, 12).unwrap().start, last);
    let e = allocate_producer_ids(c.image(), 2, 12).unwrap_err();
    assert_eq!(e.error_code(), ErrorCode::UNKNOWN_SERVER_ERROR);
    assert_eq!(
        e.to_string(),
        "Exhausted all producerIds as the next block's end producerId has exceeded the int64 type limit"
    );
}
