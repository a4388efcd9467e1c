//! `kill_worker`: a worker dies at a point of its handler (`received`, `call_started`,
//! `call_answered`, or a checkpoint its target declares), at an instant, or periodically, for
//! the deliveries its selectors match. Its schedule: `chaos::kill_worker`; its keys:
//! `resolve::kill_worker`.

use std::time::Duration;

use super::duration::format_duration;
use super::fault::{keys_scope, window_scope, FaultRule};

#[derive(Debug, Clone, PartialEq)]
pub struct KillRule {
    pub trigger: KillTrigger,
    /// Only the n-th delivery of a message (1-based).
    pub delivery: Option<u32>,
    /// Chance that a matching point kills (default 1.0).
    pub probability: f64,
    pub keys: Option<Vec<String>>,
    /// Only this worker (1-based).
    pub worker: Option<u32>,
    pub from: Option<Duration>,
    pub to: Option<Duration>,
    /// At most this many kills by this rule.
    pub times: Option<u64>,
    /// Kill this long after the point (default 0).
    pub delay: Duration,
    /// A run in which the rule never fires is not a failure (`optional: true`).
    pub optional: bool,
}

impl KillRule {
    /// A rule that kills at every `trigger`, with no other selector (probability 1, no delay).
    pub fn new(trigger: KillTrigger) -> KillRule {
        KillRule {
            trigger,
            delivery: None,
            probability: 1.0,
            keys: None,
            worker: None,
            from: None,
            to: None,
            times: None,
            delay: Duration::ZERO,
            optional: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum KillTrigger {
    /// Kill when a handler reaches this point.
    Point(KillPoint),
    /// Kill at this instant (`worker` names which, else every busy worker... see chaos docs).
    At(Duration),
    /// Kill periodically, first at `every`.
    Every(Duration),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KillPoint {
    Received,
    CallStarted,
    CallAnswered,
    /// A checkpoint the target declares (e.g. `claimed`).
    Checkpoint(String),
}

impl KillPoint {
    pub fn name(&self) -> &str {
        match self {
            KillPoint::Received => "received",
            KillPoint::CallStarted => "call_started",
            KillPoint::CallAnswered => "call_answered",
            KillPoint::Checkpoint(c) => c,
        }
    }
}

impl FaultRule for KillRule {
    const FAULT: &'static str = "kill_worker";

    fn optional(&self) -> bool {
        self.optional
    }

    /// `kill_worker at call_started (delivery 5, keys a, b, c, ..., worker 2, from 1m, ...)`.
    fn label(&self) -> String {
        let mut label = match &self.trigger {
            KillTrigger::Point(p) => format!("kill_worker at {}", p.name()),
            KillTrigger::At(t) => format!("kill_worker at {}", format_duration(*t)),
            KillTrigger::Every(p) => format!("kill_worker every {}", format_duration(*p)),
        };
        let mut scope = Vec::new();
        if let Some(d) = self.delivery {
            scope.push(format!("delivery {d}"));
        }
        if let Some(keys) = &self.keys {
            scope.push(keys_scope(keys));
        }
        if let Some(w) = self.worker {
            scope.push(format!("worker {w}"));
        }
        window_scope(&mut scope, self.from, self.to, self.times, self.probability);
        if !self.delay.is_zero() {
            scope.push(format!("delay {}", format_duration(self.delay)));
        }
        if !scope.is_empty() {
            label.push_str(&format!(" ({})", scope.join(", ")));
        }
        label
    }
}
