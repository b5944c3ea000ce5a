//! Key stores and trust stores as Kafka's `DefaultSslEngineFactory` reads them.
//!
//! Interface (implementation in progress):
//! - `StoreType::{Jks, Pkcs12, Pem}` (`ssl.keystore.type`, `ssl.truststore.type`; Kafka's
//!   default is JKS);
//! - `read_key_store(bytes, type, store password, key password) -> KeyMaterial` (a chain and its
//!   private key);
//! - `read_trust_store(bytes, type, password) -> Vec<CertificateDer>`;
//! - `pem_key_material(key PEM, chain PEM, key password)` for the inline
//!   `ssl.keystore.key` / `ssl.keystore.certificate.chain`, and `pem_certificates` for
//!   `ssl.truststore.certificates`.
