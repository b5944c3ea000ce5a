//! The partition index against a full walk, over random replays.

use proptest::prelude::*;

use super::{PartitionIndex, TopicPartition, TopicsImage, NO_LEADER, NO_LEADER_CHANGE};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::{PartitionChangeRecord, PartitionRecord, TopicRecord};

const TOPICS: u8 = 3;
const PARTITIONS: i32 = 4;
const BROKERS: i32 = 5;

/// One replay that may move partitions in or out of the index.
#[derive(Debug, Clone)]
enum Replay {
    /// A TopicRecord: a new topic, or a known one started over.
    Topic(u8),
    Partition {
        topic: u8,
        partition: i32,
        isr: Vec<i32>,
        elr: Vec<i32>,
        leader: i32,
    },
    Change {
        topic: u8,
        partition: i32,
        isr: Option<Vec<i32>>,
        elr: Option<Vec<i32>>,
        leader: i32,
    },
    RemoveTopic(u8),
    /// ClearElrRecord for one topic, or (`None`) every topic.
    ClearElr(Option<u8>),
}

fn topic_id(topic: u8) -> Uuid {
    let mut id = [0; 16];
    id[0] = topic + 1;
    Uuid(id)
}

fn topic_name(topic: u8) -> String {
    format!("t{topic}")
}

fn brokers() -> impl Strategy<Value = Vec<i32>> {
    proptest::collection::vec(0..BROKERS, 0..4)
}

fn replay() -> impl Strategy<Value = Replay> {
    let topic = 0..TOPICS;
    let partition = 0..PARTITIONS;
    let leader = prop_oneof![Just(NO_LEADER), 0..BROKERS];
    prop_oneof![
        topic.clone().prop_map(Replay::Topic),
        (
            topic.clone(),
            partition.clone(),
            brokers(),
            brokers(),
            leader.clone()
        )
            .prop_map(|(topic, partition, isr, elr, leader)| Replay::Partition {
                topic,
                partition,
                isr,
                elr,
                leader,
            }),
        (
            topic.clone(),
            partition,
            proptest::option::of(brokers()),
            proptest::option::of(brokers()),
            prop_oneof![Just(NO_LEADER_CHANGE), leader],
        )
            .prop_map(|(topic, partition, isr, elr, leader)| Replay::Change {
                topic,
                partition,
                isr,
                elr,
                leader,
            }),
        topic.clone().prop_map(Replay::RemoveTopic),
        proptest::option::of(topic).prop_map(Replay::ClearElr),
    ]
}

/// Applies one replay; refusals (an unknown topic or partition) leave the image as it was.
fn apply(image: &mut TopicsImage, replay: &Replay) {
    let _ = match replay.clone() {
        Replay::Topic(t) => {
            image.replay_topic(&TopicRecord {
                name: topic_name(t),
                topic_id: topic_id(t),
                ..TopicRecord::default()
            });
            Ok(())
        }
        Replay::Partition {
            topic,
            partition,
            isr,
            elr,
            leader,
        } => image.replay_partition(&PartitionRecord {
            topic_id: topic_id(topic),
            partition_id: partition,
            replicas: (0..BROKERS).collect(),
            isr,
            eligible_leader_replicas: Some(elr),
            leader,
            ..PartitionRecord::default()
        }),
        Replay::Change {
            topic,
            partition,
            isr,
            elr,
            leader,
        } => image.replay_partition_change(&PartitionChangeRecord {
            topic_id: topic_id(topic),
            partition_id: partition,
            isr,
            eligible_leader_replicas: elr,
            leader,
            ..PartitionChangeRecord::default()
        }),
        Replay::RemoveTopic(t) => image.replay_remove_topic(topic_id(t)).map(|_| ()),
        Replay::ClearElr(t) => image.replay_clear_elr(&t.map(topic_name).unwrap_or_default()),
    };
}

/// What a walk of every partition gives for one question, in image order.
fn walked(
    image: &TopicsImage,
    includes: impl Fn(&super::PartitionRegistration) -> bool,
) -> Vec<TopicPartition> {
    image
        .by_id
        .values()
        .flat_map(|t| t.partitions.iter().map(move |(id, p)| (t.id, *id, p)))
        .filter(|(_, _, p)| includes(p))
        .map(|(t, id, _)| (t, id))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn the_index_is_what_a_walk_gives(replays in proptest::collection::vec(replay(), 0..60)) {
        let mut image = TopicsImage::default();
        for (i, r) in replays.iter().enumerate() {
            let before = image.clone();
            apply(&mut image, r);
            prop_assert!(image.check().is_ok(), "after replay {i} ({r:?}): {:?}", image.check());
            // A version of the image keeps its own index.
            prop_assert!(before.check().is_ok());
            for b in 0..BROKERS {
                let in_isr: Vec<_> = image.with_in_isr(b).copied().collect();
                prop_assert_eq!(in_isr, walked(&image, |p| p.isr.contains(&b)));
                let in_elr: Vec<_> = image.with_in_elr(b).copied().collect();
                prop_assert_eq!(in_elr, walked(&image, |p| p.elr.contains(&b)));
            }
            let leaderless: Vec<_> = image.leaderless().copied().collect();
            prop_assert_eq!(leaderless, walked(&image, |p| p.leader == NO_LEADER));
        }
        prop_assert!(image.index == PartitionIndex::of(image.by_id.values()));
    }
}

#[test]
fn the_index_is_left_out_of_equality_and_debug() {
    let mut image = TopicsImage::default();
    apply(&mut image, &Replay::Topic(0));
    apply(
        &mut image,
        &Replay::Partition {
            topic: 0,
            partition: 0,
            isr: vec![1, 2],
            elr: vec![],
            leader: 1,
        },
    );
    let mut stale = image.clone();
    stale.index = PartitionIndex::default();
    assert_eq!(image, stale);
    assert!(
        stale.check().is_err(),
        "a stale index fails the invariant check"
    );
    assert!(!format!("{image:?}").contains("PartitionIndex"));
}
