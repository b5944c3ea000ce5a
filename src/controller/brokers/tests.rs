//! Broker lifecycle transcripts: a controller replaying what it decides, one request at a time,
//! with a manual clock in milliseconds.

use super::*;
use crate::controller::topics::TopicsContext;
use crate::controller::Controller;
use crate::protocol::messages::broker_registration_request::{Feature, Listener};
use crate::protocol::messages::{
    BrokerHeartbeatRequest, BrokerRegistrationRequest, FeatureLevelRecord,
};
use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion, Offset};

const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";
const SESSION_MS: u64 = 9000;
/// metadata.version 4.4-IV2.
const MV: i16 = 33;

pub(crate) struct Cluster {
    pub controller: Controller,
    pub sessions: BrokerSessions,
    pub topics: TopicsContext,
    pub next_offset: Offset,
    pub now: u64,
}

/// The controller's own settings as `make run` has them (node 1, Kafka's defaults).
pub(crate) fn topics_context() -> TopicsContext {
    TopicsContext {
        node_id: 1,
        default_partitions: 1,
        default_replication_factor: 1,
        statics: Default::default(),
    }
}

pub(crate) fn uuid(n: u8) -> Uuid {
    let mut b = [0u8; 16];
    b[0] = 0x40;
    b[15] = n;
    Uuid(b)
}

/// A log dir of broker `id`'s incarnation `incarnation`.
pub(crate) fn dir(id: i32, incarnation: u8) -> Uuid {
    let mut d = uuid(incarnation);
    d.0[14] = id as u8;
    d
}

impl Cluster {
    pub fn new() -> Cluster {
        let mut controller = Controller::new();
        for (i, (name, level)) in [("metadata.version", MV), ("group.version", 1)]
            .into_iter()
            .enumerate()
        {
            let r: MetadataRecord = FeatureLevelRecord {
                name: name.into(),
                feature_level: level,
                ..Default::default()
            }
            .into();
            controller.replay(&r, i as Offset).unwrap();
        }
        let sessions = BrokerSessions::activate(controller.image(), SESSION_MS, 0);
        Cluster {
            controller,
            sessions,
            topics: topics_context(),
            next_offset: 10,
            now: 0,
        }
    }

    /// Appends a decision's records at the next offsets, as the node's pipeline does.
    pub fn write(&mut self, records: &[MetadataRecordAndVersion]) {
        let records: Vec<_> = records.iter().map(|r| r.record.clone()).collect();
        self.controller
            .replay_written_batch(self.next_offset, &records)
            .unwrap();
        self.next_offset += records.len() as Offset;
    }

    pub fn register(&mut self, r: &BrokerRegistrationRequest) -> Result<i64, BrokerError> {
        let ctx = RegistrationContext {
            cluster_id: CLUSTER.into(),
            next_offset: self.next_offset,
            kraft_version: 1,
            clean_shutdown_detection: true,
            topics: self.topics.clone(),
        };
        let state = self.controller.latest_state();
        let result = register_broker(state, &mut self.sessions, &ctx, r, self.now)?;
        self.write(&result.records);
        Ok(result.reply)
    }

    /// A heartbeat: the reply and the names of the records it wrote.
    pub fn heartbeat(
        &mut self,
        h: BrokerHeartbeatRequest,
    ) -> Result<(HeartbeatReply, Vec<String>), BrokerError> {
        let state = self.controller.latest_state();
        let result = heartbeat(state, &self.topics, &mut self.sessions, &h, self.now)?;
        let names = result.records.iter().map(describe).collect();
        self.write(&result.records);
        Ok((result.reply, names))
    }

    fn broker(&self, id: i32) -> &crate::controller::cluster::BrokerRegistration {
        self.controller.image().cluster.brokers.get(&id).unwrap()
    }
}

pub(crate) fn describe(r: &MetadataRecordAndVersion) -> String {
    match &r.record {
        MetadataRecord::RegisterBroker(b) => format!(
            "RegisterBroker v{} broker {} epoch {} fenced {}",
            r.version, b.broker_id, b.broker_epoch, b.fenced
        ),
        MetadataRecord::BrokerRegistrationChange(c) => format!(
            "RegistrationChange v{} broker {} epoch {} fenced {} shutdown {}",
            r.version, c.broker_id, c.broker_epoch, c.fenced, c.in_controlled_shutdown
        ),
        MetadataRecord::PartitionChange(c) => {
            let list = |l: &Option<Vec<i32>>| l.as_ref().map(|v| format!(" {v:?}"));
            let mut out = format!("PartitionChange v{} p{}", r.version, c.partition_id);
            if c.leader != -2 {
                out += &format!(" leader {}", c.leader);
            }
            for (name, l) in [
                ("isr", &c.isr),
                ("elr", &c.eligible_leader_replicas),
                ("lastKnownElr", &c.last_known_elr),
                ("replicas", &c.replicas),
                ("removing", &c.removing_replicas),
                ("adding", &c.adding_replicas),
            ] {
                if let Some(v) = list(l) {
                    out += &format!(" {name}{v}");
                }
            }
            if c.leader_recovery_state != -1 {
                out += &format!(" recovery {}", c.leader_recovery_state);
            }
            if let Some(dirs) = &c.directories {
                let dirs: Vec<String> = dirs.iter().map(describe_dir).collect();
                out += &format!(" dirs [{}]", dirs.join(", "));
            }
            out
        }
        MetadataRecord::UnregisterBroker(u) => {
            format!(
                "UnregisterBroker broker {} epoch {}",
                u.broker_id, u.broker_epoch
            )
        }
        other => format!("{other:?}"),
    }
}

/// A directory as the transcripts show it: Kafka's reserved ids by name, [`dir`]'s as
/// `broker/incarnation`.
fn describe_dir(d: &Uuid) -> String {
    use crate::controller::replication::{
        DIRECTORY_LOST, DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED,
    };
    match *d {
        DIRECTORY_UNASSIGNED => "UNASSIGNED".into(),
        DIRECTORY_MIGRATING => "MIGRATING".into(),
        DIRECTORY_LOST => "LOST".into(),
        d => format!("{}/{}", d.0[14], d.0[15]),
    }
}

pub(crate) fn registration(id: i32, incarnation: u8) -> BrokerRegistrationRequest {
    let feature = |name: &str, min, max| Feature {
        name: name.into(),
        min_supported_version: min,
        max_supported_version: max,
        ..Default::default()
    };
    BrokerRegistrationRequest {
        broker_id: id,
        cluster_id: CLUSTER.into(),
        incarnation_id: uuid(incarnation),
        listeners: vec![Listener {
            name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port: 9092,
            ..Default::default()
        }],
        features: vec![
            feature("metadata.version", 7, MV),
            feature("kraft.version", 0, 1),
            feature("group.version", 0, 1),
        ],
        log_dirs: vec![dir(id, incarnation)],
        previous_broker_epoch: -1,
        ..Default::default()
    }
}

pub(crate) fn beat(
    id: i32,
    epoch: i64,
    offset: i64,
    want_fence: bool,
    want_shut_down: bool,
) -> BrokerHeartbeatRequest {
    BrokerHeartbeatRequest {
        broker_id: id,
        broker_epoch: epoch,
        current_metadata_offset: offset,
        want_fence,
        want_shut_down,
        ..Default::default()
    }
}

fn reply(caught_up: bool, fenced: bool, shut_down: bool) -> HeartbeatReply {
    HeartbeatReply {
        is_caught_up: caught_up,
        is_fenced: fenced,
        in_controlled_shutdown: false,
        should_shut_down: shut_down,
    }
}

#[test]
fn a_broker_registers_fenced_catches_up_and_is_unfenced_by_a_change_record() {
    let mut c = Cluster::new();
    // Registered at the next offset, fenced, with its log dirs.
    assert_eq!(c.register(&registration(2, 1)), Ok(10));
    let b = c.broker(2);
    assert_eq!(
        (b.epoch, b.fenced, b.directories.clone()),
        (10, true, vec![dir(2, 1)])
    );
    assert_eq!(
        c.controller.latest_state().registration_offsets.get(&2),
        Some(&10)
    );
    c.now = 10;
    // Behind its RegisterBrokerRecord: not caught up, stays fenced, writes nothing.
    assert_eq!(
        c.heartbeat(beat(2, 10, 9, true, false)),
        Ok((reply(false, true, false), vec![]))
    );
    // Caught up but still wanting to be fenced (its first publish is not done).
    assert_eq!(
        c.heartbeat(beat(2, 10, 10, true, false)),
        Ok((reply(true, true, false), vec![]))
    );
    // Ready: unfenced by a BrokerRegistrationChangeRecord v0.
    assert_eq!(
        c.heartbeat(beat(2, 10, 10, false, false)),
        Ok((
            reply(true, false, false),
            vec!["RegistrationChange v0 broker 2 epoch 10 fenced -1 shutdown 0".into()]
        ))
    );
    assert!(!c.broker(2).fenced);
    // Steady state: nothing more to write.
    assert_eq!(
        c.heartbeat(beat(2, 10, 11, false, false)),
        Ok((reply(true, false, false), vec![]))
    );
    c.controller.check().unwrap();
    c.sessions.check().unwrap();
}

#[test]
fn the_same_incarnation_keeps_its_epoch_a_new_one_waits_for_the_session_then_gets_the_next_offset()
{
    let mut c = Cluster::new();
    assert_eq!(c.register(&registration(2, 1)), Ok(10));
    c.heartbeat(beat(2, 10, 10, false, false)).unwrap();
    // A retried registration of the same process: amended, epoch and fencing kept.
    assert_eq!(c.register(&registration(2, 1)), Ok(10));
    assert!(!c.broker(2).fenced);
    // Another process with the same id while the session is valid: refused.
    c.now = SESSION_MS;
    assert_eq!(
        c.register(&registration(2, 2)),
        Err(BrokerError::DuplicateRegistration)
    );
    assert_eq!(
        BrokerError::DuplicateRegistration.error_code(),
        ErrorCode::DUPLICATE_BROKER_REGISTRATION
    );
    // Once it expired, the new incarnation registers at the offset of its record, fenced.
    c.now = 2 * SESSION_MS + 1;
    let next = c.next_offset;
    assert_eq!(c.register(&registration(2, 2)), Ok(next));
    assert_eq!((c.broker(2).epoch, c.broker(2).fenced), (next, true));
    // The old epoch's heartbeats are stale now.
    assert_eq!(
        c.heartbeat(beat(2, 10, 100, false, false)),
        Err(BrokerError::StaleEpoch {
            expected: next,
            got: 10
        })
    );
}

#[test]
fn bad_registrations_get_javas_errors() {
    let mut c = Cluster::new();
    let mut wrong_cluster = registration(2, 1);
    wrong_cluster.cluster_id = "someOtherClusterIdxxxx".into();
    let e = c.register(&wrong_cluster).unwrap_err();
    assert_eq!(e.error_code(), ErrorCode::INCONSISTENT_CLUSTER_ID);
    assert_eq!(
        e.to_string(),
        "Expected cluster ID MkU3OEVBNTcwNTJENDM2Qg, but got cluster ID someOtherClusterIdxxxx"
    );
    let mut no_dirs = registration(2, 1);
    no_dirs.log_dirs.clear();
    assert_eq!(c.register(&no_dirs), Err(BrokerError::NoDirectories));
    let mut reserved = registration(2, 1);
    reserved.log_dirs = vec![Uuid([0; 16])];
    assert_eq!(c.register(&reserved), Err(BrokerError::ReservedDirectory));
    let mut old = registration(2, 1);
    old.features[0].max_supported_version = 25;
    let e = c.register(&old).unwrap_err();
    assert_eq!(
        (e.error_code(), e.to_string()),
        (ErrorCode::UNSUPPORTED_VERSION, "Unable to register because the broker does not support finalized version 33 of metadata.version. The broker wants a version between 7 and 25, inclusive.".into())
    );
    // group.version is finalized at 1: a broker that does not name it supports only 0.
    let mut no_group = registration(2, 1);
    no_group.features.retain(|f| f.name != "group.version");
    assert!(matches!(
        c.register(&no_group),
        Err(BrokerError::UnsupportedFeature { ref feature, level: 1, min: 0, max: 0 }) if feature == "group.version"
    ));
    let mut no_mv = registration(2, 1);
    no_mv.features.retain(|f| f.name != "metadata.version");
    assert_eq!(c.register(&no_mv), Err(BrokerError::NoMetadataVersionRange));
    // Another broker's directory.
    c.register(&registration(3, 1)).unwrap();
    let mut taken = registration(2, 5);
    taken.log_dirs = vec![dir(3, 1)];
    assert_eq!(
        c.register(&taken).unwrap_err().error_code(),
        ErrorCode::INVALID_REGISTRATION
    );
    // Nothing was written for any refused registration.
    assert_eq!(
        c.controller
            .image()
            .cluster
            .brokers
            .keys()
            .collect::<Vec<_>>(),
        [&3]
    );
    assert_eq!(
        c.heartbeat(beat(9, 1, 0, false, false)),
        Err(BrokerError::HeartbeatBeforeRegistration { broker: 9 })
    );
    assert_eq!(
        unregister_broker(c.controller.latest_state(), &c.topics, 9)
            .unwrap_err()
            .error_code(),
        ErrorCode::BROKER_ID_NOT_REGISTERED
    );
}

#[test]
fn a_silent_broker_is_fenced_once_its_session_expires_and_a_new_controller_gives_fresh_sessions() {
    let mut c = Cluster::new();
    c.register(&registration(2, 1)).unwrap();
    c.heartbeat(beat(2, 10, 10, false, false)).unwrap();
    c.now = 1000;
    c.heartbeat(beat(2, 10, 11, false, false)).unwrap();
    assert_eq!(c.sessions.next_expiry(), Some(1000 + SESSION_MS + 1));
    assert_eq!(
        expire_one(
            c.controller.image(),
            &c.topics,
            &mut c.sessions,
            1000 + SESSION_MS
        ),
        Expiry::None
    );
    // A failover: the new active controller starts the session over.
    c.sessions = BrokerSessions::activate(c.controller.image(), SESSION_MS, 5000);
    assert_eq!(
        expire_one(
            c.controller.image(),
            &c.topics,
            &mut c.sessions,
            1000 + SESSION_MS + 1
        ),
        Expiry::None
    );
    let Expiry::Fence {
        broker,
        epoch,
        result,
    } = expire_one(
        c.controller.image(),
        &c.topics,
        &mut c.sessions,
        5000 + SESSION_MS + 1,
    )
    else {
        panic!("not fenced");
    };
    assert_eq!((broker, epoch), (2, 10));
    assert_eq!(
        result.records.iter().map(describe).collect::<Vec<_>>(),
        ["RegistrationChange v0 broker 2 epoch 10 fenced 1 shutdown 0"]
    );
    c.write(&result.records);
    assert!(c.broker(2).fenced);
    assert_eq!(
        expire_one(c.controller.image(), &c.topics, &mut c.sessions, 100_000),
        Expiry::None
    );
    // Its next heartbeat (it was only partitioned away) finds it fenced; it may unfence again.
    c.now = 20_000;
    assert_eq!(
        c.heartbeat(beat(2, 10, 30, false, false)).unwrap().0,
        reply(true, false, false)
    );
}

#[test]
fn a_broker_that_leads_nothing_is_granted_an_immediate_shutdown() {
    let mut c = Cluster::new();
    c.register(&registration(2, 1)).unwrap();
    c.heartbeat(beat(2, 10, 10, false, false)).unwrap();
    assert_eq!(
        c.heartbeat(beat(2, 10, 11, false, true)),
        Ok((
            reply(true, true, true),
            vec!["RegistrationChange v0 broker 2 epoch 10 fenced 1 shutdown 0".into()]
        ))
    );
    // Asking again, now fenced, it is told to at once; Java fences it again as it does so
    // (the state moves from FENCED to SHUTDOWN_NOW).
    assert_eq!(
        c.heartbeat(beat(2, 10, 12, true, true)),
        Ok((
            reply(true, true, true),
            vec!["RegistrationChange v0 broker 2 epoch 10 fenced 1 shutdown 0".into()]
        ))
    );
}

#[test]
fn controlled_shutdown_waits_for_the_lowest_active_offset() {
    let mut s =
        BrokerSessions::activate(&crate::controller::MetadataImage::default(), SESSION_MS, 0);
    s.register(2, false);
    s.register(3, false);
    s.touch(2, false, 40);
    s.touch(3, false, 30);
    s.controlled_shutdown_written(2, 35);
    // Broker 2 no longer counts as active: the lowest active offset is broker 3's.
    assert_eq!(s.lowest_active_offset(), 30);
    s.touch(3, false, 36);
    assert_eq!(s.lowest_active_offset(), 36);
    assert_eq!(s.state(2).unwrap().controlled_shutdown_offset, Some(35));
    // Fencing ends the controlled shutdown.
    s.touch(2, true, 41);
    assert_eq!(s.state(2).unwrap().controlled_shutdown_offset, None);
    s.check().unwrap();
}

#[test]
fn unregistering_writes_the_record_with_the_registered_epoch() {
    let mut c = Cluster::new();
    c.register(&registration(2, 1)).unwrap();
    let result = unregister_broker(c.controller.latest_state(), &c.topics, 2).unwrap();
    assert_eq!(
        result.records.iter().map(describe).collect::<Vec<_>>(),
        ["UnregisterBroker broker 2 epoch 10"]
    );
    c.write(&result.records);
    assert!(c.controller.image().cluster.brokers.is_empty());
    assert!(c.controller.latest_state().registration_offsets.is_empty());
    c.controller.check().unwrap();
}

#[test]
fn written_records_commit_in_place_or_revert_when_leadership_is_lost() {
    let mut c = Cluster::new();
    c.controller.on_committed(1);
    c.register(&registration(2, 1)).unwrap();
    // Raft reports the batch committed: the applied-ahead batch is not replayed twice.
    let value = MetadataRecordAndVersion::new(crate::protocol::messages::NoOpRecord::default(), 0)
        .encode()
        .unwrap();
    c.controller.replay_committed_batch(10, &[value]).unwrap();
    assert_eq!(
        (c.controller.committed(), c.controller.last_applied()),
        (10, 10)
    );
    // Another registration, written but never committed: a renounce forgets it.
    c.register(&registration(3, 1)).unwrap();
    assert!(c.controller.image().cluster.brokers.contains_key(&3));
    c.controller.renounce().unwrap();
    assert!(!c.controller.image().cluster.brokers.contains_key(&3));
    assert!(c.controller.image().cluster.brokers.contains_key(&2));
    c.controller.check().unwrap();
}
