//! run.json: what the report folder needs, beside summary.json and timeseries.csv, to render
//! every output again without rerunning: the profile as run, the command and seed that reproduce
//! it, the lease and the provider's phases, and the budgets as evaluated.

use serde::{Deserialize, Serialize};

use super::outputs::RunOutputs;
use crate::metrics::seconds;
use crate::profile::{kinds, Mode};
use crate::verdict::{BudgetResult, Verdict};

/// Version of the run.json layout.
pub const RUN_SCHEMA_VERSION: u32 = 1;

/// The run's description, as run.json holds it. Times in seconds (microsecond resolution).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunJson {
    pub schema_version: u32,
    /// The profile's name.
    pub profile: String,
    pub description: String,
    /// `sim` or `live`.
    pub mode: String,
    pub seed: u64,
    /// The command that reproduces the run exactly.
    pub command: String,
    /// The profile after `--set` overrides, as YAML.
    pub profile_as_run: String,
    /// The consumer under test.
    pub target: String,
    pub workers: u32,
    /// The lease each delivery gets.
    pub visibility_timeout_s: f64,
    /// Deliveries before the DLQ (0 = no limit).
    pub max_receives: u32,
    /// `reject`, `delete`, `ignore` or `sqs`.
    pub stale_ack: String,
    /// The broker kind (`sqs`, `rabbitmq`, `nats`, `redis-streams`, `kafka-share`); left out
    /// for `sqs`, as in folders written before there were kinds.
    #[serde(default, skip_serializing_if = "kinds::KindName::is_default")]
    pub broker_kind: kinds::KindName,
    /// When publishing stopped.
    pub publish_end_s: f64,
    /// When the run stopped.
    pub end_s: f64,
    /// Interval of timeseries.csv.
    pub sample_every_s: f64,
    /// A first effect later than this after its publish is late.
    pub late_after_s: f64,
    /// The provider's timed phases, as run.
    pub phases: Vec<PhaseJson>,
    pub verdict: Verdict,
    /// The budgets as evaluated, in the order they are reported.
    pub budgets: Vec<BudgetResult>,
    /// Whether deliveries.csv (the worker timeline) was recorded: only for small runs.
    pub deliveries_recorded: bool,
}

/// One provider phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseJson {
    pub from_s: f64,
    pub to_s: f64,
    /// What the phase changes (`latency`, `errors 503 x0.2`, ...).
    pub label: String,
}

impl RunJson {
    /// The lease in the broker kind's own words (visibility timeout, consumer timeout, AckWait,
    /// min idle).
    pub fn lease_words(&self) -> &'static str {
        self.broker_kind.lease_words()
    }

    /// What the kind calls its messages, its settling and a stale ack.
    pub fn words(&self) -> &'static kinds::KindWords {
        self.broker_kind.words()
    }

    /// run.json of a finished run.
    pub fn of(out: &RunOutputs<'_>, deliveries_recorded: bool) -> Self {
        let s = out.scenario;
        RunJson {
            schema_version: RUN_SCHEMA_VERSION,
            profile: s.name.clone(),
            description: s.description.clone(),
            mode: match s.mode {
                Mode::Sim => "sim",
                Mode::Live => "live",
            }
            .to_string(),
            seed: s.seed,
            command: out.command.to_string(),
            profile_as_run: out.profile_text.to_string(),
            target: s.consumer.target.clone(),
            workers: out.record.workers,
            visibility_timeout_s: seconds(out.record.lease),
            max_receives: s.broker.max_deliveries,
            stale_ack: kinds::sqs::stale_ack_name(s.broker.stale_ack).to_string(),
            broker_kind: kinds::KindName::new(s.broker.kind.name()),
            publish_end_s: seconds(out.record.publish_end),
            end_s: seconds(out.record.end),
            sample_every_s: seconds(out.sample_every),
            late_after_s: seconds(out.metrics.late_after),
            phases: out
                .record
                .phases
                .iter()
                .map(|(from, to, label)| PhaseJson {
                    from_s: seconds(*from),
                    to_s: seconds(*to),
                    label: label.clone(),
                })
                .collect(),
            verdict: out.summary.verdict,
            budgets: out.summary.budgets.clone(),
            deliveries_recorded,
        }
    }

    /// run.json's text: pretty-printed, with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).unwrap_or_default();
        json.push('\n');
        json
    }

    /// Reads run.json's text back.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}
