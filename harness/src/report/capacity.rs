//! The "Capacity" table of a capacity run (`workload.arrival: ramp`): the sustainable rate, the
//! rate that fell behind, each step, and in a live run ackbench's own CPU share. The console,
//! summary.md and report.html show the same rows.

use super::summary::Summary;
use super::words::number;
use crate::metrics::capacity::Capacity;
use crate::metrics::harness_cpu::{HarnessCpuSummary, NEAR_A_CORE};

/// The table's heading.
pub(crate) const HEADING: &str = "Capacity (arrival rate ramped in steps)";

/// The rows: (label, value, note); none for a run without a ramp.
pub(crate) fn rows(s: &Summary) -> Vec<(String, String, String)> {
    s.capacity.as_ref().map(capacity_rows).unwrap_or_default()
}

fn capacity_rows(c: &Capacity) -> Vec<(String, String, String)> {
    let rule = format!(
        "from the next step on, the backlog age grew by more than {} s over each {} s step",
        number(c.slack_s),
        number(c.hold_s)
    );
    let mut rows = vec![match c.sustainable_per_s {
        Some(r) if c.first_behind_per_s.is_some() => (
            "sustainable rate".into(),
            rate(r),
            format!("kept up: {rule}"),
        ),
        Some(r) => (
            "sustainable rate".into(),
            format!("{} or more", rate(r)),
            "the last step kept up: ramp higher to find where it falls behind".into(),
        ),
        None => (
            "sustainable rate".into(),
            "below the ramp".into(),
            "behind from the first step on: start the ramp lower".into(),
        ),
    }];
    if let (Some(r), Some(done)) = (c.first_behind_per_s, c.completed_when_behind_per_s) {
        rows.push((
            "fell behind at".into(),
            rate(r),
            format!("completed {} there, while offered more", rate(done)),
        ));
    }
    rows.extend(c.steps.iter().map(|st| {
        (
            format!("step {}", rate(st.rate_per_s)),
            format!("{} done", rate(st.completed_per_s)),
            format!(
                "offered {}, backlog age {} s -> {} s{}{}",
                rate(st.offered_per_s),
                number(st.backlog_age_start_s),
                number(st.backlog_age_end_s),
                if st.behind { ", behind" } else { "" },
                st.harness_cpu_share
                    .map(|c| format!(", ackbench {} cores", number(c)))
                    .unwrap_or_default()
            ),
        )
    }));
    rows
}

/// The warning that ackbench itself, not the consumer, may be what a live run measured: its
/// own CPU near a core's worth in the step that decided a capacity run (the first behind, or
/// the last when none fell behind), or at its peak in any other live run.
pub(crate) fn harness_note(s: &Summary) -> Option<String> {
    harness_warning(s.capacity.as_ref(), s.harness_cpu.as_ref())
}

fn harness_warning(capacity: Option<&Capacity>, cpu: Option<&HarnessCpuSummary>) -> Option<String> {
    let decided = capacity.and_then(|c| {
        c.steps
            .iter()
            .find(|st| Some(st.rate_per_s) == c.first_behind_per_s)
            .or(c.steps.last())
            .and_then(|st| Some((st.rate_per_s, st.harness_cpu_share?)))
    });
    if let Some((r, share)) = decided {
        return (share >= NEAR_A_CORE).then(|| {
            format!(
                "HARNESS LIMIT: ackbench itself used {} cores in the step at {}, which decided \
                 the capacity found: near a core's worth, the rate found may be ackbench's \
                 limit, not the consumer's (its publisher, proxies and provider, and a built-in \
                 target's workers, share that process).",
                number(share),
                rate(r)
            )
        });
    }
    let cpu = cpu?;
    (cpu.peak_share >= NEAR_A_CORE).then(|| {
        format!(
            "HARNESS CPU: ackbench itself used up to {} cores ({} over the run): near a core's \
             worth, it may have slowed the run rather than the consumer.",
            number(cpu.peak_share),
            number(cpu.share)
        )
    })
}

/// `120/s`.
fn rate(per_s: f64) -> String {
    format!("{}/s", number(per_s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::capacity::CapacityStep;

    fn step(rate_per_s: f64, done: f64, ages: (f64, f64), behind: bool) -> CapacityStep {
        CapacityStep {
            rate_per_s,
            from_s: 0.0,
            offered_per_s: rate_per_s,
            completed_per_s: done,
            backlog_age_start_s: ages.0,
            backlog_age_end_s: ages.1,
            behind,
            harness_cpu_share: None,
        }
    }

    fn capacity(
        steps: Vec<CapacityStep>,
        sustainable: Option<f64>,
        behind: Option<f64>,
    ) -> Capacity {
        Capacity {
            hold_s: 20.0,
            slack_s: 0.4,
            sustainable_per_s: sustainable,
            first_behind_per_s: behind,
            completed_when_behind_per_s: behind.map(|_| 266.5),
            steps,
        }
    }

    fn text(rows: &[(String, String, String)]) -> Vec<String> {
        rows.iter()
            .map(|(l, v, n)| format!("{l} | {v} | {n}"))
            .collect()
    }

    #[test]
    fn the_table_names_the_rate_kept_up_with_and_the_one_that_fell_behind() {
        let c = capacity(
            vec![
                step(260.0, 259.95, (0.03, 0.031), false),
                step(280.0, 266.5, (0.031, 1.45), true),
            ],
            Some(260.0),
            Some(280.0),
        );
        assert_eq!(
            text(&capacity_rows(&c)),
            [
                "sustainable rate | 260/s | kept up: from the next step on, the backlog age grew \
                 by more than 0.4 s over each 20 s step",
                "fell behind at | 280/s | completed 266.5/s there, while offered more",
                "step 260/s | 259.95/s done | offered 260/s, backlog age 0.03 s -> 0.031 s",
                "step 280/s | 266.5/s done | offered 280/s, backlog age 0.031 s -> 1.45 s, behind",
            ]
        );
    }

    #[test]
    fn a_ramp_that_never_or_always_fell_behind_says_where_to_move_it() {
        let kept_up = capacity(
            vec![step(260.0, 260.0, (0.0, 0.03), false)],
            Some(260.0),
            None,
        );
        assert_eq!(
            text(&capacity_rows(&kept_up))[0],
            "sustainable rate | 260/s or more | the last step kept up: ramp higher to find \
             where it falls behind"
        );
        let behind = capacity(
            vec![step(260.0, 100.0, (0.0, 9.0), true)],
            None,
            Some(260.0),
        );
        assert_eq!(
            text(&capacity_rows(&behind))[..2],
            [
                "sustainable rate | below the ramp | behind from the first step on: start the ramp \
                 lower",
                "fell behind at | 260/s | completed 266.5/s there, while offered more",
            ]
        );
    }

    #[test]
    fn ackbench_near_a_core_is_warned_of() {
        let mut behind = step(280.0, 266.5, (0.031, 1.45), true);
        behind.harness_cpu_share = Some(0.85);
        let mut c = capacity(
            vec![step(260.0, 260.0, (0.03, 0.03), false), behind],
            Some(260.0),
            Some(280.0),
        );
        // 0.85 cores in the step that fell behind: ackbench may be the limit.
        let w = harness_warning(Some(&c), None).expect("a warning");
        assert!(
            w.starts_with("HARNESS LIMIT: ackbench itself used 0.85 cores in the step at 280/s"),
            "{w}"
        );
        // 0.5 cores there: none, whatever other steps took.
        c.steps[1].harness_cpu_share = Some(0.5);
        c.steps[0].harness_cpu_share = Some(0.95);
        assert_eq!(harness_warning(Some(&c), None), None);
        // A live run without a ramp: its peak.
        let cpu = HarnessCpuSummary {
            cpu_s: 12.0,
            wall_s: 20.0,
            share: 0.6,
            peak_share: 0.92,
        };
        assert_eq!(
            harness_warning(None, Some(&cpu)).as_deref(),
            Some(
                "HARNESS CPU: ackbench itself used up to 0.92 cores (0.6 over the run): near a \
                 core's worth, it may have slowed the run rather than the consumer."
            )
        );
        let calm = HarnessCpuSummary {
            peak_share: 0.3,
            ..cpu
        };
        assert_eq!(harness_warning(None, Some(&calm)), None);
    }
}
