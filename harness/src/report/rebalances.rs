//! A consumer group's rebalances over time (summary.json's `rebalance_log`, Kafka), as the
//! console, summary.md and report.html show them: one row per rebalance, the first
//! [`SHOWN`] of them, then one row for the rest.

use super::summary::Summary;
use super::words::number;

/// Rows shown before the rest are summed into one.
pub const SHOWN: usize = 10;

/// The section's heading.
pub const HEADING: &str = "Rebalances (consumer group)";

/// The columns' heads.
pub const HEADS: [&str; 6] = [
    "at",
    "generation",
    "members",
    "moved",
    "why",
    "processed twice",
];

/// One row per rebalance (at most [`SHOWN`], then one for the rest); empty for a run that had
/// none.
pub fn rows(s: &Summary) -> Vec<[String; 6]> {
    let log = &s.rebalance_log;
    let mut rows: Vec<[String; 6]> = log
        .iter()
        .take(SHOWN)
        .map(|r| {
            [
                format!("{} s", number(r.at_s)),
                r.generation.to_string(),
                r.members.to_string(),
                r.moved.to_string(),
                r.why.words().to_string(),
                r.processed_twice.to_string(),
            ]
        })
        .collect();
    if let (Some(first), Some(last)) = (log.get(SHOWN), log.last()) {
        let rest = &log[SHOWN..];
        rows.push([
            format!("{}-{} s", number(first.at_s), number(last.at_s)),
            format!("{}-{}", first.generation, last.generation),
            String::new(),
            rest.iter()
                .map(|r| u64::from(r.moved))
                .sum::<u64>()
                .to_string(),
            format!("{} more (summary.json lists each)", rest.len()),
            rest.iter()
                .map(|r| r.processed_twice)
                .sum::<u64>()
                .to_string(),
        ]);
    }
    rows
}

/// The sentence under the rows.
pub fn note(s: &Summary) -> String {
    format!(
        "processed twice: duplicate effects from a rebalance up to the next ({} in all, {} \
         fenced commits)",
        s.duplicate_effects,
        s.fenced_commits.unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::rebalances::Rebalance;
    use crate::metrics::testkit::ack_before_work;
    use crate::profile::Budgets;
    use crate::record::RebalanceWhy;
    use crate::report::summary::{summarise, RunInfo};

    fn at(at_s: f64, generation: u32, processed_twice: u64) -> Rebalance {
        Rebalance {
            at_s,
            generation,
            members: 2,
            moved: 1,
            why: RebalanceWhy::SessionTimeout,
            processed_twice,
        }
    }

    #[test]
    fn past_the_first_ten_the_rest_are_one_row() {
        // 13 rebalances, one a minute from 60 s, the n-th with n records processed twice: ten
        // rows, then one for generations 11-13 (660-780 s), 3 partitions moved, 11 + 12 + 13 =
        // 36 processed twice.
        let info = RunInfo {
            profile: "group".into(),
            mode: "sim".into(),
            seed: 1,
            wall_s: 0.25,
        };
        let mut s = summarise(&info, &ack_before_work(), &Budgets::default());
        s.rebalance_log = (1..=13)
            .map(|n| at(60.0 * n as f64, n, u64::from(n)))
            .collect();
        let rows = rows(&s);
        assert_eq!(rows.len(), 11);
        assert_eq!(
            rows[0],
            ["60 s", "1", "2", "1", "session.timeout.ms expired", "1"].map(String::from)
        );
        assert_eq!(
            rows[10],
            [
                "660-780 s",
                "11-13",
                "",
                "3",
                "3 more (summary.json lists each)",
                "36"
            ]
            .map(String::from)
        );
        s.rebalance_log.clear();
        assert!(super::rows(&s).is_empty());
    }
}
