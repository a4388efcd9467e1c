//! A finished run, analysed: its summary, metrics and time series, computed side by side (the
//! time series and the accounting read the same record independently).

use crate::metrics::{self, Metrics, Sample};
use crate::profile::Budgets;
use crate::record::Nanos;

use super::summary::{summarise_with_metrics, RunInfo, Summary};

/// Everything the report folder and the console are drawn from.
pub struct Analysed {
    pub summary: Summary,
    pub metrics: Metrics,
    pub samples: Vec<Sample>,
    /// The time series' interval.
    pub sample_every: Nanos,
}

/// Analyses `record`: summary and metrics on this thread, the time series (every
/// `sample_every`, or a round interval picked from the run's length) on another.
pub fn analyse_run<'a>(
    info: &RunInfo,
    record: impl Into<metrics::View<'a>>,
    budgets: &Budgets,
    sample_every: Option<Nanos>,
) -> Analysed {
    let record = record.into();
    let every = sample_every.unwrap_or_else(|| metrics::default_interval(record.record));
    std::thread::scope(|s| {
        let samples = s.spawn(|| metrics::timeseries(record, every));
        let (summary, metrics) = summarise_with_metrics(info, record, budgets);
        Analysed {
            summary,
            metrics,
            samples: samples
                .join()
                .expect("sampling the time series does not panic"),
            sample_every: every,
        }
    })
}
