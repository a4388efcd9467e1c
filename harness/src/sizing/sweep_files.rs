//! The sweep's files: `sweep.csv` (one row per point: point, seed, parameters, metrics, the
//! recovery time's source, verdict) and `sweep.json` (a list of points, each
//! `{"params": {...}, "seed": N, "summary": {...summary.json...}, "derived": {...}}`).

use std::fmt::Write;

use super::outcome::{number, PointOutcome};

/// sweep.csv's text. `paths` are the varied fields, `metrics` the chosen metrics.
pub fn csv(paths: &[String], metrics: &[String], points: &[PointOutcome]) -> String {
    let with_source = metrics.iter().any(|m| m == "recovery_time_s");
    let mut header: Vec<String> = vec!["point".into(), "seed".into()];
    header.extend(paths.iter().cloned());
    header.extend(metrics.iter().cloned());
    if with_source {
        header.push("recovery_time_source".into());
    }
    header.push("verdict".into());
    let mut out = String::new();
    line(&mut out, &header);
    for (i, p) in points.iter().enumerate() {
        let mut row = vec![(i + 1).to_string(), p.seed.to_string()];
        row.extend(
            paths
                .iter()
                .map(|path| p.param(path).unwrap_or("").to_string()),
        );
        row.extend(
            metrics
                .iter()
                .map(|m| p.metric(m).map(number).unwrap_or_default()),
        );
        if with_source {
            row.push(p.derived.recovery_time_source.as_str().into());
        }
        row.push(p.summary.verdict.to_string());
        line(&mut out, &row);
    }
    out
}

fn line(out: &mut String, fields: &[String]) {
    let cells: Vec<String> = fields.iter().map(|f| field(f)).collect();
    let _ = writeln!(out, "{}", cells.join(","));
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// sweep.json's text: pretty-printed, with a trailing newline.
pub fn json(points: &[PointOutcome]) -> String {
    let mut s = serde_json::to_string_pretty(points).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_are_quoted() {
        assert_eq!(field("30s"), "30s");
        assert_eq!(
            field("{dist: fixed, value: 1s}"),
            "\"{dist: fixed, value: 1s}\""
        );
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
