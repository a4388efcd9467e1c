//! sizing.md: the plan for people, recommendation first, each with its one-sentence reason,
//! then the consistency checks and the before / after runs.

use std::fmt::Write;
use std::time::Duration;

use super::checks::Status;
use super::lease::LeaseAdvice;
use super::outcome::number;
use super::plan::Plan;
use crate::profile::{format_duration, LeaseRole};

fn t(secs: f64) -> String {
    format_duration(Duration::from_secs_f64(secs.max(0.0)))
}

/// A measured time for people: `39.92 s`, `950 ms`.
pub fn human(secs: f64) -> String {
    if secs >= 1.0 {
        format!("{} s", number((secs * 100.0).round() / 100.0))
    } else {
        format!("{} ms", number((secs * 1000.0).round()))
    }
}

fn n3(x: f64) -> String {
    number((x * 1000.0).round() / 1000.0)
}

/// The plan as markdown, ending with a newline.
pub fn render(p: &Plan) -> String {
    let mut o = String::new();
    title(&mut o, p);
    recommendation(&mut o, p);
    reasons(&mut o, p);
    if let Some(a) = &p.autoscale {
        super::fleet::render::section(&mut o, a);
    }
    checks(&mut o, p);
    let _ = writeln!(o, "\n## Verification: the profile before and after\n");
    verification(&mut o, p);
    probe(&mut o, p);
    notes(&mut o, p);
    o
}

/// The title and where the latency came from.
fn title(o: &mut String, p: &Plan) {
    let src = &p.latency_source;
    let from = match &src.path {
        Some(path) => format!("recorded in {path}"),
        None => "from a sim run of the profile".into(),
    };
    let _ = writeln!(o, "# Sizing: {}\n", p.profile);
    let _ = writeln!(
        o,
        "Handler latency: {} handlers {from} (mean {}, p50 {}, p99 {}, p99.9 {}, max {}). \
         Rules: risk {}, margin {}x, utilisation {}, leases up to {}.\n",
        src.handlers,
        human(src.mean_ms / 1000.0),
        human(src.p50_ms / 1000.0),
        human(src.p99_ms / 1000.0),
        human(src.p999_ms / 1000.0),
        human(src.max_ms / 1000.0),
        p.rules.target_risk,
        p.rules.margin,
        p.rules.utilisation,
        t(p.rules.max_lease_s)
    );
}

/// The settings now and recommended, and the command that runs them.
fn recommendation(o: &mut String, p: &Plan) {
    let (c, r) = (&p.current, &p.recommended);
    let _ = writeln!(o, "## Recommendation\n");
    let _ = writeln!(o, "| setting | now | recommended |\n|---|---|---|");
    let _ = writeln!(o, "| target | {} | {} |", c.target, r.target);
    let _ = writeln!(
        o,
        "| {} | {} | **{}** |",
        c.kind.lease.words,
        t(c.visibility_timeout_s),
        t(r.visibility_timeout_s)
    );
    if let LeaseAdvice::Heartbeat {
        extend_every,
        max_extension,
        ..
    } = p.lease.advice
    {
        let _ = writeln!(
            o,
            "| heartbeat | {} | **every {}, at most {} extra** |",
            if c.target == "heartbeat" { "yes" } else { "no" },
            format_duration(extend_every),
            format_duration(max_extension)
        );
    }
    if let (Some(poll), Some(batch)) = (&p.poll, &c.kind.batch) {
        let _ = writeln!(
            o,
            "| {} | {} | **{}** |",
            batch.words, poll.records_current, poll.records_recommended
        );
    }
    // In the kind's own terms: RabbitMQ's delivery_limit counts returns, one fewer than
    // deliveries.
    let limit = |n: u32| c.kind.limit_value(n);
    let _ = writeln!(
        o,
        "| delivery limit | {} | **{}** |",
        limit(c.max_receives),
        limit(r.max_receives)
    );
    let _ = writeln!(o, "| workers | {} | **{}** |", c.workers, r.workers);
    if let Some(part) = &p.partitions {
        let _ = writeln!(
            o,
            "| partitions | {} | **{}** |",
            part.sizing.current, part.sizing.recommended
        );
    }
    let _ = writeln!(
        o,
        "| alert: oldest {} older than | | **{}** |",
        p.current.kind.words.message.0,
        t(p.alert.threshold_s)
    );
    if p.set.is_empty() {
        let _ = writeln!(o, "\nThe current settings already match the rules.");
    } else {
        let sets: Vec<String> = p.set.iter().map(|s| format!("--set {s}")).collect();
        let _ = writeln!(o, "\nTo run it: `ackbench run PROFILE {}`", sets.join(" "));
    }
}

/// One section per recommendation: what, in bold, and the sentence of reasoning.
fn reasons(o: &mut String, p: &Plan) {
    let lease_head = match p.lease.advice {
        LeaseAdvice::Lease { lease } => {
            format!("**{}**", format_duration(lease))
        }
        LeaseAdvice::Heartbeat {
            lease,
            extend_every,
            max_extension,
        } => format!(
            "**a heartbeat**: a {} lease extended every {}, at most {} extra",
            format_duration(lease),
            format_duration(extend_every),
            format_duration(max_extension)
        ),
    };
    // The lease section is titled in the broker kind's words ("Visibility timeout", "AckWait").
    let words = p.current.kind.lease.words;
    let mut first = words.chars();
    let lease_title: String = first
        .next()
        .map(|f| f.to_uppercase().chain(first).collect())
        .unwrap_or_default();
    let alert_title = format!(
        "Alert on the age of the oldest {}",
        p.current.kind.words.message.0
    );
    let sections = [
        (lease_title.as_str(), lease_head, &p.lease.reason),
        (
            "Duplicates",
            format!(
                "**{} predicted, {} observed** with the recommendation",
                p.duplicates
                    .predicted_recommended
                    .map_or_else(|| "unbounded".into(), n3),
                n3(p.duplicates.observed_recommended)
            ),
            &p.duplicates.reason,
        ),
        (
            "Workers",
            format!("**{}**", p.workers.recommended),
            &p.workers.reason,
        ),
        (
            alert_title.as_str(),
            format!("**older than {}**", t(p.alert.threshold_s)),
            &p.alert.reason,
        ),
        (
            "Delivery limit",
            format!("**{}**", p.delivery_limit.recommended),
            &p.delivery_limit.reason,
        ),
    ];
    for (i, (title, head, why)) in sections.iter().enumerate() {
        let _ = writeln!(o, "\n## {title}\n\n{head}. {why}");
        // The records per poll right after the interval they must fit in; a consumer group's
        // partitions right after the workers they must keep busy.
        match i {
            0 => poll_section(o, p),
            2 => partitions_section(o, p),
            _ => {}
        }
    }
}

/// The partitions against the workers, on a consumer group.
fn partitions_section(o: &mut String, p: &Plan) {
    if let Some(part) = &p.partitions {
        let _ = writeln!(
            o,
            "\n## Partitions (consumer group)\n\n**{}**. {}",
            part.sizing.recommended, part.reason
        );
    }
}

/// The records per poll against the poll interval, on a kind that polls batches.
fn poll_section(o: &mut String, p: &Plan) {
    let (Some(poll), Some(batch)) = (&p.poll, &p.current.kind.batch) else {
        return;
    };
    let _ = writeln!(
        o,
        "\n## Records per poll ({})\n\n**{}** a poll, {} between two polls against a {} {}. {}",
        batch.words,
        poll.records_recommended,
        human(poll.batch_time_recommended_s),
        t(poll.interval_recommended_s),
        p.current.kind.lease.words,
        poll.reason
    );
}

/// The consistency checks, now and with the recommendation.
fn checks(o: &mut String, p: &Plan) {
    let _ = writeln!(o, "\n## Consistency checks\n");
    let _ = writeln!(
        o,
        "| check | now | recommended | why (now) |\n|---|---|---|---|"
    );
    for c in &p.checks {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            c.name,
            mark(c.current),
            mark(c.recommended),
            c.detail_current.replace('|', "\\|")
        );
    }
    let findings: Vec<_> = p
        .checks
        .iter()
        .filter(|c| c.recommended == Status::Fail)
        .collect();
    for c in findings {
        let _ = writeln!(
            o,
            "\nStill open with the recommendation: {}: {}.",
            c.name, c.detail_recommended
        );
    }
}

/// What the recovery probe's kill did before and after.
fn probe(o: &mut String, p: &Plan) {
    if let (Some(b), Some(a)) = (
        &p.delivery_limit.probe_current,
        &p.delivery_limit.probe_recommended,
    ) {
        let _ = writeln!(
            o,
            "\nA kill {} on {}'s first delivery: before, {}; after, {}.",
            b.kill,
            b.key.as_deref().unwrap_or("a message"),
            b.summary(),
            a.summary()
        );
    }
}

/// The notes, if any.
fn notes(o: &mut String, p: &Plan) {
    if !p.notes.is_empty() {
        let _ = writeln!(o, "\n## Notes\n");
        for n in &p.notes {
            let _ = writeln!(o, "- {n}");
        }
    }
}

fn mark(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "**FAIL**",
        Status::NotApplicable => "n/a",
    }
}

fn verification(o: &mut String, p: &Plan) {
    let (b, a) = (&p.verification.before, &p.verification.after);
    let kind = p.current.kind;
    // The lease row in the kind's words; a poll interval is no lease per message: no hold ratio;
    // a kind with no delivery limit shows none.
    let poll_interval = kind.lease.role == LeaseRole::PollInterval;
    let lease_row = kind.words.sizing.lease_row;
    let oldest = format!("oldest {}", kind.words.message.0);
    let pct = |x: f64| format!("{}%", n3(x * 100.0));
    let rows: [(&str, String, String); 12] = [
        (
            lease_row,
            t(b.visibility_timeout_s),
            t(a.visibility_timeout_s),
        ),
        (
            "delivery limit",
            b.max_receives.to_string(),
            a.max_receives.to_string(),
        ),
        ("workers", b.workers.to_string(), a.workers.to_string()),
        (
            "duplicate effects",
            b.duplicate_effects.to_string(),
            a.duplicate_effects.to_string(),
        ),
        ("lost", b.lost.to_string(), a.lost.to_string()),
        (
            "DLQ (with effect)",
            format!("{} ({})", b.dlq, b.dlq_with_effect),
            format!("{} ({})", a.dlq, a.dlq_with_effect),
        ),
        (
            "handler p99",
            human(b.handler_p99_ms / 1000.0),
            human(a.handler_p99_ms / 1000.0),
        ),
        (
            "p99 / lease",
            n3(b.p99_over_visibility),
            n3(a.p99_over_visibility),
        ),
        (
            "recovery time",
            format!("{} ({})", t(b.recovery_time_s), b.recovery_time_source),
            format!("{} ({})", t(a.recovery_time_s), a.recovery_time_source),
        ),
        (
            "workers busy",
            pct(b.worker_busy_fraction),
            pct(a.worker_busy_fraction),
        ),
        (
            oldest.as_str(),
            human(b.max_oldest_age_s),
            human(a.max_oldest_age_s),
        ),
        ("verdict", b.verdict.clone(), a.verdict.clone()),
    ];
    let _ = writeln!(o, "| | before | after |\n|---|---|---|");
    for (name, before, after) in rows {
        let left_out = (poll_interval && name == "p99 / lease")
            || (kind.limit.is_none() && name == "delivery limit");
        if !left_out {
            let _ = writeln!(o, "| {name} | {before} | {after} |");
        }
    }
}
