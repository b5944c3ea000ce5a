//! The Kafka tools pointed at the brokers that run now. A `Tools` is plain data, so
//! independent steps can run their tools from several threads at once (each tool is a JVM
//! that spends most of its life starting up).

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use super::cluster::STEP_TIMEOUT;
use crate::harness::{Kafka, Output, Tool};

#[derive(Debug, Clone)]
pub struct Tools {
    /// The cluster's Kafka release, whose tools run.
    pub kafka: &'static Kafka,
    /// The running brokers' PLAINTEXT listeners.
    pub bootstrap: String,
    /// One running broker's SASL_PLAINTEXT listener.
    pub sasl_bootstrap: String,
    /// Admin-client config authenticating on the SASL listener.
    pub sasl_config: String,
}

impl Tools {
    pub fn new(
        kafka: &'static Kafka,
        bootstrap: String,
        sasl_bootstrap: String,
        sasl_config: &Path,
    ) -> Tools {
        Tools {
            kafka,
            bootstrap,
            sasl_bootstrap,
            sasl_config: sasl_config.display().to_string(),
        }
    }

    /// Runs a tool until it succeeds and `accept` likes its output (controllers and brokers
    /// may be moving), for up to [`STEP_TIMEOUT`].
    #[track_caller]
    pub fn run_until(&self, tool: Tool, args: &[&str], accept: impl Fn(&Output) -> bool) -> Output {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let out = self.kafka.run(tool, args);
            if out.success() && accept(&out) {
                return out;
            }
            assert!(
                Instant::now() < deadline,
                "{tool:?} kept failing for {STEP_TIMEOUT:?}:\n{out}"
            );
            thread::sleep(Duration::from_millis(500));
        }
    }

    /// [`Self::run_until`] with any successful run accepted.
    #[track_caller]
    pub fn run(&self, tool: Tool, args: &[&str]) -> Output {
        self.run_until(tool, args, |_| true)
    }

    /// `tool --bootstrap-server <brokers> args...`, retried until it succeeds.
    #[track_caller]
    pub fn admin(&self, tool: Tool, args: &[&str]) -> Output {
        let mut all = vec!["--bootstrap-server", self.bootstrap.as_str()];
        all.extend_from_slice(args);
        self.run(tool, &all)
    }

    /// `kafka-topics --create --topic name args...`. The controller answers after the records
    /// are committed. A retry after an attempt that timed out but went through finds the
    /// topic there, which counts as done.
    #[track_caller]
    pub fn create_topic(&self, name: &str, args: &[&str]) {
        let mut all = vec![
            "--bootstrap-server",
            self.bootstrap.as_str(),
            "--create",
            "--topic",
            name,
        ];
        all.extend_from_slice(args);
        let deadline = Instant::now() + STEP_TIMEOUT;
        let mut attempts = 0;
        loop {
            let out = self.kafka.run(Tool::Topics, &all);
            attempts += 1;
            let exists =
                out.stderr.contains("already exists") || out.stdout.contains("already exists");
            if out.success() || (attempts > 1 && exists) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "creating topic {name} kept failing for {STEP_TIMEOUT:?}:\n{out}"
            );
            thread::sleep(Duration::from_millis(500));
        }
    }

    /// `kafka-configs --alter` on one entity (`entity` is e.g. `["--entity-type", "topics",
    /// "--entity-name", "wide"]`), adding and/or deleting configs.
    #[track_caller]
    pub fn alter_configs(&self, entity: &[&str], add: Option<&str>, delete: Option<&str>) {
        let mut args = vec!["--alter"];
        args.extend_from_slice(entity);
        if let Some(add) = add {
            args.extend(["--add-config", add]);
        }
        if let Some(delete) = delete {
            args.extend(["--delete-config", delete]);
        }
        self.admin(Tool::Configs, &args);
    }

    /// `kafka-delegation-tokens` on the SASL listener (Kafka refuses token calls from
    /// unauthenticated connections).
    #[track_caller]
    pub fn delegation_tokens(&self, args: &[&str]) -> Output {
        let mut all = vec![
            "--bootstrap-server",
            self.sasl_bootstrap.as_str(),
            "--command-config",
            self.sasl_config.as_str(),
        ];
        all.extend_from_slice(args);
        self.run(Tool::DelegationTokens, &all)
    }
}

/// Runs independent steps on their own threads and waits for all of them; a panic in one is
/// re-raised here.
pub fn in_parallel(steps: Vec<Box<dyn FnOnce() + Send + '_>>) {
    thread::scope(|s| {
        let handles: Vec<_> = steps.into_iter().map(|step| s.spawn(step)).collect();
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}
