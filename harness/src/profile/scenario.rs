//! The resolved scenario: a profile after parsing, defaults and validation.
//!
//! Everything the runner reads comes from here. Every value is already checked (durations are
//! positive where they must be, weights sum to a positive number, options belong to the target),
//! so the runner never re-validates. Each section's types are in their own file
//! (`run_spec.rs`, `kinds/spec.rs`, `workload_spec.rs`, `consumer_spec.rs`,
//! `provider_spec.rs`, `budget_spec.rs`); this file assembles them and names them all.

use std::time::Duration;

use super::fault::ChaosRule;

pub use super::budget_spec::*;
pub use super::consumer_spec::*;
pub use super::kinds::spec::*;
pub use super::provider_spec::*;
pub use super::ramp::Ramp;
pub use super::run_spec::*;
pub use super::workload_spec::*;
pub use ackbench_targets::{Exhausted, OnPoison, RepublishSpec, RetrySpec, TargetOptions};

/// A validated, fully defaulted profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub mode: Mode,
    pub seed: u64,
    pub run: RunSpec,
    pub broker: BrokerSpec,
    pub workload: WorkloadSpec,
    pub consumer: ConsumerSpec,
    pub provider: ProviderSpec,
    pub chaos: Vec<ChaosRule>,
    /// An operator's redrive: at this instant every DLQ entry moves back to the main queue.
    pub redrive: Option<Duration>,
    pub budgets: Budgets,
}

impl Scenario {
    /// The worker numbers a live run opens (each its proxy port, its provider path, its logs):
    /// the fleet it starts with, or, with an `autoscale` rule, twice the larger of that and the
    /// rule's `max`: a scale-out makes its replicas in the lowest numbers no replica holds,
    /// while the replicas a scale-in removed keep theirs through their grace.
    pub fn worker_slots(&self) -> u32 {
        let max = self
            .chaos
            .iter()
            .find_map(|r| r.get::<super::AutoscaleRule>())
            .map(|a| a.max);
        match max {
            Some(max) => 2 * self.consumer.workers.max(max),
            None => self.consumer.workers,
        }
    }
}
