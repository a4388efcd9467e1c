//! The table `ackbench sweep` prints: one row per point, the varied values then the metrics.

use super::outcome::{number, PointOutcome};

/// The sweep as an aligned plain-text table, ending with a newline.
pub fn table(paths: &[String], metrics: &[String], points: &[PointOutcome]) -> String {
    let mut header: Vec<String> = paths.to_vec();
    header.extend(metrics.iter().cloned());
    header.push("verdict".into());
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut row: Vec<String> = paths
                .iter()
                .map(|path| p.param(path).unwrap_or("").to_string())
                .collect();
            for m in metrics {
                let mut cell = p.metric(m).map(number).unwrap_or_default();
                if m == "recovery_time_s" {
                    cell.push_str(&format!(" ({})", p.derived.recovery_time_source.as_str()));
                }
                row.push(cell);
            }
            row.push(p.summary.verdict.to_string());
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| {
                if c < paths.len() {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
