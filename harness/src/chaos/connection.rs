//! `connection`: a fault on the path between workers and the broker. A `cut` closes both sides
//! of each selected worker's connections at its instants (the client reconnects); a `latency`
//! delays every frame in its direction during its window; a `partition` lets nothing through
//! during its window, then delivers what was held (`frames: hold`) or loses it (`drop`).
//!
//! A rule fires once per worker it acts on: at each cut, and at a window's opening.

use crate::profile::{format_duration, ConnectionFault, ConnectionRule, CutTrigger};

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
