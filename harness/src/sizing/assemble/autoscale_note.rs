//! A profile whose fleet is autoscaled: what sizing says of it. The autoscaler's own settings
//! are not sized (the plan's workers are Little's law's at the peak, a figure for its `max`),
//! but the grace a scale-in gives a handler is set against the handler's p99 under the fault.

use hdrhistogram::Histogram;

use super::ms_text;
use crate::profile::{AutoscaleRule, FaultRule, Scenario};

/// The note, when `s` has an `autoscale` rule; `hist` holds the handler times under the fault
/// (microseconds).
pub(super) fn note(s: &Scenario, hist: &Histogram<u64>) -> Option<String> {
    let (i, rule) =
        (s.chaos.iter().enumerate()).find_map(|(i, r)| Some((i, r.get::<AutoscaleRule>()?)))?;
    let p99 = std::time::Duration::from_micros(hist.value_at_quantile(0.99));
    let grace = rule.grace;
    let cut = if p99 > grace {
        format!(
            "longer than its grace ({}): a scale-in cuts such a handler; set \
             chaos.{i}.autoscale.grace (terminationGracePeriodSeconds) above it",
            ms_text(grace)
        )
    } else {
        format!(
            "within its grace ({}): a scale-in lets such a handler finish",
            ms_text(grace)
        )
    };
    Some(format!(
        "The fleet is autoscaled (chaos.{i}: {}): the autoscaler's settings are not sized, and \
         the workers above are Little's law's at the peak, a figure to compare with its max \
         ({}). The handler p99 under the fault, {}, is {cut}.",
        rule.label(),
        rule.max,
        ms_text(p99),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::testutil::{scenario, with};

    fn handlers_of(seconds: u64) -> Histogram<u64> {
        let mut h = Histogram::new(3).expect("a histogram");
        h.record(seconds * 1_000_000).expect("in range");
        h
    }

    #[test]
    fn an_autoscaled_profile_is_told_its_grace_against_the_handler_p99() {
        let s = scenario(&with("chaos:\n  - autoscale: { target: 5, max: 8 }\n"));
        // A 40 s handler against the default grace of 30 s: cut.
        let long = note(&s, &handlers_of(40)).expect("a note");
        assert!(
            long.contains("(chaos.0: autoscale target 5 (min 0, max 8,"),
            "{long}"
        );
        assert!(long.ends_with("is longer than its grace (30 s): a scale-in cuts such a handler; set chaos.0.autoscale.grace (terminationGracePeriodSeconds) above it."), "{long}");
        // A 20 s handler finishes within it.
        let short = note(&s, &handlers_of(20)).expect("a note");
        assert!(
            short.ends_with("is within its grace (30 s): a scale-in lets such a handler finish."),
            "{short}"
        );
        // No autoscale rule, no note.
        assert_eq!(note(&scenario(&with("")), &handlers_of(40)), None);
    }
}
