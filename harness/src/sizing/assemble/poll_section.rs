//! The records per poll and the poll interval (a kind that polls batches: Kafka), and why.

use std::time::Duration;

use super::{ms_text, Assembly};
use crate::profile::format_duration as t;
use crate::sizing::plan::PollSection;
use crate::sizing::poll::{PollChange, PollSizing};

/// The poll section, when the kind polls batches and the rule sized them.
pub(super) fn build(a: &Assembly) -> Option<PollSection> {
    let p = a.poll.as_ref()?;
    let batch = a.now.kind.batch.as_ref()?;
    let (records_words, interval_words) = (batch.words, a.now.kind.lease.words);
    let change = match p.change {
        PollChange::Nothing => None,
        PollChange::Records => Some(batch.key),
        PollChange::Interval => Some(a.now.kind.lease.key),
    };
    Some(PollSection {
        tail_ms: p.tail_us as f64 / 1000.0,
        per_record_s: p.per_record.as_secs_f64(),
        records_current: p.records_now,
        interval_current_s: p.interval_now.as_secs_f64(),
        batch_time_current_s: p.batch_time(p.records_now).as_secs_f64(),
        records_that_fit: p.records_that_fit,
        interval_needed_s: p.interval_needed.as_secs_f64(),
        change,
        records_recommended: p.records(),
        interval_recommended_s: p.interval().as_secs_f64(),
        batch_time_recommended_s: p.batch_time(p.records()).as_secs_f64(),
        reason: reason(a, p, records_words, interval_words),
    })
}

/// Why: the batch against the interval, both ways to make it fit, and which one to take.
fn reason(a: &Assembly, p: &PollSizing, records_words: &str, interval_words: &str) -> String {
    let tail = ms_text(Duration::from_micros(p.tail_us));
    let per = ms_text(p.per_record);
    let now = p.batch_time(p.records_now);
    let premise = format!(
        "A poll's records are handled one by one before the next poll, so the time between two \
         polls is about {records_words} x the time one record takes: fewer than {} of the {} \
         handlers outlive {tail}, x{} margin = {per} a record, so {} records take {}",
        a.rule.target_risk,
        p.handlers,
        a.rule.margin,
        p.records_now,
        ms_text(now),
    );
    let removed = "the member is removed from the group, its partitions go to the others from \
                   the last committed offset, and every record since that commit is processed \
                   twice";
    match p.change {
        PollChange::Nothing => format!(
            "{premise}, within the {} {interval_words}: nothing to change ({} records would fit; \
             past it, {removed}).",
            t(p.interval_now),
            p.records_that_fit
        ),
        PollChange::Records => format!(
            "{premise}, past the {} {interval_words}: {removed}. Either {} records a poll fit in \
             it ({}), or {} records need an interval of {}. Change {records_words} to {}: \
             the interval is also how long a member that is alive but stuck holds its \
             partitions (one of {} would hold them that long), while a smaller batch costs only one more \
             poll per {} records.",
            t(p.interval_now),
            p.records_that_fit,
            ms_text(p.batch_time(p.records_that_fit)),
            p.records_now,
            t(p.interval_needed),
            p.records(),
            t(p.interval_needed),
            p.records(),
        ),
        PollChange::Interval => format!(
            "{premise}, past the {} {interval_words}: {removed}. Not even one record fits in \
             it, so take one record a poll and raise {interval_words} to {} ({} records would \
             need {}); a handler this slow is better moved off the polling thread (pause the \
             partitions and keep polling).",
            t(p.interval_now),
            t(p.interval()),
            p.records_now,
            t(p.interval_needed),
        ),
    }
}
