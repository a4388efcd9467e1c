//! `connection`: a fault on the path between workers and the broker. A `cut` closes both sides
//! of each selected worker's connections at its instants (the client reconnects); a `latency`
//! delays every frame in its direction during its window; a `partition` lets nothing through
//! during its window, then delivers what was held (`frames: hold`) or loses it (`drop`).
//!
//! A rule fires once per worker it acts on: at each cut, and at a window's opening.

use crate::profile::{
    ChaosRule, ConnectionFault, ConnectionRule, CutTrigger, Direction, HeldFrames,
};
use crate::record::{nanos, Nanos, WorkerId};

#[derive(Debug, Clone)]
struct Rule {
    /// Its index in the profile's `chaos` list.
    index: u32,
    rule: ConnectionRule,
    /// Cut instants so far.
    cuts: u64,
}

/// The connection rules of a run: when each acts, and what a frame meets on its way.
#[derive(Debug, Clone, Default)]
pub struct ConnectionSchedule {
    rules: Vec<Rule>,
}

/// Which way a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toward {
    /// A worker's request (a fetch, an ack, an extension, a commit).
    Broker,
    /// The broker's answer or delivery.
    Worker,
}

/// What becomes of a frame sent at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// It arrives at this instant (the sending instant when nothing is in its way).
    At(Nanos),
    /// A partition that drops frames loses it; its sender learns when the window closes (its
    /// connection broken, it reconnects).
    Lost { known_at: Nanos },
}

/// What a rule does at one of its instants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Cut these workers' connections.
    Cut(Vec<WorkerId>),
    /// A latency's or a partition's window opens on these workers; a partition closes at
    /// `partition_until` (`None`: not a partition). One that `drops` frames closes the workers'
    /// connections as it ends, as a cut would.
    Opens {
        workers: Vec<WorkerId>,
        partition_until: Option<Nanos>,
        drops: bool,
    },
}

impl ConnectionSchedule {
    pub fn new(chaos: &[ChaosRule]) -> ConnectionSchedule {
        let rules = super::rules_of::<ConnectionRule>(chaos)
            .map(|(index, r)| Rule {
                index,
                rule: r.clone(),
                cuts: 0,
            })
            .collect();
        ConnectionSchedule { rules }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    fn rule(&mut self, index: u32) -> Option<&mut Rule> {
        self.rules.iter_mut().find(|r| r.index == index)
    }

    /// The first instant of each rule: (instant, rule index).
    pub fn timed(&self) -> Vec<(Nanos, u32)> {
        self.rules
            .iter()
            .map(|r| {
                let first = match &r.rule.fault {
                    ConnectionFault::Cut(c) => match c.trigger {
                        CutTrigger::At(t) => t,
                        CutTrigger::Every { every, from } => from + every,
                    },
                    f => f.window().map(|w| w.from).unwrap_or_default(),
                };
                (nanos(first), r.index)
            })
            .collect()
    }

    /// Rule `index`'s instant `now` came: what it does, and its next instant (a cut `every`).
    pub fn fire(&mut self, index: u32, now: Nanos) -> (Option<Act>, Option<Nanos>) {
        let Some(r) = self.rule(index) else {
            return (None, None);
        };
        let workers = r.rule.workers.clone();
        match &r.rule.fault {
            ConnectionFault::Cut(c) => {
                r.cuts += 1;
                let next = match c.trigger {
                    CutTrigger::At(_) => None,
                    CutTrigger::Every { every, .. } => {
                        let next = now + nanos(every);
                        let room = c.times.is_none_or(|n| r.cuts < n);
                        (room && c.to.is_none_or(|to| next <= nanos(to))).then_some(next)
                    }
                };
                (Some(Act::Cut(workers)), next)
            }
            f => {
                let (partition_until, drops) = match f {
                    ConnectionFault::Partition { window, frames } => {
                        (Some(until(window)), *frames == HeldFrames::Drop)
                    }
                    _ => (None, false),
                };
                let act = Act::Opens {
                    workers,
                    partition_until,
                    drops,
                };
                (Some(act), None)
            }
        }
    }

    /// The windows of the rules acting on `w` at `t`.
    fn windows_at(&self, w: WorkerId, t: Nanos) -> impl Iterator<Item = &ConnectionFault> + '_ {
        self.rules.iter().filter_map(move |r| {
            let win = r.rule.fault.window()?;
            let open = nanos(win.from) <= t && t < until(&win);
            (open && r.rule.workers.contains(&w)).then_some(&r.rule.fault)
        })
    }

    /// Whether `w`'s connection is partitioned at `t`: nothing reaches it or leaves it.
    pub fn partitioned(&self, w: WorkerId, t: Nanos) -> bool {
        self.windows_at(w, t)
            .any(|f| matches!(f, ConnectionFault::Partition { .. }))
    }

    /// What becomes of a frame `w`'s connection carries `toward`, sent at `t`: held by a
    /// partition until it closes (then on its way again), lost by one that drops, delayed by
    /// every latency open at the instant it passes.
    pub fn route(&self, w: WorkerId, t: Nanos, toward: Toward) -> Route {
        let mut at = t;
        // A frame held by one partition may meet the next: follow it until it passes.
        loop {
            let held = self.windows_at(w, at).find_map(|f| match f {
                ConnectionFault::Partition { window, frames } => Some((until(window), *frames)),
                _ => None,
            });
            match held {
                Some((end, HeldFrames::Hold)) => at = end,
                Some((end, HeldFrames::Drop)) => return Route::Lost { known_at: end },
                None => break,
            }
        }
        let delay: Nanos = self
            .windows_at(w, at)
            .filter_map(|f| match f {
                ConnectionFault::Latency {
                    delay, direction, ..
                } => {
                    let applies = matches!(
                        (direction, toward),
                        (Direction::Both, _)
                            | (Direction::ToBroker, Toward::Broker)
                            | (Direction::ToWorker, Toward::Worker)
                    );
                    applies.then(|| nanos(*delay))
                }
                _ => None,
            })
            .sum();
        Route::At(at + delay)
    }
}

/// The instant a window closes; one without `for` never does before the run ends.
fn until(w: &crate::profile::Window) -> Nanos {
    w.length.map_or(Nanos::MAX, |l| nanos(w.from + l))
}
