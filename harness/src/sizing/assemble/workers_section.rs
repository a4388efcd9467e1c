//! The worker count (Little's law, on a healthy day and under the fault) and why.

use super::{f3, Assembly};
use crate::sizing::plan::WorkersSection;

pub(super) fn build(a: &Assembly) -> WorkersSection {
    let now = a.now;
    let workers = a.normal.workers.max(a.fault.workers);
    let busy_after = a.after.busy_fraction();
    let autoscaled = match a.fleet {
        Some((i, _)) => format!(
            ", the autoscaler's max at the peak (chaos.{i}.autoscale, the Autoscaler section; \
             the fleet starts at"
        ),
        None => " (now".into(),
    };
    let reason = format!(
        "Little's law: {}/s x {} s mean handler time (the profile with the recommended lease \
         and limit) = {} busy workers ({} on a healthy day), / {} utilisation = {} workers\
         {autoscaled} {}); the after-run kept them {}% busy.",
        f3(a.fault.arrival_per_s),
        f3(a.fault.mean_handler_s),
        f3(a.fault.busy_workers),
        f3(a.normal.busy_workers),
        a.utilisation,
        workers,
        now.workers,
        f3(busy_after * 100.0)
    );
    WorkersSection {
        normal: a.normal,
        fault: a.fault,
        current: now.workers,
        recommended: workers,
        busy_fraction_current: a.before.busy_fraction(),
        busy_fraction_recommended: busy_after,
        reason,
    }
}
