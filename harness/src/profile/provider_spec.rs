//! `provider` resolved: where a call's effect happens, its latency and its timed phases
//! (slowness, errors, hangs).

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectAt {
    /// The effect happens when the call arrives at the provider.
    Request,
    /// The effect happens when the provider answers.
    Response,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSpec {
    pub effect_at: EffectAt,
    /// Live mode: where a call's effect key is.
    pub key: super::key_source::KeySource,
    pub latency: LatencyDist,
    /// Phases, in profile order; the first phase selecting a call applies.
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LatencyDist {
    Fixed(Duration),
    Uniform {
        min: Duration,
        max: Duration,
    },
    LogNormal {
        median: Duration,
        p99: Duration,
    },
    /// The i-th published message (1-based seq i) takes `values[(i-1) % len]` on every delivery.
    PerMessage(Vec<Duration>),
    /// Weights are positive and finite; their sum is positive.
    Mix(Vec<(f64, LatencyDist)>),
}

/// `provider.phases[]`: what the provider does to the calls a phase selects. A call is selected
/// by the phase's time window and by every selector the phase has; the first phase selecting a
/// call applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phase {
    /// The window's start (0s when the profile gives selectors and no `from`).
    pub from: Duration,
    /// The window's end, exclusive; `None`: the end of the run.
    pub to: Option<Duration>,
    /// Only calls whose effect key is one of these.
    pub keys: Option<Vec<String>>,
    /// Only the n-th call the provider receives for its key (1-based, every call of the run
    /// for that key counted), for each n listed.
    pub attempts: Option<Vec<u32>>,
    /// Only calls made within this delivery (receive count) of their message.
    pub delivery: Option<u32>,
    /// Replaces the provider's latency during the phase.
    pub latency: Option<LatencyDist>,
    /// Adds errors during the phase.
    pub errors: Option<ErrorSpec>,
    /// Calls that never get an answer; only the caller's own client timeout
    /// (`consumer.options.http_timeout`) ends its wait.
    pub hang: Option<HangSpec>,
}

impl Phase {
    /// Whether the phase selects calls by more than time.
    pub fn has_selectors(&self) -> bool {
        self.keys.is_some() || self.attempts.is_some() || self.delivery.is_some()
    }
}

/// What an injected error answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorAnswer {
    /// An HTTP error status (400..=599).
    Status(u16),
    /// No answer: the provider closes the call's connection (the caller sees a connection
    /// error).
    Reset,
}

impl std::fmt::Display for ErrorAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorAnswer::Status(s) => write!(f, "{s}"),
            ErrorAnswer::Reset => f.write_str("reset"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ErrorSpec {
    pub answer: ErrorAnswer,
    /// Probability per call, 0.0 ..= 1.0.
    pub rate: f64,
    /// The provider does the call's work (its effect, at `effect_at`) before the error; `false`:
    /// the error is instead of the work.
    pub after_effect: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HangSpec {
    /// Probability per call, 0.0 ..= 1.0.
    pub rate: f64,
    /// The provider does the call's work (its effect, at `effect_at`; with `response`, when
    /// the answer would have left) and then never answers; `false`: it never does the work.
    /// Defaults to `true` with `effect_at: request` and `false` with `response`: as an
    /// accepted call whose answer never comes.
    pub after_effect: bool,
}
