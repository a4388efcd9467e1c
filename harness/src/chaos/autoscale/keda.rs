//! KEDA's own part of the scaling, at each `pollingInterval`: activation. The queue is active
//! while its length is above the activation value. An active queue with the Deployment at zero
//! is woken to max(`min`, 1) replicas (the HPA then takes it on); an inactive one, with `min` 0,
//! is scaled to zero at the first poll more than `cooldownPeriod` after it was last active. A queue never
//! active since the ScaledObject was made goes to zero at once (no `initialCooldownPeriod`).

use crate::profile::AutoscaleRule;
use crate::record::{nanos, Nanos};

/// One ScaledObject's activation state.
#[derive(Debug, Clone)]
pub struct Keda {
    min: u32,
    activation: u64,
    cooldown: Nanos,
    /// The last poll that found the queue active.
    last_active: Option<Nanos>,
}

impl Keda {
    pub fn new(rule: &AutoscaleRule) -> Keda {
        Keda {
            min: rule.min,
            activation: rule.activation,
            cooldown: nanos(rule.cooldown),
            last_active: None,
        }
    }

    /// One poll at `now` with `current` replicas and the queue at `metric`: the count KEDA
    /// sets, when it sets one.
    pub fn poll(&mut self, now: Nanos, current: u32, metric: u64) -> Option<u32> {
        let active = metric > self.activation;
        if active {
            self.last_active = Some(now);
            return (current == 0).then_some(self.min.max(1));
        }
        let cooled = self
            .last_active
            .is_none_or(|at| now.saturating_sub(at) > self.cooldown);
        (current > 0 && self.min == 0 && cooled).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn woken_when_active_and_scaled_to_zero_after_the_cooldown() {
        // Polls every 30s, cooldown 5m, activation 0. Messages at 30s wake the Deployment to
        // 1; the queue empties from 60s on (last active at 30s): zero at the first poll more
        // than 300s after 30s (KEDA's `lastActive + cooldown` before now): 360s, not 330s.
        let mut keda = Keda::new(&AutoscaleRule::new(100));
        let mut n = 0;
        let mut changes = Vec::new();
        for k in 1..=14u64 {
            let t = k * 30;
            let metric = if t == 30 { 50 } else { 0 };
            if let Some(to) = keda.poll(t * S, n, metric) {
                n = to;
                changes.push((t, to));
            }
        }
        assert_eq!(changes, vec![(30, 1), (360, 0)]);
    }

    #[test]
    fn the_activation_value_and_min_replicas() {
        // Activation 10: 10 messages are not active, 11 are; with min 2 a wake is to 2 and
        // nothing scales to zero.
        let mut keda = Keda::new(&AutoscaleRule {
            activation: 10,
            min: 2,
            ..AutoscaleRule::new(100)
        });
        assert_eq!(keda.poll(30 * S, 0, 10), None);
        assert_eq!(keda.poll(60 * S, 0, 11), Some(2));
        assert_eq!(keda.poll(900 * S, 2, 0), None);
        // Never active, min 0: to zero at the first poll.
        let mut idle = Keda::new(&AutoscaleRule::new(100));
        assert_eq!(idle.poll(30 * S, 3, 0), Some(0));
    }
}
