//! `connection`: a fault on the path between workers and the broker. A `cut` closes both sides
//! of each selected worker's connections at its instants (the client reconnects); a `latency`
//! delays every frame in its direction during its window; a `partition` lets nothing through
//! during its window, then delivers what was held (`frames: hold`) or loses it (`drop`).
//!
//! A rule fires once per worker it acts on: at each cut, and at a window's opening.

use crate::profile::{
    format_duration, ChaosRule, ConnectionFault, ConnectionRule, CutTrigger, Direction, HeldFrames,
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
        let rules = super::rules_of(chaos, ChaosRule::as_connection)
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

/// `connection partition from 30s for 45s (hold, workers 1)`: the fault and its time, then how
/// and on which workers.
pub fn label(r: &ConnectionRule) -> String {
    let mut scope = Vec::new();
    let mut label = match &r.fault {
        ConnectionFault::Cut(cut) => {
            let label = match cut.trigger {
                CutTrigger::At(t) => format!("connection cut at {}", format_duration(t)),
                CutTrigger::Every { every, from } => {
                    if !from.is_zero() {
                        scope.push(format!("from {}", format_duration(from)));
                    }
                    format!("connection cut every {}", format_duration(every))
                }
            };
            if let Some(t) = cut.to {
                scope.push(format!("to {}", format_duration(t)));
            }
            if let Some(n) = cut.times {
                scope.push(format!("times {n}"));
            }
            label
        }
        ConnectionFault::Latency {
            delay, direction, ..
        } => {
            scope.push(direction.name().to_string());
            format!("connection latency {}", format_duration(*delay))
        }
        ConnectionFault::Partition { frames, .. } => {
            scope.push(frames.name().to_string());
            "connection partition".to_string()
        }
    };
    if let Some(w) = r.fault.window() {
        label.push_str(&format!(" from {}", format_duration(w.from)));
        match w.length {
            Some(l) => label.push_str(&format!(" for {}", format_duration(l))),
            None => label.push_str(" to the end"),
        }
    }
    let shown: Vec<String> = r.workers.iter().take(3).map(u32::to_string).collect();
    let more = if r.workers.len() > 3 { ", ..." } else { "" };
    scope.push(format!("workers {}{more}", shown.join(", ")));
    label.push_str(&format!(" ({})", scope.join(", ")));
    label
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::{CutSchedule, Direction, HeldFrames, Window};

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn rule(fault: ConnectionFault, workers: Vec<u32>) -> ConnectionRule {
        ConnectionRule {
            fault,
            workers,
            optional: false,
        }
    }

    #[test]
    fn a_rule_is_labelled_by_its_fault_time_and_workers() {
        let partition = ConnectionFault::Partition {
            window: Window {
                from: s(30),
                length: Some(s(45)),
            },
            frames: HeldFrames::Hold,
        };
        assert_eq!(
            label(&rule(partition, vec![1])),
            "connection partition from 30s for 45s (hold, workers 1)"
        );
        let latency = ConnectionFault::Latency {
            window: Window {
                from: s(10),
                length: None,
            },
            delay: Duration::from_millis(200),
            direction: Direction::ToBroker,
        };
        assert_eq!(
            label(&rule(latency, vec![2, 3])),
            "connection latency 200ms from 10s to the end (to_broker, workers 2, 3)"
        );
        let at = ConnectionFault::Cut(CutSchedule {
            trigger: CutTrigger::At(s(30)),
            to: None,
            times: None,
        });
        assert_eq!(
            label(&rule(at, vec![1, 2, 3, 4])),
            "connection cut at 30s (workers 1, 2, 3, ...)"
        );
        let every = ConnectionFault::Cut(CutSchedule {
            trigger: CutTrigger::Every {
                every: s(300),
                from: s(60),
            },
            to: Some(s(1200)),
            times: Some(2),
        });
        assert_eq!(
            label(&rule(every, vec![1])),
            "connection cut every 5m (from 1m, to 20m, times 2, workers 1)"
        );
    }
}
