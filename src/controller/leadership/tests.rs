//! Leadership transcripts: brokers fenced, unfenced, shut down and unregistered, and
//! AlterPartition and elections, each shown as the records decided.
