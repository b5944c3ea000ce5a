//! AlterUserScramCredentials transcripts: requests decided against an image, their records
//! replayed, the results in the order Java's response lists them.

use super::alter::*;
use super::keys::{derive, ScramMechanism};
use super::*;
use crate::controller::metadata_version::{level, MetadataVersion};
use crate::protocol::records::MetadataRecord;

const SHA256: i8 = 1;
const SHA512: i8 = 2;

fn mv(level: i16) -> MetadataVersion {
    MetadataVersion::from_level(level).unwrap()
}

fn latest() -> MetadataVersion {
    mv(level::IBP_4_3_IV0)
}

fn delete(name: &str, mechanism: i8) -> ScramDeletion {
    ScramDeletion {
        name: name.to_string(),
        mechanism,
    }
}

fn upsert(name: &str, mechanism: i8, iterations: i32) -> ScramUpsertion {
    ScramUpsertion {
        name: name.to_string(),
        mechanism,
        iterations,
        salt: format!("salt of {name}").into_bytes(),
        salted_password: format!("salted password of {name}").into_bytes(),
    }
}

/// Decides against `image` and replays; the results as "user: outcome" lines.
fn alter(
    image: &mut ScramImage,
    version: MetadataVersion,
    deletions: &[ScramDeletion],
    upsertions: &[ScramUpsertion],
) -> Vec<String> {
    let result = alter_user_scram_credentials(image, version, deletions, upsertions);
    for r in &result.records {
        match &r.record {
            MetadataRecord::UserScramCredential(c) => image.replay(c),
            MetadataRecord::RemoveUserScramCredential(c) => {
                image.replay_remove(c.mechanism, &c.name)
            }
            other => panic!("not a SCRAM record: {other:?}"),
        }
    }
    result
        .reply
        .iter()
        .map(|r| match &r.outcome {
            Ok(()) => format!("{}: ok", r.user),
            Err(e) => format!(
                "{}: {} {:?}",
                r.user,
                e.error_code().name(),
                e.message().unwrap_or_default()
            ),
        })
        .collect()
}

#[test]
fn credentials_are_added_replaced_and_deleted() {
    let mut image = ScramImage::default();
    assert_eq!(
        alter(
            &mut image,
            latest(),
            &[],
            &[upsert("alice", SHA256, 4096), upsert("bob", SHA512, 8192)],
        ),
        ["bob: ok", "alice: ok"],
        "Java's HashMap lists bob before alice"
    );
    let alice = &image.credentials[&(SHA256, "alice".to_string())];
    let keys = derive(ScramMechanism::Sha256, b"salted password of alice").unwrap();
    assert_eq!(alice.stored_key, keys.stored_key);
    assert_eq!(alice.server_key, keys.server_key);
    assert_eq!(
        (alice.salt.as_slice(), alice.iterations),
        (&b"salt of alice"[..], 4096)
    );
    assert_eq!(
        image.credentials[&(SHA512, "bob".to_string())]
            .stored_key
            .len(),
        64
    );

    // Another mechanism for alice is a second credential; the same one replaces the first.
    let mut again = upsert("alice", SHA256, 16384);
    again.salted_password = b"another".to_vec();
    alter(
        &mut image,
        latest(),
        &[],
        &[again, upsert("bob", SHA256, 4096)],
    );
    assert_eq!(image.credentials.len(), 3);
    assert_eq!(
        image.credentials[&(SHA256, "alice".to_string())].iterations,
        16384
    );

    assert_eq!(
        alter(&mut image, latest(), &[delete("alice", SHA256)], &[]),
        ["alice: ok"]
    );
    assert!(!image
        .credentials
        .contains_key(&(SHA256, "alice".to_string())));
    assert_eq!(image.credentials.len(), 2);
}

#[test]
fn refusals_carry_javas_codes_and_messages() {
    let mut image = ScramImage::default();
    alter(&mut image, latest(), &[], &[upsert("carol", SHA256, 4096)]);
    let cases: Vec<(Vec<ScramDeletion>, Vec<ScramUpsertion>, &str)> = vec![
        (
            vec![delete("carol", SHA512)],
            vec![],
            "carol: RESOURCE_NOT_FOUND \"Attempt to delete a user credential that does not exist\"",
        ),
        (
            vec![],
            vec![upsert("", SHA256, 4096)],
            ": UNACCEPTABLE_CREDENTIAL \"Username must not be empty\"",
        ),
        (
            vec![delete("", 9)],
            vec![],
            ": UNACCEPTABLE_CREDENTIAL \"Username must not be empty\"",
        ),
        (
            vec![],
            vec![upsert("dan", 0, 4096)],
            "dan: UNSUPPORTED_SASL_MECHANISM \"Unknown SCRAM mechanism\"",
        ),
        (
            vec![delete("dan", 3)],
            vec![],
            "dan: UNSUPPORTED_SASL_MECHANISM \"Unknown SCRAM mechanism\"",
        ),
        (
            vec![],
            vec![upsert("dan", SHA512, 4095)],
            "dan: UNACCEPTABLE_CREDENTIAL \"Too few iterations\"",
        ),
        (
            vec![],
            vec![upsert("dan", SHA256, 16385)],
            "dan: UNACCEPTABLE_CREDENTIAL \"Too many iterations\"",
        ),
        (
            vec![],
            vec![ScramUpsertion {
                salted_password: Vec::new(),
                ..upsert("dan", SHA256, 4096)
            }],
            // Java's Mac refuses an empty key; ApiError keeps no message.
            "dan: UNKNOWN_SERVER_ERROR \"\"",
        ),
    ];
    for (deletions, upsertions, expected) in cases {
        let result = alter_user_scram_credentials(&image, latest(), &deletions, &upsertions);
        assert!(result.records.is_empty(), "{expected}");
        let got = alter(&mut image, latest(), &deletions, &upsertions);
        assert_eq!(got, [expected]);
    }
    // An empty salt is stored as it is.
    let bare = ScramUpsertion {
        salt: Vec::new(),
        ..upsert("erin", SHA256, 4096)
    };
    assert_eq!(alter(&mut image, latest(), &[], &[bare]), ["erin: ok"]);
}

#[test]
fn a_user_is_altered_once_per_request_whatever_the_mechanism() {
    let mut image = ScramImage::default();
    alter(
        &mut image,
        latest(),
        &[],
        &[
            upsert("alice", SHA256, 4096),
            upsert("alice2", SHA512, 4096),
        ],
    );
    let result = alter_user_scram_credentials(
        &image,
        latest(),
        &[
            delete("alice", SHA256),
            delete("alice", SHA512),
            delete("alice", SHA256),
        ],
        &[
            upsert("alice2", SHA256, 4096),
            upsert("alice2", SHA512, 4096),
            upsert("frank", SHA256, 4096),
        ],
    );
    // Neither duplicate writes anything; frank's credential is still written.
    assert_eq!(result.records.len(), 1);
    let lines: Vec<String> = result
        .reply
        .iter()
        .map(|r| format!("{}: {:?}", r.user, r.outcome))
        .collect();
    assert_eq!(
        lines,
        [
            "frank: Ok(())",
            "alice: Err(AlteredTwice)",
            "alice2: Err(AlteredTwice)",
        ]
    );
    // A deletion and an upsertion of one user clash too.
    let result = alter_user_scram_credentials(
        &image,
        latest(),
        &[delete("alice", SHA256)],
        &[upsert("alice", SHA512, 4096)],
    );
    assert!(result.records.is_empty());
    assert_eq!(result.reply[0].outcome, Err(ScramError::AlteredTwice));
}

#[test]
fn a_refused_deletion_keeps_its_first_reason() {
    let image = ScramImage::default();
    let result = alter_user_scram_credentials(
        &image,
        latest(),
        &[delete("gil", SHA256), delete("gil", SHA256)],
        &[upsert("gil", SHA256, 4096)],
    );
    assert!(result.records.is_empty());
    assert_eq!(result.reply.len(), 1);
    assert_eq!(result.reply[0].outcome, Err(ScramError::NotFound));
}

#[test]
fn before_3_5_iv2_nothing_is_written() {
    let mut image = ScramImage::default();
    let before = mv(level::IBP_3_5_IV2 - 1);
    let got = alter(
        &mut image,
        before,
        &[delete("", 7)],
        &[upsert("hal", SHA256, 1), upsert("hal", SHA256, 4096)],
    );
    // The metadata.version is checked before anything else but duplicates.
    assert_eq!(
        got,
        [
            ": UNSUPPORTED_VERSION \"The current metadata.version does not support SCRAM\"",
            "hal: UNSUPPORTED_VERSION \"The current metadata.version does not support SCRAM\"",
        ]
    );
    assert!(image.credentials.is_empty());
    assert_eq!(
        alter(
            &mut image,
            mv(level::IBP_3_5_IV2),
            &[],
            &[upsert("hal", SHA256, 4096)]
        ),
        ["hal: ok"]
    );
}

#[test]
fn results_list_deletions_then_upsertions_then_refusals() {
    let mut image = ScramImage::default();
    alter(
        &mut image,
        latest(),
        &[],
        &[upsert("zed", SHA256, 4096), upsert("amy", SHA512, 4096)],
    );
    let got = alter(
        &mut image,
        latest(),
        &[delete("zed", SHA256), delete("nobody", SHA256)],
        &[upsert("amy", SHA256, 5000), upsert("kim", SHA256, 99)],
    );
    assert_eq!(
        got,
        [
            "zed: ok",
            "amy: ok",
            // The errors map's order: "nobody" hashes to bucket 12, "kim" to 14.
            "nobody: RESOURCE_NOT_FOUND \"Attempt to delete a user credential that does not exist\"",
            "kim: UNACCEPTABLE_CREDENTIAL \"Too few iterations\"",
        ]
    );
}
