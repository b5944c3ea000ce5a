//! Delegation-token transcripts: requests decided against an image at a wall-clock time, their
//! records replayed, the answers as Java's responses carry them (codes and timestamps).

use super::decide::*;
use super::*;
use crate::controller::java::JavaRandom;
use crate::controller::metadata_version::{level, MetadataVersion};
use crate::controller::ControllerResult;
use crate::protocol::records::MetadataRecord;

pub(super) const HOUR: i64 = 3_600_000;
pub(super) const T0: i64 = 1_700_000_000_000;

fn mv(level: i16) -> MetadataVersion {
    MetadataVersion::from_level(level).unwrap()
}

pub(super) fn latest() -> MetadataVersion {
    mv(level::IBP_4_3_IV0)
}

pub(super) fn settings() -> TokenSettings {
    TokenSettings {
        secret_key: Some("s3cr3t".into()),
        max_lifetime_ms: 24 * HOUR,
        expiry_time_ms: 2 * HOUR,
        expiry_check_interval_ms: HOUR,
    }
}

pub(super) fn user(name: &str) -> Principal {
    Principal::new("User", name)
}

pub(super) fn request(owner: &str, requester: &str, renewers: &[&str]) -> NewTokenRequest {
    NewTokenRequest {
        owner: user(owner),
        requester: user(requester),
        renewers: renewers
            .iter()
            .map(|r| ("User".to_string(), r.to_string()))
            .collect(),
        max_lifetime_ms: -1,
    }
}

pub(super) fn replay<R>(image: &mut TokensImage, result: &ControllerResult<R>) {
    for r in &result.records {
        match &r.record {
            MetadataRecord::DelegationToken(t) => image.replay(t),
            MetadataRecord::RemoveDelegationToken(t) => image.replay_remove(&t.token_id),
            other => panic!("not a token record: {other:?}"),
        }
    }
}

/// Creates a token for `owner` at `T0`, living at most 4 hours, and replays it.
fn created(image: &mut TokensImage, owner: &str, renewers: &[&str]) -> CreatedToken {
    let mut req = request(owner, owner, renewers);
    req.max_lifetime_ms = 4 * HOUR;
    let result = create_token(&settings(), latest(), &req, T0, &mut JavaRandom::new(7));
    replay(image, &result);
    result.reply.unwrap()
}

#[test]
fn the_hmac_is_hmac_sha512_of_the_token_id_keyed_with_the_secret() {
    // RFC 4231, test case 2.
    let s = TokenSettings {
        secret_key: Some("Jefe".into()),
        ..TokenSettings::default()
    };
    let hex: String = s
        .hmac("what do ya want for nothing?")
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        hex,
        "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554\
         9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
    );
}

#[test]
fn a_token_is_created_with_javas_timestamps_and_record() {
    let mut image = TokensImage::default();
    let mut ids = JavaRandom::new(7);
    let expected_id = JavaRandom::new(7).uuid().to_string();
    let mut req = request("alice", "admin", &["bob"]);
    req.max_lifetime_ms = 10 * HOUR;
    let result = create_token(&settings(), latest(), &req, T0, &mut ids);
    let t = result.reply.clone().unwrap();
    assert_eq!(t.token_id, expected_id);
    assert_eq!(t.hmac, settings().hmac(&expected_id).unwrap());
    assert_eq!(t.hmac.len(), 64);
    // max = now + min(configured, asked); expiry = min(max, now + renew period).
    assert_eq!(
        (t.issue_timestamp, t.expiry_timestamp, t.max_timestamp),
        (T0, T0 + 2 * HOUR, T0 + 10 * HOUR)
    );
    replay(&mut image, &result);
    let stored = image.by_id.get(&expected_id).unwrap();
    assert_eq!(
        **stored,
        DelegationToken {
            owner: "User:alice".into(),
            requester: "User:admin".into(),
            renewers: vec!["User:bob".into()],
            issue_timestamp: T0,
            max_timestamp: T0 + 10 * HOUR,
            expiry_timestamp: T0 + 2 * HOUR,
        }
    );
}

#[test]
fn a_longer_asked_lifetime_is_capped_and_timestamps_saturate() {
    let mut req = request("alice", "alice", &[]);
    req.max_lifetime_ms = 100 * HOUR;
    let r = create_token(&settings(), latest(), &req, T0, &mut JavaRandom::new(1));
    assert_eq!(r.reply.unwrap().max_timestamp, T0 + 24 * HOUR);
    let huge = TokenSettings {
        max_lifetime_ms: i64::MAX,
        expiry_time_ms: i64::MAX,
        ..settings()
    };
    let r = create_token(&huge, latest(), &req, T0, &mut JavaRandom::new(1));
    let t = r.reply.unwrap();
    assert_eq!(
        (t.expiry_timestamp, t.max_timestamp),
        (T0 + 100 * HOUR, T0 + 100 * HOUR)
    );
    req.max_lifetime_ms = 0;
    let r = create_token(&huge, latest(), &req, T0, &mut JavaRandom::new(1));
    let t = r.reply.unwrap();
    assert_eq!((t.expiry_timestamp, t.max_timestamp), (i64::MAX, i64::MAX));
}

#[test]
fn creation_refusals_come_in_javas_order_without_records() {
    let disabled = TokenSettings {
        secret_key: None,
        ..settings()
    };
    let mut bad = request("alice", "alice", &["bob"]);
    bad.renewers.push(("Group".into(), "ops".into()));
    let refusal = |s: &TokenSettings, v: MetadataVersion, r: &NewTokenRequest| {
        let result = create_token(s, v, r, T0, &mut JavaRandom::new(1));
        assert!(result.records.is_empty());
        result.reply.unwrap_err().error_code().name()
    };
    assert_eq!(
        refusal(&disabled, mv(level::IBP_3_5_IV2), &bad),
        "DELEGATION_TOKEN_AUTH_DISABLED"
    );
    assert_eq!(refusal(&settings(), mv(13), &bad), "UNSUPPORTED_VERSION");
    assert_eq!(
        refusal(&settings(), mv(level::IBP_3_6_IV2), &bad),
        "INVALID_PRINCIPAL_TYPE"
    );
}

#[test]
fn the_owner_or_a_renewer_renews_until_the_max_timestamp() {
    let mut image = TokensImage::default();
    let t = created(&mut image, "alice", &["bob"]);
    let renew = |image: &mut TokensImage, who: &str, period: i64, now: i64| {
        let r = renew_token(
            image,
            &settings(),
            latest(),
            &user(who),
            &t.hmac,
            period,
            now,
        );
        replay(image, &r);
        r.reply.map_err(|e| e.error_code().name())
    };
    // The configured period, or a shorter one asked for.
    assert_eq!(renew(&mut image, "bob", -1, T0 + HOUR), Ok(T0 + 3 * HOUR));
    assert_eq!(
        renew(&mut image, "alice", HOUR / 2, T0 + HOUR),
        Ok(T0 + HOUR + HOUR / 2)
    );
    assert_eq!(
        renew(&mut image, "alice", 5 * HOUR, T0 + HOUR),
        Ok(T0 + 3 * HOUR)
    );
    let stored = image.by_id.get(&t.token_id).unwrap().clone();
    assert_eq!(stored.expiry_timestamp, T0 + 3 * HOUR);
    // Never beyond the max timestamp; a token expiring right now is still renewed.
    assert_eq!(
        renew(&mut image, "alice", -1, T0 + 3 * HOUR),
        Ok(T0 + 4 * HOUR)
    );
    assert_eq!(
        renew(&mut image, "carol", -1, T0 + 3 * HOUR),
        Err("DELEGATION_TOKEN_OWNER_MISMATCH")
    );
    // Expired is checked before the owner.
    assert_eq!(
        renew(&mut image, "carol", -1, T0 + 5 * HOUR),
        Err("DELEGATION_TOKEN_EXPIRED")
    );
    assert_eq!(
        renew_token(
            &image,
            &settings(),
            latest(),
            &user("alice"),
            b"nope",
            -1,
            T0
        )
        .reply
        .map_err(|e| e.error_code().name()),
        Err("DELEGATION_TOKEN_NOT_FOUND")
    );
    // A token made with another key is not found.
    let other = TokenSettings {
        secret_key: Some("other".into()),
        ..settings()
    };
    let r = renew_token(&image, &other, latest(), &user("alice"), &t.hmac, -1, T0);
    assert_eq!(r.reply, Err(TokenError::NotFound));
}

#[test]
fn expiring_shortens_and_a_negative_period_removes_the_token() {
    let mut image = TokensImage::default();
    let t = created(&mut image, "alice", &["bob"]);
    let expire = |image: &mut TokensImage, who: &str, period: i64, now: i64| {
        let r = expire_token(
            image,
            &settings(),
            latest(),
            &user(who),
            &t.hmac,
            period,
            now,
        );
        let records = r.records.len();
        replay(image, &r);
        (r.reply.map_err(|e| e.error_code().name()), records)
    };
    assert_eq!(expire(&mut image, "bob", HOUR, T0), (Ok(T0 + HOUR), 1));
    assert_eq!(
        expire(&mut image, "carol", -1, T0),
        (Err("DELEGATION_TOKEN_OWNER_MISMATCH"), 0)
    );
    // Past its expiry, a positive period is refused; a negative one still removes it.
    assert_eq!(
        expire(&mut image, "alice", HOUR, T0 + 2 * HOUR),
        (Err("DELEGATION_TOKEN_EXPIRED"), 0)
    );
    assert_eq!(
        expire(&mut image, "alice", -1, T0 + 2 * HOUR),
        (Ok(T0 + 2 * HOUR), 1)
    );
    assert!(image.by_id.is_empty());
    assert_eq!(
        expire(&mut image, "alice", -1, T0),
        (Err("DELEGATION_TOKEN_NOT_FOUND"), 0)
    );
}

#[test]
fn renew_and_expire_check_the_key_and_metadata_version_first() {
    let mut image = TokensImage::default();
    let t = created(&mut image, "alice", &[]);
    let disabled = TokenSettings {
        secret_key: Some(String::new()),
        ..settings()
    };
    let r = renew_token(&image, &disabled, latest(), &user("x"), b"", -1, T0);
    assert_eq!(r.reply, Err(TokenError::AuthDisabled));
    let r = expire_token(&image, &settings(), mv(13), &user("x"), &t.hmac, -1, T0);
    assert_eq!(r.reply, Err(TokenError::UnsupportedVersion));
    assert!(r.records.is_empty());
}
