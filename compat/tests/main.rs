//! Compat tests against real Apache Kafka.
