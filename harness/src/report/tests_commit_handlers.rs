//! Live Kafka's handler latency from its commits: the handlers the commits timed alone, or no
//! number and the reason, never the time from one fetch to the next.

use std::time::Duration;

use super::summary::{summarise, RunInfo, Summary};
use crate::metrics::testkit::Rec;
use crate::profile::Budgets;
use crate::record::{AckOutcome, CommitHandlers, HandlerEnd, RunRecord};

const MS: u64 = 1_000_000;

/// Three records fetched together at 0 s by one worker (one fetch): each handler span ends at
/// the next record's fetch, as the proxy's fetches make them (0 ms), the last at its commit at
/// 0.24 s; the commits cover one record each at 0.05, 0.15 and 0.24 s.
fn fetched_together(commits: CommitHandlers) -> Summary {
    let mut r = Rec::new(300.0, 1);
    let m: Vec<u32> = (0..3).map(|_| r.publish(0.0)).collect();
    for (i, &seq) in m.iter().enumerate() {
        r.deliver(0.0, seq, 1, 1);
        if i < 2 {
            r.end_handler(0.0, seq, 1, 1, HandlerEnd::Finished);
        }
    }
    for (&seq, at) in m.iter().zip([0.05, 0.15, 0.24]) {
        r.ack(at, seq, 1, 1, AckOutcome::Deleted);
    }
    r.end_handler(0.24, m[2], 1, 1, HandlerEnd::Finished);
    let mut record: RunRecord = r.finish(1.0);
    record.broker_kind = "kafka".into();
    record.commit_handlers = Some(commits);
    let info = RunInfo {
        profile: "kafka-commits".into(),
        mode: "live".into(),
        seed: 1,
        wall_s: 1.0,
    };
    let budgets = Budgets {
        late_after: Duration::from_secs(300),
        ..Budgets::default()
    };
    summarise(&info, &record, &budgets)
}

/// The console's handler latency row, word by word.
fn latency_row(table: &str) -> Option<Vec<&str>> {
    table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() == 6 && w[0] == "handler")
}

#[test]
fn records_committed_one_by_one_are_timed_from_hand_over_to_commit() {
    // The commits timed 50, 100 and 90 ms (hand-over at the fetch, then at each previous
    // commit): p50 90 ms (90.047, the top of its HDR bucket), max 100 ms; the fetch spans (0,
    // 0 and 240 ms) are not used.
    let s = fetched_together(CommitHandlers {
        timed: vec![50 * MS, 100 * MS, 90 * MS],
        ..CommitHandlers::default()
    });
    assert_eq!(s.handler_latency_unmeasured, None);
    assert_eq!(
        (s.handler_latency_ms.p50, s.handler_latency_ms.max),
        (90.047, 100.0)
    );
    let t = super::console::table(&s);
    let row = latency_row(&t);
    assert_eq!(
        row,
        Some(vec![
            "handler", "90.047", "100.000", "100.000", "100.000", "100.000"
        ]),
        "{t}"
    );
    assert!(!t.contains("HANDLER LATENCY"), "{t}");
}

#[test]
fn auto_commit_leaves_handler_latency_unmeasured_with_the_reason() {
    // Told to auto-commit: no handler is timed, the row is empty, the note says why.
    let s = fetched_together(CommitHandlers {
        timed: vec![50 * MS],
        auto_commit: true,
        ..CommitHandlers::default()
    });
    let why = s.handler_latency_unmeasured.clone().expect("a reason");
    assert!(why.contains("enable.auto.commit"), "{why}");
    assert_eq!(s.handler_latency_ms, Default::default());
    let notes: Vec<String> = super::words::notes(&s)
        .into_iter()
        .map(|n| n.text)
        .collect();
    assert!(
        notes.contains(&format!(
            "HANDLER LATENCY: cannot be measured on this run: {why}. The handler row is left \
             empty (0 in summary.json) rather than filled with the time from one fetch to the \
             next, and a `p999_handler_latency` budget is not met."
        )),
        "{notes:#?}"
    );
    let t = super::console::table(&s);
    let row = latency_row(&t);
    assert_eq!(row, Some(vec!["handler", "-", "-", "-", "-", "-"]), "{t}");
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["handler_latency_unmeasured"], why.as_str());
}

#[test]
fn a_batch_commit_leaves_handler_latency_unmeasured() {
    // One commit covered 3 records: not timed; the reason counts them.
    let s = fetched_together(CommitHandlers {
        batched_commits: 1,
        batched_records: 3,
        ..CommitHandlers::default()
    });
    assert!(s
        .handler_latency_unmeasured
        .as_deref()
        .is_some_and(|w| w.starts_with("1 commit covered 3 records at once")));
}
