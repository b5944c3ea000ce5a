pub mod scram;
