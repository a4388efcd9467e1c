//! `chaos[].connection` as the runner reads it: a fault on the path between workers and the
//! broker (a cut, added latency, a partition), on the workers it selects.

use std::time::Duration;

use super::duration::format_duration;
use super::fault::FaultRule;
use super::kinds::spec::BrokerSpec;
use super::kinds::Connections;
use super::path::FieldPath;
use super::problem::Problem;
use super::run_spec::Mode;

/// One `connection` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionRule {
    pub fault: ConnectionFault,
    /// The workers whose connections it acts on, in the profile's order (default: every worker,
    /// ascending).
    pub workers: Vec<u32>,
    /// A run in which the rule never fires is not a failure (`optional: true`).
    pub optional: bool,
}

/// What happens to the selected workers' connections.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectionFault {
    /// Both sides of each connection closed at each instant of `trigger`; the client reconnects.
    Cut(CutSchedule),
    /// `delay` added to every frame in `direction` during `window`.
    Latency {
        window: Window,
        delay: Duration,
        direction: Direction,
    },
    /// Nothing passes either way during `window`; what was sent meanwhile is `frames`.
    Partition { window: Window, frames: HeldFrames },
}

impl ConnectionFault {
    /// The window of a latency or a partition.
    pub fn window(&self) -> Option<Window> {
        match self {
            ConnectionFault::Cut(_) => None,
            ConnectionFault::Latency { window, .. } | ConnectionFault::Partition { window, .. } => {
                Some(*window)
            }
        }
    }
}

/// When a cut comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutSchedule {
    pub trigger: CutTrigger,
    /// No cut after this instant (`every` only).
    pub to: Option<Duration>,
    /// At most this many cut instants.
    pub times: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutTrigger {
    At(Duration),
    /// First at `from + every`, then every `every`.
    Every {
        every: Duration,
        from: Duration,
    },
}

impl CutSchedule {
    /// The instants of the cuts before `end`, in order.
    #[cfg_attr(not(feature = "live"), allow(dead_code))] // the live runner's only
    pub fn instants(&self, end: Duration) -> Vec<Duration> {
        let limit = self.times.unwrap_or(u64::MAX);
        let last = self.to.map_or(end, |to| to.min(end));
        match self.trigger {
            CutTrigger::At(at) => (at < end).then_some(at).into_iter().collect(),
            CutTrigger::Every { every, from } => {
                let mut out = Vec::new();
                let mut at = from + every;
                while at < end && at <= last && (out.len() as u64) < limit {
                    out.push(at);
                    at += every;
                }
                out
            }
        }
    }
}

/// `[from, from + length)`; no `length`: to the run's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: Duration,
    pub length: Option<Duration>,
}

impl Window {
    /// The instant it closes, in a run that ends at `end`.
    #[cfg_attr(not(feature = "live"), allow(dead_code))] // the live runner's only
    pub fn until(&self, end: Duration) -> Duration {
        self.length.map_or(end, |l| (self.from + l).min(end))
    }
}

/// Which frames a latency delays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Both,
    /// The worker's requests (fetches, acks, commits, heartbeats).
    ToBroker,
    /// The broker's answers and deliveries.
    ToWorker,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Both => "both",
            Direction::ToBroker => "to_broker",
            Direction::ToWorker => "to_worker",
        }
    }
}

/// What a partition does with the frames sent while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldFrames {
    /// Delivered when the window closes, in order.
    Hold,
    /// Lost.
    Drop,
}

impl HeldFrames {
    pub fn name(self) -> &'static str {
        match self {
            HeldFrames::Hold => "hold",
            HeldFrames::Drop => "drop",
        }
    }
}

/// A live run acts on connections only where ackbench is on the workers' path
/// ([`Connections`] of the kind); a sim run models them on every kind. `path` is the rule's.
fn check_mode(broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
    if mode != Mode::Live {
        return Ok(());
    }
    let kind = broker.kind.descriptor();
    let why = match kind.connections {
        Connections::Seen => return Ok(()),
        Connections::Embedded { .. } if broker.url.is_none() => return Ok(()),
        Connections::Embedded { external } => external,
        Connections::Unseen { why } => why,
    };
    Err(Problem::at_key(
        path.clone(),
        format!(
            "a live run on {} cannot act on the workers' connections: {why}",
            kind.name
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_cut_schedule_lists_its_instants_before_the_end() {
        let at = CutSchedule {
            trigger: CutTrigger::At(s(30)),
            to: None,
            times: None,
        };
        assert_eq!(at.instants(s(60)), vec![s(30)]);
        assert_eq!(at.instants(s(30)), Vec::<Duration>::new());
        // every 10s from 5s: 15, 25, 35, 45, 55; `to: 40s` keeps 15, 25, 35; `times: 2` 15, 25.
        let every = CutSchedule {
            trigger: CutTrigger::Every {
                every: s(10),
                from: s(5),
            },
            to: None,
            times: None,
        };
        assert_eq!(
            every.instants(s(60)),
            vec![s(15), s(25), s(35), s(45), s(55)]
        );
        let to = CutSchedule {
            to: Some(s(40)),
            ..every
        };
        assert_eq!(to.instants(s(60)), vec![s(15), s(25), s(35)]);
        let times = CutSchedule {
            times: Some(2),
            ..every
        };
        assert_eq!(times.instants(s(60)), vec![s(15), s(25)]);
    }

    #[test]
    fn a_window_without_length_lasts_to_the_end() {
        let open = Window {
            from: s(10),
            length: None,
        };
        assert_eq!(open.until(s(100)), s(100));
        let short = Window {
            from: s(10),
            length: Some(s(30)),
        };
        assert_eq!(short.until(s(100)), s(40));
        assert_eq!(short.until(s(20)), s(20));
    }
}

impl FaultRule for ConnectionRule {
    const FAULT: &'static str = "connection";

    fn optional(&self) -> bool {
        self.optional
    }

    fn check(&self, broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
        check_mode(broker, mode, path)
    }

    /// `connection partition from 30s for 45s (hold, workers 1)`: the fault and its time, then how
    /// and on which workers.
    fn label(&self) -> String {
        let mut scope = Vec::new();
        let mut label = match &self.fault {
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
        if let Some(w) = self.fault.window() {
            label.push_str(&format!(" from {}", format_duration(w.from)));
            match w.length {
                Some(l) => label.push_str(&format!(" for {}", format_duration(l))),
                None => label.push_str(" to the end"),
            }
        }
        let shown: Vec<String> = self.workers.iter().take(3).map(u32::to_string).collect();
        let more = if self.workers.len() > 3 { ", ..." } else { "" };
        scope.push(format!("workers {}{more}", shown.join(", ")));
        label.push_str(&format!(" ({})", scope.join(", ")));
        label
    }
}

#[cfg(test)]
mod label_tests {
    use std::time::Duration;

    use super::*;

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
            FaultRule::label(&rule(partition, vec![1])),
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
            FaultRule::label(&rule(latency, vec![2, 3])),
            "connection latency 200ms from 10s to the end (to_broker, workers 2, 3)"
        );
        let at = ConnectionFault::Cut(CutSchedule {
            trigger: CutTrigger::At(s(30)),
            to: None,
            times: None,
        });
        assert_eq!(
            FaultRule::label(&rule(at, vec![1, 2, 3, 4])),
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
            FaultRule::label(&rule(every, vec![1])),
            "connection cut every 5m (from 1m, to 20m, times 2, workers 1)"
        );
    }
}
