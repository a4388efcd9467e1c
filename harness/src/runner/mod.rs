//! Wires a run together: plan the workload, start the workers, run to the end, hand back the
//! [`RunRecord`].
//!
//! - [`sim`]: virtual time, one process, deterministic (DESIGN's ordering at one instant).

pub mod sim;

use crate::profile::{Mode, Scenario};
use crate::record::RunRecord;

/// Why a run could not complete (exit code 3).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("mode `live` is not available yet: run this profile with `mode: sim` (the default)")]
    LiveUnavailable,
    #[error("unknown target `{0}`")]
    UnknownTarget(String),
}

/// Runs `scenario` to its end.
pub fn run(scenario: &Scenario) -> Result<RunRecord, RunError> {
    match scenario.mode {
        Mode::Sim => sim::run(scenario),
        Mode::Live => Err(RunError::LiveUnavailable),
    }
}
