//! The delivery limit against the target's slowest recovery path, and the probe's kill.

use super::Assembly;
use crate::sizing::limit::{recovery_path, spare};
use crate::sizing::plan::LimitSection;
use crate::sizing::probe;

pub(super) fn build(a: &Assembly) -> LimitSection {
    let (now, rec) = (a.now, a.after_settings);
    let path_now = recovery_path(
        &now.target,
        now.lease,
        now.claim_window,
        now.kind.words.sizing.lease,
    );
    let path_rec = recovery_path(
        &rec.target,
        rec.lease,
        rec.claim_window,
        rec.kind.words.sizing.lease,
    );
    let spare_now = spare(now.limit, &path_now);
    let spare_rec = spare(rec.limit, &path_rec);
    let probe_now = probe::outcome(&now.target, &a.probe_before.record, now.limit);
    let probe_rec = probe::outcome(&rec.target, &a.probe_after.record, rec.limit);
    let spare_text =
        |s: Option<i64>| s.map_or_else(|| "no limit".to_string(), |n| format!("{n} spare"));
    let probed = match (&probe_now, &probe_rec) {
        (Some(b), Some(r)) => format!(
            "; simulated, a kill {} was {} before and {} after",
            b.kill,
            b.summary(),
            r.summary()
        ),
        _ => String::new(),
    };
    let reason = if now.kind.limit.is_none() {
        // Kafka: the broker never gives a record up, so there is no limit to size.
        format!(
            "{} has no delivery limit to size: a poison {} is {}{probed}.",
            now.kind.name, now.kind.words.message.0, now.kind.dlq.gave_up
        )
    } else {
        format!(
            "The slowest recovery path takes {} deliveries ({}); a limit of {} leaves {} (now {}: \
         {}){}.",
            path_rec.deliveries,
            path_rec.description,
            a.limit,
            spare_text(spare_rec),
            now.limit,
            spare_text(spare_now),
            probed
        )
    };
    LimitSection {
        current: now.limit,
        recommended: a.limit,
        recovery_deliveries: path_rec.deliveries,
        recovery_path: path_rec.description,
        spare_current: spare_now,
        spare_recommended: spare_rec,
        probe_current: probe_now,
        probe_recommended: probe_rec,
        reason,
    }
}
