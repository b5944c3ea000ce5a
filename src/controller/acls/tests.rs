//! Transcripts of the ACL decisions and the authorizer.

use super::authorizer::{java_host_address, AuthorizerConfig};
use super::decide::{create_acls, delete_acls, describe_acls, AclError};
use super::*;
use crate::controller::java::JavaRandom;
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::principal::RequestPrincipal;
use crate::protocol::errors::ErrorCode;
use crate::protocol::records::MetadataRecord;

fn acl(rt: i8, name: &str, pt: i8, principal: &str, host: &str, op: i8, perm: i8) -> Acl {
    Acl {
        resource_type: rt,
        resource_name: name.into(),
        pattern_type: pt,
        principal: principal.into(),
        host: host.into(),
        operation: op,
        permission_type: perm,
    }
}

fn topic_read(name: &str, principal: &str) -> Acl {
    acl(
        resource::TOPIC,
        name,
        pattern::LITERAL,
        principal,
        "*",
        operation::READ,
        permission::ALLOW,
    )
}

fn mv(level: i16) -> MetadataVersion {
    MetadataVersion::from_level(level).unwrap()
}

/// Creates `acls` in an image and replays the records, as the controller would.
fn image_with(acls: &[Acl]) -> AclsImage {
    let mut image = AclsImage::default();
    let result = create_acls(&image, acls, mv(33), &mut JavaRandom::new(7));
    assert!(result.reply.iter().all(Result::is_ok));
    for r in &result.records {
        match &r.record {
            MetadataRecord::AccessControlEntry(e) => image.replay(e),
            other => panic!("unexpected {other:?}"),
        }
    }
    image
}

#[test]
fn create_writes_one_record_per_new_acl_and_skips_duplicates() {
    let existing = image_with(&[topic_read("orders", "User:alice")]);
    let result = create_acls(
        &existing,
        &[
            topic_read("orders", "User:alice"), // already in the image
            topic_read("orders", "User:bob"),
            topic_read("orders", "User:bob"), // earlier in the request
        ],
        mv(33),
        &mut JavaRandom::new(1),
    );
    assert_eq!(result.reply, vec![Ok(()), Ok(()), Ok(())]);
    assert_eq!(result.records.len(), 1);
    let MetadataRecord::AccessControlEntry(r) = &result.records[0].record else {
        panic!("an AccessControlEntryRecord")
    };
    assert_eq!(
        (r.principal.as_str(), r.resource_name.as_str()),
        ("User:bob", "orders")
    );
    assert_eq!(result.records[0].version, 0);
    assert!(!existing.by_id.contains_key(&r.id));
}

#[test]
fn create_refuses_in_javas_order_with_javas_messages() {
    let ok = topic_read("t", "User:a");
    let cases: Vec<(Acl, AclError, &str)> = vec![
        (
            acl(resource::CLUSTER, "other", pattern::LITERAL, "User:a", "*", operation::ALTER, permission::ALLOW),
            AclError::ClusterName,
            "The only valid name for the CLUSTER resource is kafka-cluster",
        ),
        (Acl { resource_name: "".into(), ..ok.clone() }, AclError::EmptyName, "Invalid empty resource name"),
        (Acl { resource_type: resource::ANY, ..ok.clone() }, AclError::ResourceType("ANY"), "Invalid resourceType ANY"),
        (Acl { resource_type: resource_type(99), ..ok.clone() }, AclError::ResourceType("UNKNOWN"), "Invalid resourceType UNKNOWN"),
        (Acl { pattern_type: pattern::MATCH, ..ok.clone() }, AclError::PatternType("MATCH"), "Invalid patternType MATCH"),
        (Acl { pattern_type: pattern::ANY, ..ok.clone() }, AclError::PatternType("ANY"), "Invalid patternType ANY"),
        (Acl { operation: operation::ANY, ..ok.clone() }, AclError::Operation("ANY"), "Invalid operation ANY"),
        (Acl { permission_type: permission::ANY, ..ok.clone() }, AclError::PermissionType("ANY"), "Invalid permissionType ANY"),
        (
            Acl { principal: "alice".into(), ..ok.clone() },
            AclError::Principal("alice".into()),
            "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)",
        ),
        (Acl { host: "".into(), ..ok.clone() }, AclError::EmptyHost, "Host pattern cannot be null or empty"),
        (
            Acl { host: "10.0.0.0/33".into(), ..ok.clone() },
            AclError::Cidr {
                host: "10.0.0.0/33".into(),
                why: "Value [33] not in range [0,32]".into(),
            },
            "Invalid CIDR notation '10.0.0.0/33': Value [33] not in range [0,32]",
        ),
    ];
    for (bad, error, message) in cases {
        let result = create_acls(
            &AclsImage::default(),
            std::slice::from_ref(&bad),
            mv(33),
            &mut JavaRandom::new(1),
        );
        assert_eq!(result.reply, vec![Err(error.clone())], "{bad:?}");
        assert_eq!(error.to_string(), message);
        assert_eq!(error.error_code(), ErrorCode::INVALID_REQUEST);
        assert!(result.records.is_empty());
    }
}

#[test]
fn cidr_hosts_need_4_4_iv1() {
    let cidr = Acl {
        host: "10.0.0.0/8".into(),
        ..topic_read("t", "User:a")
    };
    let before = create_acls(
        &AclsImage::default(),
        std::slice::from_ref(&cidr),
        mv(31),
        &mut JavaRandom::new(1),
    );
    assert_eq!(before.reply, vec![Err(AclError::CidrUnsupported)]);
    assert_eq!(
        AclError::CidrUnsupported.error_code(),
        ErrorCode::UNSUPPORTED_VERSION
    );
    assert_eq!(
        AclError::CidrUnsupported.to_string(),
        "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher."
    );
    let at = create_acls(
        &AclsImage::default(),
        &[cidr],
        mv(32),
        &mut JavaRandom::new(1),
    );
    assert_eq!(at.reply, vec![Ok(())]);
    assert_eq!(at.records.len(), 1);
}

fn filter(rt: i8, name: Option<&str>, pt: i8) -> AclFilter {
    AclFilter {
        resource_type: rt,
        resource_name: name.map(str::to_string),
        pattern_type: pt,
        principal: None,
        host: None,
        operation: operation::ANY,
        permission_type: permission::ANY,
    }
}

#[test]
fn delete_lists_each_filters_matches_and_removes_each_acl_once() {
    let prefixed = acl(
        resource::TOPIC,
        "ord",
        pattern::PREFIXED,
        "User:a",
        "*",
        operation::WRITE,
        permission::ALLOW,
    );
    let wildcard = topic_read("*", "User:b");
    let image = image_with(&[
        topic_read("orders", "User:a"),
        prefixed.clone(),
        wildcard.clone(),
    ]);
    let result = delete_acls(
        &image,
        &[
            // MATCH: the literal, the wildcard and the prefixed ACLs that apply to "orders".
            filter(resource::TOPIC, Some("orders"), pattern::MATCH),
            // LITERAL by name: only the literal one.
            filter(resource::TOPIC, Some("orders"), pattern::LITERAL),
            filter(resource::ANY, None, pattern::UNKNOWN),
            AclFilter {
                operation: operation::UNKNOWN,
                ..filter(resource::ANY, None, pattern::ANY)
            },
            filter(resource::GROUP, None, pattern::ANY),
        ],
    );
    let names = |r: &Result<Vec<Acl>, AclError>| {
        let mut n: Vec<String> = r
            .as_ref()
            .unwrap()
            .iter()
            .map(|a| a.resource_name.clone())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&result.reply[0]), vec!["*", "ord", "orders"]);
    assert_eq!(names(&result.reply[1]), vec!["orders"]);
    assert_eq!(result.reply[2], Err(AclError::UnknownPatternFilter));
    assert_eq!(
        AclError::UnknownPatternFilter.to_string(),
        "Unknown patternFilter."
    );
    assert_eq!(result.reply[3], Err(AclError::UnknownEntryFilter));
    assert_eq!(
        AclError::UnknownEntryFilter.to_string(),
        "Unknown entryFilter."
    );
    assert_eq!(names(&result.reply[4]), Vec::<String>::new());
    // Three ACLs matched, each removed once.
    assert_eq!(result.records.len(), 3);
    assert!(result
        .records
        .iter()
        .all(|r| matches!(r.record, MetadataRecord::RemoveAccessControlEntry(_))));
}

#[test]
fn describe_groups_by_resource_pattern() {
    let image = image_with(&[
        topic_read("orders", "User:a"),
        topic_read("orders", "User:b"),
        acl(
            resource::GROUP,
            "g",
            pattern::LITERAL,
            "User:a",
            "*",
            operation::READ,
            permission::ALLOW,
        ),
    ]);
    let all = describe_acls(&image, &filter(resource::ANY, None, pattern::ANY));
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].0,
        (resource::TOPIC, "orders".to_string(), pattern::LITERAL)
    );
    assert_eq!(all[0].1.len(), 2);
    assert_eq!(
        all[1].0,
        (resource::GROUP, "g".to_string(), pattern::LITERAL)
    );
    let by_principal = AclFilter {
        principal: Some("User:b".into()),
        ..filter(resource::ANY, None, pattern::ANY)
    };
    let found = describe_acls(&image, &by_principal);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1[0].principal, "User:b");
}

fn alice(host: &str) -> RequestPrincipal {
    RequestPrincipal {
        principal_type: "User".into(),
        name: "alice".into(),
        token_authenticated: false,
        host: host.parse().unwrap(),
    }
}

#[test]
fn authorizer_deny_beats_allow_and_allow_implies_describe() {
    let config = AuthorizerConfig::default();
    let read = topic_read("orders", "User:alice");
    let image = image_with(std::slice::from_ref(&read));
    let who = alice("10.0.0.1");
    let can = |image: &AclsImage, name: &str, op: i8| {
        config.authorize(image, &who, resource::TOPIC, name, op)
    };
    assert!(can(&image, "orders", operation::READ));
    assert!(
        can(&image, "orders", operation::DESCRIBE),
        "READ implies DESCRIBE"
    );
    assert!(!can(&image, "orders", operation::WRITE));
    assert!(
        !can(&image, "other", operation::READ),
        "no ACL, no allow.everyone"
    );
    let denied = image_with(&[
        read,
        acl(
            resource::TOPIC,
            "ord",
            pattern::PREFIXED,
            "User:*",
            "*",
            operation::READ,
            permission::DENY,
        ),
    ]);
    assert!(
        !can(&denied, "orders", operation::READ),
        "a matching DENY wins"
    );
    assert!(
        can(&denied, "orders", operation::DESCRIBE),
        "a DENY of READ does not deny DESCRIBE"
    );
}

#[test]
fn authorizer_super_users_wildcards_hosts_and_the_default() {
    let config = AuthorizerConfig::parse(Some(" User:admin ; ;User:ops"), Some("TRUE")).unwrap();
    assert_eq!(config.super_users.len(), 2);
    assert!(config.allow_everyone_if_no_acl_found);
    assert!(AuthorizerConfig::parse(Some("admin"), None).is_err());
    let admin = RequestPrincipal {
        name: "admin".into(),
        ..alice("10.0.0.1")
    };
    let image = image_with(&[
        acl(
            resource::TOPIC,
            "*",
            pattern::LITERAL,
            "User:bob",
            "*",
            operation::ALL,
            permission::ALLOW,
        ),
        acl(
            resource::GROUP,
            "g",
            pattern::LITERAL,
            "User:alice",
            "10.0.0.0/24",
            operation::READ,
            permission::ALLOW,
        ),
    ]);
    assert!(config.authorize(&image, &admin, resource::GROUP, "g", operation::DELETE));
    // Every topic has an ACL (the wildcard), so alice gets no default allow.
    assert!(!config.authorize(
        &image,
        &alice("10.0.0.1"),
        resource::TOPIC,
        "x",
        operation::READ
    ));
    // A resource type without ACLs falls back to allow.everyone.if.no.acl.found.
    assert!(config.authorize(
        &image,
        &alice("10.0.0.1"),
        resource::CLUSTER,
        CLUSTER_NAME,
        operation::ALTER
    ));
    assert!(config.authorize(
        &image,
        &alice("10.0.0.9"),
        resource::GROUP,
        "g",
        operation::READ
    ));
    assert!(!config.authorize(
        &image,
        &alice("10.0.1.9"),
        resource::GROUP,
        "g",
        operation::READ
    ));
    assert_eq!(java_host_address("::1".parse().unwrap()), "0:0:0:0:0:0:0:1");
}

#[test]
fn before_its_first_load_the_authorizer_answers_only_super_users() {
    use super::authorizer::{allows, cluster_operation, Denied, NotReady};
    let config = AuthorizerConfig::parse(Some("User:admin"), Some("true")).unwrap();
    let admin = RequestPrincipal {
        name: "admin".into(),
        ..alice("10.0.0.1")
    };
    let cluster = |acls: Option<&AclsImage>, who: &RequestPrincipal| {
        allows(
            Some(&config),
            acls,
            who,
            resource::CLUSTER,
            CLUSTER_NAME,
            operation::ALTER,
        )
    };
    // Not loaded: super users are allowed, anyone else is NotReady (even where
    // allow.everyone.if.no.acl.found would allow them once loaded).
    assert_eq!(cluster(None, &admin), Ok(true));
    assert_eq!(cluster(None, &alice("10.0.0.1")), Err(NotReady));
    assert_eq!(
        cluster(Some(&AclsImage::default()), &alice("10.0.0.1")),
        Ok(true)
    );
    // Without an authorizer everything is allowed, loaded or not.
    let no_authorizer = allows(
        None,
        None,
        &alice("10.0.0.1"),
        resource::CLUSTER,
        CLUSTER_NAME,
        7,
    );
    assert_eq!(no_authorizer, Ok(true));
    // authorizeClusterOperation's refusals: the exception, or not ready.
    let who = alice("10.0.0.1");
    assert_eq!(
        cluster_operation(Ok(true), "Vote", &who, operation::CLUSTER_ACTION),
        Ok(())
    );
    let refused =
        cluster_operation(Ok(false), "Vote", &who, operation::CLUSTER_ACTION).unwrap_err();
    assert_eq!(
        refused.error_code(),
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED
    );
    assert_eq!(
        refused.exception_message().as_deref(),
        Some("Request Vote from User:alice needs CLUSTER_ACTION permission.")
    );
    let not_ready = cluster_operation(Err(NotReady), "Vote", &who, 9).unwrap_err();
    assert_eq!(not_ready, Denied::NotReady);
    assert_eq!(not_ready.error_code(), ErrorCode::UNKNOWN_SERVER_ERROR);
    assert_eq!(not_ready.exception_message(), None);
    assert_eq!(
        not_ready.code_message(),
        "The server experienced an unexpected error when processing the request."
    );
}
