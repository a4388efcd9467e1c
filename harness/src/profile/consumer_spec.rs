//! `consumer` resolved: the target or command each worker runs, how many, and its options.

use std::time::Duration;

use ackbench_targets::TargetOptions;

#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerSpec {
    /// A built-in target's name (see `ackbench_targets::TARGETS`).
    pub target: String,
    pub workers: u32,
    pub restart_after: Duration,
    pub options: TargetOptions,
    /// Live mode: the consumer as a program (argv), started once per worker; `target` is then
    /// `command`.
    pub command: Option<Vec<String>>,
    /// Live mode: extra environment of each worker process, by name; a value's
    /// `${ACKBENCH_...}` is that worker's run variable.
    pub env: Vec<(String, crate::profile::env_value::EnvValue)>,
    /// Live mode: the clock a command's processes run on, as the profile asks; `None` leaves
    /// it to the run (scaled when the time scale is below 1 and the mechanism is there).
    pub clock: Option<ConsumerClock>,
}

/// The clock of the programs a live run starts (the consumer command's workers and the
/// ingress service).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerClock {
    /// Sped up by `1 / run.time_scale`: the program's sleeps, timeouts and clock reads are in
    /// profile time, and so are the durations it sends over the broker's API.
    Scaled,
    /// The machine's clock: the program scales its own durations (`ACKBENCH_TIME_SCALE`).
    Real,
}

impl ConsumerClock {
    /// The name a profile and a report use.
    pub fn name(self) -> &'static str {
        match self {
            ConsumerClock::Scaled => "scaled",
            ConsumerClock::Real => "real",
        }
    }
}
