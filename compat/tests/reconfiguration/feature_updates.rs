//! UpdateFeatures, the same bytes to a Java 4.4 controller and to kraftd (the clusters of
//! `bad_requests`): refused updates must get Java's error code *and* message (v2: one error for
//! the request; v0/v1 also one result per feature), accepted ones NONE. Last, the static voter
//! (kraft.version 0) is upgraded to kraft.version 1 through UpdateFeatures and answers further
//! kraft.version updates as Java does.

use std::time::Duration;

use kraftd::protocol::codec::{Message, Uuid};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::update_features_request::FeatureUpdateKey;
use kraftd::protocol::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};

use super::bad_requests::{frame, Targets, To};
use crate::harness::quorum_probe::{describe_quorum, try_round_trip_frame};

const API_KEY: i16 = 57;
const UPGRADE: i8 = 1;
const SAFE_DOWNGRADE: i8 = 2;
const UNSAFE_DOWNGRADE: i8 = 3;

struct Case {
    name: &'static str,
    to: To,
    version: i16,
    request: UpdateFeaturesRequest,
    expected: ErrorCode,
}

fn request(updates: &[(&str, i16, i8)], validate_only: bool) -> UpdateFeaturesRequest {
    UpdateFeaturesRequest {
        timeout_ms: 30_000,
        feature_updates: updates
            .iter()
            .map(|(feature, level, upgrade_type)| FeatureUpdateKey {
                feature: feature.to_string(),
                max_version_level: *level,
                upgrade_type: *upgrade_type,
                ..Default::default()
            })
            .collect(),
        validate_only,
        ..Default::default()
    }
}

fn cases() -> Vec<Case> {
    let c = |name, to, version, request, expected| Case {
        name,
        to,
        version,
        request,
        expected,
    };
    let invalid = ErrorCode::INVALID_UPDATE_VERSION;
    let none = ErrorCode::NONE;
    let mut v0_allow = request(&[("group.version", 0, UPGRADE)], false);
    v0_allow.feature_updates[0].allow_downgrade = true;
    vec![
        c(
            "an unknown feature",
            To::Static,
            2,
            request(&[("kraftd.no.such.feature", 1, UPGRADE)], false),
            invalid,
        ),
        c(
            "an unknown feature at level 0",
            To::Static,
            2,
            request(&[("kraftd.no.such.feature", 0, UPGRADE)], false),
            invalid,
        ),
        c(
            "metadata.version above the supported range",
            To::Static,
            2,
            request(&[("metadata.version", 34, UPGRADE)], false),
            invalid,
        ),
        c(
            "a negative level",
            To::Static,
            2,
            request(&[("group.version", -1, UPGRADE)], false),
            invalid,
        ),
        c(
            "a downgrade without a downgrade type",
            To::Static,
            2,
            request(&[("group.version", 0, UPGRADE)], false),
            invalid,
        ),
        c(
            "a downgrade type to a newer level",
            To::Static,
            2,
            request(&[("kraft.version", 1, SAFE_DOWNGRADE)], false),
            invalid,
        ),
        c(
            "an unknown upgrade type",
            To::Static,
            1,
            request(&[("group.version", 1, 0)], false),
            invalid,
        ),
        c(
            "a metadata.version downgrade that may lose metadata",
            To::Static,
            2,
            request(&[("metadata.version", 31, SAFE_DOWNGRADE)], false),
            invalid,
        ),
        c(
            "an unsafe metadata.version downgrade",
            To::Static,
            2,
            request(&[("metadata.version", 31, UNSAFE_DOWNGRADE)], false),
            invalid,
        ),
        c(
            "a refusal at v1 (no per-feature results)",
            To::Static,
            1,
            request(
                &[
                    ("kraftd.no.such.feature", 1, UPGRADE),
                    ("group.version", 1, UPGRADE),
                ],
                false,
            ),
            invalid,
        ),
        c(
            "a downgrade at v0 with allowDowngrade",
            To::Static,
            0,
            v0_allow,
            invalid,
        ),
        c(
            "the first refusal in Java's order fails all",
            To::Static,
            2,
            request(
                &[
                    ("transaction.version", 5, UPGRADE),
                    ("kraftd.no.such.feature", 1, UPGRADE),
                    ("group.version", 1, UPGRADE),
                ],
                false,
            ),
            invalid,
        ),
        c(
            "group.version again at its level",
            To::Static,
            2,
            request(&[("group.version", 1, UPGRADE)], false),
            none,
        ),
        c(
            "an accepted update at v1",
            To::Static,
            1,
            request(&[("group.version", 1, UPGRADE)], false),
            none,
        ),
        c(
            "kraft.version 1, validate only",
            To::Static,
            2,
            request(&[("kraft.version", 1, UPGRADE)], true),
            none,
        ),
        c(
            "kraft.version 0 at kraft.version 0",
            To::Static,
            2,
            request(&[("kraft.version", 0, SAFE_DOWNGRADE)], false),
            none,
        ),
        c(
            "an update to a non-active controller",
            To::Observer,
            2,
            request(&[("group.version", 1, UPGRADE)], false),
            ErrorCode::NOT_CONTROLLER,
        ),
        c(
            "kraft.version downgrade at kraft.version 1",
            To::Leader,
            2,
            request(&[("kraft.version", 0, SAFE_DOWNGRADE)], false),
            invalid,
        ),
        c(
            "kraft.version 1 at kraft.version 1",
            To::Leader,
            2,
            request(&[("kraft.version", 1, UPGRADE)], false),
            none,
        ),
        // The static voter upgrades, then answers as a dynamic one.
        c(
            "the static voter upgrades to kraft.version 1",
            To::Static,
            2,
            request(&[("kraft.version", 1, UPGRADE)], false),
            none,
        ),
        c(
            "kraft.version 1 again after the upgrade",
            To::Static,
            2,
            request(&[("kraft.version", 1, UPGRADE)], false),
            none,
        ),
        c(
            "kraft.version downgrade after the upgrade",
            To::Static,
            2,
            request(&[("kraft.version", 0, SAFE_DOWNGRADE)], false),
            invalid,
        ),
    ]
}

/// What a response says: the error, its message, and the per-feature results.
type Answer = Result<String, String>;

fn send(t: &Targets, case: &Case) -> (Option<ErrorCode>, Answer) {
    let port = match case.to {
        To::Leader => t.leader.port,
        To::Observer => t.observer.port,
        To::Static => t.static_voter.port,
    };
    let bytes = frame(case.version, &case.request);
    let body = try_round_trip_frame(port, API_KEY, case.version, &bytes, Duration::from_secs(30));
    match body.and_then(|b| {
        UpdateFeaturesResponse::decode_exact(&b, case.version)
            .map_err(|e| format!("undecodable response: {e:?}"))
    }) {
        Ok(r) => {
            let results: Vec<String> = r
                .results
                .iter()
                .map(|x| {
                    format!(
                        "{}: {} {:?}",
                        x.feature,
                        ErrorCode(x.error_code).name(),
                        x.error_message
                    )
                })
                .collect();
            let mut text = format!("{} {:?}", ErrorCode(r.error_code).name(), r.error_message);
            if !results.is_empty() {
                text.push_str(&format!(" results [{}]", results.join("; ")));
            }
            (Some(ErrorCode(r.error_code)), Ok(text))
        }
        Err(e) => (None, Err(e)),
    }
}

/// Runs every case against both; returns the mismatches.
pub(super) fn run(java: &Targets, kraftd: &Targets) -> Vec<String> {
    let mut failures = Vec::new();
    eprintln!("UpdateFeatures, same bytes to Java 4.4 and kraftd:");
    for case in cases() {
        let (jc, j) = send(java, &case);
        let (_, k) = send(kraftd, &case);
        let show = |a: &Answer| a.clone().unwrap_or_else(|e| e);
        eprintln!(
            "  {} (v{}):\n    java:   {}\n    kraftd: {}",
            case.name,
            case.version,
            show(&j),
            show(&k)
        );
        if jc != Some(case.expected) {
            failures.push(format!(
                "UpdateFeatures {}: Java answered {}, the test expects {}",
                case.name,
                show(&j),
                case.expected
            ));
        }
        if j != k {
            failures.push(format!(
                "UpdateFeatures {}: kraftd answered {}, Java {}",
                case.name,
                show(&k),
                show(&j)
            ));
        }
    }
    // The upgrade wrote the static voter's first VotersRecord: it now lists its directory id.
    for t in [java, kraftd] {
        match describe_quorum(t.static_voter.port) {
            Some(d) => {
                let keys: Vec<(i32, Option<Uuid>)> = d
                    .voters
                    .iter()
                    .map(|v| (v.replica_key.id, v.replica_key.directory_id))
                    .collect();
                if keys.len() != 1 || keys[0].0 != 11 || keys[0].1.is_none() {
                    failures.push(format!(
                        "{}: after the upgrade the static voter's voters are {keys:?}, not voter 11 with its directory id",
                        t.kind
                    ));
                }
            }
            None => failures.push(format!(
                "{}: the static voter no longer answers DescribeQuorum",
                t.kind
            )),
        }
    }
    failures
}
