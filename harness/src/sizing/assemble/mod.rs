//! The plan of `ackbench size` from its runs: one file per recommendation, each giving its
//! section with the one sentence of reasoning behind it.

mod alert_section;
pub mod autoscale_section;
mod duplicates_section;
mod lease_section;
mod limit_section;
mod poll_section;
mod workers_section;

use std::time::Duration;

use hdrhistogram::Histogram;

use super::checks::{self, Check};
use super::duplicates::predicted_duplicate_rate;
use super::fleet::FleetSizing;
use super::lease::{outlive_chance, LeaseRule, LeaseSizing};
use super::partitions::size_partitions;
use super::plan::*;
use super::poll::PollSizing;
use super::settings::{Settings, SettingsView};
use super::simulate::Simulated;
use super::workers::WorkerSizing;
use crate::profile::Scenario;

/// What [`assemble`] reads.
pub struct Assembly<'a> {
    pub current: &'a Scenario,
    pub rule: &'a LeaseRule,
    pub utilisation: f64,
    pub source: LatencySource,
    pub hist: &'a Histogram<u64>,
    pub lease: LeaseSizing,
    /// The records per poll and the poll interval, on a kind that polls batches.
    pub poll: Option<PollSizing>,
    pub now: &'a Settings,
    pub after_settings: &'a Settings,
    pub before: &'a Simulated,
    pub after: &'a Simulated,
    pub healthy: &'a Simulated,
    pub probe_before: &'a Simulated,
    pub probe_after: &'a Simulated,
    pub normal: WorkerSizing,
    pub fault: WorkerSizing,
    pub rec_sets: Vec<String>,
    pub curve: Vec<(Duration, &'a Simulated)>,
    pub notes: Vec<String>,
    pub limit: u32,
    /// The autoscale rule's index in `chaos` and its settings sized, on an autoscaled profile.
    pub fleet: Option<(usize, &'a FleetSizing)>,
}

/// A number for sentences, to three decimals.
fn f3(x: f64) -> String {
    super::outcome::number((x * 1000.0).round() / 1000.0)
}

/// A measured duration for sentences: `40.03 s`, `950 ms`.
fn ms_text(d: Duration) -> String {
    super::markdown::human(d.as_secs_f64())
}

/// The plan, with one sentence of reasoning per recommendation.
pub fn assemble(mut a: Assembly) -> Plan {
    let mut notes = std::mem::take(&mut a.notes);
    let lease = lease_section::build(&a, &mut notes);
    let poll = poll_section::build(&a);
    let duplicates = duplicates_section::build(&a);
    let workers = workers_section::build(&a);
    let partitions =
        size_partitions(a.now.partitions, a.now.workers, workers.recommended).map(|sizing| {
            PartitionsSection {
                reason: sizing.reason(),
                sizing,
            }
        });
    let autoscale = autoscale_section::build(&a, &mut notes);
    let alert = alert_section::build(&a);
    let delivery_limit = limit_section::build(&a);
    let checks: Vec<CheckRow> = checks::all(a.now)
        .into_iter()
        .zip(checks::all(a.after_settings))
        .map(|(n, r): (Check, Check)| CheckRow::pair(n, r))
        .collect();
    let curve = a
        .curve
        .iter()
        .map(|(l, run)| CurvePoint {
            visibility_timeout_s: l.as_secs_f64(),
            duplicate_rate: run.summary.duplicate_rate,
            predicted_duplicate_rate: predicted_duplicate_rate(
                outlive_chance(a.hist, *l),
                a.now.limit,
            ),
            recovery_time_s: run.recovery.time_s,
            recovery_time_source: run.recovery.source.as_str(),
        })
        .collect();
    let (now, rec) = (a.now, a.after_settings);
    Plan {
        profile: a.current.name.clone(),
        latency_source: a.source,
        rules: Rules {
            target_risk: a.rule.target_risk,
            margin: a.rule.margin,
            utilisation: a.utilisation,
            max_lease_s: a.rule.max_lease.as_secs_f64(),
        },
        current: SettingsView::from(now),
        recommended: SettingsView::from(rec),
        set: a.rec_sets,
        lease,
        poll,
        duplicates,
        workers,
        partitions,
        autoscale,
        alert,
        delivery_limit,
        checks,
        verification: Verification {
            before: RunRow::of(a.before, now.limit, now.workers),
            after: RunRow::of(a.after, rec.limit, rec.workers),
        },
        lease_curve: curve,
        notes,
    }
}
