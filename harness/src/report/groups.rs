//! A FIFO run's message groups as the console, report.html and summary.md show them: each
//! group's head-of-line blocking time, messages and largest backlog, the most blocked first.

use super::summary::Summary;

/// The most groups a table lists (summary.json has every one).
pub const SHOWN: usize = 20;

/// (group, blocked time, note) rows, the most blocked first (group order among equals), at most
/// [`SHOWN`]; empty without groups.
pub(crate) fn rows(s: &Summary) -> Vec<(String, String, String)> {
    let mut groups: Vec<_> = s.message_groups.iter().collect();
    groups.sort_by(|a, b| b.blocked_s.total_cmp(&a.blocked_s));
    groups
        .into_iter()
        .take(SHOWN)
        .map(|g| {
            (
                g.group.clone(),
                format!("{:.3} s", g.blocked_s),
                format!(
                    "blocked behind its head; {} {}, backlog at most {}",
                    g.messages,
                    super::words::plural(g.messages, "message", "messages"),
                    g.max_backlog
                ),
            )
        })
        .collect()
}

/// The heading above the rows, saying how many groups are left out.
pub(crate) fn heading(s: &Summary) -> String {
    let n = s.message_groups.len();
    if n > SHOWN {
        format!("Message groups (FIFO): the {SHOWN} most blocked of {n}")
    } else {
        "Message groups (FIFO)".to_string()
    }
}
