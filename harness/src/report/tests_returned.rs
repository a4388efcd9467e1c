//! The `RETURNED` note from hand-built live RabbitMQ records: a delivery the worker's own close
//! gave back is said to be that, not a consumer timeout; the timeout's own close still is a
//! `TIMEOUT`.

use std::time::Duration;

use super::summary::{summarise, RunInfo, Summary};
use crate::metrics::testkit::Rec;
use crate::profile::Budgets;
use crate::record::{AckOutcome, CallOutcome, HandlerEnd, ReturnWhy, RunRecord};

fn summary_of(mut record: RunRecord) -> Summary {
    record.broker_kind = "rabbitmq".into();
    let info = RunInfo {
        profile: "close-after-ack".into(),
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

fn notes(s: &Summary) -> Vec<String> {
    super::words::notes(s).into_iter().map(|n| n.text).collect()
}

/// Message `m`'s delivery `d` to `worker` at `at`: its provider call and effect, 50 ms of work.
fn work(r: &mut Rec, at: f64, m: u32, worker: u32, d: u32) {
    r.deliver(at, m, worker, d)
        .call(
            at,
            Some(at + 0.05),
            Some(m),
            worker,
            d,
            CallOutcome::Accepted,
        )
        .effect(at + 0.05, Some(m), worker, d);
}

#[test]
fn an_ack_overtaken_by_the_workers_connection_close_is_no_timeout() {
    // One worker on a 1,800 s consumer timeout. Message 1 is delivered at 0 s and sent by 0.05 s;
    // the worker acks and closes its connection at 0.1 s, the close ahead of the ack: RabbitMQ
    // returns delivery 1, and the ack that follows is stale. The worker connects again; delivery
    // 2 at 1 s is sent again (a duplicate) and acked in time at 1.1 s.
    // Handlers: 2. Delivery 1 held its message to 0.1 s, returned at 0.1 s by the connection
    // close: returned 1 (connection closed), not outlived; delivery 2 acked in time.
    let mut r = Rec::new(1800.0, 1);
    let m = r.publish(0.0);
    work(&mut r, 0.0, m, 1, 1);
    r.take_back(0.1, m, 1, 1, ReturnWhy::ConnectionClosed)
        .ack(0.1, m, 1, 1, AckOutcome::StaleRejected)
        .end_handler(0.1, m, 1, 1, HandlerEnd::Finished);
    work(&mut r, 1.0, m, 1, 2);
    r.ack(1.1, m, 1, 2, AckOutcome::Deleted)
        .end_handler(1.1, m, 1, 2, HandlerEnd::Finished);
    let s = summary_of(r.finish(2.0));
    let l = s.handler_leases;
    assert_eq!((l.handlers, l.outlived, l.returned), (2, 0, 1));
    assert_eq!(l.returned_by.connection_closed, 1);
    let notes = notes(&s);
    assert!(
        !notes.iter().any(|n| n.starts_with("TIMEOUT")),
        "{notes:#?}"
    );
    let returned = notes
        .iter()
        .find(|n| n.starts_with("RETURNED"))
        .expect("a RETURNED note");
    assert_eq!(
        returned,
        "RETURNED: 1 of 2 handlers had their message taken back by the broker before they \
         settled it, before their consumer timeout (1800000.000 ms) ran out: 1 because the \
         worker closed its connection; 0 had their message redelivered while still being worked \
         on. A worker that closes its channel or connection gives back every delivery it has \
         not acked; an ack sent after the close (or overtaken by it: a client that writes the \
         close before its buffered ack) is discarded, and the message is delivered again."
    );
}

#[test]
fn the_timeout_and_the_closes_are_each_said_for_what_they_are() {
    // Three workers on a 30 s consumer timeout, a message each at 0 s.
    // - m1 (worker 1): the broker closes its channel at 30 s for the consumer timeout (a
    //   `Lease` return), the handler acks stale at 34 s: outlived (TIMEOUT 1 of 3).
    // - m2 (worker 2): the worker closes its channel at 1 s without acking; m2 goes to worker 3
    //   at 1 s while worker 2 still works (redelivered), worker 2's handler ends at 2 s.
    // - m3 (worker 3): acked in time at 0.5 s. Worker 3's handler of m2 (delivered at 1 s) is
    //   acked at 1.5 s, in time.
    // Handlers: 4 (m1, m2 by worker 2, m3, m2 by worker 3): 2 acked in time, 1 outlived, 1
    // returned (channel closed, redelivered).
    let mut r = Rec::new(30.0, 3);
    let (m1, m2, m3) = (r.publish(0.0), r.publish(0.0), r.publish(0.0));
    work(&mut r, 0.0, m1, 1, 1);
    work(&mut r, 0.0, m2, 2, 1);
    work(&mut r, 0.0, m3, 3, 1);
    r.ack(0.5, m3, 3, 1, AckOutcome::Deleted)
        .end_handler(0.5, m3, 3, 1, HandlerEnd::Finished)
        .take_back(1.0, m2, 2, 1, ReturnWhy::ChannelClosed);
    work(&mut r, 1.0, m2, 3, 2);
    r.ack(1.5, m2, 3, 2, AckOutcome::Deleted)
        .end_handler(1.5, m2, 3, 2, HandlerEnd::Finished)
        .end_handler(2.0, m2, 2, 1, HandlerEnd::Finished)
        .take_back(30.0, m1, 1, 1, ReturnWhy::Lease)
        .ack(34.0, m1, 1, 1, AckOutcome::StaleRejected)
        .end_handler(34.0, m1, 1, 1, HandlerEnd::Finished);
    let s = summary_of(r.finish(40.0));
    let l = s.handler_leases;
    assert_eq!(
        (l.handlers, l.acked_in_time, l.outlived, l.returned),
        (4, 2, 1, 1)
    );
    assert_eq!(
        (l.returned_redelivered, l.returned_by.channel_closed),
        (1, 1)
    );
    let notes = notes(&s);
    let timeout = notes
        .iter()
        .find(|n| n.starts_with("TIMEOUT"))
        .expect("a TIMEOUT note");
    assert!(
        timeout.starts_with(
            "TIMEOUT: 1 of 4 handlers still held their message when the lease they held ran \
             out (consumer timeout 30000.000 ms"
        ),
        "{timeout}"
    );
    let returned = notes
        .iter()
        .find(|n| n.starts_with("RETURNED"))
        .expect("a RETURNED note");
    assert!(
        returned.starts_with(
            "RETURNED: 1 of 4 handlers had their message taken back by the broker before they \
             settled it, before their consumer timeout (30000.000 ms) ran out: 1 because the \
             worker closed the channel that held it; 1 had its message redelivered while still \
             being worked on. A worker that closes"
        ),
        "{returned}"
    );
}

#[test]
fn a_sim_run_has_no_returns_and_no_returned_note() {
    // The slow handler's incident (3 handlers, each outliving its 30 s lease): the timer's
    // ends only, as every sim run has them.
    let s = summary_of(crate::metrics::testkit::slow_handler(
        crate::profile::StaleAck::Reject,
    ));
    assert_eq!(
        (s.handler_leases.outlived, s.handler_leases.returned),
        (3, 0)
    );
    assert!(!notes(&s).iter().any(|n| n.starts_with("RETURNED")));
    let json = serde_json::to_value(s.handler_leases).unwrap();
    assert!(json.get("returned").is_none() && json.get("returned_by").is_none());
}
