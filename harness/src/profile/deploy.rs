//! `deploy`: a rolling restart, as a release does it. Its schedule: `chaos::deploy`; its keys:
//! `resolve::deploy`.

use std::time::Duration;

use super::duration::format_duration;
use super::fault::FaultRule;

/// `deploy`: a rolling restart of the workers, as a release does it: each is told to stop
/// (`signal`), given `grace` to finish, then killed; at most `max_unavailable` at a time, the
/// next one told once a replaced worker is back.
#[derive(Debug, Clone, PartialEq)]
pub struct DeployRule {
    pub trigger: DeployTrigger,
    /// Workers stopped at once (default 1).
    pub max_unavailable: u32,
    /// From the stop signal to the kill (default 30s).
    pub grace: Duration,
    pub signal: StopSignal,
    /// The workers the rollout replaces, in this order (default: every worker, ascending).
    pub workers: Vec<u32>,
    /// No rollout starts after this instant (`every` only).
    pub to: Option<Duration>,
    /// At most this many rollouts.
    pub times: Option<u64>,
    /// A run in which no rollout starts is not a failure (`optional: true`).
    pub optional: bool,
}

/// When a deploy's rollouts start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeployTrigger {
    At(Duration),
    /// First at `from + every`, then every `every`.
    Every {
        every: Duration,
        from: Duration,
    },
}

/// The signal that tells a worker to stop before its grace ends (a kill follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Term,
    Int,
}

impl StopSignal {
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Term => "SIGTERM",
            StopSignal::Int => "SIGINT",
        }
    }
}

impl FaultRule for DeployRule {
    const FAULT: &'static str = "deploy";

    fn optional(&self) -> bool {
        self.optional
    }

    /// `deploy every 1h (from 1m) (max_unavailable 1, grace 30s, SIGTERM, workers 3, 1, times 2)`.
    fn label(&self) -> String {
        let mut label = match self.trigger {
            DeployTrigger::At(t) => format!("deploy at {}", format_duration(t)),
            DeployTrigger::Every { every, from } if from.is_zero() => {
                format!("deploy every {}", format_duration(every))
            }
            DeployTrigger::Every { every, from } => format!(
                "deploy every {} (from {})",
                format_duration(every),
                format_duration(from)
            ),
        };
        let mut scope = vec![
            format!("max_unavailable {}", self.max_unavailable),
            format!("grace {}", format_duration(self.grace)),
            self.signal.name().to_string(),
        ];
        let every_worker = self
            .workers
            .iter()
            .copied()
            .eq(1..=self.workers.len() as u32);
        if !every_worker {
            let listed: Vec<String> = self.workers.iter().map(u32::to_string).collect();
            scope.push(format!("workers {}", listed.join(", ")));
        }
        if let Some(t) = self.to {
            scope.push(format!("to {}", format_duration(t)));
        }
        if let Some(n) = self.times {
            scope.push(format!("times {n}"));
        }
        label.push_str(&format!(" ({})", scope.join(", ")));
        label
    }
}
