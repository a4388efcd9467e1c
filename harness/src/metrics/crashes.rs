//! Every worker crash of a run, named: which worker, when, and how it ended (exit status,
//! signal, or the built-in target's own crash). `worker_crashes` counts exactly these, and
//! timeseries.csv's `worker_crashes` column counts the same events over time.

use serde::{Deserialize, Serialize};

use super::seconds;
use crate::record::{EventKind, Nanos, RunRecord, WorkerId};

/// One crash, as summary.json lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crash {
    pub worker: WorkerId,
    /// When it happened, seconds since the start of the run (profile time).
    pub at_s: f64,
    /// How the worker ended: `exit status 1`, `signal 11 (SIGSEGV)`, `the target crashed`, ...
    pub exit: String,
}

/// The run's crashes, in time order.
pub fn crashes(record: &RunRecord) -> Vec<Crash> {
    record
        .events
        .iter()
        .filter_map(|e| crash(e.at, &e.kind))
        .collect()
}

/// The crash an event records, if it records one.
#[inline]
pub fn crash(at: Nanos, kind: &EventKind) -> Option<Crash> {
    match *kind {
        EventKind::WorkerCrashed { worker, exit } => Some(Crash {
            worker,
            at_s: seconds(at),
            exit: exit.to_string(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Event, WorkerExit};

    #[test]
    fn each_crash_is_named() {
        let ev = |at, worker, exit| Event {
            at,
            kind: EventKind::WorkerCrashed { worker, exit },
        };
        let r = RunRecord {
            events: vec![
                ev(1_500_000, 2, WorkerExit::Status(0)),
                Event {
                    at: 2_000_000,
                    kind: EventKind::WorkerKilled { worker: 1, rule: 0 },
                },
                ev(3_000_000_000, 1, WorkerExit::Signal(11)),
                ev(4_000_000_000, 3, WorkerExit::TargetCrashed),
            ],
            ..RunRecord::default()
        };
        // The kill is no crash: 3 crashes, times at microsecond resolution.
        let c = crashes(&r);
        let named: Vec<_> = c
            .iter()
            .map(|c| (c.worker, c.at_s, c.exit.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                (2, 0.0015, "exit status 0"),
                (1, 3.0, "signal 11 (SIGSEGV)"),
                (3, 4.0, "the target crashed"),
            ]
        );
    }
}
