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

use super::chart::{self, DualChart, Series};
use super::checks::{self, Check};
use super::duplicates::predicted_duplicate_rate;
use super::error::{needs_sim, reason, SizingError};
use super::lease::{outlive_chance, size_lease, LeaseAdvice, LeaseRule, SQS_MAX_LEASE};
use super::limit::{recommended_limit, recovery_path, spare};
use super::markdown;
use super::parallel;
use super::plan::*;
use super::probe;
use super::readable;
use super::settings::{worst_call, Settings, SettingsView};
use super::simulate::{simulate, Simulated};
use super::workers::{arrival_rate, workers_for};
use super::{alert, hlog};
use crate::cli::SizeArgs;
use crate::profile::{self, format_duration, parse_duration, LeaseRole, Poison, Scenario};
use crate::report::folder;
use crate::verdict::exit;

/// Runs the sizing the arguments describe; returns the process exit code.
pub fn size_command(args: &SizeArgs) -> i32 {
    crate::runner::interrupt::exit_on_signals("ackbench size:");
    match size(args) {
        Ok(()) => exit::PASS,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// The validated flags.
struct Inputs {
    rule: LeaseRule,
    utilisation: f64,
    dedup_window: Option<Duration>,
}

fn inputs(args: &SizeArgs) -> Result<Inputs, SizingError> {
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

fn size(args: &SizeArgs) -> Result<(), SizingError> {
    let inputs = inputs(args)?;
    let file = &args.profile.profile;
    let sets = &args.profile.sets;
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
    let lease = size_lease(
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

    // The recommendation.
    let new_lease = lease.advice.visibility_timeout();
    let path = recovery_path(&now.target, new_lease, now.claim_window);
    let limit = recommended_limit(now.limit, &path);
    let rate = arrival_rate(&current.workload, current.run.duration);
    let normal = workers_for(
        rate,
        mean_s(&healthy_run.metrics.latencies.handler.histogram),
        inputs.utilisation,
    );
    // The fault's handler time with the recommended lease and limit (a lease that handlers
    // outlive multiplies the work by the redeliveries; the recommendation removes them).
    let mut notes = Vec::new();
    let load_with = |rec_sets: &[String]| {
        let mut all = sets.clone();
        all.extend(rec_sets.iter().cloned());
        profile::load(file, &all).map_err(|e| SizingError::BadPoint {
            point: format!("recommended settings ({})", rec_sets.join(", ")),
            reason: reason(&e),
        })
    };
    let leased = load_with(&recommendation_sets(
        &now,
        &lease.advice,
        limit,
        now.workers,
        &mut Vec::new(),
    ))?;
    let leased_run = simulate(&leased)?;
    let fault = workers_for(
        rate,
        mean_s(&leased_run.metrics.latencies.handler.histogram),
        inputs.utilisation,
    );
    let workers = normal.workers.max(fault.workers);
    let rec_sets = recommendation_sets(&now, &lease.advice, limit, workers, &mut notes);
    let recommended = load_with(&rec_sets)?;

    // Batch 2: the recommendation, its probe, and the lease curve.
    let curve_leases = curve_leases(now.lease, new_lease);
    let mut batch = vec![recommended.clone(), probe::scenario(&recommended)];
    let mut curve_ok = Vec::new();
    for l in &curve_leases {
        let mut with = sets.clone();
        with.push(format!("broker.{}={}", now.lease_key, format_duration(*l)));
        if let Ok(s) = profile::load(file, &with) {
            batch.push(s);
            curve_ok.push(*l);
        }
    }
    let mut runs = parallel::map(&batch, jobs, simulate).into_iter();
    let after = runs
        .next()
        .ok_or_else(|| SizingError::NoLatency("a run is missing".into()))??;
    let probe_after = runs
        .next()
        .ok_or_else(|| SizingError::NoLatency("a run is missing".into()))??;
    let curve_runs = runs.collect::<Result<Vec<Simulated>, _>>()?;

    let after_settings = Settings::of(&recommended, worst_call(&after.record), inputs.dedup_window);
    let plan = assemble(Assembly {
        current: &current,
        inputs: &inputs,
        source,
        hist: &hist,
        lease,
        now: &now,
        after_settings: &after_settings,
        before: &before,
        after: &after,
        healthy: &healthy_run,
        probe_before: &probe_before,
        probe_after: &probe_after,
        normal,
        fault,
        rec_sets,
        curve: curve_ok.iter().copied().zip(curve_runs.iter()).collect(),
        notes,
        limit,
    });

    let md = markdown::render(&plan);
    let written = write(&out, &plan, &md)?;
    crate::out!("{md}");
    crate::outln!();
    crate::outln!("sizing: {}", out.display());
    for f in written {
        crate::outln!("  {}", f.display());
    }
    Ok(())
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

/// The recommendation as `--set` overrides.
fn recommendation_sets(
    now: &Settings,
    advice: &LeaseAdvice,
    limit: u32,
    workers: u32,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let t = format_duration;
    let key = now.lease_key;
    let mut sets = Vec::new();
    if let Some(every) = now.check_every {
        notes.push(format!(
            "RabbitMQ checks the consumer timeout every {} (timeout_check_every): a delivery \
             times out at the first check after it, so a hung handler holds its message for up \
             to consumer_timeout + {}; a consumer that dies gives its message back at once",
            t(every),
            t(every)
        ));
    }
    match *advice {
        LeaseAdvice::Lease { visibility_timeout } => {
            if visibility_timeout != now.lease {
                let lease = t(visibility_timeout);
                sets.push(format!("broker.{key}={lease}"));
            }
        }
        LeaseAdvice::Heartbeat {
            visibility_timeout,
            extend_every,
            max_extension,
        } => {
            if matches!(now.target.as_str(), "ack-after-work" | "heartbeat") {
                if visibility_timeout != now.lease {
                    let lease = t(visibility_timeout);
                    sets.push(format!("broker.{key}={lease}"));
                }
                if now.target != "heartbeat" {
                    sets.push("consumer.target=heartbeat".into());
                }
                sets.push(format!("consumer.options.extend_every={}", t(extend_every)));
                sets.push(format!(
                    "consumer.options.max_extension={}",
                    t(max_extension)
                ));
            } else {
                let lease = max_extension.min(SQS_MAX_LEASE);
                notes.push(format!(
                    "{} cannot extend its lease, so the after-run checks a plain {} lease \
                     instead of the heartbeat",
                    now.target,
                    t(lease)
                ));
                sets.push(format!("broker.{key}={}", t(lease)));
            }
        }
    }
    if let Some(limit_key) = now.limit_key {
        if limit != now.limit {
            sets.push(format!("broker.{limit_key}={}", now.limit_value(limit)));
        }
    }
    if workers != now.workers {
        sets.push(format!("consumer.workers={workers}"));
    }
    sets
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

/// What [`assemble`] reads.
struct Assembly<'a> {
    current: &'a Scenario,
    inputs: &'a Inputs,
    source: LatencySource,
    hist: &'a Histogram<u64>,
    lease: super::lease::LeaseSizing,
    now: &'a Settings,
    after_settings: &'a Settings,
    before: &'a Simulated,
    after: &'a Simulated,
    healthy: &'a Simulated,
    probe_before: &'a Simulated,
    probe_after: &'a Simulated,
    normal: super::workers::WorkerSizing,
    fault: super::workers::WorkerSizing,
    rec_sets: Vec<String>,
    curve: Vec<(Duration, &'a Simulated)>,
    notes: Vec<String>,
    limit: u32,
}

fn f3(x: f64) -> String {
    super::outcome::number((x * 1000.0).round() / 1000.0)
}

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "unbounded".into(), f3)
}

/// The plan, with one sentence of reasoning per recommendation.
fn assemble(a: Assembly) -> Plan {
    let t = format_duration;
    let now = a.now;
    let rec = a.after_settings;
    let rule = &a.inputs.rule;
    let new_lease = a.lease.advice.visibility_timeout();
    let tail = Duration::from_micros(a.lease.tail_us);
    let mut notes = a.notes;

    // Lease.
    let small_sample = (a.lease.handlers as f64) < 1.0 / rule.target_risk;
    let measured = match a.source.kind {
        "file" => "recorded",
        _ => "simulated",
    };
    let lease_reason = match a.lease.advice {
        LeaseAdvice::Lease { visibility_timeout } => format!(
            "Fewer than {} of the {} {measured} handlers outlive {}, so with the {}x margin ({}) \
             the lease is {}, rounded up to a readable value; {}",
            rule.target_risk,
            a.lease.handlers,
            ms_text(tail),
            rule.margin,
            ms_text(a.lease.with_margin),
            t(visibility_timeout),
            match now.kind.lease.role {
                // A dead consumer's connection closes and RabbitMQ requeues at once: the
                // consumer timeout only ends a holder that is alive but stuck.
                LeaseRole::StuckConsumerGuard => format!(
                    "a consumer that dies hands its messages back at once (its connection \
                     closes), so the price is only how long a stuck but living consumer holds \
                     its message: {} (now {}).",
                    t(visibility_timeout),
                    t(now.lease)
                ),
                LeaseRole::Lease => format!(
                    "the price is recovery time: a worker that dies right after receiving \
                     leaves its message hidden for {} (now {}).",
                    t(visibility_timeout),
                    t(now.lease)
                ),
            }
        ),
        LeaseAdvice::Heartbeat {
            visibility_timeout,
            extend_every,
            max_extension,
        } => format!(
            "The tail with its {}x margin ({}) is past the {} bound for a lease, so keep a {} \
             lease (the recovery time) and extend it every {} while the handler works, for at \
             most {} of extra time, past which the handler is presumed wedged and its message \
             goes back to the queue.",
            rule.margin,
            ms_text(a.lease.with_margin),
            t(rule.max_lease),
            t(visibility_timeout),
            t(extend_every),
            t(max_extension)
        ),
    };
    if small_sample {
        notes.push(format!(
            "Only {} handlers were measured, fewer than the {} needed to see a 1-in-{} tail: \
             the slowest seen sets the lease; a longer recording (--latency-from) sizes it better.",
            a.lease.handlers,
            (1.0 / rule.target_risk).round(),
            (1.0 / rule.target_risk).round()
        ));
    }

    // Duplicates.
    let p_now = outlive_chance(a.hist, now.lease);
    let p_rec = outlive_chance(a.hist, rec.lease);
    let pred_now = predicted_duplicate_rate(p_now, now.limit);
    let pred_rec = predicted_duplicate_rate(p_rec, rec.limit);
    let obs_now = a.before.summary.duplicate_rate;
    let obs_rec = a.after.summary.duplicate_rate;
    let dup_reason = format!(
        "A handler outlives the {} lease with chance {} and the {} lease with chance {}: a \
         consumer that repeats its work on every delivery would see {} duplicate effects per \
         message now and {} with the recommendation; the sim of {} observed {} and {}.",
        t(now.lease),
        f3(p_now),
        t(rec.lease),
        f3(p_rec),
        ratio(pred_now),
        ratio(pred_rec),
        now.target,
        f3(obs_now),
        f3(obs_rec)
    );

    // Workers.
    let workers = a.normal.workers.max(a.fault.workers);
    let busy_after = a.after.busy_fraction();
    let workers_reason = format!(
        "Little's law: {}/s x {} s mean handler time (the profile with the recommended lease \
         and limit) = {} busy workers ({} on a healthy day), / {} utilisation = {} workers \
         (now {}); the after-run kept them {}% busy.",
        f3(a.fault.arrival_per_s),
        f3(a.fault.mean_handler_s),
        f3(a.fault.busy_workers),
        f3(a.normal.busy_workers),
        a.inputs.utilisation,
        workers,
        now.workers,
        f3(busy_after * 100.0)
    );

    // Alert.
    let healthy_age = Duration::from_secs_f64(a.healthy.summary.max_oldest_age_s);
    let threshold = alert::threshold(healthy_age, a.lease.advice.longest_hold());
    let observed_age = Duration::from_secs_f64(a.before.summary.max_oldest_age_s);
    let after_age = Duration::from_secs_f64(a.after.summary.max_oldest_age_s);
    let fired = alert::would_fire(threshold, observed_age);
    let fires_after = alert::would_fire(threshold, after_age);
    let alert_reason =
        format!(
        "A healthy run's oldest message reached {}; alert when the oldest message is older than \
         {} (twice that, and at least the longest a handler may hold a message): in this run it reached {}, so the alert {} \
         have fired{}.",
        ms_text(healthy_age),
        t(threshold),
        ms_text(observed_age),
        if fired { "would" } else { "would not" },
        if fires_after {
            format!(", and with the recommendation it still fires ({})", ms_text(after_age))
        } else {
            format!(" (with the recommendation it reached {})", ms_text(after_age))
        }
    );

    // Delivery limit.
    let path_now = recovery_path(&now.target, now.lease, now.claim_window);
    let path_rec = recovery_path(&rec.target, rec.lease, rec.claim_window);
    let spare_now = spare(now.limit, &path_now);
    let spare_rec = spare(rec.limit, &path_rec);
    let probe_now = probe::outcome(&now.target, &a.probe_before.record, now.limit);
    let probe_rec = probe::outcome(&rec.target, &a.probe_after.record, rec.limit);
    let spare_text =
        |s: Option<i64>| s.map_or_else(|| "no limit".to_string(), |n| format!("{n} spare"));
    let limit_reason = format!(
        "The slowest recovery path takes {} deliveries ({}); a limit of {} leaves {} (now {}: \
         {}){}.",
        path_rec.deliveries,
        path_rec.description,
        a.limit,
        spare_text(spare_rec),
        now.limit,
        spare_text(spare_now),
        match (&probe_now, &probe_rec) {
            (Some(b), Some(r)) => format!(
                "; simulated, a kill {} was {} before and {} after",
                b.kill,
                b.summary(),
                r.summary()
            ),
            _ => String::new(),
        }
    );

    // Checks.
    let checks: Vec<CheckRow> = checks::all(now)
        .into_iter()
        .zip(checks::all(rec))
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
                now.limit,
            ),
            recovery_time_s: run.recovery.time_s,
            recovery_time_source: run.recovery.source.as_str(),
        })
        .collect();

    Plan {
        profile: a.current.name.clone(),
        latency_source: a.source,
        rules: Rules {
            target_risk: rule.target_risk,
            margin: rule.margin,
            utilisation: a.inputs.utilisation,
            max_lease_s: rule.max_lease.as_secs_f64(),
        },
        current: SettingsView::from(now),
        recommended: SettingsView::from(rec),
        set: a.rec_sets,
        lease: LeaseSection {
            advice: a.lease.advice,
            tail_ms: a.lease.tail_us as f64 / 1000.0,
            with_margin_s: a.lease.with_margin.as_secs_f64(),
            recovery_time_current_s: now.lease.as_secs_f64(),
            recovery_time_recommended_s: new_lease.as_secs_f64(),
            reason: lease_reason,
        },
        duplicates: DuplicatesSection {
            outlive_chance_current: p_now,
            outlive_chance_recommended: p_rec,
            predicted_current: pred_now,
            predicted_recommended: pred_rec,
            observed_current: obs_now,
            observed_recommended: obs_rec,
            reason: dup_reason,
        },
        workers: WorkersSection {
            normal: a.normal,
            fault: a.fault,
            current: now.workers,
            recommended: workers,
            busy_fraction_current: a.before.busy_fraction(),
            busy_fraction_recommended: busy_after,
            reason: workers_reason,
        },
        alert: AlertSection {
            healthy_max_oldest_age_s: healthy_age.as_secs_f64(),
            threshold_s: threshold.as_secs_f64(),
            observed_max_oldest_age_s: observed_age.as_secs_f64(),
            would_have_fired: fired,
            recommended_max_oldest_age_s: after_age.as_secs_f64(),
            fires_with_recommendation: fires_after,
            reason: alert_reason,
        },
        delivery_limit: LimitSection {
            current: now.limit,
            recommended: a.limit,
            recovery_deliveries: path_rec.deliveries,
            recovery_path: path_rec.description,
            spare_current: spare_now,
            spare_recommended: spare_rec,
            probe_current: probe_now,
            probe_recommended: probe_rec,
            reason: limit_reason,
        },
        checks,
        verification: Verification {
            before: RunRow::of(a.before, now.limit, now.workers),
            after: RunRow::of(a.after, rec.limit, rec.workers),
        },
        lease_curve: curve,
        notes,
    }
}

/// A measured duration for sentences: `40.03 s`, `950 ms`.
fn ms_text(d: Duration) -> String {
    markdown::human(d.as_secs_f64())
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
    for (name, text) in [("sizing.md", md.to_string()), ("sizing.json", json)] {
        let path = out.join(name);
        fs::write(&path, text).map_err(|e| fail(&path, e.to_string()))?;
        written.push(path);
    }
    written.extend(
        chart::write_dual_chart(out, "sizing", &lease_chart(plan)).map_err(|e| fail(out, e))?,
    );
    folder::record(out, &written).map_err(|e| fail(&out.join(folder::MARKER), e.to_string()))?;
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
