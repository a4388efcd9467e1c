//! Target options (`consumer.options` in a profile), resolved, and which target takes which.

use std::time::Duration;

/// What a built-in target does with a message it cannot parse (a poison message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnPoison {
    /// Fail as naive code does: the worker dies and is restarted after `restart_after`.
    Crash,
    /// Ack the message and record it as rejected, so it is never silently lost.
    DeadLetter,
    /// Hand it back at once (visibility 0); the broker's delivery limit decides its fate.
    Release,
}

/// Retries inside the handler: delay after failure n is `min(cap, base * 2^(n-1))`, of which a
/// share `jitter` is randomised from the seed. Transient errors (5xx, 429, timeouts) retry;
/// permanent ones (4xx) do not.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySpec {
    /// Calls in all, the first included (>= 1).
    pub max_attempts: u32,
    pub base: Duration,
    pub cap: Duration,
    /// 0.0 ..= 1.0.
    pub jitter: f64,
}

impl RetrySpec {
    /// The delay after failed attempt `n` (1-based), given a uniform draw `u` in [0, 1).
    pub fn delay(&self, n: u32, u: f64) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32.checked_shl(n.saturating_sub(1)).unwrap_or(u32::MAX));
        let full = exp.min(self.cap);
        full.mul_f64(1.0 - self.jitter * u)
    }
}

/// What a target does with a message whose provider call failed, as a framework's retry does:
/// publish it again for a later try, `delay(n)` after the n-th failure (the in-handler
/// [`RetrySpec`]'s rule), up to `max_retries` times; then give up as `exhausted` says.
#[derive(Debug, Clone, PartialEq)]
pub struct RepublishSpec {
    /// Retries in all (0: give up at the first failure).
    pub max_retries: u32,
    /// The delay after failure n: `min(cap, base * 2^(n-1))`, a share `jitter` randomised.
    pub backoff: RetrySpec,
    pub exhausted: Exhausted,
}

/// What a framework does with a message out of retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exhausted {
    /// Moves it to its dead-letter queue (Dramatiq's `.XQ`).
    DeadLetter,
    /// Acks it: the task failed, nothing is re-queued (Celery with `task_acks_late`).
    Ack,
}

/// Resolved options of a built-in target; a field the target does not take is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetOptions {
    pub on_poison: OnPoison,
    /// `claim-then-send`: how long a claim counts as in flight.
    pub claim_window: Option<Duration>,
    /// `heartbeat`: extend the lease this often.
    pub extend_every: Option<Duration>,
    /// `heartbeat`: stop extending after this much extra time.
    pub max_extension: Option<Duration>,
    /// Client-side timeout of the provider call.
    pub http_timeout: Option<Duration>,
    pub retry: Option<RetrySpec>,
    /// Publish a failed message again, as a framework's retry does (sim only).
    pub republish: Option<RepublishSpec>,
    /// The queue's visibility timeout as the consumer is configured with it (the profile's
    /// `broker.visibility_timeout`; not a target option). `heartbeat` extends by it.
    pub visibility_timeout: Duration,
}

impl Default for TargetOptions {
    fn default() -> Self {
        TargetOptions {
            on_poison: OnPoison::Crash,
            claim_window: None,
            extend_every: None,
            max_extension: None,
            http_timeout: None,
            retry: None,
            republish: None,
            visibility_timeout: Duration::from_secs(30),
        }
    }
}

/// A built-in target: its name (part of the profile contract), one line on what it does, and the
/// options it accepts.
#[derive(Debug, Clone, Copy)]
pub struct TargetInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub options: &'static [&'static str],
    /// The checkpoints its handler reaches (`Runtime::checkpoint`), where a chaos rule can kill.
    pub checkpoints: &'static [&'static str],
}

const COMMON: &[&str] = &["on_poison", "http_timeout", "retry"];

/// Every built-in target.
pub const TARGETS: &[TargetInfo] = &[
    TargetInfo {
        name: "ack-after-work",
        summary: "at-least-once: call the provider, then ack (duplicates when the lease runs out)",
        options: &["on_poison", "http_timeout", "retry", "republish"],
        checkpoints: &[],
    },
    TargetInfo {
        name: "ack-before-work",
        summary: "at-most-once: ack, then call the provider (loses the work when the handler dies)",
        options: COMMON,
        checkpoints: &[],
    },
    TargetInfo {
        name: "dedupe-table",
        summary: "exactly-once: insert the key into handled_messages and write the effect row in one transaction, then ack",
        options: &["on_poison"],
        checkpoints: &["committed"],
    },
    TargetInfo {
        name: "status-fence",
        summary: "exactly-once: a conditional update (held -> sold) is the effect; zero rows matched is success",
        options: &["on_poison"],
        checkpoints: &["committed"],
    },
    TargetInfo {
        name: "claim-then-send",
        summary: "claim a row, call the provider, stamp it; an unstamped claim younger than claim_window is handed back",
        options: &["on_poison", "http_timeout", "retry", "claim_window"],
        checkpoints: &["claimed"],
    },
    TargetInfo {
        name: "heartbeat",
        summary: "ack after the work, extending the lease every extend_every while the call runs",
        options: &["on_poison", "http_timeout", "retry", "extend_every", "max_extension"],
        checkpoints: &[],
    },
    TargetInfo {
        name: "commit-after-batch",
        summary: "at-least-once per poll: call the provider for each record, commit once the poll's batch is done (Kafka; elsewhere as ack-after-work)",
        options: COMMON,
        checkpoints: &[],
    },
    TargetInfo {
        name: "auto-commit",
        summary: "call the provider, never commit: the consumer's auto-commit does (Kafka with enable_auto_commit)",
        options: COMMON,
        checkpoints: &[],
    },
];

pub fn target_info(name: &str) -> Option<&'static TargetInfo> {
    TARGETS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_checkpoint_a_target_reaches_is_declared() {
        let sources = [
            ("ack-after-work", include_str!("ack_after_work.rs")),
            ("ack-before-work", include_str!("ack_before_work.rs")),
            ("dedupe-table", include_str!("dedupe_table.rs")),
            ("status-fence", include_str!("status_fence.rs")),
            ("claim-then-send", include_str!("claim_then_send.rs")),
            ("heartbeat", include_str!("heartbeat.rs")),
            ("commit-after-batch", include_str!("commit_after_batch.rs")),
            ("auto-commit", include_str!("auto_commit.rs")),
        ];
        assert_eq!(sources.len(), TARGETS.len());
        for (name, source) in sources {
            let reached: Vec<&str> = source
                .split("checkpoint(\"")
                .skip(1)
                .filter_map(|rest| rest.split('"').next())
                .collect();
            let info = target_info(name).unwrap_or_else(|| panic!("{name} is a target"));
            assert_eq!(reached, info.checkpoints, "{name}");
        }
    }

    #[test]
    fn retry_delay_doubles_up_to_cap_and_jitter_shrinks_it() {
        let r = RetrySpec {
            max_attempts: 5,
            base: Duration::from_millis(100),
            cap: Duration::from_millis(350),
            jitter: 0.5,
        };
        assert_eq!(r.delay(1, 0.0), Duration::from_millis(100));
        assert_eq!(r.delay(2, 0.0), Duration::from_millis(200));
        assert_eq!(r.delay(3, 0.0), Duration::from_millis(350));
        assert_eq!(r.delay(40, 0.0), Duration::from_millis(350));
        assert_eq!(r.delay(2, 0.5), Duration::from_millis(150));
    }
}
