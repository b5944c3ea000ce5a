//! ACLs (AccessControlEntryRecord, RemoveAccessControlEntryRecord), client quotas
//! (ClientQuotaRecord), SCRAM users (UserScramCredentialRecord,
//! RemoveUserScramCredentialRecord) and delegation tokens (DelegationTokenRecord,
//! RemoveDelegationTokenRecord), each added and some removed again, so the final image holds
//! some of each.

use super::cluster::{Cluster, ADMIN_USER};
use super::tools::{in_parallel, Tools};
use super::topics::{SMALL, WIDE};
use crate::harness::Tool;

impl Cluster {
    /// ACLs, quotas, SCRAM users, delegation tokens and the producers: independent, so each
    /// runs its tools on its own thread.
    pub fn security_and_producers(&mut self) {
        let t = self.tools();
        in_parallel(vec![
            Box::new(|| t.acls()),
            Box::new(|| t.quotas()),
            Box::new(|| t.scram_users()),
            Box::new(|| t.delegation_tokens_created_renewed_expired()),
            Box::new(|| t.producers()),
        ]);
    }
}

impl Tools {
    fn acls(&self) {
        // alice may read and describe `wide` and the group (four entries); bob may write to
        // topics prefixed `sm`, and loses that again.
        self.admin(
            Tool::Acls,
            &[
                "--add",
                "--allow-principal",
                "User:alice",
                "--operation",
                "Read",
                "--operation",
                "Describe",
                "--topic",
                WIDE,
                "--group",
                "workload-group",
            ],
        );
        let bob = [
            "--allow-principal",
            "User:bob",
            "--allow-host",
            "127.0.0.1",
            "--operation",
            "Write",
            "--topic",
            "sm",
            "--resource-pattern-type",
            "prefixed",
        ];
        self.admin(Tool::Acls, &[&["--add"][..], &bob].concat());
        self.admin(Tool::Acls, &[&["--remove", "--force"][..], &bob].concat());
    }

    fn quotas(&self) {
        self.alter_configs(
            &[
                "--entity-type",
                "clients",
                "--entity-name",
                "workload-client",
            ],
            Some("producer_byte_rate=1048576,consumer_byte_rate=2097152"),
            None,
        );
        self.alter_configs(
            &[
                "--entity-type",
                "users",
                "--entity-name",
                "alice",
                "--entity-type",
                "clients",
                "--entity-default",
            ],
            Some("request_percentage=50"),
            None,
        );
        self.alter_configs(
            &["--entity-type", "ips", "--entity-name", "127.0.0.9"],
            Some("connection_creation_rate=50"),
            None,
        );
        self.alter_configs(
            &[
                "--entity-type",
                "clients",
                "--entity-name",
                "workload-client",
            ],
            None,
            Some("consumer_byte_rate"),
        );
    }

    /// One mechanism per call: Kafka refuses to alter a user's credentials twice in one
    /// request.
    fn scram_users(&self) {
        self.alter_configs(
            &["--entity-type", "users", "--entity-name", "alice"],
            Some("SCRAM-SHA-256=[iterations=4096,password=alice-secret]"),
            None,
        );
        self.alter_configs(
            &["--entity-type", "users", "--entity-name", "alice"],
            Some("SCRAM-SHA-512=[password=alice-secret]"),
            None,
        );
        self.alter_configs(
            &["--entity-type", "users", "--entity-name", "carol"],
            Some("SCRAM-SHA-512=[password=carol-secret]"),
            None,
        );
        self.alter_configs(
            &["--entity-type", "users", "--entity-name", "alice"],
            None,
            Some("SCRAM-SHA-512"),
        );
    }

    /// Two tokens owned by the SASL admin: one created and renewed (it stays), one created
    /// and expired at once (the controller removes it).
    fn delegation_tokens_created_renewed_expired(&self) {
        let kept = self.create_token();
        self.delegation_tokens(&["--renew", "--hmac", &kept, "--renew-time-period", "3600000"]);
        let expired = self.create_token();
        self.delegation_tokens(&["--expire", "--hmac", &expired, "--expiry-time-period", "-1"]);
    }

    /// Creates a token; returns its HMAC (what renew and expire name it by).
    fn create_token(&self) -> String {
        let out = self.delegation_tokens(&[
            "--create",
            "--max-life-time-period",
            "86400000",
            "--renewer-principal",
            &format!("User:{ADMIN_USER}"),
        ]);
        // A header line, then (after a blank line): TOKENID HMAC OWNER REQUESTER RENEWERS ISSUEDATE EXPIRYDATE MAXDATE
        let row = out
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("TOKENID"))
            .filter(|l| !l.trim().is_empty())
            .nth(1)
            .unwrap_or_else(|| panic!("no token in the output of --create:\n{out}"));
        row.split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("no HMAC in the token line {row:?}"))
            .to_string()
    }

    /// An idempotent producer (Kafka's VerifiableProducer, acks=all) and a transactional one
    /// (kafka-producer-perf-test with a transactional id), so brokers allocate producer id
    /// blocks (ProducerIdsRecord).
    fn producers(&self) {
        let idempotent = self.admin(
            Tool::VerifiableProducer,
            &[
                "--topic",
                SMALL,
                "--max-messages",
                "300",
                "--throughput",
                "1000",
                "--acks",
                "-1",
            ],
        );
        let acked = idempotent
            .stdout
            .lines()
            .filter(|l| l.contains("\"producer_send_success\""))
            .count();
        assert_eq!(
            acked, 300,
            "the idempotent producer had {acked} of 300 messages acknowledged:\n{idempotent}"
        );
        let transactional = self.admin(
            Tool::ProducerPerformance,
            &[
                "--topic",
                WIDE,
                "--num-records",
                "1000",
                "--record-size",
                "100",
                "--throughput",
                "-1",
                "--transactional-id",
                "workload-tx",
                "--transaction-duration-ms",
                "100",
            ],
        );
        assert!(
            transactional.stdout.contains("1000 records sent"),
            "the transactional producer did not send its 1000 records:\n{transactional}"
        );
    }
}
