//! The console table `ackbench run` prints: the verdict first, then what happened to the
//! messages, handler latency against the visibility timeout, the budgets, and in plain words what
//! the numbers mean when something went wrong.

use std::fmt::Write;

use super::summary::Summary;
use super::words::{
    count_rows, latency_cells, latency_rows, lease_line, notes, number, verdict_detail,
};

/// Narrowest label column of a table (labels are left-aligned, values right-aligned, every
/// column as wide as its longest cell).
const LABEL: usize = 26;
/// Narrowest value column.
const VALUE: usize = 12;
/// Narrowest latency column.
const COLUMN: usize = 11;

/// The summary as an aligned plain-text table, ending with a newline.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    verdict(&mut out, s);
    counts(&mut out, s);
    if let Some(i) = &s.ingress {
        out.push_str("\nIngress (HTTP load by goose)\n");
        rows(&mut out, &super::ingress::rows(i));
    }
    if let Some(p) = &s.publisher {
        out.push_str("\nPublisher (the run's own sends against the schedule)\n");
        rows(&mut out, &super::publisher::rows(p));
    }
    let groups = super::groups::rows(s);
    if !groups.is_empty() {
        let _ = writeln!(out, "\n{}", super::groups::heading(s));
        let groups: Vec<(&str, String, String)> = groups
            .iter()
            .map(|(g, v, n)| (g.as_str(), v.clone(), n.clone()))
            .collect();
        rows(&mut out, &groups);
    }
    let capacity = super::capacity::rows(s);
    if !capacity.is_empty() {
        let _ = writeln!(out, "\n{}", super::capacity::HEADING);
        let capacity: Vec<(&str, String, String)> = capacity
            .iter()
            .map(|(l, v, n)| (l.as_str(), v.clone(), n.clone()))
            .collect();
        rows(&mut out, &capacity);
    }
    rebalances(&mut out, s);
    latency(&mut out, s);
    budgets(&mut out, s);
    let notes = notes(s);
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n.plain());
            out.push('\n');
        }
    }
    out
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

/// Rows of (label, value, note), the label and value columns as wide as their longest cell.
fn rows(out: &mut String, rows: &[(&str, String, String)]) {
    let label_w = widest(rows.iter().map(|r| r.0), LABEL - 1) + 1;
    let value_w = widest(rows.iter().map(|r| r.1.as_str()), VALUE);
    for (label, value, note) in rows {
        let line = format!("  {label:<label_w$}{value:>value_w$}  {note}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// The length of the longest of `cells`, at least `min`.
fn widest<'a>(cells: impl Iterator<Item = &'a str>, min: usize) -> usize {
    cells.map(|c| c.chars().count()).fold(min, usize::max)
}

fn counts(out: &mut String, s: &Summary) {
    out.push_str("\nMessages\n");
    rows(out, &count_rows(s));
}

/// A consumer group's rebalances, one line each, the columns as wide as their widest cell.
fn rebalances(out: &mut String, s: &Summary) {
    use super::rebalances::{self as r, HEADS};
    let rows = r::rows(s);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", r::HEADING);
    let widths: Vec<usize> = (0..HEADS.len())
        .map(|i| widest(rows.iter().map(|c| c[i].as_str()).chain([HEADS[i]]), 0))
        .collect();
    for cells in std::iter::once(HEADS.map(String::from)).chain(rows) {
        let mut line = String::from(" ");
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            // The reason is text, left-aligned; the rest are numbers.
            if i == 4 {
                let _ = write!(line, "  {cell:<w$}");
            } else {
                let _ = write!(line, "  {cell:>w$}");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out, "  {}", r::note(s));
}

fn latency(out: &mut String, s: &Summary) {
    let heads = ["p50", "p90", "p99", "p99.9", "max"];
    let rows = latency_rows(s);
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|(label, l)| latency_cells(s, label, l))
        .collect();
    let title = "Latency (ms)";
    let label_w = widest(rows.iter().map(|r| r.0), 15) + 1;
    let first_w = (label_w + 2).max(title.len() + 1);
    let widths: Vec<usize> = (0..heads.len())
        .map(|i| {
            widest(
                cells.iter().map(|c| c[i].as_str()).chain([heads[i]]),
                COLUMN - 2,
            ) + 2
        })
        .collect();
    let mut head = format!("\n{title:<first_w$}");
    for (h, w) in heads.iter().zip(&widths) {
        let _ = write!(head, "{h:>w$}");
    }
    let _ = writeln!(out, "{head}");
    for ((label, _), row) in rows.iter().zip(&cells) {
        let mut line = format!("  {label:<w$}", w = first_w - 2);
        for (v, w) in row.iter().zip(&widths) {
            let _ = write!(line, "{v:>w$}");
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "  {}", lease_line(s));
    let _ = writeln!(
        out,
        "  end to end: publish to first effect; time to done: publish to the effect and {} ({} \
         of {} done)",
        s.words().done.by,
        s.messages_done,
        s.messages
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
    let limits: Vec<String> = s.budgets.iter().map(|b| number(b.limit)).collect();
    let actuals: Vec<String> = s.budgets.iter().map(|b| number(b.actual)).collect();
    let name_w = widest(s.budgets.iter().map(|b| b.name.as_str()), 23) + 1;
    let limit_w = widest(limits.iter().map(String::as_str), 12) + 2;
    let actual_w = widest(actuals.iter().map(String::as_str), 12) + 2;
    let _ = writeln!(
        out,
        "  {:<name_w$}{:>limit_w$}{:>actual_w$}  result",
        "budget", "limit", "actual"
    );
    for ((b, limit), actual) in s.budgets.iter().zip(&limits).zip(&actuals) {
        let result = if b.pass { "PASS" } else { "FAIL" };
        let _ = writeln!(
            out,
            "  {:<name_w$}{limit:>limit_w$}{actual:>actual_w$}  {result}",
            b.name
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::testkit::{ack_before_work, mis_keyed, slow_handler};
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
    fn calls_not_matched_to_a_held_delivery_are_warned_of_with_the_reason() {
        // A live run's record: two calls whose worker held no delivery of their message, one
        // whose key nobody published; 3 in the row and in the note, with each reason's count.
        let mut r = ack_before_work();
        let call = |why| crate::record::UnattributedCall {
            at: 0,
            worker: 1,
            seq: Some(1),
            why,
        };
        use crate::record::Unattributed::{NotHeld, UnknownKey};
        r.unattributed_calls = vec![call(NotHeld), call(UnknownKey), call(NotHeld)];
        let s = summarise(&info(), &r, &budgets());
        let t = table(&s);
        assert!(
            t.contains("\n  unattributed calls                   3  provider calls not matched to a delivery the worker held\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "ATTRIBUTION: 3 provider calls could not be matched to a delivery the worker \
                 held: 1 named a key no published message has, 2 named a message their worker \
                 held no delivery of."
            ),
            "{t}"
        );
        let json = crate::report::summary::to_json(&s);
        assert!(json.contains(
            "\"unattributed_calls\": {\n    \"unknown_key\": 1,\n    \"not_held\": 2,\n    \"ambiguous\": 0\n  }"
        ));
        // Every call matched: no row, no note, no field.
        let s = summarise(&info(), &ack_before_work(), &budgets());
        assert!(!table(&s).contains("ATTRIBUTION"));
        assert!(!crate::report::summary::to_json(&s).contains("unattributed_calls"));
    }

    #[test]
    fn unmatched_effects_fail_the_run_as_misconfigured_and_nothing_is_called_lost() {
        // Both orders were sent once under keys ackbench never published: 2 unmatched effects,
        // 2 messages unverifiable, none lost; the verdict fails on the keys, not on loss.
        let s = summarise(&info(), &mis_keyed(), &budgets());
        assert_eq!(
            (s.lost, s.unmatched_effects, s.unverifiable_keys),
            (0, 2, 2)
        );
        assert_eq!(s.verdict, Verdict::Fail);
        let t = table(&s);
        assert!(
            t.starts_with(
                "FAIL  incident (sim, seed 1): misconfigured: 2 effects name no published \
                 message (1 of 3 budgets failed)\n"
            ),
            "{t}"
        );
        assert!(t.contains("\n  unmatched_effects                    0             2  FAIL\n"));
        assert!(
            t.contains("\n  unverifiable keys                    2  deleted, no effect matched")
        );
        assert!(t.contains(
            "UNMATCHED: 2 effects named keys no published message has, so they cannot be counted \
             against their message: the run is misconfigured, not losing data. ackbench reads an \
             effect's key from each provider call where `provider.key` says"
        ));
        assert!(t.contains("`workload.ingress.message_key`"), "{t}");
        assert!(t.contains(
            "2 messages were deleted from the queue with no effect under their key: unverifiable \
             while effects are unmatched (not counted as lost)."
        ));
        assert!(
            !t.contains("LOST:") && !t.contains("nothing will ever"),
            "{t}"
        );
        let json = crate::report::summary::to_json(&s);
        assert!(json.contains("\"lost\": 0,"));
        assert!(json.contains("\"unmatched_effects\": 2,\n  \"unverifiable_keys\": 2,\n"));
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
        // Deliveries 1 and 2 outlived their lease and the message went to the next worker;
        // delivery 3's lease ended in the DLQ.
        assert!(
            t.contains(
                "TIMEOUT: 3 of 3 handlers still held their message when the lease they held ran \
                 out (visibility timeout 30000.000 ms, handler p99 34000.000 ms): 2 had their \
                 message redelivered while still being worked on, 1 had its message moved to the \
                 DLQ."
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "\n  handler           34000.000  34000.000  34000.000  34000.000  34000.000\n"
            ),
            "{t}"
        );
        assert!(t.contains("p99 of (time held before settling / lease held) = 1.133\n"));
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
        assert_eq!(
            t.matches("(exit status 0)").count(),
            crate::report::notes::CRASHES_NAMED,
            "{t}"
        );
        assert!(
            t.contains("; and 2 more (summary.json lists every one)."),
            "{t}"
        );
    }

    #[test]
    fn handlers_that_kept_their_lease_are_no_timeout() {
        // The slow handler's counts, as a heartbeat would have them: 3 handlers past the 30 s
        // timeout, all acked in time after extending.
        let mut s = summarise(&info(), &slow_handler(StaleAck::Reject), &budgets());
        s.handler_leases = crate::metrics::HandlerLeases {
            handlers: 3,
            acked_in_time: 3,
            extended: 3,
            ..Default::default()
        };
        let t = table(&s);
        assert!(!t.contains("TIMEOUT:"), "{t}");
        assert!(t.contains(
            "LEASE: handler p99 (34000.000 ms) is longer than the visibility timeout (30000.000 \
             ms), yet no handler outlived the lease it held: 3 of 3 acked in time, 3 after \
             extending their lease; no message was redelivered while being worked on."
        ));
    }

    #[test]
    fn a_consumer_that_never_received_is_said_in_words() {
        let mut s = summarise(&info(), &RunRecord::default(), &budgets());
        (s.messages, s.unfinished, s.worker_crashes) = (10, 10, 7632);
        let t = table(&s);
        assert!(t.contains(
            "NEVER RAN: the consumer never ran: not one of the 10 published messages was ever \
             received (7632 worker crashes, 0 kills)."
        ));
        assert!(t.contains("UNFINISHED: 10 messages were still in the queue"));
    }

    #[test]
    fn a_chaos_rule_that_never_fired_is_warned_about() {
        let mut s = summarise(&info(), &ack_before_work(), &budgets());
        let rule = |rule, fired, optional| crate::metrics::RuleFires {
            rule,
            fault: "kill_worker".into(),
            label: format!("kill_worker at call_answered (delivery {})", rule + 4),
            optional,
            fired,
        };
        s.chaos_rules = vec![rule(0, 3, false), rule(1, 0, false), rule(2, 0, true)];
        let t = table(&s);
        assert!(t.contains(
            "CHAOS: rule 1 (kill_worker at call_answered (delivery 5)) never fired: the run did \
             not test what the rule describes, so the verdict fails on it (a rule that may not \
             fire says optional: true)."
        ));
        assert!(t.contains(
            "CHAOS: optional rule 2 (kill_worker at call_answered (delivery 6)) never fired in \
             this run."
        ));
        assert!(!t.contains("rule 0"));
    }

    #[test]
    fn columns_grow_with_their_content() {
        // 898006 unfinished of 1000000 and a 9-digit latency: every column widens to its
        // longest cell, so values never run into each other.
        let mut s = summarise(&info(), &ack_before_work(), &budgets());
        (s.messages, s.unfinished) = (1_000_000_000_000, 898_006);
        s.time_to_done_ms.max = 123_456_789.5;
        s.messages_done = 1;
        let t = table(&s);
        // The label column is the longest label (24) plus a space, at least 26; the value
        // column the 13 digits.
        let messages = format!("\n  {:<26}{}  published\n", "messages", "1000000000000");
        assert!(t.contains(&messages), "{t}");
        let unfinished = format!("\n  {:<26}{:>13}  still", "unfinished", "898006");
        assert!(t.contains(&unfinished), "{t}");
        let head = t
            .lines()
            .find(|l| l.starts_with("Latency (ms)"))
            .unwrap_or_default();
        let done = t
            .lines()
            .find(|l| l.starts_with("  time to done"))
            .unwrap_or_default();
        assert!(done.ends_with(" 123456789.500"), "{t}");
        assert_eq!(head.len(), done.len(), "{t}");
        assert!(head.ends_with("   max"), "{t}");
    }

    #[test]
    fn budget_numbers_are_short() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(34.0 / 30.0), "1.133333");
        assert_eq!(number(1e-7), "1e-7");
    }
}
