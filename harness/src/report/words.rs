//! The words every report format says the same (the console, report.html, summary.md and
//! junit.xml): the verdict's detail, the rows of the "Messages" table, the latency rows and
//! what they measure, numbers and plurals for people.

use super::summary::Summary;
use crate::metrics::LatencySummary;
use crate::profile::kinds::words::with_lease;
use crate::profile::LeaseRole;

pub(crate) use super::notes::{incomplete_reason, notes};

/// What the verdict line says after the verdict: the budgets' count, or why there is none.
/// report.html and summary.md say the same.
pub(crate) fn verdict_detail(s: &Summary) -> String {
    let failed = s.budgets.iter().filter(|b| !b.pass).count();
    let detail = match (s.budgets.len(), failed) {
        _ if !s.complete => format!(
            "{} at {:.3} s, before its end: what was recorded up to then, no verdict",
            incomplete_reason(s),
            s.virtual_s
        ),
        (0, _) => "no budgets set".to_string(),
        (n, 0) => format!("all {n} {} hold", plural(n as u64, "budget", "budgets")),
        (n, f) => format!(
            "{f} of {n} {} failed",
            plural(n as u64, "budget", "budgets")
        ),
    };
    if s.complete && s.unmatched_effects > 0 {
        format!(
            "misconfigured: {} {} no published message ({detail})",
            s.unmatched_effects,
            plural(s.unmatched_effects, "effect names", "effects name")
        )
    } else {
        detail
    }
}

/// The rows of the "Messages" table: (label, value, note). report.html shows the same rows.
pub(crate) fn count_rows(s: &Summary) -> Vec<(&'static str, String, String)> {
    let w = s.words();
    let messages = |n: u64| plural(n, w.message.0, w.message.1);
    let mut rows: Vec<(&str, String, String)> = vec![
        ("messages", s.messages.to_string(), "published".into()),
        (
            "deliveries",
            s.deliveries.to_string(),
            format!("{} redeliveries", s.redeliveries),
        ),
        (
            "effects",
            s.effects.to_string(),
            format!(
                "{} {} with an effect",
                s.messages_with_effect,
                messages(s.messages_with_effect)
            ),
        ),
        (
            "duplicate effects",
            s.duplicate_effects.to_string(),
            format!("{} per {}", number(s.duplicate_rate), w.message.0),
        ),
        (
            "lost",
            s.lost.to_string(),
            format!("{}, no effect", w.settled_short),
        ),
        (
            "unfinished",
            s.unfinished.to_string(),
            format!("still {} at the end", w.unsettled),
        ),
        (
            "late",
            s.late.to_string(),
            "first effect after the late bound".into(),
        ),
        (
            "DLQ",
            s.dlq.to_string(),
            format!(
                "{}{} with effect, {} without",
                s.dlq_row_words(),
                s.dlq_with_effect,
                s.dlq_without_effect
            ),
        ),
        (w.stale.label, s.stale_acks.to_string(), w.stale.row.into()),
        (
            "overlapping executions",
            s.overlapping_executions.to_string(),
            format!("{} while an earlier handler still ran", w.delivered),
        ),
        (
            "worker kills / crashes",
            format!("{} / {}", s.worker_kills, s.worker_crashes),
            String::new(),
        ),
        (
            "rejected",
            s.rejected.to_string(),
            "refused by the target".into(),
        ),
        (
            "handler retries",
            s.handler_retries.to_string(),
            if s.consumer_retries > 0 {
                "provider calls beyond the first, and consumer retries".into()
            } else {
                "provider calls beyond the first".into()
            },
        ),
    ];
    rows.extend(extra_rows(s));
    rows.extend([
        (
            "worker busy",
            format!("{:.3} s", s.worker_busy_s),
            String::new(),
        ),
        (
            "last handler end",
            format!("{:.3} s", s.last_handler_end_s),
            String::new(),
        ),
        (
            w.oldest_age_row,
            format!("{:.3} s", s.max_oldest_age_s),
            String::new(),
        ),
    ]);
    rows
}

/// The rows of the "Messages" table shown only when they say something: a redrive, a
/// retrying producer's copies, unmatched effects, ackbench's own CPU, unattributed calls.
fn extra_rows(s: &Summary) -> Vec<(&'static str, String, String)> {
    let mut rows = Vec::new();
    if s.redriven > 0 {
        rows.push((
            "redriven",
            s.redriven.to_string(),
            format!(
                "DLQ entries replayed; {} duplicate effects caused by the redrive",
                s.redrive_duplicate_effects
            ),
        ));
    }
    if let (Some(dup), Some(dropped)) = (s.duplicate_publishes, s.publishes_deduplicated) {
        rows.push((
            "duplicate publishes",
            dup.to_string(),
            format!("a retry accepted as another message; {dropped} dropped as duplicates"),
        ));
    }
    if s.unknown_key_effects > 0 {
        let n = s.unknown_key_effects.to_string();
        rows.push((
            "unmatched effects",
            n,
            "for keys no published message has (misconfigured)".into(),
        ));
    }
    if s.failed > 0 {
        rows.push((
            "failed",
            s.failed.to_string(),
            format!(
                "{} after a failed attempt: the consumer gave up (not counted as lost)",
                s.words().settled_short
            ),
        ));
    }
    if s.consumer_retries > 0 {
        rows.push((
            "consumer retries",
            s.consumer_retries.to_string(),
            "published again by the handler for another try".into(),
        ));
    }
    if s.unfinished_delayed > 0 {
        rows.push((
            "waiting for a retry",
            s.unfinished_delayed.to_string(),
            "of the unfinished: in a delay queue or held until due".into(),
        ));
    }
    if s.unverifiable_keys > 0 {
        rows.push((
            "unverifiable keys",
            s.unverifiable_keys.to_string(),
            format!(
                "{}, no effect matched: not counted as lost",
                s.words().settled_short
            ),
        ));
    }
    if let Some(cpu) = &s.harness_cpu {
        rows.push((
            "ackbench CPU",
            format!("{} cores", number(cpu.share)),
            format!(
                "its own process over {} s of wall time (peak {}), worker processes not counted",
                number(cpu.wall_s),
                number(cpu.peak_share)
            ),
        ));
    }
    if !s.unattributed_calls.is_none() {
        rows.push((
            "unattributed calls",
            s.unattributed_calls.total().to_string(),
            "provider calls not matched to a delivery the worker held".into(),
        ));
    }
    rows
}

/// The latency rows every output shows: (label, percentiles), ms.
pub(crate) fn latency_rows(s: &Summary) -> [(&'static str, &LatencySummary); 4] {
    [
        ("handler", &s.handler_latency_ms),
        ("end to end", &s.end_to_end_ms),
        ("time to done", &s.time_to_done_ms),
        (s.words().held.label, &s.effective_lease_ms),
    ]
}

/// What the latency rows measure, in one sentence each; report.html and summary.md say the same.
pub(crate) fn latency_definitions(s: &Summary) -> Vec<String> {
    let w = s.words();
    vec![
        "handler: from a delivery to the end of its handler.".to_string(),
        "end to end: from publish to the message's first effect (with effect_at: request and an \
         idle queue, 0)."
            .to_string(),
        format!(
            "time to done: from publish to the moment the {} had its effect and {}; {} of {} {} \
             done.",
            w.message.0,
            w.done.when,
            s.messages_done,
            s.messages,
            plural(s.messages, w.message.0, w.message.1)
        ),
        format!(
            "{}: {}.",
            w.held.label,
            with_lease(w.held.means, s.lease_words())
        ),
    ]
}

/// The line under the latency table: the lease against what the handlers held.
pub(crate) fn lease_line(s: &Summary) -> String {
    if per_message_lease(s) {
        format!(
            "{} {:.3} ms; p99 of (time held before settling / {}) = {:.3}",
            s.lease_words(),
            s.visibility_timeout_s * 1000.0,
            s.words().held.label,
            s.p99_over_visibility
        )
    } else {
        format!(
            "{} {:.3} ms; {NO_PER_MESSAGE_LEASE}",
            s.lease_words(),
            s.visibility_timeout_s * 1000.0,
        )
    }
}

/// Why a kind whose lease is a poll interval has no hold ratio.
pub(crate) const NO_PER_MESSAGE_LEASE: &str = "no lease per record to hold it against: the \
    interval bounds the time between two polls, a whole batch's handling, which the record does \
    not show (a member past it is removed: see the rebalances)";

/// Whether each message is held on a lease of its own, so that a handler's time held over its
/// lease means something: not on a kind whose lease is a poll interval (Kafka's
/// `max.poll.interval.ms` covers a poll's whole batch).
pub(crate) fn per_message_lease(s: &Summary) -> bool {
    match s.lease_role() {
        LeaseRole::Lease | LeaseRole::StuckConsumerGuard => true,
        LeaseRole::PollInterval => false,
    }
}

/// A latency row's cells, ms with 3 decimals; `-` for time to done when no message was done.
pub(crate) fn latency_cells(s: &Summary, label: &str, l: &LatencySummary) -> [String; 5] {
    let none = (label == "time to done" && s.messages_done == 0)
        || (label == "handler" && s.handler_latency_unmeasured.is_some());
    [l.p50, l.p90, l.p99, l.p999, l.max].map(|v| {
        if none {
            "-".to_string()
        } else {
            format!("{v:.3}")
        }
    })
}

pub(crate) fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// A number for people: whole numbers without decimals, others with up to 6, and a tiny one
/// that 6 decimals would show as 0 in scientific notation (a budget of 0 fails on it).
pub(crate) fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "0" || s == "-0" {
        format!("{x:e}")
    } else {
        s.to_string()
    }
}
