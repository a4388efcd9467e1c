use std::time::Duration;

use crate::profile::connection::{
    ConnectionFault, ConnectionRule, CutSchedule, CutTrigger, Direction, HeldFrames, Window,
};
use crate::profile::testutil::{error, one_chaos_rule, BASE};

/// `BASE` (run 10m, drain 30m by default: the run ends at 40m) with three workers and one
/// connection rule (on line 7) written `rule`.
fn profile(rule: &str) -> String {
    format!(
        "{}chaos:\n  - connection: {rule}\n",
        BASE.replace(
            "target: ack-after-work",
            "target: ack-after-work, workers: 3"
        )
    )
}

fn rule(text: &str) -> ConnectionRule {
    let rule = one_chaos_rule(&profile(text));
    rule.get::<crate::profile::ConnectionRule>()
        .cloned()
        .expect("a connection rule")
}

fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn each_fault_reads_with_its_defaults() {
    assert_eq!(
        rule("{ fault: cut, at: 30s, workers: [1] }"),
        ConnectionRule {
            fault: ConnectionFault::Cut(CutSchedule {
                trigger: CutTrigger::At(s(30)),
                to: None,
                times: None
            }),
            workers: vec![1],
            optional: false,
        }
    );
    assert_eq!(
        rule("{ fault: cut, every: 5m, from: 1m, to: 20m, times: 2, optional: true }"),
        ConnectionRule {
            fault: ConnectionFault::Cut(CutSchedule {
                trigger: CutTrigger::Every {
                    every: s(300),
                    from: s(60)
                },
                to: Some(s(1200)),
                times: Some(2)
            }),
            // every worker by default
            workers: vec![1, 2, 3],
            optional: true,
        }
    );
    assert_eq!(
        rule("{ fault: latency, delay: 200ms, from: 10s, for: 30s, workers: [2] }").fault,
        ConnectionFault::Latency {
            window: Window {
                from: s(10),
                length: Some(s(30))
            },
            delay: Duration::from_millis(200),
            direction: Direction::Both,
        }
    );
    assert_eq!(
        rule("{ fault: latency, delay: 1s, from: 0s, direction: to_worker }").fault,
        ConnectionFault::Latency {
            window: Window {
                from: s(0),
                length: None
            },
            delay: s(1),
            direction: Direction::ToWorker,
        }
    );
    assert_eq!(
        rule("{ fault: partition, from: 30s, for: 45s, workers: [3, 1] }"),
        ConnectionRule {
            fault: ConnectionFault::Partition {
                window: Window {
                    from: s(30),
                    length: Some(s(45))
                },
                frames: HeldFrames::Hold,
            },
            workers: vec![3, 1],
            optional: false,
        }
    );
    assert_eq!(
        rule("{ fault: partition, from: 30s, frames: drop }").fault,
        ConnectionFault::Partition {
            window: Window {
                from: s(30),
                length: None
            },
            frames: HeldFrames::Drop,
        }
    );
}

#[test]
fn the_fault_is_one_of_three() {
    assert_eq!(
        error(&profile("{ fault: flap, at: 1m }")),
        "p.yaml:7:26: chaos.0.connection.fault: must be one of cut, latency, partition, got \"flap\""
    );
    assert_eq!(
        error(&profile("{ at: 1m }")),
        "p.yaml:7:5: chaos.0.connection.fault: required: one of cut, latency, partition"
    );
}

#[test]
fn each_fault_needs_its_time() {
    assert_eq!(
        error(&profile("{ fault: cut, workers: [1] }")),
        "p.yaml:7:5: chaos.0.connection: give one of at, every, as in { fault: cut, at: 30s } \
         or { fault: cut, every: 5m }"
    );
    assert_eq!(
        error(&profile("{ fault: latency, delay: 1s }")),
        "p.yaml:7:5: chaos.0.connection.from: required: the instant the fault starts, e.g. 30s"
    );
    assert_eq!(
        error(&profile("{ fault: partition, for: 1m }")),
        "p.yaml:7:5: chaos.0.connection.from: required: the instant the fault starts, e.g. 30s"
    );
    assert_eq!(
        error(&profile("{ fault: latency, from: 1m }")),
        "p.yaml:7:5: chaos.0.connection.delay: required: the time added to each frame, e.g. \
         200ms"
    );
    assert_eq!(
        error(&profile("{ fault: latency, from: 1m, delay: 0s }")),
        "p.yaml:7:52: chaos.0.connection.delay: must be more than 0s, got 0s"
    );
    assert_eq!(
        error(&profile("{ fault: cut, every: 0s }")),
        "p.yaml:7:38: chaos.0.connection.every: must be more than 0s, got 0s"
    );
    assert_eq!(
        error(&profile("{ fault: partition, from: 1m, for: 0s }")),
        "p.yaml:7:52: chaos.0.connection.for: must be more than 0s, got 0s"
    );
}

#[test]
fn a_key_of_another_fault_is_refused() {
    assert_eq!(
        error(&profile("{ fault: cut, at: 1m, frames: hold }")),
        "p.yaml:7:39: chaos.0.connection.frames: is not a key of a cut: a cut takes at or every \
         (with from, to, times), workers, optional"
    );
    assert_eq!(
        error(&profile("{ fault: partition, from: 1m, delay: 1s }")),
        "p.yaml:7:47: chaos.0.connection.delay: is not a key of a partition: a partition takes \
         from, for, frames, workers, optional"
    );
    assert_eq!(
        error(&profile("{ fault: latency, delay: 1s, from: 1m, at: 2m }")),
        "p.yaml:7:56: chaos.0.connection.at: is not a key of a latency: a latency takes delay, \
         from, for, direction, workers, optional"
    );
    assert_eq!(
        error(&profile("{ fault: cut, at: 1m, from: 30s }")),
        "p.yaml:7:39: chaos.0.connection.from: belongs to a cut with `every` (a cut `at` an \
         instant comes once)"
    );
    assert_eq!(
        error(&profile(
            "{ fault: latency, delay: 1s, from: 1m, direction: up }"
        )),
        "p.yaml:7:67: chaos.0.connection.direction: must be one of both, to_broker, to_worker, \
         got \"up\""
    );
    assert_eq!(
        error(&profile("{ fault: partition, from: 1m, frames: keep }")),
        "p.yaml:7:55: chaos.0.connection.frames: must be hold (delivered when the partition \
         ends) or drop (lost), got \"keep\""
    );
}

#[test]
fn what_the_run_never_reaches_selects_nothing() {
    // The run ends at 10m + 30m = 40m.
    assert_eq!(
        error(&profile("{ fault: cut, at: 40m }")),
        "p.yaml:7:35: chaos.0.connection.at: selects nothing: the cut would come at 40m, and \
         the run ends at 40m (run.duration + run.drain)"
    );
    assert_eq!(
        error(&profile("{ fault: cut, every: 30m, from: 15m }")),
        "p.yaml:7:38: chaos.0.connection.every: selects nothing: the first cut would come at \
         45m, and the run ends at 40m (run.duration + run.drain)"
    );
    assert_eq!(
        error(&profile("{ fault: partition, from: 41m }")),
        "p.yaml:7:43: chaos.0.connection.from: selects nothing: the window would open at 41m, \
         and the run ends at 40m (run.duration + run.drain)"
    );
    assert_eq!(
        error(&profile(
            "{ fault: latency, delay: 1s, from: 39m, for: 2m }"
        )),
        "p.yaml:7:62: chaos.0.connection.for: the window would close at 41m, after the run's \
         end at 40m (run.duration + run.drain): shorten it, or leave `for` out to last to the \
         end"
    );
    assert_eq!(
        error(&profile("{ fault: cut, at: 1m, workers: [2, 4] }")),
        "p.yaml:7:52: chaos.0.connection.workers.1: selects nothing: must be a worker number \
         from 1 to consumer.workers (3), got 4"
    );
    assert_eq!(
        error(&profile("{ fault: cut, at: 1m, workers: [] }")),
        "p.yaml:7:39: chaos.0.connection.workers: must not be empty: a connection fault acts \
         on at least one worker"
    );
    assert_eq!(
        error(&profile("{ fault: cut, every: 1m, from: 5m, to: 2m }")),
        "p.yaml:7:56: chaos.0.connection.to: must be after from (5m), got 2m"
    );
}

#[test]
fn a_live_run_acts_on_connections_only_where_its_kind_says_it_can() {
    // Every kind's descriptor says whether its live path sees the workers' connections: the
    // embedded SQS broker does (each worker through its own proxy port); an SQS server of the
    // user's own (broker.endpoint) does not, and is refused at the rule, with the reason.
    let live = profile("{ fault: cut, at: 1m }").replace("name: t\n", "name: t\nmode: live\n");
    assert!(crate::profile::load_str("p.yaml", &live, &[]).is_ok());
    let external = live.replace(
        "mode: live\n",
        "mode: live\nbroker: { kind: sqs, endpoint: \"http://127.0.0.1:5000\" }\n",
    );
    let e = error(&external);
    assert!(
        e.starts_with(
            "p.yaml:9:5: chaos.0.connection: a live run on sqs cannot act on the \
             workers' connections: the observing proxy in front of an endpoint of your own"
        ),
        "{e}"
    );
}
