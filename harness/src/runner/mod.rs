//! Wires a run together: plan the workload, start the workers, run to the end, hand what it
//! recorded to a [`Sink`]: the whole [`RunRecord`], or (by default, [`Recorder`]) a stream of
//! its accounting when `run.record` says so.
//!
//! - [`sim`]: virtual time, one process, deterministic (a fixed order of events at one instant: ARCHITECTURE.md, "The sim executor").
//! - [`live`]: wall time, real sockets, the consumer as worker processes.

pub(crate) mod interrupt;
#[cfg(feature = "live")]
pub mod live;
pub(crate) mod recorder;
pub(crate) mod sim;

pub use interrupt::Interrupt;
pub use recorder::Recorder;

use crate::metrics::Recording;
use crate::profile::{Mode, Scenario};
use crate::record::{nanos, Nanos, Sink};

/// Why a run could not complete (exit code 3).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("live run: {0}")]
    Live(String),
    #[error("unknown target `{0}`")]
    UnknownTarget(String),
    /// The broker runs with a setting the profile contradicts (exit 2, like any bad input).
    #[error("{0}")]
    BrokerSettings(String),
}

/// Where a run is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    /// Virtual (sim) or wall (live) seconds since the start of the run.
    pub now_s: f64,
    pub published: u64,
    pub effects: u64,
    pub duplicate_effects: u64,
    pub dlq: u64,
}

/// Runs `scenario` to its end; what it left is kept as `run.record` says ([`Recorder`]).
pub fn run(scenario: &Scenario) -> Result<Recording, RunError> {
    run_with_progress(scenario, &mut |_| {}, &Interrupt::new())
}

/// Runs `scenario` to its end, reporting progress every few thousand steps, or until
/// `interrupt` is triggered: the record then holds what happened up to that moment and says why
/// it is incomplete ([`crate::record::RunRecord::incomplete`]).
pub fn run_with_progress(
    scenario: &Scenario,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<Recording, RunError> {
    let mut recorder = Recorder::new(scenario);
    run_into(scenario, &mut recorder, progress, interrupt)?;
    Ok(recorder
        .into_recording()
        .expect("a run that ends hands its record to its sink"))
}

/// Runs `scenario` to its end and hands its history to `sink` as it goes.
pub fn run_into(
    scenario: &Scenario,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<(), RunError> {
    match scenario.mode {
        Mode::Sim => sim::run(scenario, sink, progress, interrupt),
        #[cfg(feature = "live")]
        Mode::Live => {
            // A live run keeps its whole record: it cannot be folded.
            sink.start(crate::record::RunStart {
                planned: scenario.workload.count.unwrap_or(0),
                foldable: false,
            });
            let record = live::run(scenario, progress, interrupt)?;
            sink.finish(record, &|seq| format!("#{seq}"))
                .map_err(|e| RunError::Live(e.to_string()))
        }
        #[cfg(not(feature = "live"))]
        Mode::Live => Err(RunError::Live(
            "this ackbench was built without live mode (cargo feature `live`, left out by \
             --no-default-features): build it with the default features, as \
             `cargo run --release -- run PROFILE` does"
                .to_string(),
        )),
    }
}

/// How a provider phase is labelled in reports: what it changes.
pub fn phase_label(p: &crate::profile::Phase) -> String {
    let mut parts = Vec::new();
    if p.latency.is_some() {
        parts.push("latency".to_string());
    }
    if let Some(e) = &p.errors {
        let after = if e.after_effect { " after effect" } else { "" };
        parts.push(format!("errors {} x{}{after}", e.answer, e.rate));
    }
    if let Some(h) = &p.hang {
        parts.push(format!("hangs x{}", h.rate));
    }
    if let Some(keys) = &p.keys {
        parts.push(format!("keys {}", keys.join(" ")));
    }
    if let Some(a) = &p.attempts {
        let a: Vec<String> = a.iter().map(u32::to_string).collect();
        parts.push(format!("attempt {}", a.join(" ")));
    }
    if let Some(d) = p.delivery {
        parts.push(format!("delivery {d}"));
    }
    parts.join(", ")
}

/// A provider phase as the record keeps it: its window (to the end of the run, `run.duration +
/// run.drain`, when it has no `to`) and its label.
pub fn phase_record(
    p: &crate::profile::Phase,
    run: &crate::profile::RunSpec,
) -> (Nanos, Nanos, String) {
    let to = p.to.unwrap_or(run.duration + run.drain);
    (nanos(p.from), nanos(to), phase_label(p))
}

/// The ramp a run records for its capacity metric (`workload.arrival: ramp`), if it has one.
pub fn ramp_record(w: &crate::profile::WorkloadSpec) -> Option<crate::record::RampRecord> {
    match &w.arrival {
        crate::profile::Arrival::Ramp(r) => Some(crate::record::RampRecord {
            hold: r.hold_nanos(),
            rates: r.rates(),
        }),
        _ => None,
    }
}

impl crate::record::RunRecord {
    /// A record of a run of `s` with what the scenario says of it (the lease, the workers, the
    /// provider's phases, the chaos rules, the broker kind, the ramp) and nothing recorded yet:
    /// the sim and live runners each fill in what happened.
    pub fn described(s: &Scenario) -> crate::record::RunRecord {
        crate::record::RunRecord {
            lease: nanos(s.broker.lease),
            workers: s.consumer.workers,
            phases: (s.provider.phases.iter())
                .map(|p| phase_record(p, &s.run))
                .collect(),
            chaos: crate::chaos::describe(&s.chaos),
            broker_kind: crate::profile::kinds::KindName::new(s.broker.kind.name()),
            ramp: ramp_record(&s.workload),
            ..Default::default()
        }
    }
}
