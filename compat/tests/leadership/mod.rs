//! Partition leadership and ISR decisions against Kafka's own classes and stock brokers:
//! - `probe`: kraftd's partition change builder and Kafka 4.4's `PartitionChangeBuilder` on
//!   the same thousands of generated partitions and changes, record for record;
//! - `brokers`: stock brokers killed, restarted and shut down under kraftd move their
//!   leaderships and ISR places, and the preferred leaders come back;
//! - `reassign`: AlterPartitionReassignments, ListPartitionReassignments and
//!   AssignReplicasToDirs, the same bytes to Java 4.4 and to kraftd, answers and records;
//! - `reassign_tools`: `kafka-reassign-partitions` moving, listing and cancelling on stock
//!   brokers served by kraftd.

mod brokers;
mod probe;
mod reassign;
mod reassign_tools;
