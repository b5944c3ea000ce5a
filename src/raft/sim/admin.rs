//! Operator actions on the simulated cluster: DescribeQuorum probes and graceful stops.

use super::{Cluster, Verbosity};
use crate::raft::msg::RequestId;
use crate::raft::node::{Action, Input};
use crate::raft::types::NodeId;

impl Cluster {
    /// Asks node `id` for DescribeQuorum as an admin client would, and checks the answer
    /// against the node's state: the leader describes itself and every voter, others refuse.
    pub fn describe_quorum(&mut self, id: NodeId) -> Result<(), String> {
        use crate::protocol::errors::ErrorCode;
        use crate::raft::msg::{DescribeQuorumRequest, Request, Response};
        let request = Request::DescribeQuorum(DescribeQuorumRequest { partition_ok: true });
        let Some((rid, actions)) = self.admin_request(id, request, false) else {
            return Ok(());
        };
        let raft = self.raft(id).expect("it just answered");
        let voters = raft.voters().len();
        let answer = actions.iter().find_map(|a| match a {
            Action::Respond {
                id,
                response: Response::DescribeQuorum(d),
            } if *id == rid => Some(d.clone()),
            _ => None,
        });
        let d = answer.ok_or_else(|| format!("n{id} did not answer DescribeQuorum"))?;
        let ok = if raft.is_leader() {
            d.partition_error == ErrorCode::NONE
                && d.leader_id == id
                && d.leader_epoch == raft.epoch()
                && d.high_watermark == raft.high_watermark().unwrap_or(-1)
                && d.voters.len() == voters
                && d.nodes.len() == voters
        } else {
            d.partition_error == ErrorCode::NOT_LEADER_OR_FOLLOWER
        };
        if !ok {
            return Err(format!(
                "n{id} ({}) answered DescribeQuorum with {d:?}",
                raft.role()
            ));
        }
        self.after_step(id, actions)
    }
}

impl Cluster {
    /// A graceful stop: the node starts shutting down (a leader resigns), the cluster runs until
    /// the node says it is done (or 5 s pass), then the process exits (a crash that loses
    /// nothing a flush did not already keep).
    pub fn stop(&mut self, id: NodeId) -> Result<(), String> {
        let now = self.now;
        let Some(raft) = self.nodes.get_mut(&id).and_then(|n| n.raft.as_mut()) else {
            return Ok(());
        };
        raft.begin_shutdown(now, std::time::Duration::from_secs(5));
        let actions = raft.take_actions();
        self.emit(Verbosity::Roles, format!("n{id}: graceful shutdown"));
        self.after_step(id, actions)?;
        let deadline = now.plus_millis(6000);
        while self.now < deadline {
            // Done, or halted on a storage fault on the way (then the process is gone).
            let done = self
                .raft(id)
                .is_none_or(|r| r.is_shutdown_complete(self.now));
            if done {
                break;
            }
            self.run_for(10)?;
        }
        self.crash(id);
        Ok(())
    }
}

/// The requester id of operator requests (never a node id: those start at 1).
pub const ADMIN: NodeId = 0;

impl Cluster {
    /// An operator's `kafka-metadata-quorum add-controller` (AddRaftVoter) or
    /// `remove-controller` (RemoveRaftVoter) for node `target`, sent to the leader. The answer
    /// shows in the transcript when the leader gives it.
    pub fn change_voter(
        &mut self,
        target: NodeId,
        add: bool,
        ack_when_committed: bool,
    ) -> Result<(), String> {
        use crate::raft::msg::{AddVoterRequest, RemoveVoterRequest, Request};
        use crate::raft::types::{Endpoints, ReplicaKey};
        let Some(leader) = self.leader() else {
            self.emit(Verbosity::Roles, "admin: no leader to ask".into());
            return Ok(());
        };
        let voter = ReplicaKey::new(target, Some(super::directory_id(target)));
        let request = if add {
            Request::AddRaftVoter(AddVoterRequest {
                cluster_id: Some(super::CLUSTER_ID.to_string()),
                timeout_ms: 30_000,
                voter,
                listeners: Endpoints::single("CONTROLLER", super::address(target)),
                ack_when_committed,
            })
        } else {
            Request::RemoveRaftVoter(RemoveVoterRequest {
                cluster_id: Some(super::CLUSTER_ID.to_string()),
                voter,
            })
        };
        self.emit(
            Verbosity::Roles,
            format!("admin -> n{leader}: {}", super::trace::request(&request)),
        );
        let (_, actions) = self
            .admin_request(leader, request, true)
            .expect("the leader is up");
        self.after_step(leader, actions)
    }

    /// The operator upgrades kraft.version to 1 at the leader, as an UpdateFeatures request
    /// reaches raft through the active controller.
    pub fn upgrade_kraft_version(&mut self, validate_only: bool) -> Result<(), String> {
        let Some(leader) = self.leader() else {
            self.emit(Verbosity::Roles, "admin: no leader to ask".into());
            return Ok(());
        };
        let now = self.now;
        let raft = self
            .nodes
            .get_mut(&leader)
            .and_then(|n| n.raft.as_mut())
            .expect("the leader is up");
        let epoch = raft.epoch();
        let outcome = raft.upgrade_kraft_version(now, epoch, 1, validate_only);
        let mut actions = raft.take_actions();
        actions.extend(raft.step(now, Input::Tick));
        let only = if validate_only {
            " (validate only)"
        } else {
            ""
        };
        self.emit(
            Verbosity::Roles,
            format!("admin -> n{leader}: upgrade kraft.version to 1{only}"),
        );
        let recorded = match &outcome {
            Ok(true) if !validate_only => Some("NONE"),
            Ok(_) => None,
            Err(e) => Some(e.error_code().name()),
        };
        if let Some(error) = recorded {
            *self
                .voter_changes
                .outcomes
                .entry(("upgrade", error))
                .or_default() += 1;
        }
        let answer = match outcome {
            Ok(true) if validate_only => "valid".to_string(),
            Ok(true) => "upgrade written".to_string(),
            Ok(false) => "already at 1".to_string(),
            Err(e) => format!("{} {e}", e.error_code().name()),
        };
        self.emit(Verbosity::Roles, format!("admin <- n{leader}: {answer}"));
        self.after_step(leader, actions)
    }

    /// Steps live node `id` with an operator's request; with `later`, its answer, whenever
    /// it comes, is shown by `admin_answer`. `None` when the node is down.
    fn admin_request(
        &mut self,
        id: NodeId,
        request: crate::raft::msg::Request,
        later: bool,
    ) -> Option<(RequestId, Vec<Action>)> {
        let now = self.now;
        let rid = RequestId(self.next_request_id);
        let node = self.nodes.get_mut(&id)?;
        let raft = node.raft.as_mut()?;
        self.next_request_id += 1;
        if later {
            node.pending.insert(rid, (ADMIN, id, 0));
        }
        let actions = raft.step(
            now,
            Input::Request {
                id: rid,
                listener: None,
                request,
            },
        );
        Some((rid, actions))
    }
}

/// The operator's voter changes and how they ended: ("add", "remove" or "upgrade" (of
/// kraft.version), error name; `NONE`: done) -> count.
#[derive(Debug, Default, Clone)]
pub struct VoterChangeLog {
    pub outcomes: std::collections::BTreeMap<(&'static str, &'static str), u64>,
}

impl VoterChangeLog {
    pub fn add(&mut self, other: &VoterChangeLog) {
        for (k, n) in &other.outcomes {
            *self.outcomes.entry(*k).or_default() += n;
        }
    }

    pub fn count(&self, change: &str, error: &str) -> u64 {
        self.outcomes.get(&(change, error)).copied().unwrap_or(0)
    }
}

impl Cluster {
    /// A node answered an operator's request.
    pub(super) fn admin_answer(&mut self, from: NodeId, response: &crate::raft::msg::Response) {
        use crate::raft::msg::Response;
        let outcome = match response {
            Response::AddRaftVoter(r) => Some(("add", r.error)),
            Response::RemoveRaftVoter(r) => Some(("remove", r.error)),
            _ => None,
        };
        if let Some((change, e)) = outcome {
            *self
                .voter_changes
                .outcomes
                .entry((change, e.name()))
                .or_default() += 1;
        }
        self.emit(
            Verbosity::Roles,
            format!("admin <- n{from}: {}", super::trace::response(response)),
        );
    }
}
