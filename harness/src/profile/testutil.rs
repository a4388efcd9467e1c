//! Helpers for the profile tests: a small valid profile to start from, and the error text of a
//! broken one.

use super::{load_str, ChaosRule, ProfileError, Scenario};

/// A minimal valid profile, five lines long; tests append sections after it (from line 6).
pub const BASE: &str = "\
name: t
run: { duration: 10m }
workload:
  arrival: { every: 50s }
consumer: { target: ack-after-work }
";

/// `BASE` followed by `more`.
pub fn with(more: &str) -> String {
    format!("{BASE}{more}")
}

pub fn load(text: &str) -> Result<Scenario, ProfileError> {
    load_str("p.yaml", text, &[])
}

/// The error message `text` gives (it must give one).
pub fn error(text: &str) -> String {
    match load(text) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e.to_string(),
    }
}

/// The error message `text` with `sets` gives.
pub fn error_with(text: &str, sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match load_str("p.yaml", text, &sets) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e.to_string(),
    }
}

/// The scenario `text` gives (it must be valid).
pub fn scenario(text: &str) -> Scenario {
    match load(text) {
        Ok(s) => s,
        Err(e) => panic!("expected a valid profile, got: {e}"),
    }
}

/// The one chaos rule of the profile `text`.
pub fn one_chaos_rule(text: &str) -> ChaosRule {
    let mut chaos = scenario(text).chaos;
    assert_eq!(chaos.len(), 1, "one chaos rule expected, got {chaos:?}");
    chaos.remove(0)
}
