//! Profiles: YAML scenarios, parsed in two stages (raw, then a validated [`Scenario`]).

pub mod scenario;

pub use scenario::*;
