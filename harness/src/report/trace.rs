//! `--trace KEY`: one message's life in time order, one line per step, from the run record.
//!
//! Broker and worker events and the ledger's calls and effects are merged by time; at one instant
//! they keep the order in which they happen in a handler (delivery, call, effect, answer, ack,
//! end of handler).

use crate::profile::kinds::KindWords;
use crate::record::{
    secs_f64, AckOutcome, CallOutcome, EffectSource, EventKind, HandlerEnd, Nanos, RunRecord, Seq,
};

/// The trace of message `key`, or `None` if no published message (nor ingress request) has
/// that key.
pub fn trace(record: &RunRecord, key: &str) -> Option<Vec<String>> {
    let requests = ingress_lines(record, key);
    let Some(seq) = record.messages.iter().position(|m| m.key.is(key)) else {
        if requests.is_empty() {
            return None;
        }
        let mut lines = vec![format!("trace of {key} (never reached the queue)")];
        lines.extend(requests.into_iter().map(|(at, _, text)| line(at, &text)));
        return Some(lines);
    };
    let seq = seq as Seq + 1;
    let words = record.broker_kind.words();
    let mut steps: Vec<(Nanos, u8, String)> = requests;
    // The delivery whose return was just said with its reason: its `LeaseExpired` says no more.
    let mut explained: Option<u32> = None;
    for e in &record.events {
        match e.kind {
            EventKind::Returned {
                seq: s, delivery, ..
            } if s == seq => explained = Some(delivery),
            EventKind::LeaseExpired { seq: s, delivery }
                if s == seq && explained == Some(delivery) =>
            {
                explained = None;
                continue;
            }
            _ => {}
        }
        if let Some((rank, text)) = event_line(&e.kind, seq, words) {
            steps.push((e.at, rank, text));
        }
    }
    for c in record.ledger.calls.iter().filter(|c| c.seq == Some(seq)) {
        steps.push((
            c.started,
            3,
            format!(
                "call started      worker {}, delivery {}",
                c.worker, c.delivery
            ),
        ));
        let what = match c.outcome {
            CallOutcome::Accepted => "accepted".to_string(),
            CallOutcome::Error(s) => format!("error {s}"),
            CallOutcome::Reset => "connection closed without an answer".to_string(),
            CallOutcome::Abandoned => "abandoned (worker died)".to_string(),
            CallOutcome::TimedOut => "timed out (client gave up)".to_string(),
        };
        match c.ended {
            Some(at) => steps.push((
                at,
                5,
                format!(
                    "call answered     worker {}, delivery {}: {what}",
                    c.worker, c.delivery
                ),
            )),
            None => steps.push((
                c.started,
                3,
                format!("                  (never answered: {what})"),
            )),
        }
    }
    for e in record.ledger.effects.iter().filter(|e| e.seq == Some(seq)) {
        let source = match e.source {
            EffectSource::Provider => "provider",
            EffectSource::Store => "store row",
        };
        steps.push((
            e.at,
            4,
            format!(
                "EFFECT            worker {}, delivery {} ({source})",
                e.worker, e.delivery
            ),
        ));
    }
    steps.sort_by_key(|(at, rank, _)| (*at, *rank));
    let mut lines = vec![format!("trace of {key} ({} {seq})", words.message.0)];
    lines.extend(steps.into_iter().map(|(at, _, text)| line(at, &text)));
    Some(lines)
}

fn line(at: Nanos, text: &str) -> String {
    format!("{:>12.3}s  {text}", secs_f64(at))
}

/// The ingress load's requests for `key` (rank 0: a request comes before what it publishes).
fn ingress_lines(record: &RunRecord, key: &str) -> Vec<(Nanos, u8, String)> {
    let Some(ingress) = &record.ingress else {
        return Vec::new();
    };
    ingress
        .requests
        .iter()
        .filter(|q| q.key == key)
        .map(|q| {
            let ms = q.response_us as f64 / 1000.0;
            let what = match (q.status, &q.error) {
                (Some(status), _) => format!("answered {status} in {ms:.3} ms (wall)"),
                (None, Some(e)) => format!("no answer after {ms:.3} ms (wall): {e}"),
                (None, None) => format!("no answer after {ms:.3} ms (wall)"),
            };
            (q.sent_at, 0, format!("ingress request   {what}"))
        })
        .collect()
}

/// The line of an event that concerns message `seq`, with its rank at one instant.
fn event_line(kind: &EventKind, seq: Seq, words: &KindWords) -> Option<(u8, String)> {
    let words = &words.trace;
    let line = match *kind {
        EventKind::Published { seq: s } if s == seq => (0, "published".to_string()),
        EventKind::LeaseExpired { seq: s, delivery } if s == seq => (
            1,
            format!("{:<17} delivery {delivery}: {}", words.expired, words.again),
        ),
        EventKind::Returned {
            seq: s,
            worker,
            delivery,
            why,
        } if s == seq => (
            1,
            format!(
                "RETURNED          worker {worker}, delivery {delivery}: {}; {}",
                why.words(),
                words.again
            ),
        ),
        EventKind::DeadLettered { seq: s, delivery } if s == seq => (
            1,
            format!("{:<17} after delivery {delivery}", words.given_up),
        ),
        EventKind::Dropped { seq: s, delivery } if s == seq => (
            1,
            format!("DROPPED           after delivery {delivery}: no dead-letter queue"),
        ),
        EventKind::Redriven { seq: s } if s == seq => {
            (1, "redriven          back to the main queue".to_string())
        }
        EventKind::Delivered {
            seq: s,
            worker,
            delivery,
            lease_end,
        } if s == seq => (
            2,
            format!(
                "delivered #{delivery:<6} worker {worker}, {} {:.3}s",
                words.until,
                secs_f64(lease_end)
            ),
        ),
        EventKind::VisibilityChanged {
            seq: s,
            worker,
            delivery,
            lease_end,
        } if s == seq => (
            6,
            format!(
                "{:<17} worker {worker}, delivery {delivery}: {} {:.3}s",
                words.extended,
                words.until,
                secs_f64(lease_end)
            ),
        ),
        EventKind::Acked {
            seq: s,
            worker,
            delivery,
            outcome,
        } if s == seq => {
            let gone = format!("STALE: {}", words.gone);
            let what = match outcome {
                AckOutcome::Deleted => words.settled,
                AckOutcome::StaleRejected => "STALE: refused",
                AckOutcome::StaleIgnored => "STALE: reported ok, message left",
                AckOutcome::StaleDeleted => "STALE: deleted a message another worker holds",
                AckOutcome::LateDeleted => {
                    "LATE: deleted (its lease had ended, nobody received it since)"
                }
                AckOutcome::StaleGone => gone.as_str(),
                AckOutcome::Covered => "committed already (the offset was past it)",
                AckOutcome::Superseded => "removed the copy its retry replaced",
            };
            (
                7,
                format!("ack               worker {worker}, delivery {delivery}: {what}"),
            )
        }
        EventKind::Republished {
            seq: s,
            worker,
            delivery,
            to,
        } if s == seq => {
            let from = match delivery {
                0 => String::new(),
                d => format!(", delivery {d}"),
            };
            (
                7,
                format!(
                    "{:<17} worker {worker}{from}: published again to {}",
                    if delivery > 0 { "RETRY" } else { "moved" },
                    to.words()
                ),
            )
        }
        EventKind::CommitFenced { seq: s, worker } if s == seq => (
            7,
            format!("COMMIT FENCED     worker {worker}: its member left the group"),
        ),
        EventKind::Rejected { seq: s, worker } if s == seq => (
            7,
            format!("rejected          worker {worker}: acked without processing (poison)"),
        ),
        EventKind::HandlerEnded {
            seq: s,
            worker,
            delivery,
            how,
        } if s == seq => {
            let what = match how {
                HandlerEnd::Finished => "handler finished",
                HandlerEnd::Killed => "WORKER KILLED",
                HandlerEnd::Crashed => "WORKER CRASHED",
            };
            (
                8,
                format!("{what:<17} worker {worker}, delivery {delivery}"),
            )
        }
        _ => return None,
    };
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{CallRecord, EffectRecord, Event, Ledger, MessageRecord};

    const S: u64 = 1_000_000_000;

    #[test]
    fn merges_events_calls_and_effects_in_handler_order() {
        let ev = |at, kind| Event { at, kind };
        let r = RunRecord {
            messages: vec![MessageRecord {
                key: "msg-1".into(),
                published_at: 0,
                poison: false,
            }],
            events: vec![
                ev(0, EventKind::Published { seq: 1 }),
                ev(
                    0,
                    EventKind::Delivered {
                        seq: 1,
                        worker: 1,
                        delivery: 1,
                        lease_end: 30 * S,
                    },
                ),
                ev(
                    30 * S,
                    EventKind::LeaseExpired {
                        seq: 1,
                        delivery: 1,
                    },
                ),
                ev(
                    34 * S,
                    EventKind::Acked {
                        seq: 1,
                        worker: 1,
                        delivery: 1,
                        outcome: AckOutcome::StaleRejected,
                    },
                ),
                ev(
                    34 * S,
                    EventKind::HandlerEnded {
                        seq: 1,
                        worker: 1,
                        delivery: 1,
                        how: HandlerEnd::Finished,
                    },
                ),
            ],
            ledger: Ledger {
                calls: vec![CallRecord {
                    seq: Some(1),
                    key: Some("msg-1".into()),
                    worker: 1,
                    delivery: 1,
                    started: 0,
                    ended: Some(34 * S),
                    outcome: CallOutcome::Accepted,
                }],
                effects: vec![EffectRecord {
                    seq: Some(1),
                    at: 0,
                    worker: 1,
                    delivery: 1,
                    source: EffectSource::Provider,
                }],
            },
            ..RunRecord::default()
        };
        let t = trace(&r, "msg-1").unwrap();
        let steps: Vec<&str> = t[1..]
            .iter()
            .map(|l| l.split_whitespace().nth(1).unwrap())
            .collect();
        assert_eq!(
            steps,
            [
                "published",
                "delivered",
                "call",
                "EFFECT",
                "lease",
                "call",
                "ack",
                "handler"
            ]
        );
        assert!(t[7].contains("STALE: refused"), "{}", t[7]);
        assert!(trace(&r, "msg-2").is_none());
    }

    #[test]
    fn ingress_requests_lead_the_trace_and_an_unpublished_key_still_has_one() {
        use crate::record::{IngressRecord, IngressRequest};
        let request = |key: &str, at, status| IngressRequest {
            key: key.into(),
            due: Some(at),
            sent_at: at,
            response_us: 2_500,
            status,
            error: status.is_none().then(|| "timeout: gave up".into()),
        };
        let r = RunRecord {
            messages: vec![MessageRecord {
                key: "msg-1".into(),
                published_at: S,
                poison: false,
            }],
            events: vec![Event {
                at: S,
                kind: EventKind::Published { seq: 1 },
            }],
            ingress: Some(IngressRecord {
                requests: vec![
                    request("msg-1", S, Some(202)),
                    request("msg-2", 2 * S, None),
                ],
                ..IngressRecord::default()
            }),
            ..RunRecord::default()
        };
        assert_eq!(
            trace(&r, "msg-1").unwrap(),
            vec![
                "trace of msg-1 (message 1)",
                "       1.000s  ingress request   answered 202 in 2.500 ms (wall)",
                "       1.000s  published",
            ]
        );
        assert_eq!(
            trace(&r, "msg-2").unwrap(),
            vec![
                "trace of msg-2 (never reached the queue)",
                "       2.000s  ingress request   no answer after 2.500 ms (wall): timeout: gave up",
            ]
        );
        assert_eq!(trace(&r, "msg-3"), None);
    }
}

#[cfg(test)]
#[path = "tests_trace_words.rs"]
mod words_tests;
