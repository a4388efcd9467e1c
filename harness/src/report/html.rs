//! report.html: one self-contained page (inline CSS and SVG, no script, nothing fetched): the
//! verdict first, then the budgets, what happened in words and numbers, the charts, the profile
//! as run and the command that reproduces the run. Every text from the run is escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::charts::axis::duration;
use super::summary::Summary;
use super::words::{
    count_rows, latency_cells, latency_definitions, latency_rows, lease_line, notes, number,
    per_message_lease, plural, verdict_detail,
};
use super::{write_file, Format, Renderer, ReportData, ReportError};

/// The file's name inside the report folder.
pub const FILE: &str = "report.html";

/// Writes report.html.
pub struct Html;

impl Renderer for Html {
    fn format(&self) -> Format {
        Format::Html
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let page = page(data)?;
        Ok(vec![write_file(dir, FILE, |w| {
            w.write_all(page.as_bytes())
        })?])
    }
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light; }
body { font-family: 'DejaVu Sans', system-ui, sans-serif; margin: 0 auto; max-width: 1060px;
  padding: 0 20px 40px; color: #1a1a1a; background: #fff; line-height: 1.45; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 32px 0 8px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
.verdict { margin: 20px 0 0; padding: 16px 20px; border: 3px solid; border-radius: 6px; }
.verdict.pass { background: #e8f5e9; border-color: #1b5e20; }
.verdict.fail { background: #fdecea; border-color: #8b0000; border-style: double; border-width: 6px; }
.verdict.incomplete { background: #fff4e0; border-color: #8a4b00; border-style: dashed; border-width: 4px; }
.badge { display: inline-block; padding: 2px 10px; margin-right: 8px; border-radius: 4px;
  color: #fff; font-weight: bold; letter-spacing: 0.05em; }
.pass .badge, td.pass { background: #1b5e20; }
.fail .badge, td.fail { background: #8b0000; }
.incomplete .badge { background: #8a4b00; }
td.pass, td.fail { color: #fff; font-weight: bold; text-align: center; }
.muted { color: #555; }
ul.notes li { margin: 6px 0; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #bbb; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 24px 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 0.9em; margin-top: 4px; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: 10px 12px; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; }
footer { margin-top: 40px; color: #555; font-size: 0.9em; }
";

/// The whole page.
pub fn page(data: &ReportData) -> Result<String, ReportError> {
    let s = &data.summary;
    let r = &data.run;
    let verdict = s.verdict.as_str();
    let word = verdict.to_uppercase();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" href=\"data:,\">\n\
         <title>{word}: {} (ackbench report)</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&s.profile)
    );

    // The verdict first.
    let detail = verdict_detail(s);
    let _ = write!(
        h,
        "<header class=\"verdict {verdict}\">\n<h1><span class=\"badge\">{word}</span>{}</h1>\n\
         <p><strong>{}</strong> &middot; mode {} &middot; seed {} &middot; {} of virtual time in {} s of wall time</p>\n",
        escape(&s.profile),
        escape(&detail),
        escape(&s.mode),
        s.seed,
        escape(&duration(s.virtual_s)),
        number(s.wall_s),
    );
    if !r.description.is_empty() {
        let _ = writeln!(h, "<p class=\"muted\">{}</p>", escape(&r.description));
    }
    let _ = writeln!(
        h,
        "<p class=\"muted\">target <code>{}</code>, {} {}, {} {}, {}, {}: {}</p>",
        escape(&r.target),
        r.workers,
        plural(u64::from(r.workers), "worker", "workers"),
        r.lease_words(),
        escape(&duration(r.visibility_timeout_s)),
        if r.max_receives == 0 {
            "no delivery limit".to_string()
        } else {
            format!("{} deliveries at most", r.max_receives)
        },
        r.words().stale.label,
        escape(r.words().stale.policy.unwrap_or(r.stale_ack.as_str())),
    );
    h.push_str("</header>\n");
    let notes = notes(s);
    if !notes.is_empty() {
        h.push_str("<ul class=\"notes\">\n");
        for n in notes {
            let (head, rest) = n.head_and_rest();
            let _ = write!(h, "<li><strong>{}:</strong> {}", escape(head), escape(rest));
            for q in &n.quotes {
                let _ = write!(
                    h,
                    "<div class=\"muted\">{}:</div><pre class=\"quote\">{}</pre>",
                    escape(&q.source),
                    escape(&q.lines.join("\n"))
                );
            }
            h.push_str("</li>\n");
        }
        h.push_str("</ul>\n");
    }

    budgets(&mut h, data);
    summary(&mut h, data);
    charts(&mut h, data)?;

    let _ = write!(
        h,
        "<h2 id=\"profile\">Profile as run</h2>\n\
         <p class=\"muted\">After <code>--set</code> overrides; defaults not filled in.</p>\n\
         <pre>{}</pre>\n",
        escape(&r.profile_as_run)
    );
    let _ = write!(
        h,
        "<h2 id=\"reproduce\">Reproduce</h2>\n\
         <p>Seed <code>{}</code>. The same profile and seed give the same summary.json, byte for byte \
         (but <code>wall_s</code>).</p>\n<pre><code>{}</code></pre>\n",
        r.seed,
        escape(&r.command)
    );
    let _ = write!(
        h,
        "<footer>Written by ackbench {} from this folder's run.json, summary.json, timeseries.csv, \
         handler-latency.hlog, end-to-end.hlog, time-to-done.hlog{}.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        match (r.deliveries_recorded, s.broker_counts.is_some()) {
            (true, true) => ", deliveries.csv and broker-samples.csv",
            (true, false) => " and deliveries.csv",
            (false, true) => " and broker-samples.csv",
            (false, false) => "",
        }
    );
    Ok(h)
}

fn budgets(h: &mut String, data: &ReportData) {
    let s = &data.summary;
    h.push_str("<h2 id=\"budgets\">Budgets</h2>\n");
    if s.budgets.is_empty() {
        h.push_str("<p>No budgets set: the run passes whatever happened.</p>\n");
        return;
    }
    h.push_str("<table>\n<tr><th>budget</th><th>limit</th><th>actual</th><th>result</th></tr>\n");
    for b in &s.budgets {
        let (class, word) = if b.pass {
            ("pass", "PASS")
        } else {
            ("fail", "FAIL")
        };
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{class}\">{word}</td></tr>",
            escape(&b.name),
            escape(&number(b.limit)),
            escape(&number(b.actual)),
        );
    }
    h.push_str("</table>\n");
}

/// A row of (label, value, note), the value right-aligned.
fn row(h: &mut String, label: &str, value: &str, note: &str) {
    let _ = writeln!(
        h,
        "<tr><th>{}</th><td class=\"num\">{}</td><td>{}</td></tr>",
        escape(label),
        escape(value),
        escape(note)
    );
}

/// The worker crashes and the broker anomalies, each a table of its own when there are any.
fn crashes_and_anomalies(h: &mut String, s: &Summary) {
    if !s.crashes.is_empty() {
        let _ = writeln!(
            h,
            "</table>\n<h3 id=\"crashes\">Worker crashes</h3>\n\
             <p class=\"muted\">Every time a worker died by itself (not by a kill rule): {}.</p>\n\
             <table>\n<tr><th>worker</th><th>at (s)</th><th>how it ended</th></tr>",
            s.crashes.len()
        );
        for c in &s.crashes {
            let _ = writeln!(
                h,
                "<tr><td class=\"num\">{}</td><td class=\"num\">{:.3}</td><td>{}</td></tr>",
                c.worker,
                c.at_s,
                escape(&c.exit)
            );
        }
    }
    if !s.anomalies.is_empty() {
        let _ = writeln!(
            h,
            "</table>\n<h3 id=\"anomalies\">Broker anomalies</h3>\n\
             <p class=\"muted\">Steps no broker should take, found in the run's history: {}.</p>\n\
             <table>\n<tr><th>message</th><th>what</th><th>at (s)</th><th>worker</th><th>delivery</th></tr>",
            s.anomalies.len()
        );
        for a in &s.anomalies {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(&a.key),
                a.kind.describe(),
                a.at_s,
                a.worker,
                a.delivery
            );
        }
    }
}

fn summary(h: &mut String, data: &ReportData) {
    let s = &data.summary;
    h.push_str("<h2 id=\"summary\">Summary</h2>\n<table>\n");
    for (label, value, note) in count_rows(s) {
        row(h, label, &value, &note);
    }
    if let Some(i) = &s.ingress {
        h.push_str("</table>\n<h3>Ingress (HTTP load by goose)</h3>\n<table>\n");
        for (label, value, note) in super::ingress::rows(i) {
            row(h, label, &value, &note);
        }
    }
    let capacity = super::capacity::rows(s);
    if !capacity.is_empty() {
        let _ = writeln!(
            h,
            "</table>\n<h3 id=\"capacity\">{}</h3>\n<table>",
            escape(super::capacity::HEADING)
        );
        for (label, value, note) in capacity {
            row(h, &label, &value, &note);
        }
    }
    let groups = super::groups::rows(s);
    if !groups.is_empty() {
        let _ = writeln!(
            h,
            "</table>\n<h3 id=\"groups\">{}</h3>\n<table>",
            escape(&super::groups::heading(s))
        );
        for (group, blocked, note) in groups {
            row(h, &group, &blocked, &note);
        }
    }
    crashes_and_anomalies(h, s);
    if let Some(b) = &s.broker_counts {
        super::broker_rows::html(h, b);
    }
    h.push_str("</table>\n<table>\n<tr><th>latency (ms)</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
    for (label, l) in latency_rows(s) {
        let _ = write!(h, "<tr><th>{label}</th>");
        for v in latency_cells(s, label, l) {
            let _ = write!(h, "<td class=\"num\">{v}</td>");
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n<ul class=\"muted\">\n");
    for d in latency_definitions(s) {
        let _ = writeln!(h, "<li>{}</li>", escape(&d));
    }
    let _ = writeln!(
        h,
        "</ul>\n<p>{}.{}</p>",
        escape(&upper_first(&lease_line(s))),
        if per_message_lease(s) {
            format!(" {}", s.words().held.ratio)
        } else {
            String::new()
        }
    );
    rebalances(h, s);
    chaos_rules(h, s);
}

/// A consumer group's rebalances, a table when the run had any.
fn rebalances(h: &mut String, s: &Summary) {
    use super::rebalances::{self as r, HEADS};
    let rows = r::rows(s);
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<h3 id=\"rebalances\">{}</h3>\n<table>\n<tr>",
        r::HEADING
    );
    for head in HEADS {
        let _ = write!(h, "<th>{head}</th>");
    }
    h.push_str("</tr>\n");
    for cells in rows {
        h.push_str("<tr>");
        for (i, c) in cells.iter().enumerate() {
            let class = if i == 4 { "" } else { " class=\"num\"" };
            let _ = write!(h, "<td{class}>{}</td>", escape(c));
        }
        h.push_str("</tr>\n");
    }
    let _ = writeln!(
        h,
        "</table>\n<p class=\"muted\">{}.</p>",
        escape(&upper_first(&r::note(s)))
    );
}

/// The chaos rules and how often each fired.
fn chaos_rules(h: &mut String, s: &super::Summary) {
    if s.chaos_rules.is_empty() {
        return;
    }
    h.push_str("<table>\n<tr><th>chaos rule</th><th>what it does</th><th>optional</th><th>fired</th></tr>\n");
    for r in &s.chaos_rules {
        let class = if r.fired > 0 || r.optional {
            "num"
        } else {
            "fail"
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"num\">{}</td><td><code>{}</code></td><td>{}</td><td class=\"{class}\">{}</td></tr>",
            r.rule,
            escape(&r.label),
            if r.optional { "yes" } else { "no" },
            r.fired
        );
    }
    h.push_str("</table>\n");
}

/// `text` with its first letter upper-case.
fn upper_first(text: &str) -> String {
    let mut c = text.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn charts(h: &mut String, data: &ReportData) -> Result<(), ReportError> {
    h.push_str("<h2 id=\"charts\">Charts</h2>\n");
    for c in data.svg_charts()? {
        let _ = write!(
            h,
            "<figure id=\"chart-{}\">\n{}\n<figcaption>{} (charts/{}.svg, charts/{}.png)</figcaption>\n</figure>\n",
            c.name,
            c.svg.trim_end(),
            escape(&c.title),
            c.name,
            c.name
        );
    }
    if data.deliveries.is_none() {
        h.push_str(
            "<p class=\"muted\">No worker timeline: it is drawn for runs of up to 50 messages.</p>\n",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn everything_is_escaped() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }
}
