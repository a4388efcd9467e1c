//! What a finished run hands to the report: the scenario as run, its record, metrics, summary and
//! time series, and the words that reproduce it.

use crate::metrics::{Metrics, Recording, Sample};
use crate::profile::Scenario;
use crate::record::Nanos;

use super::Summary;

/// Everything [`super::write_all`] needs from one run.
#[derive(Debug, Clone, Copy)]
pub struct RunOutputs<'a> {
    /// The scenario as run (after `--set` and `--seed`).
    pub scenario: &'a Scenario,
    /// Everything the run recorded.
    pub record: &'a Recording,
    /// The record analysed ([`super::summarise_with_metrics`]); its raw latency histograms
    /// become the `.hlog` files.
    pub metrics: &'a Metrics,
    pub summary: &'a Summary,
    /// The time series ([`crate::metrics::timeseries`]) sampled every `sample_every`.
    pub samples: &'a [Sample],
    pub sample_every: Nanos,
    /// The profile after `--set` overrides, as YAML ([`crate::profile::effective_yaml`]).
    pub profile_text: &'a str,
    /// The command that reproduces the run, seed included.
    pub command: &'a str,
}
