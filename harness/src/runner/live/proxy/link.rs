//! The network between one worker and the broker, as the proxy plays it: each worker's link can
//! be cut (every connection of the worker closed, both sides), slowed (a delay on every chunk
//! of bytes, per direction) or partitioned (nothing passes either way until the partition ends).
//!
//! A [`Links`] holds one link per worker; what a `connection` rule does to a link is told here
//! ([`Links::cut`], [`Links::begin`], [`Links::end`]) and every forwarded connection of that
//! worker follows its link's [`LinkState`] on its byte path ([`super::forward`]). Delays are in
//! wall time: the run's clock converts the profile's before they reach a link.
//!
//! A partition holds the bytes: what each side sent during it is forwarded at its end, in order,
//! as TCP delivers what it retransmitted once a network heals. A partition that drops instead
//! closes, at its end, every connection of the worker, the bytes it held discarded: a stream
//! protocol has no frame that can go missing without breaking the connection (an AMQP delivery
//! tag, a RESP reply, a Kafka correlation id: each side counts on the other's frames in order),
//! so a lost frame is a lost connection, which is what a peer sees of a partition that outlived
//! its connection's timeouts.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use crate::record::WorkerId;

/// Which way bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the worker to the broker.
    ToBroker,
    /// From the broker to the worker.
    ToWorker,
}

/// What a rule does to a link while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Every chunk of bytes going the chosen ways waits `delay` (wall time) before it goes on.
    Latency {
        delay: Duration,
        to_broker: bool,
        to_worker: bool,
    },
    /// Nothing passes either way; at the end what was held goes on (`drop: false`) or every
    /// connection of the worker is closed with what it held (`drop: true`).
    Partition { drop: bool },
}

/// What the connections of one worker follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkState {
    /// How many times the link was cut: a connection opened before a cut closes when it sees
    /// this count move past the one it was opened with.
    pub cuts: u64,
    /// No byte passes either way.
    pub partitioned: bool,
    /// The delay every chunk read now waits before it goes on, per direction.
    pub to_broker: Duration,
    pub to_worker: Duration,
}

impl LinkState {
    pub fn delay(&self, d: Direction) -> Duration {
        match d {
            Direction::ToBroker => self.to_broker,
            Direction::ToWorker => self.to_worker,
        }
    }
}

/// One worker's link: its state, and the rules acting on it now (by rule index).
struct Link {
    state: watch::Sender<LinkState>,
    active: Mutex<Vec<(u32, Effect)>>,
}

/// Every worker's link in one run.
pub struct Links {
    links: Vec<Link>,
}

impl Links {
    /// The links of workers 1..=`workers`, all open.
    pub fn new(workers: u32) -> Links {
        Links {
            links: (0..workers)
                .map(|_| Link {
                    state: watch::channel(LinkState::default()).0,
                    active: Mutex::new(Vec::new()),
                })
                .collect(),
        }
    }

    fn link(&self, w: WorkerId) -> Option<&Link> {
        self.links.get((w as usize).wrapping_sub(1))
    }

    /// What worker `w`'s connections follow (an open link for a worker the run does not have).
    pub fn watch(&self, w: WorkerId) -> watch::Receiver<LinkState> {
        match self.link(w) {
            Some(l) => l.state.subscribe(),
            None => watch::channel(LinkState::default()).1,
        }
    }

    /// Closes every connection worker `w` has open now, both sides.
    pub fn cut(&self, w: WorkerId) {
        if let Some(l) = self.link(w) {
            l.state.send_modify(|s| s.cuts += 1);
        }
    }

    /// Rule `rule` starts acting on worker `w`'s link.
    pub fn begin(&self, w: WorkerId, rule: u32, effect: Effect) {
        let Some(l) = self.link(w) else { return };
        let mut active = l.active.lock().unwrap_or_else(PoisonError::into_inner);
        active.push((rule, effect));
        let cuts = l.state.borrow().cuts;
        l.state.send_replace(fold(cuts, &active));
    }

    /// Rule `rule` stops acting on worker `w`'s link; a dropping partition closes the worker's
    /// connections as it ends, in the same change, so no byte it held goes on.
    pub fn end(&self, w: WorkerId, rule: u32) {
        let Some(l) = self.link(w) else { return };
        let mut active = l.active.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(i) = active.iter().position(|&(r, _)| r == rule) else {
            return;
        };
        let (_, ended) = active.remove(i);
        let mut cuts = l.state.borrow().cuts;
        if ended == (Effect::Partition { drop: true }) {
            cuts += 1;
        }
        l.state.send_replace(fold(cuts, &active));
    }
}

/// The state the active rules make: partitioned if any partitions, each direction's delay the
/// sum of the delays on it (two latency rules at once add up, as two slow hops would).
fn fold(cuts: u64, active: &[(u32, Effect)]) -> LinkState {
    let mut s = LinkState {
        cuts,
        ..LinkState::default()
    };
    for (_, e) in active {
        match *e {
            Effect::Latency {
                delay,
                to_broker,
                to_worker,
            } => {
                if to_broker {
                    s.to_broker += delay;
                }
                if to_worker {
                    s.to_worker += delay;
                }
            }
            Effect::Partition { .. } => s.partitioned = true,
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn rules_add_up_on_a_link_and_a_dropping_partition_cuts_as_it_ends() {
        let links = Links::new(2);
        let mut w1 = links.watch(1);
        let w2 = links.watch(2);
        // Rule 0: 200 ms both ways; rule 1: 50 ms towards the worker. Towards the worker the
        // two add up (250 ms), towards the broker only rule 0's 200 ms.
        let both = Effect::Latency {
            delay: 200 * MS,
            to_broker: true,
            to_worker: true,
        };
        let down = Effect::Latency {
            delay: 50 * MS,
            to_broker: false,
            to_worker: true,
        };
        links.begin(1, 0, both);
        links.begin(1, 1, down);
        assert!(w1.has_changed().unwrap());
        let s = *w1.borrow_and_update();
        assert_eq!((s.to_broker, s.to_worker), (200 * MS, 250 * MS));
        assert_eq!(s.cuts, 0);
        // Rule 0 ends: 0 ms towards the broker, rule 1's 50 ms towards the worker.
        links.end(1, 0);
        let s = *w1.borrow();
        assert_eq!((s.to_broker, s.to_worker), (Duration::ZERO, 50 * MS));
        // A holding partition (rule 2) ends without a cut; a dropping one (rule 3) with one.
        links.begin(1, 2, Effect::Partition { drop: false });
        assert!(w1.borrow().partitioned);
        links.end(1, 2);
        assert_eq!((w1.borrow().partitioned, w1.borrow().cuts), (false, 0));
        links.begin(1, 3, Effect::Partition { drop: true });
        links.end(1, 3);
        assert_eq!((w1.borrow().partitioned, w1.borrow().cuts), (false, 1));
        // A cut counts once more; an end of a rule not acting changes nothing.
        links.cut(1);
        links.end(1, 7);
        assert_eq!(w1.borrow().cuts, 2);
        // Worker 2's link saw none of it; a worker the run does not have is ignored.
        assert_eq!(*w2.borrow(), LinkState::default());
        links.cut(3);
        links.begin(0, 0, both);
    }
}
