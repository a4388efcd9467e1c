//! The notes of faults other than `kill_worker` (whose kills the counts already say): how often
//! each such rule fired, and what each rollout of a `deploy` cost. A run with kill rules only
//! gets none of these lines, so its reports read as they always did.

use super::summary::Summary;
use super::words::plural;
use crate::metrics::deploys::StopCost;

/// One line per rule of another fault that fired, then one per rollout.
pub(crate) fn notes(s: &Summary) -> Vec<String> {
    let rules = s
        .chaos_rules
        .iter()
        .filter(|r| r.is_other_fault() && r.fired > 0)
        .map(|r| {
            format!(
                "CHAOS: rule {} ({}) fired {} {}.",
                r.rule,
                r.label,
                r.fired,
                plural(r.fired, "time", "times")
            )
        });
    let deploys = s.deploys.iter().map(|d| {
        format!(
            "DEPLOY: rollout {} of rule {} (from {:.3} s) {}",
            d.deploy,
            d.rule,
            d.started_s,
            stop_words(&d.cost)
        )
    });
    rules.chain(deploys).chain(scale_ins(s)).collect()
}

/// One line per scale-in of an `autoscale` rule that told a running worker to stop, after one
/// with the fleet's scale events, size, worker-seconds and slowest scale-out.
fn scale_ins(s: &Summary) -> Vec<String> {
    let Some(a) = &s.autoscaling else {
        return Vec::new();
    };
    let outs = a.scale_events.iter().filter(|e| e.to > e.from).count() as u64;
    let ins = a.scale_events.len() as u64 - outs;
    let mut fleet = format!(
        "AUTOSCALE: rule {} scaled out {outs} {} and in {ins} {}; at most {} {} running, {:.3} \
         worker-seconds.",
        a.rule,
        plural(outs, "time", "times"),
        plural(ins, "time", "times"),
        a.workers_max,
        plural(u64::from(a.workers_max), "worker", "workers"),
        a.worker_seconds,
    );
    // The scale-out whose replicas found the oldest backlog when they started.
    let slowest = (a.scale_events.iter())
        .filter_map(|e| {
            let l = e.lag.as_ref()?;
            Some((e, l.started_after_s?, l.oldest_age_when_started_s?))
        })
        .max_by(|x, y| x.2.total_cmp(&y.2));
    if let Some((e, after, age)) = slowest {
        fleet.push_str(&format!(
            " The oldest message not yet deleted was {age:.3} s old when the replicas of the \
             scale-out at {:.3} s ({} -> {}) had started, {after:.3} s after it ({:.3} s when \
             it rose).",
            e.at_s,
            e.from,
            e.to,
            e.lag.as_ref().map_or(0.0, |l| l.oldest_age_s),
        ));
    }
    let cuts = a.scale_events.iter().filter_map(|e| {
        let c = e.cost.as_ref().filter(|c| c.told > 0)?;
        Some(format!(
            "SCALE-IN: {} -> {} at {:.3} s ({} read {}) {}",
            e.from,
            e.to,
            e.at_s,
            e.by.name(),
            e.metric,
            stop_words(c)
        ))
    });
    std::iter::once(fleet).chain(cuts).collect()
}

/// "told 3 workers to stop: 2 stopped within the grace, 1 killed at its end, ...": what
/// stopping a wave of workers cost.
fn stop_words(c: &StopCost) -> String {
    format!(
        "told {} {} to stop: {} stopped within the grace, {} killed at its end, cutting {} {}; \
         of {}: {} with a duplicate effect, {} lost, {} late.",
        c.told,
        plural(c.told, "worker", "workers"),
        c.stopped,
        c.killed,
        c.interrupted,
        plural(c.interrupted, "delivery", "deliveries"),
        plural(c.interrupted, "its message", "their messages"),
        c.duplicates,
        c.lost,
        c.late,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::deploys::DeployCost;
    use crate::metrics::testkit::ack_before_work;
    use crate::metrics::RuleFires;
    use crate::profile::Budgets;
    use crate::report::summary::{summarise, RunInfo};

    fn summary_of_kills() -> Summary {
        let info = RunInfo {
            profile: "deploy".into(),
            mode: "sim".into(),
            seed: 1,
            wall_s: 0.25,
        };
        summarise(&info, &ack_before_work(), &Budgets::default())
    }

    #[test]
    fn only_other_faults_get_lines_one_per_rule_and_one_per_rollout() {
        let mut s = summary_of_kills();
        let rule = |rule, fault: &str, fired| RuleFires {
            rule,
            fault: fault.into(),
            label: format!("{fault} rule"),
            optional: false,
            fired,
        };
        s.chaos_rules = vec![rule(0, "kill_worker", 2)];
        assert!(notes(&s).is_empty(), "kills are the counts' to say");
        s.chaos_rules.push(rule(1, "deploy", 3));
        s.deploys = vec![DeployCost {
            rule: 1,
            deploy: 1,
            started_s: 300.0,
            cost: StopCost {
                told: 3,
                stopped: 2,
                killed: 1,
                interrupted: 1,
                duplicates: 1,
                lost: 0,
                late: 0,
            },
        }];
        assert_eq!(
            notes(&s),
            vec![
                "CHAOS: rule 1 (deploy rule) fired 3 times.".to_string(),
                "DEPLOY: rollout 1 of rule 1 (from 300.000 s) told 3 workers to stop: 2 stopped \
                 within the grace, 1 killed at its end, cutting 1 delivery; of its message: 1 \
                 with a duplicate effect, 0 lost, 0 late."
                    .to_string(),
            ]
        );
    }
}
