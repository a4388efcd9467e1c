//! `budgets` resolved: the limits a run passes or fails against.

use std::time::Duration;

/// Budgets, all optional. A run passes when every budget that is set holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Budgets {
    pub duplicate_rate: Option<f64>,
    pub duplicate_effects: Option<u64>,
    pub lost: Option<u64>,
    pub late: Option<LateBudget>,
    pub dlq: Option<u64>,
    pub dlq_with_effect: Option<u64>,
    pub p99_over_visibility: Option<f64>,
    pub p999_handler_latency: Option<Duration>,
    pub max_oldest_age: Option<Duration>,
    pub worker_busy_fraction: Option<f64>,
    /// Deliveries made while an earlier handler of the same message still ran.
    pub overlapping_executions: Option<u64>,
    pub rejected: Option<u64>,
    /// Orders an HTTP ingress accepted (2xx) that never reached the queue.
    pub ingress_lost: Option<u64>,
    /// Messages still in the main queue when the run stopped (a profile gets 0 unless it sets
    /// another limit).
    pub unfinished: Option<u64>,
    /// When a first effect counts as late (`budgets.late.after`, default 5m), even without a
    /// `late` budget: `summary.late` always uses it.
    pub late_after: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LateBudget {
    pub after: Duration,
    pub max: u64,
}

pub const DEFAULT_LATE_AFTER: Duration = Duration::from_secs(300);
