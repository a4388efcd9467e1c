//! The verdict: budgets against a run's metrics, pass or fail, and the exit codes that gate CI.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::metrics::chaos::unfired_required;
use crate::metrics::{seconds, Metrics};
use crate::profile::Budgets;
use crate::record::nanos;

/// The process exit codes (`ackbench run` and friends), part of the CLI contract.
pub mod exit {
    /// The run completed and every budget that is set holds (or none is set).
    pub const PASS: i32 = 0;
    /// The run completed and at least one budget failed.
    pub const BUDGET_FAILED: i32 = 1;
    /// Bad usage or an invalid profile (the message names the file, line, column and field):
    /// nothing ran.
    pub const BAD_INPUT: i32 = 2;
    /// The run itself could not complete (e.g. the broker was unreachable, or it was
    /// interrupted): there is no pass or fail verdict.
    pub const RUN_FAILED: i32 = 3;
}

/// The budgets a profile may set under `budgets:`, in the order they are evaluated and reported.
/// `late` takes `{ after, max }`. `unfinished` is 0 unless the profile sets it.
#[cfg(test)]
const BUDGET_NAMES: &[&str] = &[
    "duplicate_rate",
    "duplicate_effects",
    "lost",
    "unfinished",
    "late",
    "dlq",
    "dlq_with_effect",
    "p99_over_visibility",
    "p999_handler_latency",
    "max_oldest_age",
    "worker_busy_fraction",
    "overlapping_executions",
    "rejected",
    "ingress_lost",
];

/// The check every run whose effects name keys no published message has gets, reported after
/// the profile's budgets: how many such effects (limit 0). The consumer's calls and the
/// published messages do not agree on the key, so no effect can be counted against its message:
/// the run is misconfigured, and fails on it rather than on the losses it would seem to have.
pub const UNMATCHED_EFFECTS: &str = "unmatched_effects";

/// The budget every run with a chaos rule that is not `optional: true` gets, reported after the
/// profile's: how many of those rules never fired (limit 0). A rule that never fired tested
/// nothing, so the run cannot pass on it.
pub const UNFIRED_CHAOS_RULES: &str = "unfired_chaos_rules";

/// One budget against the run: it holds when `actual <= limit`.
///
/// Units: counts for counts, a ratio for `duplicate_rate`, `p99_over_visibility` and
/// `worker_busy_fraction`, milliseconds for `p999_handler_latency`, seconds for
/// `max_oldest_age`; `late` compares the number of late messages with `late.max`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetResult {
    pub name: String,
    pub limit: f64,
    pub actual: f64,
    pub pass: bool,
}

impl BudgetResult {
    fn new(name: &str, limit: f64, actual: f64) -> Self {
        BudgetResult {
            name: name.to_string(),
            limit,
            actual,
            pass: actual <= limit,
        }
    }
}

/// Pass when every budget that is set holds; incomplete when the run stopped before its end
/// (interrupted), whatever the budgets say about the part that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Incomplete,
}

impl Verdict {
    /// The verdict of these budget results (no budget set: pass).
    pub fn of(results: &[BudgetResult]) -> Self {
        if results.iter().all(|r| r.pass) {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    /// The verdict of a run: [`Verdict::of`] its budget results if it ran to its end,
    /// [`Verdict::Incomplete`] if it did not (a part of a run passes or fails nothing).
    pub fn of_run(results: &[BudgetResult], complete: bool) -> Self {
        if complete {
            Verdict::of(results)
        } else {
            Verdict::Incomplete
        }
    }

    /// `"pass"`, `"fail"` or `"incomplete"`, as in summary.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Incomplete => "incomplete",
        }
    }

    /// The process exit code of a run with this verdict.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => exit::PASS,
            Verdict::Fail => exit::BUDGET_FAILED,
            Verdict::Incomplete => exit::RUN_FAILED,
        }
    }
}

/// `verdict == "pass"` reads as in summary.json.
impl PartialEq<str> for Verdict {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Verdict {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every budget that is set, against the metrics, in the order of `BUDGET_NAMES`; then
/// [`UNMATCHED_EFFECTS`] when some effects name no published message, and
/// [`UNFIRED_CHAOS_RULES`] when the run has a chaos rule that must fire.
pub fn evaluate(budgets: &Budgets, m: &Metrics) -> Vec<BudgetResult> {
    let count = |n: u64| n as f64;
    let mut out = Vec::new();
    let mut check = |name: &str, limit: Option<f64>, actual: &dyn Fn() -> f64| {
        if let Some(limit) = limit {
            out.push(BudgetResult::new(name, limit, actual()));
        }
    };
    check("duplicate_rate", budgets.duplicate_rate, &|| {
        m.duplicate_rate
    });
    check(
        "duplicate_effects",
        budgets.duplicate_effects.map(count),
        &|| count(m.duplicate_effects),
    );
    check("lost", budgets.lost.map(count), &|| count(m.lost));
    check("unfinished", budgets.unfinished.map(count), &|| {
        count(m.unfinished)
    });
    // `m.late` counts against `budgets.late_after`, which is `late.after` when the budget is set.
    check("late", budgets.late.as_ref().map(|l| count(l.max)), &|| {
        count(m.late)
    });
    check("dlq", budgets.dlq.map(count), &|| count(m.dlq));
    check(
        "dlq_with_effect",
        budgets.dlq_with_effect.map(count),
        &|| count(m.dlq_with_effect),
    );
    check("p99_over_visibility", budgets.p99_over_visibility, &|| {
        m.p99_over_visibility
    });
    let ms = |d: std::time::Duration| (nanos(d).saturating_add(500) / 1000) as f64 / 1000.0;
    check(
        "p999_handler_latency",
        budgets.p999_handler_latency.map(ms),
        &|| m.handler.p999,
    );
    let secs = |d: std::time::Duration| seconds(nanos(d));
    check("max_oldest_age", budgets.max_oldest_age.map(secs), &|| {
        seconds(m.max_oldest_age)
    });
    check(
        "worker_busy_fraction",
        budgets.worker_busy_fraction,
        &|| m.worker_busy_fraction(),
    );
    check(
        "overlapping_executions",
        budgets.overlapping_executions.map(count),
        &|| count(m.overlapping_executions),
    );
    check("rejected", budgets.rejected.map(count), &|| {
        count(m.rejected)
    });
    // A run without an ingress load loses nothing at an ingress.
    check("ingress_lost", budgets.ingress_lost.map(count), &|| {
        count(m.ingress.as_ref().map_or(0, |i| i.lost))
    });
    // A handler latency the run could not measure (live Kafka: auto-commit, batch commits)
    // holds no budget: its 0 is no measure.
    if m.handler_unmeasured.is_some() {
        if let Some(r) = out.iter_mut().find(|r| r.name == "p999_handler_latency") {
            r.pass = false;
        }
    }
    if m.unmatched_effects > 0 {
        out.push(BudgetResult::new(
            UNMATCHED_EFFECTS,
            0.0,
            count(m.unmatched_effects),
        ));
    }
    if m.chaos.iter().any(|r| !r.optional) {
        let unfired = unfired_required(&m.chaos).count() as u64;
        out.push(BudgetResult::new(UNFIRED_CHAOS_RULES, 0.0, count(unfired)));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::analyse;
    use crate::metrics::testkit::{ack_before_work, mis_keyed, s, slow_handler};
    use crate::profile::{LateBudget, StaleAck};

    fn every_budget() -> Budgets {
        Budgets {
            duplicate_rate: Some(0.0),
            duplicate_effects: Some(2),
            lost: Some(0),
            unfinished: Some(0),
            late: Some(LateBudget {
                after: Duration::from_secs(60),
                max: 0,
            }),
            dlq: Some(0),
            dlq_with_effect: Some(1),
            p99_over_visibility: Some(0.5),
            p999_handler_latency: Some(Duration::from_secs(40)),
            max_oldest_age: Some(Duration::from_secs(60)),
            worker_busy_fraction: Some(0.5),
            overlapping_executions: Some(1),
            rejected: Some(0),
            ingress_lost: Some(0),
            late_after: Duration::from_secs(60),
        }
    }

    #[test]
    fn the_slow_handler_against_every_budget() {
        // 2 duplicates (rate 2), 1 DLQ entry with effect, nothing left in the queue, every
        // handler held its message 34 s on a 30 s lease, p99.9
        // 34000 ms, oldest message 90 s, 102 s busy of 3 workers x 94 s, deliveries 2 and 3
        // each made while the one before still worked (2 overlapping executions).
        let m = analyse(&slow_handler(StaleAck::Reject), s(60.0));
        let got = evaluate(&every_budget(), &m);
        let r = |name: &str, limit: f64, actual: f64, pass: bool| BudgetResult {
            name: name.to_string(),
            limit,
            actual,
            pass,
        };
        assert_eq!(
            got,
            vec![
                r("duplicate_rate", 0.0, 2.0, false),
                r("duplicate_effects", 2.0, 2.0, true),
                r("lost", 0.0, 0.0, true),
                r("unfinished", 0.0, 0.0, true),
                r("late", 0.0, 0.0, true),
                r("dlq", 0.0, 1.0, false),
                r("dlq_with_effect", 1.0, 1.0, true),
                r("p99_over_visibility", 0.5, 34.0 / 30.0, false),
                r("p999_handler_latency", 40000.0, 34000.0, true),
                r("max_oldest_age", 60.0, 90.0, false),
                r("worker_busy_fraction", 0.5, 102.0 / 282.0, true),
                r("overlapping_executions", 1.0, 2.0, false),
                r("rejected", 0.0, 0.0, true),
                r("ingress_lost", 0.0, 0.0, true),
            ]
        );
        let names: Vec<_> = got.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, BUDGET_NAMES);
        assert_eq!(Verdict::of(&got), Verdict::Fail);
        assert_eq!(Verdict::of(&got).exit_code(), exit::BUDGET_FAILED);
    }

    #[test]
    fn only_budgets_that_are_set_are_checked() {
        let m = analyse(&ack_before_work(), s(300.0));
        let budgets = Budgets {
            lost: Some(1),
            rejected: Some(1),
            ..Budgets::default()
        };
        let got = evaluate(&budgets, &m);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|b| b.pass));
        assert_eq!(Verdict::of(&got), Verdict::Pass);
        assert_eq!(Verdict::of(&[]), Verdict::Pass);
        assert_eq!(Verdict::Pass.exit_code(), exit::PASS);
    }

    #[test]
    fn the_late_budget_uses_its_own_bound() {
        // Message 2's email goes out the instant it is published: not late even for a 0 s bound
        // (late means strictly after the bound).
        let m = analyse(&ack_before_work(), s(300.0));
        let late = |after_ms| Budgets {
            late: Some(LateBudget {
                after: Duration::from_millis(after_ms),
                max: 0,
            }),
            ..Budgets::default()
        };
        assert!(evaluate(&late(0), &m)[0].pass);
        // Without its first email, the slow handler's message has its first effect at 30 s. The
        // analysis counts late messages against the budget's bound (`budgets.late_after` is
        // `late.after` when the budget is set).
        let mut r = slow_handler(StaleAck::Reject);
        r.ledger.effects.retain(|e| e.at >= s(30.0));
        let m = analyse(&r, s(29.999));
        let b = &evaluate(&late(29_999), &m)[0];
        assert_eq!((b.actual, b.pass), (1.0, false));
        assert!(evaluate(&late(30_000), &analyse(&r, s(30.0)))[0].pass);
    }

    #[test]
    fn an_incomplete_run_has_no_pass_or_fail() {
        let pass = [BudgetResult::new("lost", 0.0, 0.0)];
        let fail = [BudgetResult::new("lost", 0.0, 1.0)];
        assert_eq!(Verdict::of_run(&pass, true), Verdict::Pass);
        assert_eq!(Verdict::of_run(&fail, true), Verdict::Fail);
        assert_eq!(Verdict::of_run(&pass, false), Verdict::Incomplete);
        assert_eq!(Verdict::of_run(&fail, false), Verdict::Incomplete);
        assert_eq!(Verdict::Incomplete.exit_code(), exit::RUN_FAILED);
        assert_eq!(Verdict::Incomplete.to_string(), "incomplete");
    }

    #[test]
    fn a_run_that_leaves_messages_behind_fails_its_default_budget() {
        // The slow handler's message is in the DLQ; a second one was published and never
        // delivered: 1 unfinished against the default limit of 0.
        let mut r = slow_handler(StaleAck::Reject);
        r.messages.push(crate::record::MessageRecord {
            key: "msg-2".into(),
            published_at: 0,
            poison: false,
        });
        let m = analyse(&r, s(300.0));
        assert_eq!(m.unfinished, 1);
        let budgets = Budgets {
            unfinished: Some(0),
            ..Budgets::default()
        };
        let got = evaluate(&budgets, &m);
        assert_eq!(
            got,
            vec![BudgetResult {
                name: "unfinished".into(),
                limit: 0.0,
                actual: 1.0,
                pass: false
            }]
        );
        assert_eq!(Verdict::of(&got), Verdict::Fail);
    }

    #[test]
    fn a_chaos_rule_that_never_fired_fails_unless_optional() {
        // Three rules: rule 0 fired twice, rules 1 and 2 never; rule 2 is optional. One
        // required rule unfired: actual 1 against a limit of 0.
        let mut m = analyse(&ack_before_work(), s(300.0));
        let rule = |rule: u32, fired: u64, optional: bool| crate::metrics::RuleFires {
            rule,
            fault: "kill_worker".into(),
            label: format!("rule {rule}"),
            optional,
            fired,
        };
        m.chaos = vec![rule(0, 2, false), rule(1, 0, false), rule(2, 0, true)];
        let got = evaluate(&Budgets::default(), &m);
        assert_eq!(
            got,
            vec![BudgetResult {
                name: UNFIRED_CHAOS_RULES.into(),
                limit: 0.0,
                actual: 1.0,
                pass: false
            }]
        );
        // Only optional rules unfired: passes; no rule that must fire: no such budget.
        m.chaos = vec![rule(0, 2, false), rule(2, 0, true)];
        assert!(evaluate(&Budgets::default(), &m)[0].pass);
        m.chaos = vec![rule(2, 0, true)];
        assert!(evaluate(&Budgets::default(), &m).is_empty());
    }

    #[test]
    fn effects_no_message_matches_fail_the_run_as_misconfigured_not_as_loss() {
        // Two effects under keys nobody published, both messages deleted: the `lost` budget
        // holds (0 lost: 2 unverifiable), and the run fails on its unmatched effects: exit 1.
        let m = analyse(&mis_keyed(), s(300.0));
        let budgets = Budgets {
            lost: Some(0),
            ..Budgets::default()
        };
        let got = evaluate(&budgets, &m);
        assert_eq!(
            got,
            vec![
                BudgetResult::new("lost", 0.0, 0.0),
                BudgetResult::new(UNMATCHED_EFFECTS, 0.0, 2.0),
            ]
        );
        assert_eq!(Verdict::of(&got).exit_code(), exit::BUDGET_FAILED);
        // Every effect matched: no such check.
        assert!(evaluate(&Budgets::default(), &analyse(&ack_before_work(), s(300.0))).is_empty());
    }

    #[test]
    fn verdicts_read_as_in_the_summary() {
        assert_eq!(Verdict::Pass.to_string(), "pass");
        assert!(Verdict::Pass == "pass" && Verdict::Fail != "pass");
        assert_eq!(
            serde_json::to_string(&Verdict::Fail).unwrap_or_default(),
            "\"fail\""
        );
    }

    #[test]
    fn a_handler_latency_budget_is_not_met_by_a_latency_never_measured() {
        // A p999_handler_latency budget of 1 s on a run whose handler latency is unmeasured
        // (its 0 ms would hold it): not met. The same run measured at 0 ms holds it.
        let budgets = Budgets {
            p999_handler_latency: Some(Duration::from_secs(1)),
            ..Budgets::default()
        };
        let mut m = analyse(&ack_before_work(), s(300.0));
        let held = |m: &Metrics| {
            evaluate(&budgets, m)
                .iter()
                .find(|r| r.name == "p999_handler_latency")
                .map(|r| r.pass)
        };
        m.handler = Default::default();
        assert_eq!(held(&m), Some(true));
        m.handler_unmeasured = Some("the consumers commit on a timer".into());
        assert_eq!(held(&m), Some(false));
    }
}
