//! Dynamic configs: IncrementalAlterConfigs and AlterConfigs served by kraftd as a Java 4.4
//! controller serves them.
//! - `alter`: the same requests to Java and to kraftd, answers and logged configs compared;
//! - `tools`: `kafka-configs` through a broker against kraftd, the values taking effect.

mod alter;
mod cases;
mod other_cases;
mod requests;
mod tools;
