//! Workers for an arrival rate (Little's law): on average `arrival rate x mean handler time`
//! workers are busy; at a target utilisation `u` the pool needs `busy / u` of them, and never
//! fewer than [`MIN_WORKERS`].

use std::time::Duration;

use serde::Serialize;

use crate::profile::WorkloadSpec;

/// The fewest workers recommended: with one, a single death stops all progress until the
/// restart.
pub const MIN_WORKERS: u32 = 2;

/// Workers for one phase of the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkerSizing {
    pub arrival_per_s: f64,
    pub mean_handler_s: f64,
    /// `arrival_per_s x mean_handler_s`: workers busy on average.
    pub busy_workers: f64,
    /// `ceil(busy / utilisation)`, at least [`MIN_WORKERS`].
    pub workers: u32,
}

/// Little's law at a target utilisation.
pub fn workers_for(arrival_per_s: f64, mean_handler_s: f64, utilisation: f64) -> WorkerSizing {
    let busy = (arrival_per_s * mean_handler_s).max(0.0);
    let need = (busy / utilisation.clamp(f64::MIN_POSITIVE, 1.0)).ceil();
    let workers = if need.is_finite() {
        (need.min(f64::from(u32::MAX)) as u32).max(MIN_WORKERS)
    } else {
        MIN_WORKERS
    };
    WorkerSizing {
        arrival_per_s,
        mean_handler_s,
        busy_workers: busy,
        workers,
    }
}

/// Messages per second while the workload publishes (`duration` is `run.duration`).
pub fn arrival_rate(workload: &WorkloadSpec, duration: Duration) -> f64 {
    workload.arrival_rate(duration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Arrival, Poison, RateProcess};

    fn workload(arrival: Arrival) -> WorkloadSpec {
        WorkloadSpec {
            arrival,
            count: None,
            poison: Poison::None,
            keys: None,
            ingress: None,
            producer: None,
            groups: None,
            message: None,
        }
    }

    #[test]
    fn littles_law_at_seventy_percent() {
        // One order every 50 s, 35.5 s each: 0.71 busy, / 0.7 = 1.01: 2 workers.
        let w = workers_for(0.02, 35.5, 0.7);
        assert!((w.busy_workers - 0.71).abs() < 1e-12);
        assert_eq!(w.workers, 2);
        // 20 messages/s of 1 s: 20 busy, / 0.7 = 28.6: 29 workers.
        assert_eq!(workers_for(20.0, 1.0, 0.7).workers, 29);
        // A healthy trickle still gets two.
        assert_eq!(workers_for(0.02, 0.26, 0.7).workers, MIN_WORKERS);
    }

    #[test]
    fn arrival_rates_of_each_process() {
        let d = Duration::from_secs(100);
        assert_eq!(
            arrival_rate(&workload(Arrival::Every(Duration::from_secs(50))), d),
            0.02
        );
        let rate = Arrival::Rate {
            rate_per_s: 2.0,
            process: RateProcess::Poisson,
        };
        assert_eq!(arrival_rate(&workload(rate), d), 2.0);
        let at = Arrival::At(vec![Duration::ZERO, Duration::from_secs(3)]);
        assert_eq!(arrival_rate(&workload(at), d), 0.02);
    }
}
