//! Sweep transcripts: tokens created and renewed at wall-clock times, then swept at later
//! times; which tokens each sweep removes, its records replayed, and when the next sweep is due.

use super::decide::*;
use super::sweep::*;
use super::tests::{latest, replay, request, settings, user, HOUR, T0};
use super::*;
use crate::controller::java::JavaRandom;
use crate::protocol::messages::DelegationTokenRecord;
use crate::protocol::records::MetadataRecord;

/// Creates a token for `owner` at `now` (its id drawn with `seed`), living at most
/// `max_lifetime_ms`, and replays it.
fn create_at(
    image: &mut TokensImage,
    owner: &str,
    now: i64,
    max_lifetime_ms: i64,
    seed: i64,
) -> CreatedToken {
    let mut req = request(owner, owner, &[]);
    req.max_lifetime_ms = max_lifetime_ms;
    let result = create_token(&settings(), latest(), &req, now, &mut JavaRandom::new(seed));
    replay(image, &result);
    result.reply.unwrap()
}

/// Sweeps at `now`, replays the removals, and returns the owners of the removed tokens.
fn sweep_at(image: &mut TokensImage, now: i64) -> Vec<String> {
    let result = sweep_expired_tokens(image, &settings(), now);
    assert_eq!(result.records.len(), result.reply.expired.len());
    for (r, t) in result.records.iter().zip(&result.reply.expired) {
        assert_eq!(r.version, 0, "RemoveDelegationTokenRecord v0");
        match &r.record {
            MetadataRecord::RemoveDelegationToken(r) => assert_eq!(r.token_id, t.token_id),
            other => panic!("a sweep writes only removals: {other:?}"),
        }
    }
    replay(image, &result);
    result.reply.expired.into_iter().map(|t| t.owner).collect()
}

/// A token straight from a record, e.g. one whose expiry lies beyond its max.
fn put(image: &mut TokensImage, id: &str, max: i64, expiry: i64) {
    image.replay(&DelegationTokenRecord {
        token_id: id.into(),
        owner: format!("User:{id}"),
        requester: format!("User:{id}"),
        issue_timestamp: T0,
        max_timestamp: max,
        expiration_timestamp: expiry,
        ..Default::default()
    });
}

#[test]
fn a_sweep_removes_a_token_only_once_its_expiry_has_passed() {
    let mut image = TokensImage::default();
    // The renew period is 2 hours: alice's token expires at T0+2h, bob's at T0+3h.
    let alice = create_at(&mut image, "alice", T0, 4 * HOUR, 1);
    let bob = create_at(&mut image, "bob", T0 + HOUR, 4 * HOUR, 2);
    assert_eq!(alice.expiry_timestamp, T0 + 2 * HOUR);
    assert_eq!(bob.expiry_timestamp, T0 + 3 * HOUR);

    assert!(sweep_at(&mut image, T0 + HOUR).is_empty());
    // Expiring right now is not expired: Java removes a token strictly past it.
    assert!(sweep_at(&mut image, T0 + 2 * HOUR).is_empty());
    assert_eq!(sweep_at(&mut image, T0 + 2 * HOUR + 1), ["User:alice"]);
    assert!(!image.by_id.contains_key(&alice.token_id));
    assert!(image.by_id.contains_key(&bob.token_id));
    // Removed tokens are not swept again.
    assert!(sweep_at(&mut image, T0 + 3 * HOUR).is_empty());
    assert_eq!(sweep_at(&mut image, T0 + 3 * HOUR + 1), ["User:bob"]);
    assert!(image.by_id.is_empty());
}

#[test]
fn a_renewal_pushes_the_removal_back_until_the_max_timestamp() {
    let mut image = TokensImage::default();
    let t = create_at(&mut image, "alice", T0, 4 * HOUR, 1);
    let renew = |image: &mut TokensImage, now: i64| {
        let r = renew_token(
            image,
            &settings(),
            latest(),
            &user("alice"),
            &t.hmac,
            -1,
            now,
        );
        replay(image, &r);
        r.reply.unwrap()
    };
    assert_eq!(renew(&mut image, T0 + HOUR), T0 + 3 * HOUR);
    // Without the renewal it would go now.
    assert!(sweep_at(&mut image, T0 + 2 * HOUR + 1).is_empty());
    // Renewed again, but the max timestamp (T0+4h) caps it.
    assert_eq!(renew(&mut image, T0 + 3 * HOUR), T0 + 4 * HOUR);
    assert!(sweep_at(&mut image, T0 + 3 * HOUR + 1).is_empty());
    assert!(sweep_at(&mut image, T0 + 4 * HOUR).is_empty());
    assert_eq!(sweep_at(&mut image, T0 + 4 * HOUR + 1), ["User:alice"]);
}

#[test]
fn a_token_past_its_max_timestamp_is_removed_even_before_its_expiry() {
    let mut image = TokensImage::default();
    // Only a hand-made record has its expiry beyond its max; Java checks both.
    put(&mut image, "odd", T0, T0 + HOUR);
    put(&mut image, "fine", T0 + HOUR, T0 + HOUR);
    assert_eq!(sweep_at(&mut image, T0 + 1), ["User:odd"]);
}

#[test]
fn a_sweep_removes_at_most_1000_tokens_and_says_when_it_hit_the_bound() {
    let mut image = TokensImage::default();
    for i in 0..1001 {
        put(&mut image, &format!("t{i:04}"), T0, T0);
    }
    put(&mut image, "live", T0 + HOUR, T0 + HOUR);
    let first = sweep_expired_tokens(&image, &settings(), T0 + 1);
    assert_eq!(
        (first.records.len(), first.reply.more),
        (MAX_REMOVALS_PER_SWEEP, true)
    );
    replay(&mut image, &first);
    let second = sweep_expired_tokens(&image, &settings(), T0 + 1);
    assert_eq!((second.records.len(), second.reply.more), (1, false));
    replay(&mut image, &second);
    assert_eq!(image.by_id.keys().collect::<Vec<_>>(), ["live"]);

    // Exactly 1000 expired tokens also count as hitting the bound (Java checks the size
    // after each removal), so one more sweep finds nothing.
    for i in 0..1000 {
        put(&mut image, &format!("u{i:04}"), T0, T0);
    }
    let full = sweep_expired_tokens(&image, &settings(), T0 + 1);
    assert_eq!((full.records.len(), full.reply.more), (1000, true));
    replay(&mut image, &full);
    let empty = sweep_expired_tokens(&image, &settings(), T0 + 1);
    assert_eq!((empty.records.len(), empty.reply.more), (0, false));
}

#[test]
fn a_controller_without_a_secret_sweeps_nothing() {
    let mut image = TokensImage::default();
    put(&mut image, "old", T0, T0);
    let disabled = TokenSettings {
        secret_key: None,
        ..settings()
    };
    let r = sweep_expired_tokens(&image, &disabled, T0 + HOUR);
    assert!(r.records.is_empty() && r.reply == Swept::default());
}

#[test]
fn the_first_sweep_is_one_interval_after_activation_then_every_interval() {
    let mut image = TokensImage::default();
    put(&mut image, "old", T0, T0);
    let s = TokenSettings {
        expiry_check_interval_ms: 1_000,
        ..settings()
    };
    let now = (T0 + HOUR) as u64;
    let mut sweeper = TokenSweeper::activate(&s, now);
    assert_eq!(sweeper.next_due(), now + 1_000);
    // Not due yet: no sweep, even with an expired token waiting.
    assert!(sweeper.run(&image, &s, now + 999).is_none());
    assert_eq!(sweeper.next_due(), now + 1_000);
    // Due (late is fine): the sweep runs and the next is one interval after it ran.
    let r = sweeper.run(&image, &s, now + 1_200).unwrap();
    assert_eq!(r.records.len(), 1);
    assert_eq!(sweeper.next_due(), now + 2_200);
    replay(&mut image, &r);
    // Nothing to remove still counts as a sweep.
    let r = sweeper.run(&image, &s, now + 2_200).unwrap();
    assert!(r.records.is_empty());
    assert_eq!(sweeper.next_due(), now + 3_200);
}

#[test]
fn a_sweep_that_hit_the_bound_runs_again_after_10_ms() {
    let mut image = TokensImage::default();
    for i in 0..1500 {
        put(&mut image, &format!("t{i:04}"), T0, T0);
    }
    let now = (T0 + HOUR) as u64;
    let mut sweeper = TokenSweeper::activate(&settings(), now);
    let due = now + HOUR as u64;
    let r = sweeper.run(&image, &settings(), due).unwrap();
    assert_eq!(r.records.len(), 1000);
    assert_eq!(sweeper.next_due(), due + IMMEDIATE_RERUN_MS);
    replay(&mut image, &r);
    let r = sweeper.run(&image, &settings(), due + 10).unwrap();
    assert_eq!(r.records.len(), 500);
    assert_eq!(sweeper.next_due(), due + 10 + HOUR as u64);
    replay(&mut image, &r);
    assert!(image.by_id.is_empty());
}

#[test]
fn a_huge_interval_never_comes_due() {
    let s = TokenSettings {
        expiry_check_interval_ms: i64::MAX,
        ..settings()
    };
    let sweeper = TokenSweeper::activate(&s, T0 as u64);
    assert_eq!(sweeper.next_due(), T0 as u64 + i64::MAX as u64);
}
