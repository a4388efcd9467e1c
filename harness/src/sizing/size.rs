//! `ackbench size`: recommend a visibility timeout (or a heartbeat), workers, a delivery limit
//! and an alert threshold for a profile, check the settings against each other, and verify the
//! recommendation by simulation.
//!
//! Runs, in two parallel batches: the profile as it is (the "before"; its handler histogram is
//! the latency unless `--latency-from` gives one), a healthy baseline (no provider phases, chaos
//! or poison), and a recovery probe ([`super::probe`]); then the profile with the recommended
//! settings (the "after"), its probe, and the profile under a range of leases (the chart).
//! Writes sizing.md, sizing.json and sizing.png/.svg to `reports/<profile name>-sizing/`.
//!
//! Exit codes: 0 the sizing was written; 2 bad usage, an invalid profile or latency file;
//! 3 a run could not complete or a file could not be written.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hdrhistogram::Histogram;

use super::assemble::{assemble, Assembly};
use super::chart::{self, DualChart, Series};
use super::error::{needs_sim, reason, SizingError};
use super::fleet::{size_fleet, FleetInputs, FleetSizing};
use super::hlog;
use super::lease::{size_lease, LeaseAdvice, LeaseRule, LeaseSizing, SQS_MAX_LEASE};
use super::limit::{recommended_limit, recovery_path};
use super::markdown;
use super::parallel;
use super::plan::*;
use super::poll::{size_poll, PollSizing};
use super::probe;
use super::readable;
use super::request::SizeRequest;
use super::sets::recommendation_sets;
use super::settings::{worst_call, Settings};
use super::simulate::{simulate, Simulated};
use super::workers::{arrival_rate, workers_for, WorkerSizing};
use crate::profile::{self, format_duration, parse_duration, AutoscaleRule, Poison, Scenario};
use crate::report::folder;

/// The validated flags.
struct Inputs {
    rule: LeaseRule,
    utilisation: f64,
    dedup_window: Option<Duration>,
}

fn inputs(args: &SizeRequest) -> Result<Inputs, SizingError> {
    let bad = |flag: &'static str, value: String, message: &str| SizingError::BadFlag {
        flag,
        value,
        message: message.into(),
    };
    let risk = args.target_risk;
    if !(risk > 0.0 && risk < 1.0) {
        return Err(bad(
            "target-risk",
            risk.to_string(),
            "must be between 0 and 1, e.g. 1e-4",
        ));
    }
    if !(args.margin.is_finite() && args.margin >= 1.0) {
        return Err(bad(
            "margin",
            args.margin.to_string(),
            "must be at least 1, e.g. 1.25",
        ));
    }
    let u = args.utilisation;
    if !(u > 0.0 && u <= 1.0) {
        return Err(bad(
            "utilisation",
            u.to_string(),
            "must be more than 0 and at most 1, e.g. 0.7",
        ));
    }
    let max_lease = parse_duration(&args.max_lease)
        .map_err(|m| bad("max-lease", args.max_lease.clone(), &m))?;
    if max_lease.is_zero() || max_lease > SQS_MAX_LEASE {
        return Err(bad(
            "max-lease",
            args.max_lease.clone(),
            "must be more than 0s and at most 12h (SQS's maximum)",
        ));
    }
    let dedup_window = args
        .dedup_window
        .as_ref()
        .map(|w| parse_duration(w).map_err(|m| bad("dedup-window", w.clone(), &m)))
        .transpose()?;
    Ok(Inputs {
        rule: LeaseRule {
            target_risk: risk,
            margin: args.margin,
            max_lease,
        },
        utilisation: u,
        dedup_window,
    })
}

/// The profile on a healthy day: no provider phases, no chaos, no poison.
fn healthy(s: &Scenario) -> Scenario {
    let mut h = s.clone();
    h.provider.phases.clear();
    h.chaos.clear();
    h.workload.poison = Poison::None;
    h.redrive = None;
    h
}

/// Sizes the profile `args` names, writes sizing.md, sizing.json and the chart, and prints
/// the plan.
pub fn size(args: &SizeRequest) -> Result<(), SizingError> {
    let inputs = inputs(args)?;
    let file = &args.profile;
    let sets = &args.sets;
    let current = profile::load(file, sets)?;
    needs_sim("size", file, &current)?;
    let recorded = args.latency_from.as_deref().map(hlog::read).transpose()?;
    // The folder is checked (and created) before the runs, not after them.
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(format!("{}-sizing", current.name)));
    folder::prepare(&out, "sizing", args.force)?;
    let jobs = parallel::default_jobs();

    // Batch 1: the profile as it is, a healthy day, the recovery probe.
    let batch = [
        current.clone(),
        healthy(&current),
        probe::scenario(&current),
    ];
    let mut runs = parallel::map(&batch, jobs, simulate).into_iter();
    let mut next = || {
        runs.next()
            .ok_or_else(|| SizingError::NoLatency("a run is missing".into()))
    };
    let (before, healthy_run, probe_before) = (next()??, next()??, next()??);

    let (hist, source) = match (&recorded, &args.latency_from) {
        (Some(h), Some(path)) => (h.clone(), latency_source(h, "file", Some(path))),
        _ => {
            let h = before.metrics.latencies.handler.histogram.clone();
            let src = latency_source(&h, "simulation", None);
            (h, src)
        }
    };
    let now = Settings::of(&current, worst_call(&before.record), inputs.dedup_window);
    let mut lease = size_lease(
        &hist,
        &inputs.rule,
        now.target == "heartbeat" && now.can_extend(),
        now.lease,
    )
    .ok_or_else(|| {
        SizingError::NoLatency(format!(
            "{}: no handler finished in the run, so there is no latency to size the lease from: \
             give one with --latency-from",
            file.display()
        ))
    })?;

    // A kind that polls batches: the poll interval covers a whole batch (the poll rule).
    let poll = now
        .batch
        .and_then(|records| size_poll(&hist, &inputs.rule, now.lease, records));
    if let Some(p) = &poll {
        lease.advice = LeaseAdvice::Lease {
            lease: p.interval(),
        };
    }

    let rec = recommend(
        file,
        sets,
        &current,
        &inputs,
        &now,
        (&lease, poll.as_ref()),
        &healthy_run,
        &hist,
    )?;
    let new_lease = lease.advice.lease();

    let Verified {
        after,
        probe_after,
        curve,
    } = verify(file, sets, &now, new_lease, &rec.scenario, jobs)?;

    let after_settings = Settings::of(
        &rec.scenario,
        worst_call(&after.record),
        inputs.dedup_window,
    );
    let plan = assemble(Assembly {
        current: &current,
        rule: &inputs.rule,
        utilisation: inputs.utilisation,
        source,
        hist: &hist,
        lease,
        poll,
        now: &now,
        after_settings: &after_settings,
        before: &before,
        after: &after,
        healthy: &healthy_run,
        probe_before: &probe_before,
        probe_after: &probe_after,
        normal: rec.normal,
        fault: rec.fault,
        rec_sets: rec.sets,
        curve: curve.iter().map(|(l, run)| (*l, run)).collect(),
        notes: rec.notes,
        limit: rec.limit,
        fleet: rec.fleet.as_ref().map(|(i, f)| (*i, f)),
    });

    let md = markdown::render(&plan);
    let written = write(&out, &plan, &md)?;
    crate::stdout::out!("{md}");
    crate::stdout::outln!();
    crate::stdout::outln!("sizing: {}", out.display());
    for f in written {
        crate::stdout::outln!("  {}", f.display());
    }
    Ok(())
}

/// The settings recommended, before they are verified.
struct Recommendation {
    /// The profile with them.
    scenario: Scenario,
    /// They, as `--set` overrides.
    sets: Vec<String>,
    limit: u32,
    normal: WorkerSizing,
    fault: WorkerSizing,
    notes: Vec<String>,
    /// The autoscale rule's index and its settings sized, on an autoscaled profile.
    fleet: Option<(usize, FleetSizing)>,
}

/// The delivery limit and the workers that go with the sized `lease`: the workers for a healthy
/// day and for the fault's handler time with the recommended lease and limit (a lease that
/// handlers outlive multiplies the work by the redeliveries; the recommendation removes them),
/// which one more sim run of the profile measures. On an autoscaled profile the workers are the
/// autoscaler's `max` ([`size_fleet`]) rather than a fixed fleet.
#[allow(clippy::too_many_arguments)]
fn recommend(
    file: &Path,
    sets: &[String],
    current: &Scenario,
    inputs: &Inputs,
    now: &Settings,
    (lease, poll): (&LeaseSizing, Option<&PollSizing>),
    healthy_run: &Simulated,
    hist: &Histogram<u64>,
) -> Result<Recommendation, SizingError> {
    let new_lease = lease.advice.lease();
    let path = recovery_path(
        &now.target,
        new_lease,
        now.claim_window,
        now.kind.words.sizing.lease,
    );
    // A kind with no delivery limit (Kafka) has none to recommend.
    let limit = match now.kind.limit {
        Some(_) => recommended_limit(now.limit, &path),
        None => 0,
    };
    let rate = arrival_rate(&current.workload, current.run.duration);
    let workers_at = |run: &Simulated| {
        let mean = mean_s(&run.metrics.latencies.handler.histogram);
        workers_for(rate, mean, inputs.utilisation)
    };
    let normal = workers_at(healthy_run);
    let load_with = |rec_sets: &[String]| {
        let mut all = sets.to_vec();
        all.extend(rec_sets.iter().cloned());
        profile::load(file, &all).map_err(|e| SizingError::BadPoint {
            point: format!("recommended settings ({})", rec_sets.join(", ")),
            reason: reason(&e),
        })
    };
    let leased_sets = recommendation_sets(
        now,
        &lease.advice,
        poll,
        limit,
        now.workers,
        &mut Vec::new(),
    );
    let fault = workers_at(&simulate(&load_with(&leased_sets)?)?);
    let workers = normal.workers.max(fault.workers);
    let fleet = (current.chaos.iter().enumerate())
        .find_map(|(i, r)| Some((i, r.get::<AutoscaleRule>()?)))
        .map(|(i, rule)| {
            let inputs = FleetInputs {
                rule,
                p99: Duration::from_micros(hist.value_at_quantile(0.99)),
                margin: inputs.rule.margin,
                mean_handler: Duration::from_secs_f64(fault.mean_handler_s.max(0.0)),
                peak_workers: workers,
                messages: current.workload.count,
            };
            (i, size_fleet(&inputs))
        });
    let mut notes = Vec::new();
    // An autoscaled fleet's size is the autoscaler's: the workers it starts with stay.
    let fixed = if fleet.is_some() {
        now.workers
    } else {
        workers
    };
    let mut rec_sets = recommendation_sets(now, &lease.advice, poll, limit, fixed, &mut notes);
    if let Some((i, f)) = &fleet {
        rec_sets.extend(f.sets(*i));
    }
    Ok(Recommendation {
        scenario: load_with(&rec_sets)?,
        sets: rec_sets,
        limit,
        normal,
        fault,
        notes,
        fleet,
    })
}

/// The runs that check a recommendation.
struct Verified {
    /// The profile with the recommendation.
    after: Simulated,
    /// Its recovery probe.
    probe_after: Simulated,
    /// The profile under each lease of the chart.
    curve: Vec<(Duration, Simulated)>,
}

/// Batch 2: the profile with the recommendation, its recovery probe, and the profile under a
/// range of leases (the chart; a lease the profile refuses is left out).
fn verify(
    file: &Path,
    sets: &[String],
    now: &Settings,
    new_lease: Duration,
    recommended: &Scenario,
    jobs: usize,
) -> Result<Verified, SizingError> {
    let mut batch = vec![recommended.clone(), probe::scenario(recommended)];
    let mut leases = Vec::new();
    for l in curve_leases(now.lease, new_lease) {
        let mut with = sets.to_vec();
        with.push(format!("broker.{}={}", now.lease_key, format_duration(l)));
        if let Ok(s) = profile::load(file, &with) {
            batch.push(s);
            leases.push(l);
        }
    }
    let mut runs = parallel::map(&batch, jobs, simulate).into_iter();
    let mut next = || {
        runs.next()
            .ok_or_else(|| SizingError::NoLatency("a run is missing".into()))
    };
    let (after, probe_after) = (next()??, next()??);
    let curve = runs.collect::<Result<Vec<Simulated>, _>>()?;
    Ok(Verified {
        after,
        probe_after,
        curve: leases.into_iter().zip(curve).collect(),
    })
}

/// The mean of a latency histogram (µs) in seconds.
fn mean_s(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.mean() / 1e6
    }
}

fn latency_source(h: &Histogram<u64>, kind: &'static str, path: Option<&Path>) -> LatencySource {
    let ms = |us: u64| us as f64 / 1000.0;
    let q = |x: f64| {
        if h.is_empty() {
            0.0
        } else {
            ms(h.value_at_quantile(x))
        }
    };
    LatencySource {
        kind,
        path: path.map(|p| p.display().to_string()),
        handlers: h.len(),
        mean_ms: mean_s(h) * 1000.0,
        p50_ms: q(0.5),
        p99_ms: q(0.99),
        p999_ms: q(0.999),
        max_ms: if h.is_empty() { 0.0 } else { ms(h.max()) },
    }
}

/// The leases of the sizing chart: readable values from a quarter of the smaller to twice the
/// larger of the current and recommended leases, with both of them.
fn curve_leases(current: Duration, recommended: Duration) -> Vec<Duration> {
    let lo = (current.min(recommended) / 4).max(Duration::from_secs(1));
    let hi = (current.max(recommended) * 2).min(SQS_MAX_LEASE);
    let mut leases = readable::between(lo, hi);
    while leases.len() > 12 {
        leases = leases.into_iter().step_by(2).collect();
    }
    leases.extend([current, recommended]);
    leases.sort();
    leases.dedup();
    leases
}

/// Writes sizing.md, sizing.json and the chart; returns their paths.
fn write(out: &Path, plan: &Plan, md: &str) -> Result<Vec<PathBuf>, SizingError> {
    let fail = |path: &Path, message: String| SizingError::Write {
        path: path.to_path_buf(),
        message,
    };
    fs::create_dir_all(out).map_err(|e| fail(out, e.to_string()))?;
    let mut json = serde_json::to_string_pretty(plan).map_err(|e| fail(out, e.to_string()))?;
    json.push('\n');
    let mut written = Vec::new();
    let mut files = vec![("sizing.md", md.to_string()), ("sizing.json", json)];
    if let Some(m) = plan.autoscale.as_ref().and_then(|a| a.manifests.as_ref()) {
        let [object, patch] = super::assemble::autoscale_section::FILES;
        files.push((object, m.scaled_object.clone()));
        files.push((patch, m.deployment_patch.clone()));
    }
    for (name, text) in files {
        let path = out.join(name);
        crate::report::no_follow::write(&path, text)
            .map_err(|e| SizingError::cannot_write(&path, e))?;
        written.push(path);
    }
    SizingError::refuse_chart_links(out, "sizing")?;
    written.extend(
        chart::write_dual_chart(out, "sizing", &lease_chart(plan)).map_err(|e| fail(out, e))?,
    );
    folder::record(out, &written)
        .map_err(|e| SizingError::cannot_write(&out.join(folder::MARKER), e))?;
    Ok(written)
}

/// Duplicate rate (observed and predicted) and recovery time against the lease, the
/// recommended lease marked.
pub fn lease_chart(plan: &Plan) -> DualChart {
    let c = &plan.lease_curve;
    let observed = c
        .iter()
        .map(|p| (p.visibility_timeout_s, p.duplicate_rate))
        .collect();
    let predicted = c
        .iter()
        .filter_map(|p| {
            p.predicted_duplicate_rate
                .map(|y| (p.visibility_timeout_s, y))
        })
        .collect();
    let recovery = c
        .iter()
        .map(|p| (p.visibility_timeout_s, p.recovery_time_s))
        .collect();
    let lease = plan.recommended.visibility_timeout_s;
    DualChart {
        title: format!(
            "{}: duplicates and recovery time against the lease",
            plan.profile
        ),
        x_label: "visibility timeout (s)".into(),
        left_label: "duplicate rate (duplicate effects / message)".into(),
        right_label: "recovery time (s)".into(),
        left: vec![
            Series {
                label: "duplicate rate, simulated".into(),
                points: observed,
                dashed: false,
            },
            Series {
                label: "duplicate rate, predicted".into(),
                points: predicted,
                dashed: true,
            },
        ],
        right: vec![Series {
            label: "recovery time (right axis)".into(),
            points: recovery,
            dashed: false,
        }],
        mark: Some((
            lease,
            format!(
                "recommended: {}",
                format_duration(Duration::from_secs_f64(lease))
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_spans_both_leases() {
        let c = curve_leases(Duration::from_secs(30), Duration::from_secs(60));
        assert_eq!(c.first(), Some(&Duration::from_secs(8)));
        assert_eq!(c.last(), Some(&Duration::from_secs(120)));
        assert!(c.contains(&Duration::from_secs(30)) && c.contains(&Duration::from_secs(60)));
        assert!(c.len() <= 14);
    }
}
