//! The records of an image as a stream: [`SnapshotRecords`] owns an O(1) copy of the image and a
//! cursor into it, and builds the records a chunk at a time, so that a snapshot of a million
//! partitions never exists as a list of records. Being owned, it can be sent to another thread
//! or drained a few batches per turn of the node loop while replay goes on.

use std::collections::VecDeque;
use std::ops::Bound;

use imbl::OrdMap;

use super::loss::{Loss, Lost};
use super::records::{self as build, Losses};
use super::SnapshotOptions;
use crate::controller::configs::ConfigResource;
use crate::controller::quotas::QuotaEntity;
use crate::controller::replication::Topic;
use crate::controller::MetadataImage;
use crate::protocol::codec::Uuid;
use crate::protocol::features::METADATA_VERSION;
use crate::protocol::records::MetadataRecordAndVersion;

/// Image entries turned into records per refill of the buffer.
const CHUNK: usize = 1024;

/// The records of one image, in Kafka 4.4's `MetadataImage.write` order: features (metadata
/// version first), cluster (brokers, then controllers), topics (each TopicRecord followed by its
/// partitions), configs, client quotas, producer ids, ACLs, SCRAM, delegation tokens. Within a
/// part, entries come in key order (Java's follow its hash maps; no loader depends on it).
pub struct SnapshotRecords {
    image: MetadataImage,
    options: SnapshotOptions,
    stage: Stage,
    buffer: VecDeque<MetadataRecordAndVersion>,
    losses: Vec<Loss>,
}

/// Where the stream is: each stage holds the key of the last entry it wrote.
#[derive(Debug, Clone)]
enum Stage {
    MetadataVersion,
    Features(Option<String>),
    Brokers(Option<i32>),
    Controllers,
    ControllerEntries(Option<i32>),
    /// The topic being written and its last partition written (None: only its TopicRecord).
    Topics(Option<(Uuid, Option<i32>)>),
    Configs(Option<(ConfigResource, Option<String>)>),
    Quotas(Option<(QuotaEntity, Option<String>)>),
    ProducerIds,
    Acls(Option<Uuid>),
    Scram(Option<(i8, String)>),
    DelegationTokens(Option<String>),
    Done,
}

impl SnapshotRecords {
    pub(super) fn new(image: MetadataImage, options: SnapshotOptions) -> SnapshotRecords {
        SnapshotRecords {
            image,
            options,
            stage: Stage::MetadataVersion,
            buffer: VecDeque::new(),
            losses: Vec::new(),
        }
    }

    pub fn options(&self) -> SnapshotOptions {
        self.options
    }

    /// What the records streamed so far left out (complete once the stream has ended).
    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    /// Builds the next chunk of records into the buffer; false once everything was written.
    fn refill(&mut self) -> bool {
        let mut out = Vec::new();
        while out.is_empty() {
            let stage = std::mem::replace(&mut self.stage, Stage::Done);
            if matches!(stage, Stage::Done) {
                return false;
            }
            let mut losses = Losses {
                options: self.options,
                out: &mut self.losses,
            };
            self.stage = step(&self.image, stage, &mut losses, &mut out);
        }
        self.buffer.extend(out);
        true
    }
}

impl Iterator for SnapshotRecords {
    type Item = MetadataRecordAndVersion;

    fn next(&mut self) -> Option<MetadataRecordAndVersion> {
        if self.buffer.is_empty() && !self.refill() {
            return None;
        }
        self.buffer.pop_front()
    }
}

/// Writes up to [`CHUNK`] entries of `stage` into `out` and returns where to go on from.
fn step(
    image: &MetadataImage,
    stage: Stage,
    losses: &mut Losses<'_>,
    out: &mut Vec<MetadataRecordAndVersion>,
) -> Stage {
    let options = losses.options;
    let mv = options.metadata_version;
    match stage {
        Stage::MetadataVersion => {
            out.push(build::metadata_version(options));
            Stage::Features(None)
        }
        Stage::Features(mut after) => {
            let done = flat(&image.features.levels, &mut after, |name, level| {
                if name != METADATA_VERSION {
                    out.push(build::feature_level(name, *level));
                }
            });
            next_or(done, Stage::Brokers(None), Stage::Features(after))
        }
        Stage::Brokers(mut after) => {
            let done = flat(&image.cluster.brokers, &mut after, |_, b| {
                out.push(build::broker(b, losses))
            });
            next_or(done, Stage::Controllers, Stage::Brokers(after))
        }
        Stage::Controllers => {
            let count = image.cluster.controllers.len();
            if count > 0 && !mv.is_controller_registration_supported() {
                losses.lose(Lost::ControllerRegistrations { count });
                Stage::Topics(None)
            } else {
                Stage::ControllerEntries(None)
            }
        }
        Stage::ControllerEntries(mut after) => {
            let done = flat(&image.cluster.controllers, &mut after, |_, c| {
                out.push(build::controller(c))
            });
            next_or(done, Stage::Topics(None), Stage::ControllerEntries(after))
        }
        Stage::Topics(mut after) => {
            let done = nested(
                &image.topics.by_id,
                |t: &Topic| &t.partitions,
                &mut after,
                out,
                |id, t| Some(build::topic(&t.name, *id)),
                |id, _, p, reg| build::partition(*id, *p, reg, losses),
            );
            next_or(done, Stage::Configs(None), Stage::Topics(after))
        }
        Stage::Configs(mut after) => {
            let done = nested(
                &image.configs.resources,
                |c| c,
                &mut after,
                out,
                |_, _| None,
                |resource, _, name, value| build::config(resource, name, value),
            );
            next_or(done, Stage::Quotas(None), Stage::Configs(after))
        }
        Stage::Quotas(mut after) => {
            let done = nested(
                &image.client_quotas.entities,
                |q| q,
                &mut after,
                out,
                |_, _| None,
                |entity, _, key, value| build::client_quota(entity, key, *value),
            );
            next_or(done, Stage::ProducerIds, Stage::Quotas(after))
        }
        Stage::ProducerIds => {
            // Only once an id block was handed out (`ProducerIdsImage.write`).
            let next = image.producer_ids.next_producer_id;
            if next >= 0 {
                out.push(build::producer_ids(next));
            }
            Stage::Acls(None)
        }
        Stage::Acls(mut after) => {
            let done = flat(&image.acls.by_id, &mut after, |id, a| {
                out.push(build::acl(*id, a))
            });
            next_or(done, Stage::Scram(None), Stage::Acls(after))
        }
        Stage::Scram(mut after) => {
            let credentials = &image.scram.credentials;
            if !mv.is_scram_supported() {
                if !credentials.is_empty() {
                    let count = credentials.len();
                    losses.lose(Lost::ScramCredentials { count });
                }
                return Stage::DelegationTokens(None);
            }
            let done = flat(credentials, &mut after, |(mechanism, user), c| {
                out.push(build::scram(*mechanism, user, c))
            });
            next_or(done, Stage::DelegationTokens(None), Stage::Scram(after))
        }
        Stage::DelegationTokens(mut after) => {
            let tokens = &image.delegation_tokens.by_id;
            if !mv.is_delegation_token_supported() {
                if !tokens.is_empty() {
                    let count = tokens.len();
                    losses.lose(Lost::DelegationTokens { count });
                }
                return Stage::Done;
            }
            let done = flat(tokens, &mut after, |id, t| {
                out.push(build::delegation_token(id, t))
            });
            next_or(done, Stage::Done, Stage::DelegationTokens(after))
        }
        Stage::Done => Stage::Done,
    }
}

fn next_or(done: bool, next: Stage, again: Stage) -> Stage {
    if done {
        next
    } else {
        again
    }
}

/// The entries of `map` after the key `after` (all of them for None), in key order.
fn entries_after<'a, K: Ord, V>(
    map: &'a OrdMap<K, V>,
    after: Option<&K>,
) -> impl Iterator<Item = (&'a K, &'a V)> + 'a {
    let lower = match after {
        Some(k) => Bound::Excluded(k),
        None => Bound::Unbounded,
    };
    map.range::<_, K>((lower, Bound::Unbounded))
}

/// Visits up to [`CHUNK`] entries after `after`, moving it on; true when the map is exhausted.
fn flat<K: Ord + Clone, V>(
    map: &OrdMap<K, V>,
    after: &mut Option<K>,
    mut visit: impl FnMut(&K, &V),
) -> bool {
    let start = after.take();
    let mut last = start.clone();
    for (n, (k, v)) in entries_after(map, start.as_ref()).enumerate() {
        if n == CHUNK {
            *after = last;
            return false;
        }
        visit(k, v);
        last = Some(k.clone());
    }
    *after = last;
    true
}

/// As [`flat`] over a map of maps, writing into `out`: the `header` record (if any) of each
/// outer entry as it starts, then an `item` record for each of its inner entries. `after` is the
/// outer key being written and its last inner key.
fn nested<K1: Ord + Clone, V1, K2: Ord + Clone, V2>(
    outer: &OrdMap<K1, V1>,
    inner: fn(&V1) -> &OrdMap<K2, V2>,
    after: &mut Option<(K1, Option<K2>)>,
    out: &mut Vec<MetadataRecordAndVersion>,
    mut header: impl FnMut(&K1, &V1) -> Option<MetadataRecordAndVersion>,
    mut item: impl FnMut(&K1, &V1, &K2, &V2) -> MetadataRecordAndVersion,
) -> bool {
    let mut budget = CHUNK;
    loop {
        if let Some((key, last_inner)) = after.as_mut() {
            let value = outer
                .get(key)
                .expect("the image does not change under the stream");
            let start = last_inner.take();
            let mut last = start.clone();
            for (k2, v2) in entries_after(inner(value), start.as_ref()) {
                if budget == 0 {
                    *last_inner = last;
                    return false;
                }
                out.push(item(key, value, k2, v2));
                last = Some(k2.clone());
                budget -= 1;
            }
            *last_inner = last;
        }
        let next = entries_after(outer, after.as_ref().map(|(k, _)| k)).next();
        let Some((key, value)) = next else {
            return true;
        };
        if budget == 0 {
            return false;
        }
        out.extend(header(key, value));
        *after = Some((key.clone(), None));
        budget -= 1;
    }
}
