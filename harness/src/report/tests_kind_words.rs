//! Each kind's words in the console and the notes: a run summed up as it is, then read as a run
//! on Kafka's consumer group and on a share group (`broker_kind`), whose reports say records,
//! commits, the poll deadline, ACCEPTs and the acquisition lock where a queue's say messages,
//! deletes and leases.

use std::time::Duration;

use super::console::table;
use super::summary::{summarise, RunInfo, Summary};
use super::words::{count_rows, latency_definitions};
use crate::metrics::testkit::{ack_before_work, slow_handler};
use crate::metrics::HandlerLeases;
use crate::profile::{Budgets, StaleAck};

fn on(kind: &str, record: &crate::record::RunRecord) -> Summary {
    let info = RunInfo {
        profile: "incident".into(),
        mode: "sim".into(),
        seed: 1,
        wall_s: 0.25,
    };
    let budgets = Budgets {
        lost: Some(0),
        late_after: Duration::from_secs(300),
        ..Budgets::default()
    };
    let mut s = summarise(&info, record, &budgets);
    s.broker_kind = kind.into();
    s
}

fn note(s: &Summary, head: &str) -> String {
    super::words::notes(s)
        .into_iter()
        .map(|n| n.text)
        .find(|t| t.starts_with(head))
        .unwrap_or_else(|| panic!("no {head} note in {}", table(s)))
}

fn row(s: &Summary, label: &str) -> String {
    count_rows(s)
        .into_iter()
        .find(|r| r.0 == label)
        .map(|r| format!("{} {}", r.1, r.2))
        .unwrap_or_else(|| panic!("no {label} row in {}", table(s)))
}

#[test]
fn a_member_past_its_poll_deadline_is_removed_and_fenced() {
    // As the Kafka Thursday: 28 handlers, one (the batch's record in hand at 443 s) past the
    // member's poll deadline, its record fetched again by the other member; no delivery limit,
    // so nothing given up.
    let mut s = on("kafka", &slow_handler(StaleAck::Reject));
    s.handler_leases = HandlerLeases {
        handlers: 28,
        acked_in_time: 27,
        outlived: 1,
        outlived_redelivered: 1,
        ..HandlerLeases::default()
    };
    assert_eq!(
        note(&s, "TIMEOUT"),
        "TIMEOUT: 1 of 28 handlers were still working on their record when their member's poll \
         deadline passed (max.poll.interval.ms 30000.000 ms, handler p99 34000.000 ms): the \
         coordinator removed the member from the group, gave its partitions to the others and \
         fenced its commits; 1 had its record fetched again while still being worked on."
    );
    // slow_handler's 3 late acks, as commits.
    assert_eq!(
        row(&s, "stale commits"),
        "3 commits after the member lost the record (fenced, or fetched again)"
    );
    let t = table(&s);
    assert!(!t.contains("stale acks"), "{t}");
    assert!(t.contains("\n  to poll deadline "), "{t}");
    assert!(!t.contains("lease held"), "{t}");
    assert!(
        t.contains("time to done: publish to the effect and the commit that passed the record"),
        "{t}"
    );
    assert!(
        latency_definitions(&s).contains(
            &"to poll deadline: from each record's delivery to its member's poll deadline (the \
              poll that fetched it plus max.poll.interval.ms), a whole batch's handling before \
              the next poll."
                .to_string()
        ),
        "{:?}",
        latency_definitions(&s)
    );
}

#[test]
fn a_record_committed_past_without_effect_is_lost() {
    // ack_before_work: 1 message acked, its handler killed before the effect: lost.
    let s = on("kafka", &ack_before_work());
    assert_eq!(
        note(&s, "LOST"),
        "LOST: 1 record was committed past and never had an effect: nothing will ever do it."
    );
    assert_eq!(row(&s, "lost"), "1 committed, no effect");
    assert_eq!(
        row(&s, "unfinished"),
        "0 still in the topic, uncommitted at the end"
    );
    let q = on("sqs", &ack_before_work());
    assert_eq!(row(&q, "lost"), "1 deleted, no effect");
    assert_eq!(row(&q, "unfinished"), "0 still in the queue at the end");
}

#[test]
fn a_share_groups_lock_ends_in_a_refused_accept_and_an_archive() {
    // slow_handler: 3 handlers each outlive the 30 s lock; deliveries 1 and 2 were acquired
    // again by the next member, delivery 3's lock ended at the limit (archived); the 3 late
    // ACCEPTs are stale.
    let s = on("kafka-share", &slow_handler(StaleAck::Reject));
    assert_eq!(
        note(&s, "TIMEOUT"),
        "TIMEOUT: 3 of 3 handlers still held their record when the lock they held ran out \
         (acquisition lock (group.share.record.lock.duration.ms) 30000.000 ms, handler p99 \
         34000.000 ms): their ACCEPT then fails with INVALID_RECORD_STATE; 2 had their record \
         acquired again while still being worked on, 1 had its record archived (delivery count \
         limit reached: it stays in the log, never delivered again)."
    );
    assert_eq!(
        row(&s, "stale ACCEPTs"),
        "3 ACCEPTs after the lock had ended (INVALID_RECORD_STATE)"
    );
    let t = table(&s);
    assert!(
        t.contains("p99 of (time held before settling / lock held) = 1.133\n"),
        "{t}"
    );
    assert!(t.contains("\n  lock held "), "{t}");
}

#[test]
fn a_queue_keeps_its_words() {
    // The same run on SQS: the words every queue has always said.
    let s = on("sqs", &slow_handler(StaleAck::Reject));
    assert_eq!(
        note(&s, "TIMEOUT"),
        "TIMEOUT: 3 of 3 handlers still held their message when the lease they held ran out \
         (visibility timeout 30000.000 ms, handler p99 34000.000 ms): 2 had their message \
         redelivered while still being worked on, 1 had its message moved to the DLQ."
    );
    assert_eq!(row(&s, "stale acks"), "3 acks after the lease had ended");
    assert!(latency_definitions(&s).contains(
        &"lease held: the lease each handler had, the visibility timeout moved by its own \
          visibility changes (a heartbeat's extensions)."
            .to_string()
    ));
}

#[test]
fn an_incomplete_run_counts_what_is_left_in_the_kinds_words() {
    // The same slow-handler run, stopped at its end by hand: the INCOMPLETE note says where the
    // unsettled messages (records) still are, in each kind's words; SQS keeps a queue's.
    let note_on = |kind: &str| {
        let mut s = on(kind, &slow_handler(StaleAck::Reject));
        s.complete = false;
        s.incomplete_reason = Some("interrupted (SIGINT)".into());
        note(&s, "INCOMPLETE")
    };
    assert!(
        note_on("sqs").contains("(messages still in the queue count as unfinished)"),
        "{}",
        note_on("sqs")
    );
    let kafka = note_on("kafka");
    assert!(
        kafka.contains("(records still in the topic, uncommitted count as unfinished)"),
        "{kafka}"
    );
    let share = note_on("kafka-share");
    assert!(
        share.contains("(records still in the topic, not accepted count as unfinished)"),
        "{share}"
    );
}
