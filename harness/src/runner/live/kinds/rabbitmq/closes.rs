//! Why RabbitMQ closed a channel, read from its `channel.close`: the consumer timeout and a
//! refused ack are both 406 PRECONDITION_FAILED, told apart by the reply text
//! (`delivery acknowledgement on channel 1 timed out. Timeout value used: 1800000 ms...`, older
//! servers `consumer ack timed out on channel 1`; `unknown delivery tag 7`).

use crate::record::ReturnWhy;

/// PRECONDITION_FAILED.
const PRECONDITION_FAILED: u16 = 406;

/// What a `channel.close` from the server with `code` and `text` did to the deliveries the
/// channel held.
pub fn server_closed_channel(code: u16, text: &str) -> ReturnWhy {
    if code == PRECONDITION_FAILED && text.contains("timed out") {
        ReturnWhy::Lease
    } else if code == PRECONDITION_FAILED && text.contains("unknown delivery tag") {
        ReturnWhy::AckRefused
    } else {
        ReturnWhy::BrokerClosedChannel { code }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_and_a_refused_ack_are_told_apart_by_their_text() {
        // The texts of RabbitMQ 3.8.15 and later, of older servers, of a double ack; a 406 of
        // another kind (an inequivalent argument) and a 404 are the broker's other closes.
        let cases = [
            (
                406,
                "PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out. Timeout \
                 value used: 1800000 ms. This timeout value can be configured, see consumers \
                 doc guide to learn more",
                ReturnWhy::Lease,
            ),
            (
                406,
                "PRECONDITION_FAILED - consumer ack timed out on channel 1",
                ReturnWhy::Lease,
            ),
            (
                406,
                "PRECONDITION_FAILED - unknown delivery tag 7",
                ReturnWhy::AckRefused,
            ),
            (
                406,
                "PRECONDITION_FAILED - inequivalent arg 'durable'",
                ReturnWhy::BrokerClosedChannel { code: 406 },
            ),
            (
                404,
                "NOT_FOUND - no queue 'q'",
                ReturnWhy::BrokerClosedChannel { code: 404 },
            ),
        ];
        for (code, text, why) in cases {
            assert_eq!(server_closed_channel(code, text), why, "{text}");
        }
    }

    mod on_the_wire {
        //! The proxy on frames written by hand: each close returns what its channel held, with
        //! the reason the close gives.

        use std::sync::Arc;

        use super::super::super::super::test_frames::{frame, short, Greeted};
        use super::super::super::tests::{ack, delivery};
        use super::super::super::{Amqp, Ledger};
        use crate::record::{EventKind, ReturnWhy};
        use crate::runner::live::proxy::Protocol;
        use crate::runner::live::state::LiveState;

        /// A close (`class` 10: connection, 20: channel; method 40 or 50) with `code` and
        /// `text`.
        fn close(class: u8, ch: u16, code: u16, text: &str) -> Vec<u8> {
            let method = if class == 10 { 50 } else { 40 };
            let mut m = vec![0, class, 0, method];
            m.extend_from_slice(&code.to_be_bytes());
            m.extend(short(text));
            m.extend_from_slice(&[0, 0, 0, 0]);
            frame(1, ch, &m)
        }

        /// basic.nack (60, 120) of `tag`, requeued.
        fn nack(ch: u16, tag: u64) -> Vec<u8> {
            let mut m = vec![0, 60, 0, 120];
            m.extend_from_slice(&tag.to_be_bytes());
            m.push(0b10);
            frame(1, ch, &m)
        }

        /// What each return said, in order: (seq, why); and the acks' outcomes.
        fn returns(state: &LiveState) -> (Vec<(u32, ReturnWhy)>, Vec<String>) {
            let events = state.take_events();
            let mut returns = Vec::new();
            let mut acks = Vec::new();
            for (i, e) in events.iter().enumerate() {
                match e.kind {
                    EventKind::Returned {
                        seq, delivery, why, ..
                    } => {
                        // Each reason comes just before the return it explains.
                        assert_eq!(
                            events.get(i + 1).map(|n| n.kind),
                            Some(EventKind::LeaseExpired { seq, delivery })
                        );
                        returns.push((seq, why));
                    }
                    EventKind::LeaseExpired { seq, .. } => assert!(
                        returns.iter().any(|&(s, _)| s == seq),
                        "a return of {seq} without its reason"
                    ),
                    EventKind::Acked { seq, outcome, .. } => {
                        acks.push(format!("{seq} {outcome:?}"))
                    }
                    _ => {}
                }
            }
            (returns, acks)
        }

        #[tokio::test]
        async fn every_close_returns_what_it_held_with_its_reason() {
            let state = LiveState::new(
                crate::provider::http::LiveClock::new(1.0),
                "q",
                1,
                crate::chaos::KillSchedule::new(&[], 1),
            );
            let amqp = Amqp {
                state: state.clone(),
                ledger: Arc::new(Ledger::default()),
                consumer_timeout: 1_000,
                wire: None,
                places: Default::default(),
            };
            let mut out = Vec::new();
            // Seq 7 and 8 on channel 1; the worker acks 7, then closes its connection, then its
            // ack of 8 comes (a client whose close overtook its ack): 8 returned by the
            // worker's close, its ack stale.
            let mut c = amqp.connection(1).greeted();
            c.from_server(&delivery(1, 1, "7"), &mut out);
            c.from_server(&delivery(1, 2, "8"), &mut out);
            c.from_worker(&ack(1, 1, false), &mut out);
            c.from_worker(&close(10, 0, 200, "Goodbye"), &mut out);
            c.from_worker(&ack(1, 2, false), &mut out);
            c.closed();
            assert_eq!(
                returns(&state),
                (
                    vec![(8, ReturnWhy::ConnectionClosed)],
                    vec!["7 Deleted".to_string(), "8 StaleRejected".to_string()]
                )
            );
            // One connection per other close, a delivery held on channel 1 each: the worker
            // closes the channel (9); the broker refuses an ack (10) or closes the channel for
            // another reason (11); the socket ends (12); the broker closes the connection (13);
            // the worker nacks with requeue (14).
            let cases: [(&str, Vec<u8>, bool, ReturnWhy); 6] = [
                ("9", close(20, 1, 200, "OK"), true, ReturnWhy::ChannelClosed),
                (
                    "10",
                    close(20, 1, 406, "PRECONDITION_FAILED - unknown delivery tag 3"),
                    false,
                    ReturnWhy::AckRefused,
                ),
                (
                    "11",
                    close(20, 1, 404, "NOT_FOUND - no queue 'q'"),
                    false,
                    ReturnWhy::BrokerClosedChannel { code: 404 },
                ),
                ("12", Vec::new(), true, ReturnWhy::ConnectionLost),
                (
                    "13",
                    close(
                        10,
                        0,
                        320,
                        "CONNECTION_FORCED - broker forced connection closure",
                    ),
                    false,
                    ReturnWhy::BrokerClosedConnection { code: 320 },
                ),
                ("14", nack(1, 1), true, ReturnWhy::Nack),
            ];
            for (seq, frame, from_worker, why) in cases {
                let mut c = amqp.connection(1).greeted();
                c.from_server(&delivery(1, 1, seq), &mut out);
                match (frame.is_empty(), from_worker) {
                    (true, _) => c.closed(),
                    (false, true) => {
                        c.from_worker(&frame, &mut out);
                    }
                    (false, false) => {
                        c.from_server(&frame, &mut out);
                    }
                }
                let seq: u32 = seq.parse().unwrap();
                assert_eq!(returns(&state), (vec![(seq, why)], vec![]), "{seq}");
            }
        }
    }
}
