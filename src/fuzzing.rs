//! Bodies of the fuzz targets, shared by `fuzz/` (cargo fuzz, libFuzzer) and by the property
//! tests that run in `make test` on stable Rust. Each must hold for every input: no panic, no
//! unbounded allocation, and decode/encode agreement.

use crate::protocol::messages::REGISTRY;
use crate::server::api::{self, Outcome};
use crate::server::context::{QuorumView, ServerContext};

/// A context like a single-node controller's, for feeding frames to the dispatcher.
pub fn test_context() -> ServerContext {
    ServerContext::new(
        1,
        Some("MkU3OEVBNTcwNTJENDM2Qk".into()),
        100 * 1024 * 1024,
        QuorumView::default(),
    )
}

/// Any bytes as one request frame (size prefix removed): the dispatcher answers or closes.
/// A response it writes must itself be a well-formed frame.
pub fn request_frame(ctx: &ServerContext, data: &[u8]) {
    if let Outcome::Respond(bytes) = api::handle(ctx, "CONTROLLER", data) {
        assert!(
            bytes.len() >= 8,
            "a response frame holds at least size and correlation id"
        );
        let size = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        assert_eq!(size, bytes.len() - 4, "size prefix matches the frame");
        assert_eq!(
            &bytes[4..8],
            &data[4..8],
            "the response carries the request's correlation id"
        );
    }
}

/// Two selector bytes pick a generated message and version; the rest is decoded. Whatever
/// decodes must re-encode, and the re-encoding must decode to the same bytes again.
pub fn message(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let entry = &REGISTRY[data[0] as usize % REGISTRY.len()];
    let span = (entry.highest_version - entry.lowest_version + 1) as usize;
    let version = entry.lowest_version + (data[1] as usize % span) as i16;
    let body = &data[2..];
    if let Ok(encoded) = (entry.round_trip)(body, version) {
        // Decoding is lossless up to encoding choices (e.g. tag order), so the second round
        // trip must be a fixed point.
        let again = (entry.round_trip)(&encoded, version).unwrap_or_else(|e| {
            panic!(
                "{} v{version}: re-encoded bytes do not decode: {e}",
                entry.name
            )
        });
        assert_eq!(
            encoded, again,
            "{} v{version}: encode is not a fixed point",
            entry.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_as_a_message(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            message(&data);
        }

        #[test]
        fn any_bytes_as_a_request_frame(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            request_frame(&test_context(), &data);
        }

        #[test]
        fn served_api_headers_with_random_bodies(
            key in prop::sample::select(vec![18i16, 60]),
            version in 0i16..8,
            body in proptest::collection::vec(any::<u8>(), 0..128),
        ) {
            let mut frame = Vec::new();
            frame.extend_from_slice(&key.to_be_bytes());
            frame.extend_from_slice(&version.to_be_bytes());
            frame.extend_from_slice(&7i32.to_be_bytes());
            frame.extend_from_slice(&(-1i16).to_be_bytes());
            frame.extend_from_slice(&body);
            request_frame(&test_context(), &frame);
        }
    }
}
