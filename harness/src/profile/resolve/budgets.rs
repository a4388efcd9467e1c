//! `budgets`: the limits a run must stay within to pass. All optional but `unfinished`, which is 0
//! unless the profile sets it: a run that leaves messages in the queue fails.

use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::RawBudgets;
use crate::profile::scenario::{Budgets, LateBudget, DEFAULT_LATE_AFTER};

use super::checks::{non_negative, positive, required, unit_interval};

/// The `unfinished` budget of a profile that sets none: nothing may be left in the queue.
pub const DEFAULT_UNFINISHED: u64 = 0;

pub fn resolve(raw: RawBudgets, path: &FieldPath) -> Result<Budgets, Problem> {
    let ratio = |x: Option<f64>, key: &str| x.map(|x| non_negative(x, &path.key(key))).transpose();
    let late = match raw.late {
        Some(l) => {
            let at = path.key("late");
            let after = positive(
                l.after.map_or(DEFAULT_LATE_AFTER, |d| d.0),
                &at.key("after"),
            )?;
            let max = required(
                l.max,
                &at.key("max"),
                "how many late messages the run may have, e.g. 0",
            )?;
            Some(LateBudget { after, max })
        }
        None => None,
    };
    Ok(Budgets {
        duplicate_rate: ratio(raw.duplicate_rate, "duplicate_rate")?,
        duplicate_effects: raw.duplicate_effects,
        lost: raw.lost,
        late_after: late.as_ref().map_or(DEFAULT_LATE_AFTER, |l| l.after),
        late,
        dlq: raw.dlq,
        dlq_with_effect: raw.dlq_with_effect,
        p99_over_visibility: ratio(raw.p99_over_visibility, "p99_over_visibility")?,
        p999_handler_latency: raw
            .p999_handler_latency
            .map(|d| positive(d.0, &path.key("p999_handler_latency")))
            .transpose()?,
        max_oldest_age: raw
            .max_oldest_age
            .map(|d| positive(d.0, &path.key("max_oldest_age")))
            .transpose()?,
        worker_busy_fraction: raw
            .worker_busy_fraction
            .map(|x| unit_interval(x, &path.key("worker_busy_fraction")))
            .transpose()?,
        overlapping_executions: raw.overlapping_executions,
        rejected: raw.rejected,
        ingress_lost: raw.ingress_lost,
        unfinished: Some(raw.unfinished.unwrap_or(DEFAULT_UNFINISHED)),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{Budgets, LateBudget};
    use crate::profile::testutil::{error, scenario, with};

    #[test]
    fn every_budget_reads() {
        let s = scenario(&with(
            "budgets:\n  duplicate_rate: 2\n  duplicate_effects: 3\n  lost: 0\n  late: { after: 2m, max: 4 }\n  \
             dlq: 5\n  dlq_with_effect: 6\n  p99_over_visibility: 0.5\n  p999_handler_latency: 10s\n  \
             max_oldest_age: 1m\n  worker_busy_fraction: 0.8\n  overlapping_executions: 10\n  \
             rejected: 7\n  ingress_lost: 8\n  \
             unfinished: 9\n",
        ));
        assert_eq!(
            s.budgets,
            Budgets {
                duplicate_rate: Some(2.0),
                duplicate_effects: Some(3),
                lost: Some(0),
                late: Some(LateBudget {
                    after: Duration::from_secs(120),
                    max: 4
                }),
                dlq: Some(5),
                dlq_with_effect: Some(6),
                p99_over_visibility: Some(0.5),
                p999_handler_latency: Some(Duration::from_secs(10)),
                max_oldest_age: Some(Duration::from_secs(60)),
                worker_busy_fraction: Some(0.8),
                overlapping_executions: Some(10),
                rejected: Some(7),
                ingress_lost: Some(8),
                unfinished: Some(9),
                late_after: Duration::from_secs(120),
            }
        );
    }

    #[test]
    fn nothing_may_be_left_unfinished_unless_the_profile_says_so() {
        let s = scenario(&with(""));
        assert_eq!(s.budgets.unfinished, Some(0));
        assert_eq!(s.budgets.lost, None);
        let s = scenario(&with("budgets: { unfinished: 25 }\n"));
        assert_eq!(s.budgets.unfinished, Some(25));
        assert_eq!(
            error(&with("budgets: { unfinished: -1 }\n")),
            "p.yaml:6:24: budgets.unfinished: invalid value: integer `-1`, expected a whole number from 0 to 18446744073709551615"
        );
    }

    #[test]
    fn late_after_defaults_to_five_minutes() {
        let s = scenario(&with("budgets: { late: { max: 0 } }\n"));
        assert_eq!(
            s.budgets.late,
            Some(LateBudget {
                after: Duration::from_secs(300),
                max: 0
            })
        );
        assert_eq!(s.budgets.late_after, Duration::from_secs(300));
    }

    #[test]
    fn limits_are_checked() {
        assert_eq!(
            error(&with("budgets:\n  duplicate_rate: -0.1\n")),
            "p.yaml:7:19: budgets.duplicate_rate: must be a number of 0 or more, got -0.1"
        );
        assert_eq!(
            error(&with("budgets:\n  p99_over_visibility: .nan\n")),
            "p.yaml:7:24: budgets.p99_over_visibility: must be a number of 0 or more, got NaN"
        );
        assert_eq!(
            error(&with("budgets:\n  worker_busy_fraction: 1.2\n")),
            "p.yaml:7:25: budgets.worker_busy_fraction: must be between 0 and 1, got 1.2"
        );
        assert_eq!(
            error(&with("budgets:\n  p999_handler_latency: 0s\n")),
            "p.yaml:7:25: budgets.p999_handler_latency: must be more than 0s, got 0s"
        );
        assert_eq!(
            error(&with("budgets:\n  late: { after: 1m }\n")),
            "p.yaml:7:3: budgets.late.max: required: how many late messages the run may have, e.g. 0"
        );
        assert_eq!(
            error(&with("budgets:\n  lost: -1\n")),
            "p.yaml:7:9: budgets.lost: invalid value: integer `-1`, expected a whole number from 0 to 18446744073709551615"
        );
    }
}
