//! Bytes to typed Kafka messages and back. The leaf of the module graph.
pub mod codec;
pub mod errors;
pub mod features;
pub mod frame;
pub mod messages;
pub mod records;
#[cfg(test)]
mod tests {
    use super::messages::REGISTRY;

    #[test]
    fn every_generated_message_round_trips_its_default_at_every_version() {
        for entry in REGISTRY {
            for v in entry.lowest_version..=entry.highest_version {
                let bytes = (entry.encode_default)(v)
                    .unwrap_or_else(|e| panic!("{} v{v}: encode default: {e}", entry.name));
                let again = (entry.round_trip)(&bytes, v)
                    .unwrap_or_else(|e| panic!("{} v{v}: {e}", entry.name));
                assert_eq!(bytes, again, "{} v{v}", entry.name);
            }
        }
    }

    #[test]
    fn no_generated_decoder_panics_on_truncations_of_a_valid_message() {
        for entry in REGISTRY {
            for v in entry.lowest_version..=entry.highest_version {
                let bytes = (entry.encode_default)(v).unwrap();
                for cut in 0..bytes.len() {
                    assert!(
                        (entry.round_trip)(&bytes[..cut], v).is_err(),
                        "{} v{v} cut {cut}",
                        entry.name
                    );
                }
            }
        }
    }
}
