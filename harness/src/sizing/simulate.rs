//! One sim run of a scenario, analysed: the summary (summary.json's object), the metrics behind
//! it, and the recovery time.

use std::time::Instant;

use crate::metrics::{analyse, Metrics};
use crate::profile::{Mode, Scenario};
use crate::record::{nanos, RunRecord};
use crate::report::{RunInfo, Summary};
use crate::runner::{self, RunError};
use crate::verdict::evaluate;

use super::recovery::{recovery, Recovery, RecoverySource};

/// A finished, analysed sim run.
#[derive(Debug, Clone)]
pub struct Simulated {
    pub record: RunRecord,
    pub metrics: Metrics,
    pub summary: Summary,
    pub recovery: Recovery,
}

impl Simulated {
    /// The share of the workers' time spent handling.
    pub fn busy_fraction(&self) -> f64 {
        self.metrics.worker_busy_fraction()
    }
}

/// Runs `scenario` in sim mode and analyses it (a `mode: live` profile is run in sim mode too:
/// sweeps and sizing are simulations).
pub fn simulate(scenario: &Scenario) -> Result<Simulated, RunError> {
    // Without a measured death, the worst wait of a dead consumer's messages: the lease, none
    // where its connection closing requeues them, the session timeout where that moves them.
    let on_death = match scenario.broker.kind.descriptor().lease.role {
        crate::profile::LeaseRole::Lease => None,
        crate::profile::LeaseRole::StuckConsumerGuard => Some((0.0, RecoverySource::Requeue)),
        crate::profile::LeaseRole::PollInterval => Some((
            scenario
                .broker
                .session_timeout()
                .unwrap_or_default()
                .as_secs_f64(),
            RecoverySource::Session,
        )),
    };
    let mut s = scenario.clone();
    s.mode = Mode::Sim;
    // The sizing rules read the history itself (deaths to next deliveries, every call).
    s.run.record = crate::profile::Record::Full;
    let started = Instant::now();
    let record = runner::run(&s)?.record;
    let wall_s = started.elapsed().as_secs_f64();
    let metrics = analyse(&record, nanos(s.budgets.late_after));
    let info = RunInfo {
        profile: s.name.clone(),
        mode: "sim".into(),
        seed: s.seed,
        wall_s,
    };
    let summary = Summary::new(&info, &metrics, evaluate(&s.budgets, &metrics));
    let mut recovery = recovery(&record);
    if let Some((time_s, source)) = on_death.filter(|_| recovery.source == RecoverySource::Lease) {
        recovery.time_s = time_s;
        recovery.source = source;
    }
    Ok(Simulated {
        record,
        metrics,
        summary,
        recovery,
    })
}
