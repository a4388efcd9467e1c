//! The metrics a sweep reports per point: any number of the run's summary (summary.json's
//! fields, nested ones dotted: `end_to_end_ms.p99`), plus a few derived from the run.

use serde::Serialize;
use serde_json::Value;

use super::error::SizingError;
use super::recovery::RecoverySource;
use super::simulate::Simulated;
use crate::metrics::analyse;
use crate::record::RunRecord;
use crate::report::{RunInfo, Summary};

/// What a sweep reports when no `--metric` is given.
pub const DEFAULT_METRICS: &[&str] = &[
    "duplicate_rate",
    "lost",
    "dlq",
    "time_to_done_ms.p99",
    "max_oldest_age_s",
    "worker_busy_fraction",
    "recovery_time_s",
];

/// Metrics that are not summary fields, computed from the run.
pub const DERIVED_METRICS: &[&str] = &[
    "worker_busy_fraction",
    "recovery_time_s",
    "recovery_deaths",
    "recovery_unrecovered",
];

/// What a point reports beside its summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    /// Worker busy time / (workers x run length).
    pub worker_busy_fraction: f64,
    /// How long a message held by a dead worker waits before it is delivered again (seconds).
    pub recovery_time_s: f64,
    /// `kills` (measured) or `lease` (no death in the run: the worst case is the lease).
    pub recovery_time_source: RecoverySource,
    pub recovery_deaths: u64,
    pub recovery_unrecovered: u64,
}

impl Derived {
    pub fn of(run: &Simulated) -> Self {
        Derived {
            worker_busy_fraction: run.busy_fraction(),
            recovery_time_s: run.recovery.time_s,
            recovery_time_source: run.recovery.source,
            recovery_deaths: run.recovery.deaths,
            recovery_unrecovered: run.recovery.unrecovered,
        }
    }

    fn get(&self, name: &str) -> Option<f64> {
        match name {
            "worker_busy_fraction" => Some(self.worker_busy_fraction),
            "recovery_time_s" => Some(self.recovery_time_s),
            "recovery_deaths" => Some(self.recovery_deaths as f64),
            "recovery_unrecovered" => Some(self.recovery_unrecovered as f64),
            _ => None,
        }
    }
}

/// The value of metric `name` for a point: a derived metric, or a number of the summary.
pub fn value(name: &str, summary: &Value, derived: &Derived) -> Option<f64> {
    derived.get(name).or_else(|| {
        name.split('.')
            .try_fold(summary, |v, key| v.get(key))
            .and_then(Value::as_f64)
    })
}

/// Every metric name a sweep knows: the summary's numbers (dotted), then the derived ones.
pub fn known() -> Vec<String> {
    let info = RunInfo {
        profile: String::new(),
        mode: String::new(),
        seed: 0,
        wall_s: 0.0,
    };
    let empty = Summary::new(&info, &analyse(&RunRecord::default(), 0), Vec::new());
    let mut names = Vec::new();
    if let Ok(v) = serde_json::to_value(&empty) {
        numeric_leaves(&v, "", &mut names);
    }
    names.extend(DERIVED_METRICS.iter().map(|s| s.to_string()));
    names
}

fn numeric_leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Number(_) => out.push(prefix.to_string()),
        Value::Object(map) => {
            for (k, child) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                numeric_leaves(child, &name, out);
            }
        }
        _ => {}
    }
}

/// The metrics a sweep reports: `requested` when given (each must be known), else the defaults.
pub fn choose(requested: &[String]) -> Result<Vec<String>, SizingError> {
    if requested.is_empty() {
        return Ok(DEFAULT_METRICS.iter().map(|s| s.to_string()).collect());
    }
    let known = known();
    let mut out: Vec<String> = Vec::new();
    for name in requested {
        if !known.contains(name) {
            return Err(SizingError::UnknownMetric {
                name: name.clone(),
                choices: known.join(", "),
            });
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_numbers_and_derived_metrics_are_known() {
        let k = known();
        for name in DEFAULT_METRICS {
            assert!(k.iter().any(|n| n == name), "{name} in {k:?}");
        }
        assert!(k.iter().any(|n| n == "handler_latency_ms.p999"));
        assert!(!k
            .iter()
            .any(|n| n == "profile" || n == "verdict" || n.starts_with("budgets")));
    }

    #[test]
    fn an_unknown_metric_lists_the_choices() {
        let err = choose(&["duplicates".into()]).err().map(|e| e.to_string());
        let err = err.unwrap_or_default();
        assert!(err.starts_with("--metric duplicates: not a metric of the summary; choose from: "));
        assert!(err.contains("duplicate_effects"));
        assert_eq!(choose(&[]).expect("defaults").len(), DEFAULT_METRICS.len());
        assert_eq!(
            choose(&["dlq".into(), "dlq".into()]).expect("known"),
            vec!["dlq".to_string()]
        );
    }

    #[test]
    fn values_are_looked_up_by_dotted_name() {
        let summary =
            serde_json::json!({"dlq": 108, "end_to_end_ms": {"p99": 12.5}, "profile": "x"});
        let d = Derived {
            worker_busy_fraction: 0.5,
            recovery_time_s: 30.0,
            recovery_time_source: RecoverySource::Lease,
            recovery_deaths: 0,
            recovery_unrecovered: 0,
        };
        assert_eq!(value("dlq", &summary, &d), Some(108.0));
        assert_eq!(value("end_to_end_ms.p99", &summary, &d), Some(12.5));
        assert_eq!(value("recovery_time_s", &summary, &d), Some(30.0));
        assert_eq!(value("profile", &summary, &d), None);
    }
}
