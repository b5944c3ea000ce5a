//! Principals from mutual TLS: each client presents a certificate of the suite's CA, the
//! listener's `ssl.principal.mapping.rules` name its principal (the suite's rules after one
//! that upper-cases `CN=shout-<name>`), and StandardAuthorizer decides by ACLs on those names.
//! The same requests, in the same order, to the Java 4.4 controller and to kraftd; the answers
//! compared as Kafka's JSON form of each (ports and offsets blanked, as `authorization` does).
//!
//! The harness (User:harness, a super user) grants DESCRIBE on the cluster to User:alice, and
//! ALTER (which implies DESCRIBE) to User:SHOUT-CAROL and to User:shout-dave. Then alice may
//! describe the quorum but not the cluster (a controller asks ALTER for DescribeCluster) nor
//! create ACLs; bob (no ACL) is refused all; carol's certificate maps to SHOUT-CAROL and is
//! allowed both; dave's maps to SHOUT-DAVE, which no ACL names.

use std::time::{Duration, Instant};

use kraftd::protocol::codec::ApiMessage;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::CreateAclsRequest;

use super::super::assert_same_answers;
use super::super::authorization::{ask, case, create_acl, Case, Via};
use super::super::raft_authorization::{describe_cluster, describe_quorum};
use super::SslController;

/// ACL codes: resource type CLUSTER, pattern LITERAL, operations DESCRIBE and ALTER.
const CLUSTER: i8 = 4;
const LITERAL: i8 = 3;
const DESCRIBE: i8 = 8;
const ALTER: i8 = 7;

fn grant(name: &'static str, principal: &str, op: i8) -> Case {
    let acl = create_acl((CLUSTER, "kafka-cluster", LITERAL, principal, op));
    case(name, Via::Direct, 3, acl, ErrorCode::NONE)
}

fn cases() -> Vec<Case> {
    use ErrorCode as E;
    use Via::Cert;
    let refused = E::CLUSTER_AUTHORIZATION_FAILED;
    let cluster = || describe_cluster(2, false);
    // DescribeQuorum v0: no directory ids or fetch times, which differ between the two.
    vec![
        grant(
            "the harness grants User:alice DESCRIBE",
            "User:alice",
            DESCRIBE,
        ),
        grant(
            "the harness grants User:SHOUT-CAROL ALTER",
            "User:SHOUT-CAROL",
            ALTER,
        ),
        grant(
            "the harness grants User:shout-dave ALTER",
            "User:shout-dave",
            ALTER,
        ),
        case(
            "alice: DescribeQuorum",
            Cert("alice"),
            0,
            describe_quorum(),
            E::NONE,
        ),
        case(
            "alice: DescribeCluster (no ALTER)",
            Cert("alice"),
            1,
            cluster(),
            refused,
        ),
        case(
            "alice: CreateAcls (no ALTER)",
            Cert("alice"),
            3,
            create_acl((CLUSTER, "kafka-cluster", LITERAL, "User:bob", ALTER)),
            refused,
        ),
        case(
            "bob: DescribeQuorum",
            Cert("bob"),
            0,
            describe_quorum(),
            refused,
        ),
        case("bob: DescribeCluster", Cert("bob"), 1, cluster(), refused),
        case(
            "shout-carol: DescribeCluster",
            Cert("shout-carol"),
            1,
            cluster(),
            E::NONE,
        ),
        case(
            "shout-carol: DescribeQuorum",
            Cert("shout-carol"),
            0,
            describe_quorum(),
            E::NONE,
        ),
        case(
            "shout-dave: DescribeCluster",
            Cert("shout-dave"),
            1,
            cluster(),
            refused,
        ),
        case(
            "shout-dave: DescribeQuorum",
            Cert("shout-dave"),
            0,
            describe_quorum(),
            refused,
        ),
    ]
}

/// Until StandardAuthorizer has loaded the (empty) ACLs, it refuses all but super users with
/// UNKNOWN_SERVER_ERROR; bob's DescribeCluster tells when that is over.
fn wait_until_authorizer_loaded(c: &SslController) {
    let probe = case(
        "bob",
        Via::Cert("bob"),
        1,
        describe_cluster(2, false),
        ErrorCode::NONE,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (answer, code) = ask(c.port(), &probe);
        if code != ErrorCode::UNKNOWN_SERVER_ERROR.0 && code != i16::MIN {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{}: authorizer not loaded: {answer}",
            c.kind()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn run(c: &SslController, cases: &[Case]) -> Vec<(String, i16)> {
    wait_until_authorizer_loaded(c);
    cases
        .iter()
        .map(|x| {
            let answer = ask(c.port(), x);
            if x.key == CreateAclsRequest::API_KEY {
                // Java's authorizer sees a new ACL once its image is published, a moment after
                // the answer.
                std::thread::sleep(Duration::from_millis(1000));
            }
            answer
        })
        .collect()
}

pub(super) fn compare(java: &SslController, kraftd: &SslController) {
    let cases = cases();
    let j = run(java, &cases);
    let k = run(kraftd, &cases);
    let named: Vec<(&str, i16)> = cases.iter().map(|c| (c.name, c.expected.0)).collect();
    assert_same_answers(
        "Mutual-TLS principals mapped by ssl.principal.mapping.rules",
        &named,
        &j,
        &k,
    );
}
