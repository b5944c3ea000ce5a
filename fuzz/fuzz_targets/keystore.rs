//! Any bytes as a JKS, PKCS12 or PEM key store and trust store, and as inline PEM key material
//! and certificates (see `kraftd::fuzzing::keystore_bytes`). Seed it with
//! `tests/fixtures/keystores/*` to start from real stores.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kraftd::fuzzing::keystore_bytes(data);
});
