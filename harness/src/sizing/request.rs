//! What `ackbench sweep` and `ackbench size` are asked, as plain values: the command line fills
//! them (`commands::sweep`, `commands::size`), and anything else that drives a sweep or a
//! sizing (a test, a program using ackbench as a library) can fill them too.

use std::path::PathBuf;

/// A sweep: the profile over the grid of `vary` values.
#[derive(Debug, Clone, Default)]
pub struct SweepRequest {
    /// The profile file and its `--set` overrides.
    pub profile: PathBuf,
    pub sets: Vec<String>,
    /// `PATH=V1,V2,...` axes; the grid is every combination.
    pub vary: Vec<String>,
    /// Metrics to report and chart; empty: the default set.
    pub metrics: Vec<String>,
    /// Output folder; `None`: `reports/<profile name>-sweep/`.
    pub out: Option<PathBuf>,
    /// Write into a folder of files ackbench did not write.
    pub force: bool,
    /// Runs at once; `None`: the number of cores.
    pub jobs: Option<u32>,
}

/// A sizing: the settings recommended for the profile, each verified by a sim run.
#[derive(Debug, Clone)]
pub struct SizeRequest {
    /// The profile file and its `--set` overrides.
    pub profile: PathBuf,
    pub sets: Vec<String>,
    /// An HDR interval log of handler latencies to size from instead of a sim run.
    pub latency_from: Option<PathBuf>,
    /// The highest acceptable chance that a handler outlives its lease.
    pub target_risk: f64,
    /// Safety factor on the latency at the target risk.
    pub margin: f64,
    /// Share of the workers' time they should be busy.
    pub utilisation: f64,
    /// The longest lease worth recommending, as a duration (`15m`); past it, a heartbeat.
    pub max_lease: String,
    /// A deduplication window in front of the consumer, as a duration.
    pub dedup_window: Option<String>,
    /// Output folder; `None`: `reports/<profile name>-sizing/`.
    pub out: Option<PathBuf>,
    /// Write into a folder of files ackbench did not write.
    pub force: bool,
}
