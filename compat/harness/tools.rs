//! Convenience wrappers for the Kafka tools the compat tests use most, and parsers for their output.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use super::kafka::{Kafka, Tool, ToolOptions};
use super::process::Output;

/// Timeout of one `describe --status` poll.
const QUORUM_STATUS_TIMEOUT: Duration = Duration::from_secs(30);

/// The voter/quorum flag of `kafka-storage format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatFlag {
    /// No flag: brokers, and controllers of a static quorum (`controller.quorum.voters`).
    None,
    /// `--standalone`: a single-node dynamic quorum made of this controller.
    Standalone,
    /// `--initial-controllers id@host:port:directoryId,...`
    InitialControllers(String),
    /// `--no-initial-controllers`: a controller that will join an existing dynamic quorum.
    NoInitialControllers,
}

/// The parsed output of `kafka-metadata-quorum describe --status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumStatus {
    pub cluster_id: String,
    /// -1 when the quorum has no leader.
    pub leader_id: i32,
    pub leader_epoch: i32,
    pub high_watermark: i64,
    /// Every `Key: value` line as printed (e.g. `CurrentVoters`, `CurrentObservers`, JSON-ish).
    pub fields: BTreeMap<String, String>,
}

impl QuorumStatus {
    /// Parses the `Key:   value` lines; `None` if a required key is missing or malformed.
    pub fn parse(stdout: &str) -> Option<QuorumStatus> {
        let fields: BTreeMap<String, String> = stdout
            .lines()
            .filter_map(|line| line.split_once(':'))
            .map(|(key, value)| (key.trim().to_string(), value.trim().to_string()))
            .collect();
        Some(QuorumStatus {
            cluster_id: fields.get("ClusterId")?.clone(),
            leader_id: fields.get("LeaderId")?.parse().ok()?,
            leader_epoch: fields.get("LeaderEpoch")?.parse().ok()?,
            high_watermark: fields.get("HighWatermark")?.parse().ok()?,
            fields,
        })
    }
}

/// Parses `kafka-features describe` output into feature name -> `FinalizedVersionLevel`
/// (e.g. `"kraft.version" -> "1"`, `"metadata.version" -> "4.4-IV2"`).
pub fn parse_finalized_features(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|line| {
            // "Feature: kraft.version  SupportedMinVersion: 0 ... FinalizedVersionLevel: 1  Epoch: 9"
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let value_of = |key: &str| {
                let at = tokens.iter().position(|t| *t == key)?;
                tokens.get(at + 1).map(|v| v.to_string())
            };
            Some((value_of("Feature:")?, value_of("FinalizedVersionLevel:")?))
        })
        .collect()
}

/// A random Kafka `Uuid` in its 22-character base64url form, as `kafka-storage random-uuid`
/// prints (for cluster and directory ids). Like Kafka, never the reserved zero and one ids and
/// never one starting with '-' (it would read as a command-line flag).
pub fn random_kafka_uuid() -> String {
    loop {
        let bytes: [u8; 16] = rand::random();
        let value = u128::from_be_bytes(bytes);
        let text = URL_SAFE_NO_PAD.encode(bytes);
        if value > 1 && !text.starts_with('-') {
            return text;
        }
    }
}

impl Kafka {
    /// `kafka-storage random-uuid`, checked to be a 22-character id.
    pub fn random_uuid(&self) -> String {
        let out = self.run(Tool::Storage, &["random-uuid"]);
        out.assert_success();
        let id = out.stdout.trim().to_string();
        assert!(
            id.len() == 22 && URL_SAFE_NO_PAD.decode(&id).is_ok_and(|b| b.len() == 16),
            "kafka-storage random-uuid printed {id:?}, not a 22-character base64url id:\n{out}"
        );
        id
    }

    /// `kafka-storage format --config <config> --cluster-id <id> [flag] [extra...]`.
    pub fn storage_format(
        &self,
        config: &Path,
        cluster_id: &str,
        flag: &FormatFlag,
        extra: &[&str],
    ) -> Output {
        let config = config.to_str().expect("config path is UTF-8");
        let mut args = vec!["format", "--config", config, "--cluster-id", cluster_id];
        match flag {
            FormatFlag::None => {}
            FormatFlag::Standalone => args.push("--standalone"),
            FormatFlag::InitialControllers(voters) => {
                args.extend(["--initial-controllers", voters.as_str()])
            }
            FormatFlag::NoInitialControllers => args.push("--no-initial-controllers"),
        }
        args.extend_from_slice(extra);
        self.run(Tool::Storage, &args)
    }

    /// `kafka-metadata-quorum --bootstrap-controller <host:port,...> <args...>`.
    pub fn metadata_quorum(&self, bootstrap_controller: &str, args: &[&str]) -> Output {
        let mut all = vec!["--bootstrap-controller", bootstrap_controller];
        all.extend_from_slice(args);
        self.run(Tool::MetadataQuorum, &all)
    }

    /// `describe --status` against the controllers, with admin timeouts short enough to poll a
    /// quorum that is still starting. `Err` carries the tool's output when it failed or printed
    /// something unparseable.
    pub fn quorum_status(&self, bootstrap_controller: &str) -> Result<QuorumStatus, Output> {
        let admin = self.fast_admin_config();
        let admin = admin.to_str().expect("cache path is UTF-8");
        let args = [
            "--bootstrap-controller",
            bootstrap_controller,
            "--command-config",
            admin,
            "describe",
            "--status",
        ];
        // The admin client gives up after 10 s; the tool timeout only guards a stuck JVM.
        let options = ToolOptions {
            timeout: QUORUM_STATUS_TIMEOUT,
            ..ToolOptions::default()
        };
        let out = self.tool_with(self.main_class(Tool::MetadataQuorum), &args, &options);
        match out
            .success()
            .then(|| QuorumStatus::parse(&out.stdout))
            .flatten()
        {
            Some(status) => Ok(status),
            None => Err(out),
        }
    }

    /// `kafka-metadata-quorum --bootstrap-controller <b> --command-config <fast admin config>
    /// <args...>` (e.g. `describe --replication`), without parsing.
    pub fn quorum_tool_fast(&self, bootstrap_controller: &str, args: &[&str]) -> Output {
        let admin = self.fast_admin_config();
        let admin = admin.to_str().expect("cache path is UTF-8");
        let mut all = vec![
            "--bootstrap-controller",
            bootstrap_controller,
            "--command-config",
            admin,
        ];
        all.extend_from_slice(args);
        self.run(Tool::MetadataQuorum, &all)
    }

    /// `kafka-configs --bootstrap-controller <via> <args>` (panics if the tool fails): its
    /// output.
    pub fn configs_through_controller(&self, via: &str, args: &[&str]) -> String {
        let out = self.run(
            Tool::Configs,
            &[&["--bootstrap-controller", via][..], args].concat(),
        );
        out.assert_success();
        out.stdout
    }

    /// Sets the cluster-wide broker default `key=value` through the controller at `via` and
    /// waits (up to a minute) until `--describe` through it shows the value: that output.
    pub fn alter_broker_default_through(&self, via: &str, key_value: &str) -> String {
        let default = ["--entity-type", "brokers", "--entity-default"];
        let alter = [&["--alter", "--add-config", key_value][..], &default].concat();
        self.configs_through_controller(via, &alter);
        let describe = [&["--describe"][..], &default].concat();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let described = self.configs_through_controller(via, &describe);
            if described.contains(key_value) {
                return described;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{key_value} set through {via} was not described: {described}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `kafka-features --bootstrap-controller <host:port,...> describe`.
    pub fn features_describe(&self, bootstrap_controller: &str) -> Output {
        self.run(
            Tool::Features,
            &["--bootstrap-controller", bootstrap_controller, "describe"],
        )
    }

    /// The finalized feature levels, via `kafka-features describe` (panics if the tool fails),
    /// once the quorum finalized a metadata.version: a quorum that just elected its first
    /// leader answers the tool with "There is no finalized MetadataVersion" until the leader's
    /// bootstrap records commit.
    pub fn finalized_features(&self, bootstrap_controller: &str) -> BTreeMap<String, String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let out = loop {
            let out = self.features_describe(bootstrap_controller);
            let starting = !out.success()
                && out.stderr.contains("There is no finalized MetadataVersion")
                && std::time::Instant::now() < deadline;
            if !starting {
                break out;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        out.assert_success();
        let features = parse_finalized_features(&out.stdout);
        assert!(
            features.contains_key("metadata.version"),
            "no metadata.version in:\n{out}"
        );
        features
    }

    /// `kafka-dump-log --files <f1,f2,...> [extra...]`, e.g. extra `--cluster-metadata-decoder`.
    pub fn dump_log(&self, files: &[&Path], extra: &[&str]) -> Output {
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let files = files.join(",");
        let mut args = vec!["--files", files.as_str()];
        args.extend_from_slice(extra);
        self.run(Tool::DumpLog, &args)
    }

    /// `kafka-broker-api-versions --bootstrap-server <host:port>` (brokers only in 4.4: the tool
    /// has no `--bootstrap-controller`).
    pub fn broker_api_versions(&self, bootstrap_server: &str) -> Output {
        self.run(
            Tool::BrokerApiVersions,
            &["--bootstrap-server", bootstrap_server],
        )
    }

    /// `kafka-topics --bootstrap-server <host:port> <args...>`.
    pub fn topics(&self, bootstrap_server: &str, args: &[&str]) -> Output {
        let mut all = vec!["--bootstrap-server", bootstrap_server];
        all.extend_from_slice(args);
        self.run(Tool::Topics, &all)
    }

    /// Produces `lines` (one record each) with the console producer.
    pub fn console_produce(&self, bootstrap_server: &str, topic: &str, lines: &[&str]) -> Output {
        let mut stdin = lines.join("\n").into_bytes();
        stdin.push(b'\n');
        let options = ToolOptions {
            stdin: Some(stdin),
            ..ToolOptions::default()
        };
        // The console producer's acks default is already "all" (`--request-required-acks -1`).
        let args = ["--bootstrap-server", bootstrap_server, "--topic", topic];
        self.tool_with(self.main_class(Tool::ConsoleProducer), &args, &options)
    }

    /// Consumes up to `max_messages` from the beginning of `topic`; stops after `timeout_ms`
    /// without a new record (stdout then holds the values, one a line).
    pub fn console_consume(
        &self,
        bootstrap_server: &str,
        topic: &str,
        max_messages: usize,
        timeout_ms: u64,
    ) -> Output {
        let (max, timeout) = (max_messages.to_string(), timeout_ms.to_string());
        let args = [
            "--bootstrap-server",
            bootstrap_server,
            "--topic",
            topic,
            "--from-beginning",
            "--max-messages",
            max.as_str(),
            "--timeout-ms",
            timeout.as_str(),
        ];
        self.run(Tool::ConsoleConsumer, &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_describe_status() {
        let stdout = "ClusterId:              kHI3Ac4bTU2edbOFO7yr7g\nLeaderId:               1\n\
                      LeaderEpoch:            1\nHighWatermark:          23\nMaxFollowerLag:         0\n\
                      CurrentVoters:          [{\"id\": 1, \"endpoints\": [\"CONTROLLER://127.0.0.1:19093\"]}]\n";
        let status = QuorumStatus::parse(stdout).expect("parses");
        assert_eq!(
            (status.leader_id, status.leader_epoch, status.high_watermark),
            (1, 1, 23)
        );
        assert_eq!(status.cluster_id, "kHI3Ac4bTU2edbOFO7yr7g");
        assert!(status.fields["CurrentVoters"].contains("CONTROLLER://127.0.0.1:19093"));
        assert_eq!(QuorumStatus::parse("LeaderId: x\n"), None);
    }

    #[test]
    fn parses_features_describe() {
        let stdout = "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t\
                      FinalizedVersionLevel: 0\tEpoch: 9\n\
                      Feature: metadata.version  SupportedMinVersion: 3.3-IV3  \
                      SupportedMaxVersion: 4.4-IV2  FinalizedVersionLevel: 4.4-IV2  Epoch: 9\n";
        let features = parse_finalized_features(stdout);
        assert_eq!(features["kraft.version"], "0");
        assert_eq!(features["metadata.version"], "4.4-IV2");
        assert_eq!(features.len(), 2);
    }

    #[test]
    fn random_uuids_look_like_kafkas() {
        for _ in 0..1000 {
            let id = random_kafka_uuid();
            assert_eq!(id.len(), 22);
            assert!(!id.starts_with('-'));
        }
    }
}
