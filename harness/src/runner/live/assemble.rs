//! Builds the run record of a live run: the endpoint's broker events (wall time since the
//! endpoint started) and the supervisor's and provider's records (profile time) on one clock.

use crate::record::{Event, EventKind, Nanos};

/// Maps an endpoint time to profile time: `(t - t0) / scale`.
#[derive(Debug, Clone, Copy)]
pub struct Timebase {
    pub t0: Nanos,
    pub scale: f64,
}

impl Timebase {
    pub fn profile(&self, t: Nanos) -> Nanos {
        (t.saturating_sub(self.t0) as f64 / self.scale) as Nanos
    }

    /// The event with every instant in it in profile time.
    pub fn event(&self, e: Event) -> Event {
        let kind = match e.kind {
            EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end,
            } => EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end: self.profile(lease_end),
            },
            EventKind::VisibilityChanged {
                seq,
                worker,
                delivery,
                lease_end,
            } => EventKind::VisibilityChanged {
                seq,
                worker,
                delivery,
                lease_end: self.profile(lease_end),
            },
            k => k,
        };
        Event {
            at: self.profile(e.at),
            kind,
        }
    }
}

/// Merges two event streams, each in time order, into one (ties: broker events first).
pub fn merge(broker: Vec<Event>, supervisor: Vec<Event>) -> Vec<Event> {
    let mut out = Vec::with_capacity(broker.len() + supervisor.len());
    let (mut a, mut b) = (
        broker.into_iter().peekable(),
        supervisor.into_iter().peekable(),
    );
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.at <= y.at,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_scale_back_to_the_profile_and_streams_merge_in_order() {
        let tb = Timebase {
            t0: 1_000,
            scale: 0.5,
        };
        assert_eq!(tb.profile(3_000), 4_000);
        assert_eq!(tb.profile(500), 0, "before the start clamps to 0");
        let d = tb.event(Event {
            at: 2_000,
            kind: EventKind::Delivered {
                seq: 1,
                worker: 1,
                delivery: 1,
                lease_end: 5_000,
            },
        });
        assert_eq!(
            d,
            Event {
                at: 2_000,
                kind: EventKind::Delivered {
                    seq: 1,
                    worker: 1,
                    delivery: 1,
                    lease_end: 8_000
                }
            }
        );
        let e = |at| Event {
            at,
            kind: EventKind::Published { seq: 1 },
        };
        let m = merge(vec![e(1), e(5)], vec![e(1), e(3), e(9)]);
        assert_eq!(
            m.iter().map(|e| e.at).collect::<Vec<_>>(),
            vec![1, 1, 3, 5, 9]
        );
    }
}
