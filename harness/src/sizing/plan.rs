//! The sizing plan: what `ackbench size` recommends, why (one sentence each), and what the sim
//! runs showed before and after. sizing.json is this, serialised; sizing.md renders it.

use serde::Serialize;

use super::checks::{Check, Status};
use super::lease::LeaseAdvice;
use super::partitions::PartitionSizing;
use super::probe::ProbeOutcome;
use super::settings::SettingsView;
use super::simulate::Simulated;
use super::workers::WorkerSizing;

/// Everything `ackbench size` found.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub profile: String,
    pub latency_source: LatencySource,
    pub rules: Rules,
    pub current: SettingsView,
    pub recommended: SettingsView,
    /// The recommendation as `--set` overrides: `ackbench run PROFILE --set ...` runs it.
    pub set: Vec<String>,
    pub lease: LeaseSection,
    /// The records per poll and the poll interval, on a kind that polls batches (Kafka);
    /// absent on the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll: Option<PollSection>,
    pub duplicates: DuplicatesSection,
    pub workers: WorkersSection,
    /// The partitions against the workers, on a consumer group (Kafka); absent on the other
    /// kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionsSection>,
    /// The autoscaler's settings, on a profile with an `autoscale` rule; absent on the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<super::fleet::AutoscaleSection>,
    pub alert: AlertSection,
    pub delivery_limit: LimitSection,
    pub checks: Vec<CheckRow>,
    pub verification: Verification,
    /// Duplicate rate and recovery time against the lease (the sizing chart's data).
    pub lease_curve: Vec<CurvePoint>,
    pub notes: Vec<String>,
}

/// Where the handler latency came from.
#[derive(Debug, Clone, Serialize)]
pub struct LatencySource {
    /// `simulation` (a sim run of the profile) or `file` (`--latency-from`).
    pub kind: &'static str,
    pub path: Option<String>,
    pub handlers: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

/// The rules' parameters.
#[derive(Debug, Clone, Serialize)]
pub struct Rules {
    pub target_risk: f64,
    pub margin: f64,
    pub utilisation: f64,
    pub max_lease_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LeaseSection {
    #[serde(flatten)]
    pub advice: LeaseAdvice,
    /// The latency fewer than `target_risk` of the handlers outlive (top of its HDR bucket).
    pub tail_ms: f64,
    /// `tail x margin`, before rounding.
    pub with_margin_s: f64,
    /// Worst-case recovery time now and with the recommendation (seconds).
    pub recovery_time_current_s: f64,
    pub recovery_time_recommended_s: f64,
    pub reason: String,
}

/// A poll's batch against the poll interval ([`super::poll`]): the time between two polls is
/// about the records a poll returns times the time one record takes.
#[derive(Debug, Clone, Serialize)]
pub struct PollSection {
    /// The latency fewer than `target_risk` of the handlers outlive (top of its HDR bucket).
    pub tail_ms: f64,
    /// `tail x margin`: the time one record is given.
    pub per_record_s: f64,
    pub records_current: u32,
    pub interval_current_s: f64,
    /// `records_current x per_record_s`: the time between two polls now.
    pub batch_time_current_s: f64,
    /// The records whose time fits in the current interval (0: not even one).
    pub records_that_fit: u32,
    /// The interval the current records need, rounded up to a readable value.
    pub interval_needed_s: f64,
    /// The profile key the recommendation changes (`max_poll_records`, `max_poll_interval`);
    /// `null` when the batch already fits.
    pub change: Option<&'static str>,
    pub records_recommended: u32,
    pub interval_recommended_s: f64,
    /// `records_recommended x per_record_s`.
    pub batch_time_recommended_s: f64,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DuplicatesSection {
    /// P(latency > lease).
    pub outlive_chance_current: f64,
    pub outlive_chance_recommended: f64,
    /// Duplicate effects per message for a consumer that repeats its work on every delivery;
    /// `null` when unbounded.
    pub predicted_current: Option<f64>,
    pub predicted_recommended: Option<f64>,
    /// duplicate_rate of the sim runs.
    pub observed_current: f64,
    pub observed_recommended: f64,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkersSection {
    pub normal: WorkerSizing,
    pub fault: WorkerSizing,
    pub current: u32,
    pub recommended: u32,
    pub busy_fraction_current: f64,
    pub busy_fraction_recommended: f64,
    pub reason: String,
}

/// A consumer group's partitions against the workers ([`super::partitions`]).
#[derive(Debug, Clone, Serialize)]
pub struct PartitionsSection {
    #[serde(flatten)]
    pub sizing: PartitionSizing,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AlertSection {
    pub healthy_max_oldest_age_s: f64,
    pub threshold_s: f64,
    pub observed_max_oldest_age_s: f64,
    pub would_have_fired: bool,
    pub recommended_max_oldest_age_s: f64,
    pub fires_with_recommendation: bool,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct LimitSection {
    pub current: u32,
    pub recommended: u32,
    /// Deliveries the target's slowest recovery path takes (the death included).
    pub recovery_deliveries: u32,
    pub recovery_path: String,
    /// Deliveries left after that path (`null`: no limit).
    pub spare_current: Option<i64>,
    pub spare_recommended: Option<i64>,
    /// A kill at the target's worst point, simulated with the current and recommended settings.
    pub probe_current: Option<ProbeOutcome>,
    pub probe_recommended: Option<ProbeOutcome>,
    pub reason: String,
}

/// One consistency check, with the current and the recommended settings.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRow {
    pub name: &'static str,
    pub current: Status,
    pub recommended: Status,
    pub detail_current: String,
    pub detail_recommended: String,
}

impl CheckRow {
    pub fn pair(now: Check, after: Check) -> Self {
        CheckRow {
            name: now.name,
            current: now.status,
            recommended: after.status,
            detail_current: now.detail,
            detail_recommended: after.detail,
        }
    }
}

/// The sim runs with the current and the recommended settings.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    pub before: RunRow,
    pub after: RunRow,
}

/// What a run showed, for the before / after table.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub visibility_timeout_s: f64,
    pub max_receives: u32,
    pub workers: u32,
    pub messages: u64,
    pub duplicate_effects: u64,
    pub duplicate_rate: f64,
    pub lost: u64,
    pub dlq: u64,
    pub dlq_with_effect: u64,
    pub handler_p99_ms: f64,
    pub p99_over_visibility: f64,
    pub recovery_time_s: f64,
    pub recovery_time_source: &'static str,
    pub worker_busy_fraction: f64,
    pub max_oldest_age_s: f64,
    pub verdict: String,
}

impl RunRow {
    pub fn of(run: &Simulated, max_receives: u32, workers: u32) -> Self {
        let s = &run.summary;
        RunRow {
            visibility_timeout_s: s.visibility_timeout_s,
            max_receives,
            workers,
            messages: s.messages,
            duplicate_effects: s.duplicate_effects,
            duplicate_rate: s.duplicate_rate,
            lost: s.lost,
            dlq: s.dlq,
            dlq_with_effect: s.dlq_with_effect,
            handler_p99_ms: s.handler_latency_ms.p99,
            p99_over_visibility: s.p99_over_visibility,
            recovery_time_s: run.recovery.time_s,
            recovery_time_source: run.recovery.source.as_str(),
            worker_busy_fraction: run.busy_fraction(),
            max_oldest_age_s: s.max_oldest_age_s,
            verdict: s.verdict.to_string(),
        }
    }
}

/// One lease of the sizing chart.
#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    pub visibility_timeout_s: f64,
    /// Observed in a sim run of the profile with this lease.
    pub duplicate_rate: f64,
    /// Predicted from the latency histogram (`null`: unbounded).
    pub predicted_duplicate_rate: Option<f64>,
    pub recovery_time_s: f64,
    pub recovery_time_source: &'static str,
}
