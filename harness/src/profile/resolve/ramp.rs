//! `workload.arrival.ramp`: the steps of a capacity run, checked against `run.duration`.

use std::time::Duration;

use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::RawRamp;
use crate::profile::scalar::number_text;
use crate::profile::scenario::Ramp;

use super::checks::{positive, required};

/// The most steps a ramp may have (one summary row each).
pub const MAX_STEPS: u32 = 1_000;

/// Resolves a ramp; `duration` is `run.duration`, which the ramp must fit in.
pub fn resolve(raw: RawRamp, duration: Duration, path: &FieldPath) -> Result<Ramp, Problem> {
    let rate = |v: Option<f64>, key: &str, what: &str| -> Result<f64, Problem> {
        let p = path.key(key);
        let v = required(v, &p, what)?;
        if !v.is_finite() || v <= 0.0 {
            return Err(Problem::new(
                p,
                format!(
                    "must be a positive number of messages per second, got {}",
                    number_text(v)
                ),
            ));
        }
        Ok(v)
    };
    let from = rate(
        raw.from,
        "from",
        "the first step's rate, in messages per second",
    )?;
    let to = rate(raw.to, "to", "the last step's rate, in messages per second")?;
    let step = rate(
        raw.step,
        "step",
        "what each step adds to the rate, in messages per second",
    )?;
    let hold = positive(
        required(
            raw.hold,
            &path.key("hold"),
            "how long each step lasts, as in 20s",
        )?
        .0,
        &path.key("hold"),
    )?;
    if to < from {
        return Err(Problem::new(
            path.key("to"),
            format!(
                "must be at least from ({}), got {}",
                number_text(from),
                number_text(to)
            ),
        ));
    }
    // Every rate from + k * step not above `to` (a rate within a millionth of a step of `to`
    // counts as `to`, so 0.1 steps from 0.1 to 0.3 make three).
    let above = ((to - from) / step + 1e-6).floor();
    if above >= f64::from(MAX_STEPS) {
        return Err(Problem::new(
            path.key("step"),
            format!(
                "makes more than {MAX_STEPS} steps from {} to {}: take a larger step",
                number_text(from),
                number_text(to)
            ),
        ));
    }
    let ramp = Ramp {
        from_per_s: from,
        step_per_s: step,
        steps: above as u32 + 1,
        hold,
    };
    if ramp.length() > duration {
        return Err(Problem::new(
            path.clone(),
            format!(
                "lasts {} steps of {} = {}, longer than run.duration ({}): take fewer steps, a \
                 shorter hold or a longer run.duration",
                ramp.steps,
                format_duration(hold),
                format_duration(ramp.length()),
                format_duration(duration)
            ),
        ));
    }
    Ok(ramp)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{Arrival, Ramp};
    use crate::profile::testutil::{error, scenario};

    /// A 10-minute run whose arrival (line 4) is `{ ramp: <ramp> }`.
    fn profile(ramp: &str) -> String {
        format!(
            "run: {{ duration: 10m }}\nconsumer: {{ target: ack-after-work }}\nworkload:\n  \
             arrival: {{ ramp: {ramp} }}\n"
        )
    }

    #[test]
    fn a_ramp_takes_every_rate_up_to_to() {
        // 100, 120, ..., 340: (340 - 100) / 20 + 1 = 13 steps of 20 s, 260 s of the 600 s run.
        let s = scenario(&profile("{ from: 100, to: 340, step: 20, hold: 20s }"));
        let Arrival::Ramp(r) = &s.workload.arrival else {
            panic!("a ramp: {:?}", s.workload.arrival);
        };
        assert_eq!(
            *r,
            Ramp {
                from_per_s: 100.0,
                step_per_s: 20.0,
                steps: 13,
                hold: Duration::from_secs(20)
            }
        );
        // `to` off the steps: 100 to 350 by 20 still ends at 340 (13 steps).
        let s = scenario(&profile("{ from: 100, to: 350, step: 20, hold: 20s }"));
        assert!(matches!(&s.workload.arrival, Arrival::Ramp(r) if r.steps == 13));
        // Steps that do not add up exactly in binary: 0.1 to 0.3 by 0.1 is 0.1, 0.2, 0.3.
        let s = scenario(&profile("{ from: 0.1, to: 0.3, step: 0.1, hold: 20s }"));
        assert!(matches!(&s.workload.arrival, Arrival::Ramp(r) if r.steps == 3));
        // from = to: one step.
        let s = scenario(&profile("{ from: 50, to: 50, step: 5, hold: 10m }"));
        assert!(matches!(&s.workload.arrival, Arrival::Ramp(r) if r.steps == 1));
    }

    #[test]
    fn each_key_is_required() {
        assert_eq!(
            error(&profile("{ to: 340, step: 20, hold: 20s }")),
            "p.yaml:4:14: workload.arrival.ramp.from: required: the first step's rate, in \
             messages per second"
        );
        assert!(error(&profile("{ from: 1, step: 20, hold: 20s }"))
            .contains("workload.arrival.ramp.to: required"));
        assert!(error(&profile("{ from: 1, to: 2, hold: 20s }"))
            .contains("workload.arrival.ramp.step: required"));
        assert!(error(&profile("{ from: 1, to: 2, step: 1 }"))
            .contains("workload.arrival.ramp.hold: required: how long each step lasts"));
    }

    #[test]
    fn rates_must_be_positive() {
        assert_eq!(
            error(&profile("{ from: 100, to: 340, step: 0, hold: 20s }")),
            "p.yaml:4:48: workload.arrival.ramp.step: must be a positive number of messages \
             per second, got 0"
        );
        assert!(error(&profile("{ from: -1, to: 340, step: 1, hold: 20s }"))
            .contains("workload.arrival.ramp.from: must be a positive number"));
        assert!(error(&profile("{ from: 1, to: .inf, step: 1, hold: 20s }"))
            .contains("workload.arrival.ramp.to: must be a positive number"));
        assert!(error(&profile("{ from: 1, to: 2, step: 1, hold: 0s }"))
            .contains("workload.arrival.ramp.hold: must be more than 0s, got 0s"));
    }

    #[test]
    fn from_must_not_be_above_to() {
        assert_eq!(
            error(&profile("{ from: 500, to: 100, step: 20, hold: 20s }")),
            "p.yaml:4:37: workload.arrival.ramp.to: must be at least from (500), got 100"
        );
    }

    #[test]
    fn the_ramp_must_fit_in_the_run() {
        // 100 to 700 by 20: 31 steps of 20 s = 10m20s, past the 10-minute run.
        assert_eq!(
            error(&profile("{ from: 100, to: 700, step: 20, hold: 20s }")),
            "p.yaml:4:14: workload.arrival.ramp: lasts 31 steps of 20s = 10m20s, longer than \
             run.duration (10m): take fewer steps, a shorter hold or a longer run.duration"
        );
    }

    #[test]
    fn a_ramp_has_at_most_a_thousand_steps() {
        // 1 to 2000 by 1: 2,000 steps.
        assert!(error(&profile("{ from: 1, to: 2000, step: 1, hold: 1ms }"))
            .contains("workload.arrival.ramp.step: makes more than 1000 steps from 1 to 2000"));
    }

    #[test]
    fn a_ramp_is_one_form_of_arrival() {
        let mixed = "run: { duration: 10m }\nconsumer: { target: ack-after-work }\nworkload:\n  \
                     arrival:\n    rate_per_s: 5\n    ramp: { from: 1, to: 2, step: 1, hold: 1s }\n";
        assert_eq!(
            error(mixed),
            "p.yaml:4:3: workload.arrival: give only one of every, rate_per_s, at, ramp, got \
             rate_per_s and ramp"
        );
        let process = "run: { duration: 10m }\nconsumer: { target: ack-after-work }\nworkload:\n  \
                       arrival:\n    process: uniform\n    ramp: { from: 1, to: 2, step: 1, hold: 1s }\n";
        assert_eq!(
            error(process),
            "p.yaml:5:5: workload.arrival.process: goes with rate_per_s only"
        );
        assert!(
            error(&profile("{ from: 1, to: 2, step: 1, hold: 1s, every: 1s }"))
                .contains("unknown field `every`")
        );
    }
}
