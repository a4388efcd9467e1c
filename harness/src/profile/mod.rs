//! Profiles: YAML scenarios, parsed in two stages (raw, then a validated [`Scenario`]).

pub mod duration;
pub mod scenario;

pub use duration::{format_duration, parse_duration};
pub use scenario::*;
