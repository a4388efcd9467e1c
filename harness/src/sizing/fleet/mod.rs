//! The autoscaler's settings for an autoscaled profile: pure rules of the handler times, the
//! worker count Little's law gives at the peak and the rule as it is ([`size_fleet`]), written
//! as `--set` overrides of the rule (verified by the sizing's after-run) and as a KEDA
//! `ScaledObject` ([`scaled_object`]).

pub mod render;
pub mod scaled_object;

use std::time::Duration;

use serde::Serialize;

use crate::profile::{format_duration, AutoscaleRule, QueueMetric};

/// What the rules read.
#[derive(Debug, Clone, Copy)]
pub struct FleetInputs<'a> {
    /// The rule as the profile has it.
    pub rule: &'a AutoscaleRule,
    /// The handler p99 under the fault.
    pub p99: Duration,
    /// The sizing's margin (`--margin`).
    pub margin: f64,
    /// The mean handler time under the fault, with the recommended lease and limit.
    pub mean_handler: Duration,
    /// Little's law's workers at the peak (the workers section's recommendation).
    pub peak_workers: u32,
    /// The messages the profile publishes, when it says.
    pub messages: Option<u64>,
}

/// One setting of the rule, now and recommended, with the sentence behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetSetting {
    /// The key under `chaos[].autoscale`.
    pub key: &'static str,
    /// KEDA's or the Kubernetes name of it.
    pub words: &'static str,
    pub current: String,
    pub recommended: String,
    pub reason: String,
}

/// The rule's settings as sized, in the order sizing.md lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetSizing {
    /// The rule with the recommended settings.
    pub rule: AutoscaleRule,
    pub settings: Vec<FleetSetting>,
}

impl FleetSizing {
    /// The changed settings as `--set` overrides of the rule at `chaos[index]`.
    pub fn sets(&self, index: usize) -> Vec<String> {
        (self.settings.iter())
            .filter(|s| s.current != s.recommended)
            .map(|s| format!("chaos.{index}.autoscale.{}={}", s.key, s.recommended))
            .collect()
    }
}

/// Whole seconds, at least one, rounded up past a slack of 10 ms (a latency histogram's
/// buckets are that much above the times recorded): Kubernetes takes its periods in seconds.
fn whole_seconds_up(d: Duration) -> Duration {
    Duration::from_secs((d.as_secs_f64() - 0.01).ceil().max(1.0) as u64)
}

/// Sizes the rule:
/// - `grace` (terminationGracePeriodSeconds): the handler p99 x the margin, when longer than
///   now: a scale-in stops a replica as a deploy does, and a handler that outlives the grace is
///   cut and its message handled again.
/// - `max`: Little's law's workers at the peak, no more than the messages published.
/// - `min`: at least 1: scaling from zero waits for KEDA's poll and a replica's startup.
/// - `target`: the messages one replica handles in the time the HPA takes to add a replica
///   (its sync period plus the startup), plus the one it holds when the metric counts in-flight
///   messages.
/// - `polling_interval` and `cooldown`: kept, as with `min` of 1 or more they only decide the
///   scaling from and to zero.
/// - `scale_down.stabilization`: at least the time the HPA takes to bring a replica back (its
///   sync period plus the startup).
pub fn size_fleet(i: &FleetInputs) -> FleetSizing {
    let now = i.rule;
    let t = |d: Duration| format_duration(d);
    let mut rule = now.clone();
    let mut settings = Vec::new();

    let need = whole_seconds_up(i.p99.mul_f64(i.margin));
    rule.grace = now.grace.max(need);
    let p99_text = super::markdown::human(i.p99.as_secs_f64());
    let p99_times = format!(
        "the handler p99 under the fault, {p99_text}, x the margin {} = {}",
        i.margin,
        t(need)
    );
    settings.push(FleetSetting {
        key: "grace",
        words: "terminationGracePeriodSeconds",
        current: t(now.grace),
        recommended: t(rule.grace),
        reason: if rule.grace > now.grace {
            format!(
                "{p99_times}: a scale-in stops a replica as a deploy does, and a handler running \
                 past the grace is killed, its message handled again at its lease's end"
            )
        } else {
            format!("kept: it covers {p99_times}")
        },
    });

    let cap = i.messages.map_or(u64::from(u32::MAX), |m| m.max(1));
    let peak = u64::from(i.peak_workers).min(cap) as u32;
    rule.max = peak.max(1);
    let capped = if u64::from(i.peak_workers) > cap {
        format!(", capped at the {cap} messages the profile publishes")
    } else {
        String::new()
    };
    settings.push(FleetSetting {
        key: "max",
        words: "maxReplicaCount",
        current: now.max.to_string(),
        recommended: rule.max.to_string(),
        reason: format!(
            "Little's law's {} workers at the peak (the workers section){capped}: more replicas \
             would sit idle, fewer leave the backlog to age",
            i.peak_workers
        ),
    });

    rule.min = now.min.max(1).min(rule.max);
    let from_zero = t(now.polling_interval + now.startup);
    settings.push(FleetSetting {
        key: "min",
        words: "minReplicaCount",
        current: now.min.to_string(),
        recommended: rule.min.to_string(),
        reason: if now.min == 0 {
            format!(
                "a fleet at zero waits for KEDA's next poll and a replica's startup (up to {}) \
                 before it handles a message; one replica removes that wait",
                from_zero
            )
        } else if rule.min < now.min {
            format!("no more than max ({})", rule.max)
        } else {
            "kept: the fleet never waits to scale from zero".into()
        },
    });

    let lag = now.sync_period + now.startup;
    let mean = i.mean_handler.max(Duration::from_millis(1));
    let per_replica = (lag.as_secs_f64() / mean.as_secs_f64()).ceil().max(1.0) as u64;
    let held = match now.metric {
        QueueMetric::Ready => 0,
        QueueMetric::ReadyAndInFlight => 1,
    };
    rule.target = per_replica + held;
    settings.push(FleetSetting {
        key: "target",
        words: "messages per replica",
        current: now.target.to_string(),
        recommended: rule.target.to_string(),
        reason: format!(
            "a replica's share handled in the time the HPA takes to add one (its sync period {} \
             + startup {} = {}) at a mean of {} a message: ceil({} / {}) = {per_replica}{}",
            t(now.sync_period),
            t(now.startup),
            t(lag),
            super::markdown::human(mean.as_secs_f64()),
            t(lag),
            super::markdown::human(mean.as_secs_f64()),
            if held == 1 {
                ", + 1 for the message it is handling (the metric counts in-flight messages)"
            } else {
                ""
            }
        ),
    });

    for (key, words, value) in [
        ("polling_interval", "pollingInterval", now.polling_interval),
        ("cooldown", "cooldownPeriod", now.cooldown),
    ] {
        settings.push(FleetSetting {
            key,
            words,
            current: t(value),
            recommended: t(value),
            reason: format!(
                "kept: with min {} the fleet never scales to zero, and KEDA's {words} only \
                 decides the scaling from and to zero",
                rule.min
            ),
        });
    }

    let window = now.scale_down.stabilization;
    rule.scale_down.stabilization = window.max(whole_seconds_up(lag));
    settings.push(FleetSetting {
        key: "scale_down.stabilization",
        words: "behavior.scaleDown.stabilizationWindowSeconds",
        current: t(window),
        recommended: t(rule.scale_down.stabilization),
        reason: if rule.scale_down.stabilization > window {
            format!(
                "the time the HPA takes to bring a replica back ({}): a shorter window lets a \
                 dip remove a replica the queue needs again before a new one can start",
                t(lag)
            )
        } else {
            format!(
                "kept: longer than the time the HPA takes to bring a replica back ({}); with the \
                 grace above, a scale-in lets a handler finish, so the window only trades \
                 worker-seconds against scaling back out",
                t(lag)
            )
        },
    });
    FleetSizing { rule, settings }
}

#[cfg(test)]
mod tests;

/// What a run's autoscaler did, for the before / after table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetRow {
    /// Changes of the replica count.
    pub scale_events: usize,
    /// Of those, scale-ins that told a running replica to stop.
    pub scale_ins_that_stopped: usize,
    /// Handlers the scale-ins' kills cut.
    pub handlers_cut: u64,
    /// Of their messages, those with a duplicate effect.
    pub cut_with_duplicate: u64,
    pub workers_max: u32,
    pub worker_seconds: f64,
}

impl FleetRow {
    /// The row of a sim run: its `autoscaling`, or, when its rule never scaled, no event and
    /// the fleet it ran.
    pub fn of(run: &crate::sizing::simulate::Simulated) -> FleetRow {
        let Some(a) = run.summary.autoscaling.as_ref() else {
            let (workers_max, worker_seconds) = crate::metrics::autoscale::running(&run.record);
            return FleetRow {
                workers_max,
                worker_seconds,
                ..FleetRow::default()
            };
        };
        Self::of_scaling(a)
    }

    /// The row of a run's `autoscaling`.
    pub fn of_scaling(a: &crate::metrics::autoscale::Autoscaling) -> FleetRow {
        let costs = || a.scale_events.iter().filter_map(|e| e.cost.as_ref());
        FleetRow {
            scale_events: a.scale_events.len(),
            scale_ins_that_stopped: costs().filter(|c| c.told > 0).count(),
            handlers_cut: costs().map(|c| c.interrupted).sum(),
            cut_with_duplicate: costs().map(|c| c.duplicates).sum(),
            workers_max: a.workers_max,
            worker_seconds: a.worker_seconds,
        }
    }
}

/// sizing.json's `autoscale`: the rule's settings sized, what its runs did before and after,
/// and the Kubernetes files written.
#[derive(Debug, Clone, Serialize)]
pub struct AutoscaleSection {
    /// The rule's index in `chaos`.
    pub rule: usize,
    pub settings: Vec<FleetSetting>,
    pub before: FleetRow,
    pub after: FleetRow,
    /// The files written beside sizing.md; none when KEDA has no scaler for the kind.
    pub files: Vec<&'static str>,
    /// The files' text.
    #[serde(skip)]
    pub manifests: Option<scaled_object::Manifests>,
}
