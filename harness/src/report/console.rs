//! The console table `ackbench run` prints: the verdict first, then what happened to the
//! messages, handler latency against the visibility timeout, the budgets, and in plain words what
//! the numbers mean when something went wrong.

use std::fmt::Write;

use super::summary::Summary;
use crate::metrics::LatencySummary;

/// Width of a row's label.
const LABEL: usize = 26;
/// Width of a row's value (right-aligned).
const VALUE: usize = 12;
/// Width of a latency column.
const COLUMN: usize = 11;

/// The summary as an aligned plain-text table, ending with a newline.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    verdict(&mut out, s);
    counts(&mut out, s);
    if let Some(i) = &s.ingress {
        out.push_str("\nIngress (HTTP load by goose)\n");
        for (label, value, note) in super::ingress::rows(i) {
            row(&mut out, label, value, &note);
        }
    }
    latency(&mut out, s);
    budgets(&mut out, s);
    let notes = notes(s);
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}

/// What the verdict line says after the verdict: the budgets' count, or why there is none.
/// report.html and summary.md say the same.
pub(crate) fn verdict_detail(s: &Summary) -> String {
    let failed = s.budgets.iter().filter(|b| !b.pass).count();
    match (s.budgets.len(), failed) {
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
    }
}

fn verdict(out: &mut String, s: &Summary) {
    let word = s.verdict.as_str().to_uppercase();
    let detail = verdict_detail(s);
    let _ = writeln!(
        out,
        "{word}  {} ({}, seed {}): {detail}",
        s.profile, s.mode, s.seed
    );
    let _ = writeln!(
        out,
        "      run time {:.3} s (virtual), {:.3} s (wall)",
        s.virtual_s, s.wall_s
    );
}

fn row(out: &mut String, label: &str, value: impl std::fmt::Display, note: &str) {
    let line = format!("  {label:<LABEL$}{value:>VALUE$}  {note}");
    let _ = writeln!(out, "{}", line.trim_end());
}

fn counts(out: &mut String, s: &Summary) {
    out.push_str("\nMessages\n");
    for (label, value, note) in count_rows(s) {
        row(out, label, value, &note);
    }
}

/// The rows of the "Messages" table: (label, value, note). report.html shows the same rows.
pub(crate) fn count_rows(s: &Summary) -> Vec<(&'static str, String, String)> {
    let messages = |n: u64| plural(n, "message", "messages");
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
            format!("{} per message", number(s.duplicate_rate)),
        ),
        ("lost", s.lost.to_string(), "deleted, no effect".into()),
        (
            "unfinished",
            s.unfinished.to_string(),
            "still in the queue at the end".into(),
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
                "{} with effect, {} without",
                s.dlq_with_effect, s.dlq_without_effect
            ),
        ),
        (
            "stale acks",
            s.stale_acks.to_string(),
            "acks after the lease had ended".into(),
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
            "provider calls beyond the first".into(),
        ),
    ];
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
    if s.unknown_key_effects > 0 {
        let n = s.unknown_key_effects.to_string();
        rows.push(("unknown-key effects", n, "for keys never published".into()));
    }
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
            "oldest message age (max)",
            format!("{:.3} s", s.max_oldest_age_s),
            String::new(),
        ),
    ]);
    rows
}

fn latency(out: &mut String, s: &Summary) {
    let _ = writeln!(
        out,
        "\n{:<18}{:>COLUMN$}{:>COLUMN$}{:>COLUMN$}{:>COLUMN$}{:>COLUMN$}",
        "Latency (ms)", "p50", "p90", "p99", "p99.9", "max"
    );
    let line = |out: &mut String, label: &str, l: &LatencySummary| {
        let _ = writeln!(
            out,
            "  {label:<16}{:>COLUMN$.3}{:>COLUMN$.3}{:>COLUMN$.3}{:>COLUMN$.3}{:>COLUMN$.3}",
            l.p50, l.p90, l.p99, l.p999, l.max
        );
    };
    line(out, "handler", &s.handler_latency_ms);
    line(out, "end to end", &s.end_to_end_ms);
    let _ = writeln!(
        out,
        "  visibility timeout {:.3} ms; handler p99 / timeout = {:.3}",
        s.visibility_timeout_s * 1000.0,
        s.p99_over_visibility
    );
}

fn budgets(out: &mut String, s: &Summary) {
    out.push_str(if s.complete {
        "\nBudgets\n"
    } else {
        "\nBudgets (of the part that ran: no verdict)\n"
    });
    if s.budgets.is_empty() {
        out.push_str("  (none set)\n");
        return;
    }
    let _ = writeln!(
        out,
        "  {:<24}{:>14}{:>14}  result",
        "budget", "limit", "actual"
    );
    for b in &s.budgets {
        let result = if b.pass { "PASS" } else { "FAIL" };
        let _ = writeln!(
            out,
            "  {:<24}{:>14}{:>14}  {result}",
            b.name,
            number(b.limit),
            number(b.actual)
        );
    }
}

/// Why the run is incomplete, in words.
pub(crate) fn incomplete_reason(s: &Summary) -> &str {
    s.incomplete_reason
        .as_deref()
        .unwrap_or("stopped before its end")
}

/// The most crashes the notes name one by one (summary.json and report.html list every one).
pub(crate) const CRASHES_NAMED: usize = 10;

/// What the numbers mean, in words, for each thing that went wrong. summary.md, junit.xml and
/// report.html say the same sentences.
pub(crate) fn notes(s: &Summary) -> Vec<String> {
    let mut notes = Vec::new();
    if !s.complete {
        notes.push(format!(
            "INCOMPLETE: the run was {} at {:.3} s, before its end: every number here is what was \
             recorded up to then (messages still in the queue count as unfinished), and there is \
             no pass or fail verdict (exit code 3).",
            incomplete_reason(s),
            s.virtual_s,
        ));
    }
    if !s.crashes.is_empty() {
        let named: Vec<String> = s
            .crashes
            .iter()
            .take(CRASHES_NAMED)
            .map(|c| format!("worker {} at {:.3} s ({})", c.worker, c.at_s, c.exit))
            .collect();
        let more = s.crashes.len().saturating_sub(CRASHES_NAMED);
        let rest = if more > 0 {
            format!("; and {more} more (summary.json lists every one)")
        } else {
            String::new()
        };
        let n = s.crashes.len() as u64;
        notes.push(format!(
            "CRASHES: {n} {} by itself, not by a kill rule: {}{rest}.",
            plural(n, "worker died", "times a worker died"),
            named.join(", "),
        ));
    }
    if s.lost > 0 {
        notes.push(format!(
            "LOST: {} {} deleted from the queue and never had an effect: nothing will ever do {}.",
            s.lost,
            plural(s.lost, "message was", "messages were"),
            plural(s.lost, "it", "them"),
        ));
    }
    if s.dlq_with_effect > 0 {
        notes.push(format!(
            "DLQ: {} of {} dead-lettered {} already had {} effect: replaying the DLQ would duplicate \
             those effects.",
            s.dlq_with_effect,
            s.dlq,
            plural(s.dlq, "message", "messages"),
            plural(s.dlq_with_effect, "its", "their"),
        ));
    }
    if s.dlq_without_effect > 0 {
        notes.push(format!(
            "DLQ: {} of {} dead-lettered {} never had an effect: that work is not done, and nothing \
             will do it unless someone handles the DLQ.",
            s.dlq_without_effect,
            s.dlq,
            plural(s.dlq, "message", "messages"),
        ));
    }
    let timeout_ms = s.visibility_timeout_s * 1000.0;
    if timeout_ms > 0.0 && s.handler_latency_ms.p99 > timeout_ms {
        notes.push(format!(
            "TIMEOUT: handler p99 ({:.3} ms) is longer than the visibility timeout ({timeout_ms:.3} ms): \
             every handler that ran past the timeout had its message redelivered while it was still \
             being worked on.",
            s.handler_latency_ms.p99,
        ));
    }
    if s.unfinished > 0 {
        notes.push(format!(
            "UNFINISHED: {} {} still in the queue when the run stopped.",
            s.unfinished,
            plural(s.unfinished, "message was", "messages were"),
        ));
    }
    if let Some(i) = &s.ingress {
        notes.extend(super::ingress::notes(i));
    }
    notes
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::testkit::{ack_before_work, slow_handler};
    use crate::profile::{Budgets, StaleAck};
    use crate::record::RunRecord;
    use crate::report::summary::{summarise, RunInfo};
    use crate::verdict::Verdict;

    fn info() -> RunInfo {
        RunInfo {
            profile: "incident".into(),
            mode: "sim".into(),
            seed: 1,
            wall_s: 0.25,
        }
    }

    fn budgets() -> Budgets {
        Budgets {
            lost: Some(0),
            duplicate_rate: Some(0.0),
            late_after: Duration::from_secs(300),
            ..Budgets::default()
        }
    }

    #[test]
    fn a_lost_message_is_said_in_words() {
        let t = table(&summarise(&info(), &ack_before_work(), &budgets()));
        assert!(
            t.starts_with("FAIL  incident (sim, seed 1): 1 of 2 budgets failed\n"),
            "{t}"
        );
        assert!(t.contains(
            "LOST: 1 message was deleted from the queue and never had an effect: nothing will ever do it."
        ));
        assert!(
            t.contains("\n  lost                                 1  deleted, no effect\n"),
            "{t}"
        );
        assert!(
            t.contains("\n  lost                                 0             1  FAIL\n"),
            "{t}"
        );
        assert!(
            t.contains("\n  duplicate_rate                       0             0  PASS\n"),
            "{t}"
        );
        assert!(!t.contains("DLQ:") && !t.contains("TIMEOUT:"));
    }

    #[test]
    fn many_lost_messages() {
        let mut s = summarise(&info(), &ack_before_work(), &budgets());
        s.lost = 40;
        assert!(table(&s).contains(
            "LOST: 40 messages were deleted from the queue and never had an effect: nothing will ever do them."
        ));
    }

    #[test]
    fn a_slow_handler_warns_about_the_dlq_and_the_timeout() {
        let t = table(&summarise(
            &info(),
            &slow_handler(StaleAck::Reject),
            &budgets(),
        ));
        assert!(t.contains(
            "DLQ: 1 of 1 dead-lettered message already had its effect: replaying the DLQ would duplicate those effects."
        ));
        assert!(t.contains("TIMEOUT: handler p99 (34000.000 ms) is longer than the visibility timeout (30000.000 ms)"));
        assert!(t.contains("redelivered while it was still being worked on."));
        assert!(
            t.contains(
                "\n  handler           34000.000  34000.000  34000.000  34000.000  34000.000\n"
            ),
            "{t}"
        );
        assert!(t.contains("handler p99 / timeout = 1.133\n"));
        assert!(
            t.contains("\n  duplicate_rate                       0             2  FAIL\n"),
            "{t}"
        );
        assert!(!t.contains("LOST:"));
    }

    #[test]
    fn dead_letters_without_effect_are_said_in_words() {
        let mut s = summarise(&info(), &slow_handler(StaleAck::Reject), &budgets());
        (s.dlq, s.dlq_with_effect, s.dlq_without_effect) = (5, 1, 4);
        assert!(table(&s).contains(
            "DLQ: 4 of 5 dead-lettered messages never had an effect: that work is not done, and \
             nothing will do it unless someone handles the DLQ."
        ));
    }

    #[test]
    fn a_run_without_budgets_passes_and_says_so() {
        let t = table(&summarise(
            &info(),
            &RunRecord::default(),
            &Budgets::default(),
        ));
        assert!(t.starts_with("PASS  incident (sim, seed 1): no budgets set\n"));
        assert!(t.contains("(none set)"));
        assert!(!t.contains("LOST:"));
    }

    #[test]
    fn an_interrupted_run_says_it_is_incomplete_and_has_no_verdict() {
        let mut r = ack_before_work();
        r.incomplete = Some(crate::runner::interrupt::REASON.to_string());
        let s = summarise(&info(), &r, &budgets());
        assert_eq!(s.verdict, Verdict::Incomplete);
        assert!(!s.complete);
        let t = table(&s);
        // ack_before_work ends at 3 s.
        assert!(
            t.starts_with(
                "INCOMPLETE  incident (sim, seed 1): interrupted by a signal (SIGINT, SIGTERM or \
                 SIGHUP) at 3.000 s, before its end: what was recorded up to then, no verdict\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("\nBudgets (of the part that ran: no verdict)\n"),
            "{t}"
        );
        assert!(
            t.contains("\nINCOMPLETE: the run was interrupted by a signal"),
            "{t}"
        );
        assert!(t.contains("no pass or fail verdict (exit code 3)."), "{t}");
    }

    #[test]
    fn every_crash_is_named() {
        let mut r = ack_before_work();
        for (i, at) in [1u64, 2].into_iter().enumerate() {
            r.events.push(crate::record::Event {
                at: at * 1_000_000_000,
                kind: crate::record::EventKind::WorkerCrashed {
                    worker: i as u32 + 1,
                    exit: crate::record::WorkerExit::Status(i as i32),
                },
            });
        }
        r.events.sort_by_key(|e| e.at);
        let s = summarise(&info(), &r, &budgets());
        assert_eq!(s.worker_crashes, 2);
        let t = table(&s);
        // ack_before_work has one kill of its own; the two crashes are ours.
        assert!(
            t.contains("\n  worker kills / crashes           1 / 2\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "CRASHES: 2 times a worker died by itself, not by a kill rule: worker 1 at \
                 1.000 s (exit status 0), worker 2 at 2.000 s (exit status 1)."
            ),
            "{t}"
        );
        // Past 10, the note names the first 10 and counts the rest.
        let mut many = s.clone();
        many.crashes = (0..12).map(|_| s.crashes[0].clone()).collect();
        let t = table(&many);
        assert_eq!(t.matches("(exit status 0)").count(), CRASHES_NAMED, "{t}");
        assert!(
            t.contains("; and 2 more (summary.json lists every one)."),
            "{t}"
        );
    }

    #[test]
    fn budget_numbers_are_short() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(34.0 / 30.0), "1.133333");
        assert_eq!(number(1e-7), "1e-7");
    }
}
