//! The duplicates predicted and observed, now and with the recommendation.

use super::{f3, Assembly};
use crate::profile::format_duration as t;
use crate::sizing::duplicates::predicted_duplicate_rate;
use crate::sizing::lease::outlive_chance;
use crate::sizing::plan::DuplicatesSection;

/// A rate for sentences; `None` is a rate without bound.
fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "unbounded".into(), f3)
}

pub(super) fn build(a: &Assembly) -> DuplicatesSection {
    let (now, rec) = (a.now, a.after_settings);
    let p_now = outlive_chance(a.hist, now.lease);
    let p_rec = outlive_chance(a.hist, rec.lease);
    let pred_now = predicted_duplicate_rate(p_now, now.limit);
    let pred_rec = predicted_duplicate_rate(p_rec, rec.limit);
    let obs_now = a.before.summary.duplicate_rate;
    let obs_rec = a.after.summary.duplicate_rate;
    let words = &now.kind.words;
    let lease = words.sizing.lease;
    let reason = format!(
        "A handler outlives the {} {lease} with chance {} and the {} {lease} with chance {}: a \
         consumer that repeats its work on every delivery would see {} duplicate effects per \
         {} now and {} with the recommendation; the sim of {} observed {} and {}.",
        t(now.lease),
        f3(p_now),
        t(rec.lease),
        f3(p_rec),
        ratio(pred_now),
        words.message.0,
        ratio(pred_rec),
        now.target,
        f3(obs_now),
        f3(obs_rec)
    );
    DuplicatesSection {
        outlive_chance_current: p_now,
        outlive_chance_recommended: p_rec,
        predicted_current: pred_now,
        predicted_recommended: pred_rec,
        observed_current: obs_now,
        observed_recommended: obs_rec,
        reason,
    }
}
