//! load(write(image)) == image over generated images, at their own metadata.version and at a
//! lower one.

use proptest::prelude::*;

use super::generate::{op, version, Builder};
use super::*;

/// The part of `MetadataImage.write` a record belongs to, in write order.
fn part(r: &MetadataRecord) -> usize {
    match r {
        MetadataRecord::FeatureLevel(_) => 0,
        MetadataRecord::RegisterBroker(_) => 1,
        MetadataRecord::RegisterController(_) => 2,
        MetadataRecord::Topic(_) | MetadataRecord::Partition(_) => 3,
        MetadataRecord::Config(_) => 4,
        MetadataRecord::ClientQuota(_) => 5,
        MetadataRecord::ProducerIds(_) => 6,
        MetadataRecord::AccessControlEntry(_) => 7,
        MetadataRecord::UserScramCredential(_) => 8,
        MetadataRecord::DelegationToken(_) => 9,
        other => panic!("a snapshot never holds {}", other.schema_name()),
    }
}

/// Java's order: parts in sequence, metadata.version first, each partition after its topic.
fn check_order(records: &[MetadataRecordAndVersion]) -> Result<(), TestCaseError> {
    let first = records.first().map(|r| &r.record);
    prop_assert!(
        matches!(first, Some(MetadataRecord::FeatureLevel(f)) if f.name == "metadata.version"),
        "{first:?}"
    );
    let mut last_part = 0;
    let mut topic = None;
    for r in records {
        let p = part(&r.record);
        prop_assert!(
            p >= last_part,
            "{} after part {last_part}",
            r.record.schema_name()
        );
        last_part = p;
        match &r.record {
            MetadataRecord::Topic(t) => topic = Some(t.topic_id),
            MetadataRecord::Partition(p) => prop_assert_eq!(Some(p.topic_id), topic),
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn loading_the_snapshot_of_an_image_gives_the_image(
        (level, elr) in version(),
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let mut b = Builder::new(level, elr);
        for o in &ops {
            b.apply(o);
        }
        let image = image_of(&b.records);
        let options = SnapshotOptions::for_image(&image).unwrap();
        prop_assert_eq!(options.metadata_version.level(), level);
        let (records, losses, loaded) = write(&image, options);
        prop_assert!(losses.is_empty(), "{:?}", losses);
        check_order(&records)?;
        prop_assert_eq!(loaded, image);
    }

    /// `metadata-state --json` streams the image; the text is `to_json`'s, byte for byte.
    #[test]
    fn the_streamed_image_json_is_the_documents_text(
        (level, elr) in version(),
        ops in proptest::collection::vec(op(), 0..60),
        offset in -1i64..1_000_000,
    ) {
        let mut b = Builder::new(level, elr);
        for o in &ops {
            b.apply(o);
        }
        let image = image_of(&b.records);
        let mut streamed = Vec::new();
        image.write_json(offset, &mut streamed).unwrap();
        let document = image.to_json(offset);
        prop_assert!(document["topics"].is_object());
        prop_assert_eq!(String::from_utf8(streamed).unwrap(), document.to_string());
    }

    #[test]
    fn a_snapshot_at_a_lower_version_loses_only_what_it_reports(
        (level, elr) in version(),
        lower in 0..crate::protocol::features::METADATA_VERSIONS.len(),
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let mut b = Builder::new(level, elr);
        for o in &ops {
            b.apply(o);
        }
        let image = image_of(&b.records);
        let target = crate::protocol::features::METADATA_VERSIONS[lower].1.min(level);
        let options = SnapshotOptions {
            metadata_version: MetadataVersion::from_level(target).unwrap(),
            ..SnapshotOptions::for_image(&image).unwrap()
        };
        let (records, losses, mut loaded) = write(&image, options);
        check_order(&records)?;
        prop_assert_eq!(loaded.features.metadata_version(), Some(target));
        if losses.is_empty() {
            loaded.features.levels.insert("metadata.version".into(), level);
            prop_assert_eq!(loaded, image);
        }
    }
}

/// Partition ids sort as text in the canonical JSON ("10" before "2"), and names are escaped
/// the same way streamed: a topic of 12 partitions with quotes, a backslash and non-ASCII in
/// its name.
#[test]
fn the_streamed_json_sorts_partition_ids_as_text_and_escapes_names() {
    use crate::protocol::codec::Uuid;
    use crate::protocol::messages::{FeatureLevelRecord, PartitionRecord, TopicRecord};
    let mut image = MetadataImage::default();
    let mv: MetadataRecord = FeatureLevelRecord {
        name: "metadata.version".into(),
        feature_level: 33,
        ..Default::default()
    }
    .into();
    image.replay(&mv).unwrap();
    let topic_id = Uuid([9; 16]);
    let topic: MetadataRecord = TopicRecord {
        name: "odd \"name\" \\ é\u{1}".into(),
        topic_id,
        ..Default::default()
    }
    .into();
    image.replay(&topic).unwrap();
    for p in 0..12 {
        let partition: MetadataRecord = PartitionRecord {
            partition_id: p,
            topic_id,
            replicas: vec![1],
            isr: vec![1],
            leader: 1,
            ..Default::default()
        }
        .into();
        image.replay(&partition).unwrap();
    }
    let mut streamed = Vec::new();
    image.write_json(7, &mut streamed).unwrap();
    let text = String::from_utf8(streamed).unwrap();
    assert_eq!(text, image.to_json(7).to_string());
    let (ten, two) = (text.find("\"10\":").unwrap(), text.find("\"2\":").unwrap());
    assert!(ten < two, "partition 10 sorts before 2 as text: {text}");
    assert!(
        text.contains(r#""name":"odd \"name\" \\ é\u0001""#),
        "{text}"
    );
}
