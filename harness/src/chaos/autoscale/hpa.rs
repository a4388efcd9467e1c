//! The HorizontalPodAutoscaler's replica count, as its controller computes it at each sync for
//! an external metric with an `AverageValue` target (what KEDA gives it):
//!
//! 1. Below `min` or above `max` replicas: straight to the bound.
//! 2. The raw recommendation: ratio = metric / (target x replicas); within 1 ± tolerance, the
//!    count stays; otherwise ceil(metric / target).
//! 3. Stabilization: the count may rise only to the lowest recommendation of the scale-up
//!    window, fall only to the highest of the scale-down window (both including this one).
//! 4. Rate: each direction's policies limit the change from the count at the start of their
//!    period (the count now, less what was added, plus what was removed, within it); `select`
//!    picks the largest (or smallest) change allowed; `min`/`max` bound the result.
//!
//! At its first sync the HPA records the count it finds as a recommendation of that instant, so
//! a new HPA holds a fleet for one scale-down window before it shrinks it. A Deployment at zero
//! replicas is KEDA's to wake: the HPA leaves it alone.

use crate::profile::{AutoscaleRule, PolicyUnit, ScalingRules, SelectPolicy};
use crate::record::{nanos, Nanos};

/// One HPA's memory between syncs: its recommendations and its scale events.
#[derive(Debug, Clone)]
pub struct Hpa {
    /// `minReplicas`: KEDA sets max(`min`, 1).
    min: u32,
    max: u32,
    target: u64,
    tolerance: f64,
    up: ScalingRules,
    down: ScalingRules,
    /// (instant, raw recommendation), those still inside a stabilization window.
    recommendations: Vec<(Nanos, u32)>,
    /// Synced once already (its first recommendation recorded).
    seeded: bool,
    /// (instant, replicas added), (instant, replicas removed): for the policies' periods.
    ups: Vec<(Nanos, u32)>,
    downs: Vec<(Nanos, u32)>,
}

impl Hpa {
    pub fn new(rule: &AutoscaleRule) -> Hpa {
        Hpa {
            min: rule.min.max(1),
            max: rule.max,
            target: rule.target.max(1),
            tolerance: rule.tolerance,
            up: rule.scale_up.clone(),
            down: rule.scale_down.clone(),
            recommendations: Vec::new(),
            seeded: false,
            ups: Vec::new(),
            downs: Vec::new(),
        }
    }

    /// One sync at `now` with `current` replicas and the queue at `metric`: the count it sets.
    pub fn sync(&mut self, now: Nanos, current: u32, metric: u64) -> u32 {
        if !self.seeded {
            self.seeded = true;
            self.recommendations.push((now, current));
        }
        let desired = if current == 0 {
            return 0;
        } else if current > self.max {
            self.max
        } else if current < self.min {
            self.min
        } else {
            let raw = self.recommend(current, metric);
            let stable = self.stabilize(now, current, raw);
            self.limit(now, current, stable)
        };
        match desired.cmp(&current) {
            std::cmp::Ordering::Greater => self.ups.push((now, desired - current)),
            std::cmp::Ordering::Less => self.downs.push((now, current - desired)),
            std::cmp::Ordering::Equal => {}
        }
        desired
    }

    /// Step 2: the count the metric asks for, or `current` within the tolerance.
    fn recommend(&self, current: u32, metric: u64) -> u32 {
        let ratio = metric as f64 / (self.target as f64 * current as f64);
        if (1.0 - ratio).abs() <= self.tolerance {
            return current;
        }
        metric.div_ceil(self.target).min(u32::MAX as u64) as u32
    }

    /// Step 3: `raw` held between the windows' recommendations, then recorded.
    fn stabilize(&mut self, now: Nanos, current: u32, raw: u32) -> u32 {
        let up = nanos(self.up.stabilization);
        let down = nanos(self.down.stabilization);
        let mut lowest = raw;
        let mut highest = raw;
        for &(at, rec) in &self.recommendations {
            if within(now, at, up) {
                lowest = lowest.min(rec);
            }
            if within(now, at, down) {
                highest = highest.max(rec);
            }
        }
        self.recommendations
            .retain(|&(at, _)| within(now, at, up) || within(now, at, down));
        self.recommendations.push((now, raw));
        current.max(lowest).min(highest)
    }

    /// Step 4: `desired` within what the policies allow this period, and `min`/`max`.
    fn limit(&self, now: Nanos, current: u32, desired: u32) -> u32 {
        if desired > current {
            let allowed = (self.rate(now, current, &self.up, true))
                .max(current as i64)
                .min(self.max as i64);
            desired.min(allowed as u32)
        } else if desired < current {
            let allowed = self
                .rate(now, current, &self.down, false)
                .min(current as i64);
            desired.max(allowed.max(self.min as i64) as u32)
        } else {
            desired
        }
    }

    /// The furthest count `rules` allow from `current` (up or down).
    fn rate(&self, now: Nanos, current: u32, rules: &ScalingRules, up: bool) -> i64 {
        let current = current as i64;
        if rules.select == SelectPolicy::Disabled {
            return current;
        }
        let changed = |events: &[(Nanos, u32)], period: Nanos| -> i64 {
            events
                .iter()
                .filter(|&&(at, _)| within(now, at, period))
                .map(|&(_, n)| n as i64)
                .sum()
        };
        let proposals = rules.policies.iter().map(|p| {
            let period = nanos(p.period);
            let start =
                (current - changed(&self.ups, period) + changed(&self.downs, period)).max(0);
            let value = p.value as i64;
            match (p.unit, up) {
                (PolicyUnit::Pods, true) => start + value,
                (PolicyUnit::Pods, false) => start - value,
                // Rounded up when rising (a change too small to add a pod still adds one),
                // down when falling, as the HPA does.
                (PolicyUnit::Percent, true) => (start * (100 + value) + 99) / 100,
                (PolicyUnit::Percent, false) => (start * (100 - value.min(100))) / 100,
            }
        });
        // The largest change up is the highest count; down, the lowest.
        match (rules.select, up) {
            (SelectPolicy::Max, true) | (SelectPolicy::Min, false) => proposals.max(),
            _ => proposals.min(),
        }
        .unwrap_or(current)
    }
}

/// Whether what happened `at` is inside the `span` that ends `now`: after its start, as the
/// HPA's `timestamp.After(now - span)`.
fn within(now: Nanos, at: Nanos, span: Nanos) -> bool {
    now.saturating_sub(at) < span
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::autoscale::ScalingPolicy;

    const S: Nanos = 1_000_000_000;

    fn rule(target: u64, max: u32) -> AutoscaleRule {
        AutoscaleRule {
            max,
            ..AutoscaleRule::new(target)
        }
    }

    #[test]
    fn a_queue_of_1000_with_target_100_and_max_8_reaches_8_in_two_syncs() {
        // Desired is ceil(1000 / 100) = 10. At 15s, from 1 replica, the default scale-up
        // allows max(1 x 2, 1 + 4) = 5. At 30s the +4 of 15s is exactly one period (15s) old,
        // outside it, so the period starts at 5: max(5 x 2, 5 + 4) = 10, held to max 8. At
        // 45s the ratio 1000 / 800 = 1.25 still asks 10: max holds 8.
        let mut hpa = Hpa::new(&rule(100, 8));
        let counts: Vec<u32> = [15, 30, 45]
            .iter()
            .scan(1, |n, &t| {
                *n = hpa.sync(t * S, *n, 1000);
                Some(*n)
            })
            .collect();
        assert_eq!(counts, vec![5, 8, 8]);
    }

    #[test]
    fn a_new_hpa_holds_the_fleet_it_finds_for_one_scale_down_window() {
        // 8 replicas and an empty queue. The first sync (15s) records 8 as of 15s: the
        // scale-down window (300s) holds 8 up to the first sync 300s or more later, 315s, which
        // scales to minReplicas 1 (-100% per 15s allows 0).
        let mut hpa = Hpa::new(&rule(100, 8));
        let mut n = 8;
        let mut first_change = None;
        for k in 1..=30u64 {
            let next = hpa.sync(k * 15 * S, n, 0);
            if next != n && first_change.is_none() {
                first_change = Some((k * 15, next));
            }
            n = next;
        }
        assert_eq!(first_change, Some((315, 1)));
    }

    #[test]
    fn within_the_tolerance_the_count_stays() {
        // 4 replicas, target 100: 430 is a ratio of 1.075 (within 0.1): stays 4; 450 is
        // 1.125: ceil(4.5) = 5.
        let mut hpa = Hpa::new(&rule(100, 10));
        assert_eq!(hpa.sync(15 * S, 4, 430), 4);
        assert_eq!(hpa.sync(30 * S, 4, 450), 5);
    }

    #[test]
    fn the_scale_down_window_holds_replicas_up_through_a_short_dip() {
        // 8 replicas on 800 messages; the queue dips to 100 for a minute (60s-120s), then is
        // back at 800. The 300s window's highest recommendation is still 8 throughout: no
        // scale-in. Once the queue stays at 100 (from 180s), the count falls at the first sync
        // 300s or more after the last recommendation of 8 (165s): at 465s, by -100% per 15s
        // from 8, held to minReplicas 1.
        let mut hpa = Hpa::new(&rule(100, 8));
        let mut n = 8;
        let mut seen = Vec::new();
        for k in 1..=40u64 {
            let t = k * 15;
            let metric = if (60..120).contains(&t) || t > 165 {
                100
            } else {
                800
            };
            n = hpa.sync(t * S, n, metric);
            seen.push((t, n));
        }
        assert!(seen
            .iter()
            .take_while(|&&(t, _)| t < 465)
            .all(|&(_, n)| n == 8));
        assert_eq!(seen.iter().find(|&&(_, n)| n < 8), Some(&(465, 1)));
    }

    #[test]
    fn the_rate_counts_from_the_start_of_the_policy_period() {
        // One policy: +2 pods per 60s. 1 → 3 at 15s; at 30s and 45s the period started at 1
        // (the +2 of 15s is inside it): 1 + 2 = 3, no more; at 90s the event is 75s old: 3 + 2.
        let up = ScalingRules {
            stabilization: Duration::ZERO,
            policies: vec![ScalingPolicy {
                unit: PolicyUnit::Pods,
                value: 2,
                period: Duration::from_secs(60),
            }],
            select: SelectPolicy::Max,
        };
        let mut hpa = Hpa::new(&AutoscaleRule {
            scale_up: up,
            ..rule(10, 20)
        });
        let mut n = 1;
        let mut seen = Vec::new();
        for t in [15, 30, 45, 90] {
            n = hpa.sync(t * S, n, 1000);
            seen.push(n);
        }
        assert_eq!(seen, vec![3, 3, 3, 5]);
    }

    #[test]
    fn bounds_and_zero() {
        let mut hpa = Hpa::new(&AutoscaleRule {
            min: 2,
            ..rule(100, 4)
        });
        // At zero the HPA leaves the count to KEDA; above max it goes to max; below min to min.
        assert_eq!(hpa.sync(15 * S, 0, 5000), 0);
        assert_eq!(hpa.sync(30 * S, 6, 5000), 4);
        assert_eq!(hpa.sync(45 * S, 1, 0), 2);
        // A disabled scale-down keeps the count whatever the queue.
        let mut frozen = Hpa::new(&AutoscaleRule {
            scale_down: ScalingRules {
                select: SelectPolicy::Disabled,
                ..ScalingRules::default_down()
            },
            ..rule(100, 8)
        });
        assert_eq!(frozen.sync(400 * S, 5, 0), 5);
    }
}
