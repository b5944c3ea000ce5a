//! A controller's disk replaced on a dynamic quorum (kraft.version 1), as Kafka's operations
//! guide has it: the old replica key (node id, directory id) is removed with
//! `kafka-metadata-quorum remove-controller`, the node comes back with the same id and port on a
//! newly formatted directory (`--no-initial-controllers`, so a new directory id), runs as an
//! observer until it has caught up, and is added with `add-controller`. Either kind can come
//! back: Java or kraftd.

use std::thread;
use std::time::{Duration, Instant};

use kraftd::raft::msg::DescribeQuorumResponse;

use super::dynamic_quorum::{
    add_controller, replica, replica_of, start_node_formatted, voter_ids, Kind,
};
use super::mixed_quorum::{Member, Mixed, QuorumMode, Stop, TIMEOUT};
use super::quorum_probe::leader_view;
use super::{Kafka, Output, Quorum, Voter};

/// What a disk replacement did and how long its parts took.
#[derive(Debug)]
pub struct DiskReplacement {
    pub old_directory_id: String,
    pub new_directory_id: String,
    /// Until `remove-controller` had succeeded and the leader listed the two other voters.
    pub removed: Duration,
    /// Until the new node, an observer, was at the leader's log end.
    pub observer_caught_up: Duration,
    /// Until `add-controller` had succeeded and the leader listed the new replica key as a voter.
    pub added: Duration,
}

impl Mixed {
    /// Replaces voter `id`'s disk: stops it (`stop`), removes its replica key through the other
    /// voters, starts `to` on a new directory with the same node id and port, and adds it back.
    /// Returns the stopped member (its directory stays) and what the replacement did.
    pub fn replace_on_new_directory(
        &mut self,
        id: i32,
        to: Kind,
        stop: Stop,
    ) -> (Member, DiskReplacement) {
        assert_eq!(
            self.mode,
            QuorumMode::Dynamic,
            "a static quorum cannot change its voter set"
        );
        // The new node and the tools run Kafka::get()'s release.
        assert!(
            std::ptr::eq(self.kafka, Kafka::get()),
            "disk replacements run {:?}, not {:?}",
            Kafka::get(),
            self.kafka
        );
        let t0 = Instant::now();
        let old_directory_id = self.member(id).directory_id();
        let others: Vec<Voter> = self.voters.iter().filter(|v| v.id != id).cloned().collect();
        let via = others
            .iter()
            .map(Voter::endpoint)
            .collect::<Vec<_>>()
            .join(",");
        let other_ids: Vec<i32> = others.iter().map(|v| v.id).collect();

        self.stop_member(id, stop);
        let remove = [
            "remove-controller",
            "--controller-id",
            &id.to_string(),
            "--controller-directory-id",
            &old_directory_id,
        ];
        // The tool fails while the remaining voters elect a leader (when `id` led); run it
        // again until it succeeds.
        self.change_voters(
            &format!("remove-controller {id}"),
            || Kafka::get().metadata_quorum(&via, &remove),
            |d| voter_ids(d) == other_ids,
        );
        let removed = t0.elapsed();

        // The same id and port on a new directory, finding the quorum through every voter's
        // endpoint (its own included: it will be one again).
        let voter = self.voters[(id - 1) as usize].clone();
        let own = self.props_for(id, to == Kind::Kraftd);
        let props: Vec<(&str, String)> = own.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let format_args: Vec<&str> = self.format_args.iter().map(String::as_str).collect();
        let node = start_node_formatted(
            &self.dir,
            to,
            id,
            voter.port,
            &self.cluster_id,
            Quorum::Bootstrap(self.voters.iter().map(Voter::endpoint).collect()),
            &props,
            &format_args,
        );
        let new_directory_id = node.directory_id();
        assert_ne!(
            new_directory_id, old_directory_id,
            "the new directory of voter {id} got the old directory id"
        );
        self.wait_for_view(
            &format!("voter {id}'s new directory caught up as an observer"),
            |d| {
                let leader_end = replica(d, d.leader_id).map(|r| r.log_end_offset);
                replica_of(d, id, &new_directory_id)
                    .is_some_and(|r| Some(r.log_end_offset) >= leader_end)
            },
        );
        let observer_caught_up = t0.elapsed();

        let name = node.name();
        self.change_voters(
            &format!("add-controller {name}"),
            || add_controller(&self.dir, &node.config, &name, &via),
            |d| {
                d.voters.len() == self.voters.len()
                    && d.voters.iter().any(|v| {
                        v.replica_key.id == id
                            && v.replica_key
                                .directory_id
                                .is_some_and(|u| u.to_string() == new_directory_id)
                    })
            },
        );
        let added = t0.elapsed();

        self.voters[(id - 1) as usize].directory_id = new_directory_id.clone();
        let old = std::mem::replace(self.member(id), node.member);
        (
            old,
            DiskReplacement {
                old_directory_id,
                new_directory_id,
                removed,
                observer_caught_up,
                added,
            },
        )
    }

    /// Runs a voter-change tool until the leader's view shows the change (`done`), at most
    /// [`TIMEOUT`]. The tool fails while the voters elect a leader, and a run that timed out may
    /// still have made the change: the leader's view decides, not the tool's exit status.
    #[track_caller]
    fn change_voters(
        &self,
        what: &str,
        run: impl Fn() -> Output,
        done: impl Fn(&DescribeQuorumResponse) -> bool,
    ) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if leader_view(&self.ports()).is_some_and(|d| done(&d)) {
                return;
            }
            let out = run();
            if out.success() {
                self.wait_for_view(what, done);
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what} kept failing for {TIMEOUT:?}; last run:\n{out}"
            );
            thread::sleep(Duration::from_secs(1));
        }
    }

    /// Waits until a leader's DescribeQuorum answer satisfies `done`.
    #[track_caller]
    fn wait_for_view(
        &self,
        what: &str,
        done: impl Fn(&DescribeQuorumResponse) -> bool,
    ) -> DescribeQuorumResponse {
        let ports = self.ports();
        let deadline = Instant::now() + TIMEOUT;
        let mut last = None;
        loop {
            if let Some(d) = leader_view(&ports) {
                if done(&d) {
                    return d;
                }
                last = Some(d);
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not within {TIMEOUT:?}; the leader's last view: {last:?}"
            );
            thread::sleep(Duration::from_millis(100));
        }
    }
}
