//! Proposals (offsets at once, the accumulator's linger, epoch fencing) and what the state
//! machine is told (commits, leader changes).

use std::time::Duration;

use super::*;
use crate::raft::accumulator::AccumulateError;
use crate::raft::config::MAX_BATCH_SIZE_BYTES;
use crate::raft::node::ProposeError;

const VOTERS: &[NodeId] = &[1, 2, 3];

fn lingering(ms: u64) -> RaftConfig {
    let mut c = cfg(1, VOTERS);
    c.append_linger = Duration::from_millis(ms);
    c
}

fn leader_changes(actions: &[Action]) -> Vec<(Epoch, Option<NodeId>, bool)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::LeaderChange {
                epoch,
                leader,
                local,
            } => Some((*epoch, *leader, *local)),
            _ => None,
        })
        .collect()
}

/// Leader 1 of epoch 1 over an empty log, its LeaderChange (offset 0) committed by voter 2.
fn committed_leader(config: RaftConfig) -> TestRaft {
    let (mut l, _) = leader_with(config, 1, MemLog::new());
    request(&mut l, 2, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert_eq!(l.high_watermark(), Some(1));
    l
}

#[test]
fn offsets_are_assigned_at_propose_time_and_the_batch_reaches_the_log_after_the_linger() {
    let mut l = committed_leader(lingering(25));
    let a = l.propose(Instant(10), 1, vec![b"a".to_vec()]).unwrap();
    let b = l
        .propose(Instant(15), 1, vec![b"b".to_vec(), b"c".to_vec()])
        .unwrap();
    assert_eq!((a.epoch, a.base_offset, a.last_offset), (1, 1, 1));
    assert_eq!((b.base_offset, b.last_offset), (2, 3));
    assert_eq!(l.log().end_offset(), 1, "still lingering");
    assert_eq!(l.next_deadline(), Instant(35), "the linger is a deadline");
    tick(&mut l, 34);
    assert_eq!(l.log().end_offset(), 1);
    tick(&mut l, 35);
    assert_eq!(l.log().end_offset(), 4);
    let batches = l.log().read(1, usize::MAX).unwrap();
    assert_eq!(batches.len(), 1, "one batch for both proposals");
    assert_eq!((batches[0].base_offset, batches[0].append_time), (1, 10));
}

#[test]
fn a_proposal_decided_in_another_epoch_or_off_the_leader_is_refused() {
    let mut l = committed_leader(cfg(1, VOTERS));
    assert_eq!(
        l.propose(Instant(5), 0, vec![vec![1]]),
        Err(ProposeError::EpochMismatch {
            proposed: 0,
            current: 1
        })
    );
    assert_eq!(l.propose(Instant(5), 1, vec![]), Err(ProposeError::Empty));
    let huge = vec![0u8; MAX_BATCH_SIZE_BYTES];
    assert!(matches!(
        l.propose(Instant(5), 1, vec![huge]),
        Err(ProposeError::Refused(AccumulateError::TooLarge { .. }))
    ));
    assert_eq!(l.log().end_offset(), 1, "nothing refused was appended");

    let mut f = follower(1, VOTERS, 3, 2, MemLog::new());
    assert_eq!(
        f.propose(Instant(5), 3, vec![vec![1]]),
        Err(ProposeError::NotLeader {
            epoch: 3,
            leader: Some(2)
        })
    );
}

#[test]
fn a_new_leader_is_announced_only_once_its_epoch_start_is_committed() {
    let (mut l, elected) = leader(1, VOTERS, 1, MemLog::new());
    assert!(
        leader_changes(&elected).iter().all(|(_, _, local)| !local),
        "elected, not yet announced: {elected:?}"
    );
    // Voter 2 fetches at 0: it has nothing yet, so nothing of epoch 1 is committed.
    let first = request(&mut l, 2, 1, Request::Fetch(fetch_request(2, 1, 0, 0)));
    assert_eq!(leader_changes(&first), []);
    // Fetching at 1, voter 2 holds the LeaderChange: it commits, then the leader is announced.
    let second = request(&mut l, 3, 2, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert_eq!(leader_changes(&second), [(1, Some(1), true)]);
    let committed = second
        .iter()
        .position(|a| *a == Action::Committed { upto: 1 })
        .expect("committed");
    let announced = second
        .iter()
        .position(|a| matches!(a, Action::LeaderChange { .. }))
        .unwrap();
    assert!(committed < announced, "commits are readable first");
    // Said once.
    let later = request(&mut l, 4, 3, Request::Fetch(fetch_request(3, 1, 1, 1)));
    assert_eq!(leader_changes(&later), []);
}

#[test]
fn a_follower_is_told_of_the_leader_as_soon_as_it_learns_it() {
    let state = ElectionState {
        epoch: 3,
        leader_id: Some(2),
        voted_key: None,
    };
    let (_, actions) = start(1, VOTERS, Some(state), MemLog::new());
    assert_eq!(leader_changes(&actions), [(3, Some(2), false)]);
}

#[test]
fn a_resigning_leader_appends_its_pending_proposals_and_renounces() {
    let mut l = committed_leader(lingering(25));
    l.take_actions();
    let p = l.propose(Instant(10), 1, vec![b"x".to_vec()]).unwrap();
    assert_eq!(l.log().end_offset(), 1);
    assert!(l.resign(Instant(11)));
    assert_eq!(l.log().end_offset(), p.last_offset + 1);
    assert_eq!(leader_changes(&l.take_actions()), [(1, None, false)]);
    assert!(matches!(
        l.propose(Instant(12), 1, vec![vec![1]]),
        Err(ProposeError::NotLeader { .. })
    ));
}
