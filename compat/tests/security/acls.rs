//! CreateAcls, DeleteAcls and DescribeAcls: the same requests, in the same order, to a Java 4.4
//! controller and to kraftd (no brokers), both with StandardAuthorizer and this test's
//! connection (User:ANONYMOUS on PLAINTEXT) a super user, then both without an authorizer.
//! Answers are compared field by field; the ACLs a DescribeAcls or DeleteAcls lists are sorted
//! first, since Java lists them in `HashMap` order keyed by enum identity hashes, which
//! changes from run to run.

use kraftd::protocol::codec::Message;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::create_acls_request::AclCreation;
use kraftd::protocol::messages::delete_acls_request::DeleteAclsFilter;
use kraftd::protocol::messages::{
    CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse,
};

use super::assert_same_answers;
use crate::harness::dynamic_quorum::Kind;
use crate::harness::TestDir;
use crate::topics::cluster::TopicCluster;

const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

enum Call {
    Create(CreateAclsRequest),
    Delete(DeleteAclsRequest),
    Describe(DescribeAclsRequest),
}

/// (resource type, name, pattern type, principal, host, operation, permission).
type Spec<'a> = (i8, &'a str, i8, &'a str, &'a str, i8, i8);

fn create(specs: &[Spec]) -> Call {
    Call::Create(CreateAclsRequest {
        creations: specs
            .iter()
            .map(|&(rt, name, pt, principal, host, op, perm)| AclCreation {
                resource_type: rt,
                resource_name: name.into(),
                resource_pattern_type: pt,
                principal: principal.into(),
                host: host.into(),
                operation: op,
                permission_type: perm,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    })
}

/// A filter on resource type, name and pattern type, any entry.
fn delete(filters: &[(i8, Option<&str>, i8)]) -> Call {
    Call::Delete(DeleteAclsRequest {
        filters: filters
            .iter()
            .map(|&(rt, name, pt)| DeleteAclsFilter {
                resource_type_filter: rt,
                resource_name_filter: name.map(str::to_string),
                pattern_type_filter: pt,
                principal_filter: None,
                host_filter: None,
                operation: 1,
                permission_type: 1,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    })
}

fn describe(rt: i8, name: Option<&str>, pt: i8, principal: Option<&str>) -> Call {
    Call::Describe(DescribeAclsRequest {
        resource_type_filter: rt,
        resource_name_filter: name.map(str::to_string),
        pattern_type_filter: pt,
        principal_filter: principal.map(str::to_string),
        // Any host: the codec's default is "", which only an ACL for host "" would match.
        host_filter: None,
        operation: 1,
        permission_type: 1,
        ..Default::default()
    })
}

// Codes: resource TOPIC 2, GROUP 3, CLUSTER 4, ANY 1; pattern LITERAL 3, PREFIXED 4, MATCH 2,
// ANY 1; operation READ 3, WRITE 4, ALTER 7, ANY 1; permission ALLOW 3, DENY 2, ANY 1.
const ALICE_READ: Spec = (2, "orders", 3, "User:alice", "*", 3, 3);

/// (case, call, Java's first error code).
fn with_authorizer() -> Vec<(&'static str, Call, ErrorCode)> {
    use ErrorCode as E;
    let with = |f: fn(&mut Spec)| {
        let mut s = ALICE_READ;
        f(&mut s);
        create(&[s])
    };
    vec![
        ("create a literal ACL", create(&[ALICE_READ]), E::NONE),
        (
            "the same again, twice in one request",
            create(&[ALICE_READ, ALICE_READ]),
            E::NONE,
        ),
        (
            "prefixed, deny and cluster ACLs",
            create(&[
                (3, "app-", 4, "User:bob", "10.1.2.3", 3, 3),
                (2, "orders", 3, "User:*", "*", 4, 2),
                (4, "kafka-cluster", 3, "User:ops", "*", 7, 3),
            ]),
            E::NONE,
        ),
        ("a CIDR host", with(|s| s.4 = "10.0.0.0/8"), E::NONE),
        (
            "a bad CIDR host",
            with(|s| s.4 = "10.0.0.0/33"),
            E::INVALID_REQUEST,
        ),
        (
            "a cluster with another name",
            with(|s| {
                s.0 = 4;
                s.1 = "other"
            }),
            E::INVALID_REQUEST,
        ),
        (
            "an empty resource name",
            with(|s| s.1 = ""),
            E::INVALID_REQUEST,
        ),
        (
            "resource type ANY",
            with(|s| s.0 = 1),
            E::UNKNOWN_SERVER_ERROR,
        ),
        (
            "an unknown resource type",
            with(|s| s.0 = 99),
            E::INVALID_REQUEST,
        ),
        (
            "pattern type MATCH",
            with(|s| s.2 = 2),
            E::UNKNOWN_SERVER_ERROR,
        ),
        (
            "pattern type ANY",
            with(|s| s.2 = 1),
            E::UNKNOWN_SERVER_ERROR,
        ),
        ("operation ANY", with(|s| s.5 = 1), E::UNKNOWN_SERVER_ERROR),
        ("permission ANY", with(|s| s.6 = 1), E::UNKNOWN_SERVER_ERROR),
        (
            "a principal without a colon",
            with(|s| s.3 = "alice"),
            E::INVALID_REQUEST,
        ),
        ("an empty host", with(|s| s.4 = ""), E::INVALID_REQUEST),
        ("describe everything", describe(1, None, 1, None), E::NONE),
        (
            "describe what applies to topic orders",
            describe(2, Some("orders"), 2, None),
            E::NONE,
        ),
        (
            "describe by principal",
            describe(1, None, 1, Some("User:bob")),
            E::NONE,
        ),
        (
            "describe an unknown resource type",
            describe(99, None, 1, None),
            E::NONE,
        ),
        (
            "delete with unknown filters",
            delete(&[(99, None, 1), (1, None, 99)]),
            E::INVALID_REQUEST,
        ),
        (
            "delete what applies to topic orders, then the literal ones again",
            delete(&[(2, Some("orders"), 2), (2, Some("orders"), 3)]),
            E::NONE,
        ),
        ("describe what is left", describe(1, None, 1, None), E::NONE),
        ("delete everything", delete(&[(1, None, 1)]), E::NONE),
        ("describe nothing left", describe(1, None, 1, None), E::NONE),
    ]
}

fn without_authorizer() -> Vec<(&'static str, Call, ErrorCode)> {
    use ErrorCode as E;
    vec![
        (
            "create without an authorizer",
            create(&[ALICE_READ]),
            E::SECURITY_DISABLED,
        ),
        (
            "delete without an authorizer",
            delete(&[(1, None, 1)]),
            E::SECURITY_DISABLED,
        ),
        (
            "describe without an authorizer",
            describe(1, None, 1, None),
            E::SECURITY_DISABLED,
        ),
    ]
}

fn status(code: i16, message: &Option<String>) -> String {
    format!("{} {:?}", ErrorCode(code).name(), message)
}

/// The answer as text (ACL lists sorted) and its first error code.
fn render(c: &TopicCluster, call: &Call) -> (String, i16) {
    const V: i16 = 3;
    let sent = match call {
        Call::Create(r) => c.send(V, r),
        Call::Delete(r) => c.send(V, r),
        Call::Describe(r) => c.send(V, r),
    };
    let body = match sent {
        Ok(b) => b,
        Err(e) => return (format!("no answer: {e}"), -1),
    };
    match call {
        Call::Create(_) => {
            let r = CreateAclsResponse::decode_exact(&body, V).expect("a CreateAcls response");
            let lines: Vec<String> = r
                .results
                .iter()
                .map(|x| status(x.error_code, &x.error_message))
                .collect();
            (
                lines.join("; "),
                r.results.first().map_or(0, |x| x.error_code),
            )
        }
        Call::Delete(_) => {
            let r = DeleteAclsResponse::decode_exact(&body, V).expect("a DeleteAcls response");
            let lines: Vec<String> = r
                .filter_results
                .iter()
                .map(|f| {
                    let mut acls: Vec<String> = f
                        .matching_acls
                        .iter()
                        .map(|a| {
                            format!(
                                "{} {}:{}:{} {} {} {}:{} {}",
                                status(a.error_code, &a.error_message),
                                a.resource_type,
                                a.resource_name,
                                a.pattern_type,
                                a.principal,
                                a.host,
                                a.operation,
                                a.permission_type,
                                ""
                            )
                        })
                        .collect();
                    acls.sort();
                    format!(
                        "{} [{}]",
                        status(f.error_code, &f.error_message),
                        acls.join(", ")
                    )
                })
                .collect();
            (
                lines.join("; "),
                r.filter_results.first().map_or(0, |x| x.error_code),
            )
        }
        Call::Describe(_) => {
            let r = DescribeAclsResponse::decode_exact(&body, V).expect("a DescribeAcls response");
            let mut acls: Vec<String> = r
                .resources
                .iter()
                .flat_map(|res| {
                    res.acls.iter().map(move |a| {
                        format!(
                            "{}:{}:{} {} {} {}:{}",
                            res.resource_type,
                            res.resource_name,
                            res.pattern_type,
                            a.principal,
                            a.host,
                            a.operation,
                            a.permission_type
                        )
                    })
                })
                .collect();
            acls.sort();
            let groups = r.resources.len();
            (
                format!(
                    "{} {groups} resource(s) [{}]",
                    status(r.error_code, &r.error_message),
                    acls.join(", ")
                ),
                r.error_code,
            )
        }
    }
}

fn run_all(
    kind: Kind,
    dir: &TestDir,
    props: &[(&str, String)],
    calls: &[(&str, Call, ErrorCode)],
) -> Vec<(String, i16)> {
    let mut c = TopicCluster::start_with(dir, kind, &[], props);
    let answers = calls.iter().map(|(_, call, _)| render(&c, call)).collect();
    c.stop();
    answers
}

#[test]
fn acl_requests_get_javas_answers() {
    let authorizer = [
        ("authorizer.class.name", STANDARD_AUTHORIZER.to_string()),
        ("super.users", "User:ANONYMOUS".to_string()),
    ];
    for (what, props, calls) in [
        (
            "ACLs with StandardAuthorizer",
            &authorizer[..],
            with_authorizer(),
        ),
        ("ACLs without an authorizer", &[][..], without_authorizer()),
    ] {
        let dir = TestDir::new();
        let java = run_all(Kind::Java, &dir, props, &calls);
        let kraftd = run_all(Kind::Kraftd, &dir, props, &calls);
        let cases: Vec<(&str, i16)> = calls.iter().map(|c| (c.0, c.2 .0)).collect();
        assert_same_answers(what, &cases, &java, &kraftd);
    }
}
