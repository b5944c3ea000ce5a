//! AlterClientQuotas transcripts: requests decided against an image, their records replayed,
//! the results in the order Java's response lists them.

use super::alter::*;
use super::*;
use crate::protocol::errors::ErrorCode;
use crate::protocol::records::MetadataRecord;

fn entity(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    pairs
        .iter()
        .map(|(t, n)| (t.to_string(), n.map(str::to_string)))
        .collect()
}

fn alteration(pairs: &[(&str, Option<&str>)], ops: &[(&str, Option<f64>)]) -> QuotaAlteration {
    QuotaAlteration {
        entity: entity(pairs),
        ops: ops.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn literal_ips_only(name: &str) -> bool {
    name.parse::<std::net::IpAddr>().is_ok()
}

/// Decides and replays; the results as "entity: outcome" lines.
fn alter(image: &mut QuotasImage, alterations: &[QuotaAlteration]) -> Vec<String> {
    let result = alter_client_quotas(image, alterations, false, &literal_ips_only);
    for r in &result.records {
        let MetadataRecord::ClientQuota(q) = &r.record else {
            panic!("not a ClientQuotaRecord: {r:?}")
        };
        image.replay(q);
    }
    result
        .reply
        .iter()
        .map(|r| {
            let e: Vec<String> = r
                .entity
                .iter()
                .map(|(t, n)| format!("{t}={}", n.as_deref().unwrap_or("<default>")))
                .collect();
            match &r.outcome {
                Ok(()) => format!("{}: ok", e.join(",")),
                Err(err) => format!("{}: {err}", e.join(",")),
            }
        })
        .collect()
}

#[test]
fn a_user_and_client_quota_is_set_changed_and_removed() {
    let mut image = QuotasImage::default();
    let alice_app = [("user", Some("alice")), ("client-id", Some("app"))];
    let set = alteration(
        &alice_app,
        &[
            ("producer_byte_rate", Some(1024.0)),
            ("request_percentage", Some(12.5)),
        ],
    );
    // Java's HashMap of the entity lists client-id before user.
    assert_eq!(
        alter(&mut image, std::slice::from_ref(&set)),
        ["client-id=app,user=alice: ok"]
    );
    let key = vec![
        ("client-id".to_string(), Some("app".to_string())),
        ("user".to_string(), Some("alice".to_string())),
    ];
    assert_eq!(image.entities[&key]["producer_byte_rate"], 1024.0);
    // The same values again write nothing.
    let again = alter_client_quotas(&image, &[set], false, &literal_ips_only);
    assert!(again.records.is_empty());
    let remove = alteration(
        &alice_app,
        &[("producer_byte_rate", None), ("consumer_byte_rate", None)],
    );
    let result = alter_client_quotas(
        &image,
        std::slice::from_ref(&remove),
        false,
        &literal_ips_only,
    );
    assert_eq!(result.records.len(), 1, "only a key that is set is removed");
    alter(&mut image, &[remove]);
    assert_eq!(image.entities[&key].len(), 1);
}

#[test]
fn refused_entities_name_javas_reason_and_write_nothing() {
    let image = QuotasImage::default();
    let cases = [
        (alteration(&[], &[("producer_byte_rate", Some(1.0))]), ": Invalid empty client quota entity"),
        (
            alteration(&[("group", Some("g"))], &[("producer_byte_rate", Some(1.0))]),
            "group=g: Unhandled client quota entity type: group",
        ),
        (alteration(&[("user", Some(""))], &[]), "user=: Empty user not supported"),
        (
            alteration(&[("ip", Some("10.0.0.1")), ("user", None)], &[]),
            "user=<default>,ip=10.0.0.1: Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
        ),
        (
            alteration(&[("ip", Some("nowhere"))], &[]),
            "ip=nowhere: nowhere is not a valid IP or resolvable host.",
        ),
        (
            alteration(&[("ip", Some("10.0.0.1"))], &[("producer_byte_rate", Some(1.0))]),
            "ip=10.0.0.1: Invalid configuration key producer_byte_rate",
        ),
        (
            alteration(&[("user", Some("u"))], &[("consumer_byte_rate", Some(0.0))]),
            "user=u: Quota consumer_byte_rate must be greater than 0",
        ),
        (
            alteration(&[("user", Some("u"))], &[("consumer_byte_rate", Some(1.5))]),
            "user=u: consumer_byte_rate cannot be a fractional value.",
        ),
        (
            alteration(&[("user", Some("u"))], &[("consumer_byte_rate", Some(1e19))]),
            "user=u: Proposed value for consumer_byte_rate is too large for a LONG.",
        ),
        (
            alteration(&[("ip", None)], &[("connection_creation_rate", Some(3e9))]),
            "ip=<default>: Proposed value for connection_creation_rate is too large for an INT.",
        ),
    ];
    for (a, expected) in cases {
        let result = alter_client_quotas(&image, &[a], false, &literal_ips_only);
        assert!(result.records.is_empty(), "{expected}");
        let r = &result.reply[0];
        let e: Vec<String> = r
            .entity
            .iter()
            .map(|(t, n)| format!("{t}={}", n.as_deref().unwrap_or("<default>")))
            .collect();
        let err = r.outcome.as_ref().unwrap_err();
        assert_eq!(err.error_code(), ErrorCode::INVALID_REQUEST);
        assert_eq!(format!("{}: {err}", e.join(",")), expected);
    }
    assert!(image.entities.is_empty());
}

#[test]
fn a_duplicate_key_or_entity_is_reported_as_a_duplicate_entity_and_the_first_stays() {
    let mut image = QuotasImage::default();
    let got = alter(
        &mut image,
        &[
            alteration(
                &[("user", Some("a"))],
                &[("producer_byte_rate", Some(10.0))],
            ),
            alteration(
                &[("user", Some("a"))],
                &[("producer_byte_rate", Some(20.0))],
            ),
            alteration(
                &[("user", Some("b"))],
                &[
                    ("producer_byte_rate", Some(1.0)),
                    ("producer_byte_rate", Some(2.0)),
                ],
            ),
        ],
    );
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "user=a: Ignoring duplicate entity ClientQuotaEntity(entries={user=a})",
            "user=b: Ignoring duplicate entity ClientQuotaEntity(entries={user=b})",
        ]
    );
    let a = vec![("user".to_string(), Some("a".to_string()))];
    assert_eq!(
        image.entities[&a]["producer_byte_rate"], 10.0,
        "the first one was written"
    );
    assert!(!image
        .entities
        .contains_key(&vec![("user".to_string(), Some("b".to_string()))]));
}

#[test]
fn validating_only_writes_nothing() {
    let image = QuotasImage::default();
    let a = alteration(
        &[("client-id", None)],
        &[("request_percentage", Some(50.0))],
    );
    let result = alter_client_quotas(&image, &[a], true, &literal_ips_only);
    assert!(result.records.is_empty());
    assert_eq!(result.reply[0].outcome, Ok(()));
}
