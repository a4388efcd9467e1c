//! `run` and `mode` resolved: how long a run publishes and settles, and how it keeps its
//! history.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Sim,
    Live,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// How long the workload publishes.
    pub duration: Duration,
    /// The longest the run settles after `duration` (it stops earlier once nothing is left).
    pub drain: Duration,
    /// Interval of `timeseries.csv`; `None` picks one from the run's length.
    pub sample_every: Option<Duration>,
    /// Live mode: wall seconds per profile second (1.0 in sim mode, where it means nothing).
    pub time_scale: f64,
    /// Live mode: the most publishes the run's own producer has handed to the broker and not
    /// yet seen confirmed; at that many it waits for the oldest (1: each send waits for its
    /// confirmation). Sim runs publish instantly and do not read it.
    pub publish_window: u32,
    /// How a sim run keeps its history: set by `ackbench run --record`, not a profile key.
    pub record: Record,
}

/// How a sim run keeps its history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Record {
    /// Streams its accounting above 50 planned messages, keeps the full record up to that (the
    /// worker timeline is drawn from it), and always with a modelled producer.
    #[default]
    Auto,
    /// Every event, call and effect, as the batch analysis and `--trace` read them.
    Full,
    /// Metrics folded as the run goes; memory is what is in flight.
    Stream,
}
