//! sizing.md's section on the autoscaler.

use std::fmt::Write;

use super::{AutoscaleSection, FleetRow};
use crate::sizing::markdown::human;

/// The section, from its heading to a blank line's end.
pub fn section(o: &mut String, a: &AutoscaleSection) {
    let _ = writeln!(o, "\n## Autoscaler (chaos.{}.autoscale)\n", a.rule);
    let _ = writeln!(
        o,
        "| setting | now | recommended | why |\n|---|---|---|---|"
    );
    for s in &a.settings {
        let value = if s.current == s.recommended {
            s.recommended.clone()
        } else {
            format!("**{}**", s.recommended)
        };
        let _ = writeln!(
            o,
            "| {} ({}) | {} | {value} | {} |",
            s.key,
            s.words,
            s.current,
            s.reason.replace('|', "\\|")
        );
    }
    let _ = writeln!(
        o,
        "\n| run | scale events | scale-ins that stopped a replica | handlers cut | of them \
         duplicated | most workers | worker-seconds |\n|---|---|---|---|---|---|---|"
    );
    for (name, r) in [("before", &a.before), ("after", &a.after)] {
        row(o, name, r);
    }
    if !a.files.is_empty() {
        let _ = writeln!(
            o,
            "\nWritten beside this file: {} (the recommended settings, for `kubectl apply` and \
             `kubectl patch`).",
            a.files.join(", ")
        );
    }
}

fn row(o: &mut String, name: &str, r: &FleetRow) {
    let _ = writeln!(
        o,
        "| {name} | {} | {} | {} | {} | {} | {} |",
        r.scale_events,
        r.scale_ins_that_stopped,
        r.handlers_cut,
        r.cut_with_duplicate,
        r.workers_max,
        human(r.worker_seconds)
    );
}
