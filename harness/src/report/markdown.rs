//! summary.md: the verdict, the budgets, the key counts and what they mean, in GitHub-flavoured
//! Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::charts::axis::{duration, LatencyUnit};
use super::summary::Summary;
use super::words::{notes, number, per_message_lease, verdict_detail, NO_PER_MESSAGE_LEASE};
use super::{write_file, Format, Renderer, ReportData, ReportError};
use crate::verdict::Verdict;

/// The file's name inside the report folder.
pub const FILE: &str = "summary.md";

/// Writes summary.md.
pub struct Markdown;

impl Renderer for Markdown {
    fn format(&self) -> Format {
        Format::Md
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let md = markdown(data);
        Ok(vec![write_file(dir, FILE, |w| w.write_all(md.as_bytes()))?])
    }
}

/// Escapes text from the run (a profile's name, its mode) for the middle of a Markdown line:
/// emphasis, code, links, HTML, table pipes and strike-through are backslash-escaped, and line
/// breaks become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A fenced code block that `text` cannot close early.
fn fenced(text: &str, lang: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{lang}\n{}\n{fence}\n", text.trim_end())
}

/// The budgets' table, when the profile sets any.
fn budgets(md: &mut String, s: &Summary) {
    if !s.budgets.is_empty() {
        md.push_str("| budget | limit | actual | result |\n| --- | ---: | ---: | :---: |\n");
        for b in &s.budgets {
            let result = if b.pass { "✅ pass" } else { "❌ **FAIL**" };
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {result} |",
                b.name.replace('`', "'"),
                number(b.limit),
                number(b.actual)
            );
        }
        md.push('\n');
    }
}

/// The notes, each a block quote, with what it quotes (a worker's stderr) as code.
fn quoted_notes(md: &mut String, s: &Summary) {
    // The notes are ackbench's own sentences, with numbers only: no markup to escape. What a
    // note quotes (a worker's stderr) is an indented code block, shown as it is.
    for n in notes(s) {
        let (head, rest) = n.head_and_rest();
        let _ = writeln!(md, "> **{head}:** {rest}\n>");
        for q in &n.quotes {
            let _ = writeln!(md, "> {}:\n>", escape(&q.source));
            for line in &q.lines {
                let _ = writeln!(md, ">     {line}");
            }
            md.push_str(">\n");
        }
    }
    if md.ends_with(">\n") {
        md.truncate(md.len() - 2);
        md.push('\n');
    }
}

/// The tables only some runs have: the ingress load's and a capacity run's.
fn extra_tables(md: &mut String, s: &Summary) {
    if let Some(i) = &s.ingress {
        md.push_str("| ingress | | |\n| --- | ---: | --- |\n");
        for (label, value, note) in super::ingress::rows(i) {
            let _ = writeln!(md, "| {label} | {} | {} |", escape(&value), escape(&note));
        }
        md.push('\n');
    }
    let capacity = super::capacity::rows(s);
    if !capacity.is_empty() {
        let _ = writeln!(
            md,
            "| {} | | |\n| --- | ---: | --- |",
            escape(super::capacity::HEADING)
        );
        for (label, value, note) in capacity {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                escape(&label),
                escape(&value),
                escape(&note)
            );
        }
        md.push('\n');
    }
}

/// A consumer group's rebalances, a table when the run had any.
fn rebalances(md: &mut String, s: &Summary) {
    use super::rebalances::{self as r, HEADS};
    let rows = r::rows(s);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "| {} |\n| ---: | ---: | ---: | ---: | --- | ---: |",
        HEADS.join(" | ")
    );
    for cells in rows {
        let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(md, "\n_{}: {}._\n", r::HEADING, escape(&r::note(s)));
}

/// summary.md's text.
pub fn markdown(data: &ReportData) -> String {
    let s = &data.summary;
    let r = &data.run;
    let mut md = String::new();
    let (icon, word) = match s.verdict {
        Verdict::Pass => ("✅", "PASS"),
        Verdict::Fail => ("❌", "FAIL"),
        Verdict::Incomplete => ("⚠️", "INCOMPLETE"),
    };
    let detail = verdict_detail(s);
    let _ = writeln!(md, "### {icon} {word}: {}\n", escape(&s.profile));
    let _ = writeln!(
        md,
        "**{detail}** · mode {} · seed {} · {} of virtual time\n",
        escape(&s.mode),
        s.seed,
        duration(s.virtual_s)
    );
    budgets(&mut md, s);
    quoted_notes(&mut md, s);
    let w = s.words();
    let _ = writeln!(
        md,
        "| messages | deliveries | effects | duplicate effects | lost | unfinished | late | DLQ (with / without effect) | {} | kills / crashes |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        w.stale.label
    );
    let _ = writeln!(
        md,
        "| {} | {} | {} | {} | {} | {} | {} | {} ({} / {}) | {} | {} / {} |\n",
        s.messages,
        s.deliveries,
        s.effects,
        s.duplicate_effects,
        lost_cell(s),
        s.unfinished,
        s.late,
        s.dlq,
        s.dlq_with_effect,
        s.dlq_without_effect,
        s.stale_acks,
        s.worker_kills,
        s.worker_crashes
    );
    extra_tables(&mut md, s);
    rebalances(&mut md, s);
    let l = &s.handler_latency_ms;
    let unit = LatencyUnit::for_max(l.max);
    let lease = &s.effective_lease_ms;
    if s.handler_latency_unmeasured.is_some() {
        let _ = write!(
            md,
            "Handler latency not measured (see HANDLER LATENCY), against a {} {}",
            duration(s.visibility_timeout_s),
            s.lease_words(),
        );
    } else {
        let _ = write!(
            md,
            "Handler latency p50 {}, p99 {}, p99.9 {}, max {} against a {} {}",
            unit.show(l.p50),
            unit.show(l.p99),
            unit.show(l.p999),
            unit.show(l.max),
            duration(s.visibility_timeout_s),
            s.lease_words(),
        );
    }
    if per_message_lease(s) {
        let _ = writeln!(
            md,
            "; {held} p50 {}, max {}; p99 of (time held before settling / {held}) = {}.\n",
            LatencyUnit::for_max(lease.max).show(lease.p50),
            LatencyUnit::for_max(lease.max).show(lease.max),
            number(s.p99_over_visibility),
            held = w.held.label,
        );
    } else {
        let _ = writeln!(md, "; {NO_PER_MESSAGE_LEASE}.\n");
    }
    let done = &s.time_to_done_ms;
    if s.messages_done > 0 {
        let unit = LatencyUnit::for_max(done.max);
        let _ = writeln!(
            md,
            "Time to done (publish to the effect and {}) p50 {}, p99 {}, max {}, over {} of {} {}; \
             end to end (publish to first effect) p99 {}.\n",
            w.done.by,
            unit.show(done.p50),
            unit.show(done.p99),
            unit.show(done.max),
            s.messages_done,
            s.messages,
            w.message.1,
            LatencyUnit::for_max(s.end_to_end_ms.max).show(s.end_to_end_ms.p99)
        );
    } else {
        let _ = writeln!(
            md,
            "Time to done (publish to the effect and {}): no {} of {} was done.\n",
            w.done.by, w.message.0, s.messages
        );
    }
    let _ = write!(
        md,
        "<details><summary>Reproduce (seed {})</summary>\n\n{}\n</details>\n",
        r.seed,
        fenced(&r.command, "sh")
    );
    md
}

/// The `lost` cell: with unmatched effects, the messages that cannot be told lost beside it.
fn lost_cell(s: &super::summary::Summary) -> String {
    if s.unverifiable_keys > 0 {
        format!("{} ({} unverifiable)", s.lost, s.unverifiable_keys)
    } else {
        s.lost.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_names_is_escaped() {
        assert_eq!(escape("a_b|c*<d>"), "a\\_b\\|c\\*\\<d\\>");
        assert_eq!(escape("marlow-thursday (v2.1)"), "marlow-thursday (v2.1)");
        assert_eq!(escape("two\nlines"), "two lines");
    }

    #[test]
    fn a_fence_outlasts_backticks_in_the_command() {
        assert_eq!(
            fenced("ackbench run p.yaml", "sh"),
            "```sh\nackbench run p.yaml\n```\n"
        );
        assert_eq!(fenced("a ```` b", ""), "`````\na ```` b\n`````\n");
    }
}
