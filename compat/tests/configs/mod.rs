//! Dynamic configs: IncrementalAlterConfigs and AlterConfigs served by kraftd as a Java 4.4
//! controller serves them.
//! - `alter`: the same requests to Java and to kraftd, answers and logged configs compared;
//! - `tools`: `kafka-configs` through a broker against kraftd, the values taking effect;
//! - `group_probe`: group configs judged by Java's `GroupConfig` and by kraftd;
//! - `describe`: DescribeConfigs answered as Java's `ConfigHelper` answers it.

mod alter;
mod cases;
mod describe;
mod group_probe;
mod other_cases;
mod requests;
mod tools;
