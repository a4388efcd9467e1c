//! The alert on the age of the oldest message, and whether it would have fired.

use std::time::Duration;

use super::{ms_text, Assembly};
use crate::profile::format_duration as t;
use crate::sizing::alert;
use crate::sizing::plan::AlertSection;

pub(super) fn build(a: &Assembly) -> AlertSection {
    let healthy_age = Duration::from_secs_f64(a.healthy.summary.max_oldest_age_s);
    let threshold = alert::threshold(healthy_age, a.lease.advice.longest_hold());
    let observed_age = Duration::from_secs_f64(a.before.summary.max_oldest_age_s);
    let after_age = Duration::from_secs_f64(a.after.summary.max_oldest_age_s);
    let fired = alert::would_fire(threshold, observed_age);
    let fires_after = alert::would_fire(threshold, after_age);
    let one = a.now.kind.words.message.0;
    let reason =
        format!(
        "A healthy run's oldest {one} reached {}; alert when the oldest {one} is older than \
         {} (twice that, and at least the longest a handler may hold a {one}): in this run it reached {}, so the alert {} \
         have fired{}.",
        ms_text(healthy_age),
        t(threshold),
        ms_text(observed_age),
        if fired { "would" } else { "would not" },
        if fires_after {
            format!(", and with the recommendation it still fires ({})", ms_text(after_age))
        } else {
            format!(" (with the recommendation it reached {})", ms_text(after_age))
        }
    );
    AlertSection {
        healthy_max_oldest_age_s: healthy_age.as_secs_f64(),
        threshold_s: threshold.as_secs_f64(),
        observed_max_oldest_age_s: observed_age.as_secs_f64(),
        would_have_fired: fired,
        recommended_max_oldest_age_s: after_age.as_secs_f64(),
        fires_with_recommendation: fires_after,
        reason,
    }
}
