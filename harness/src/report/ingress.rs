//! The "Ingress" table of a run with an HTTP ingress load: goose's answers against what reached
//! the queue. The console, summary.md and report.html show the same rows and notes.

use super::words::{number, plural};
use crate::metrics::IngressSummary;

/// The rows: (label, value, note).
pub(crate) fn rows(i: &IngressSummary) -> Vec<(&'static str, String, String)> {
    let pace = if i.scheduled {
        format!("on a schedule of {}/s", number(i.target_rate_per_s))
    } else {
        "no schedule: each user's next request follows its answer".to_string()
    };
    let statuses: Vec<String> = i
        .goose
        .status_codes
        .iter()
        .filter(|(code, _)| !(200..300).contains(*code))
        .map(|(code, n)| format!("{code} x{n}"))
        .collect();
    let g = &i.goose.response_ms;
    let mut rows = vec![
        (
            "requests",
            i.requests.to_string(),
            format!(
                "{} planned, {} {}, {pace}",
                i.planned,
                i.users,
                plural(u64::from(i.users), "user", "users")
            ),
        ),
        ("accepted", i.accepted.to_string(), "answered 2xx".into()),
        (
            "refused",
            i.refused.to_string(),
            if statuses.is_empty() {
                "answered another status".into()
            } else {
                statuses.join(", ")
            },
        ),
        (
            "failed",
            i.failed.to_string(),
            "no answer (connection refused, timeout)".into(),
        ),
        (
            "published",
            i.published.to_string(),
            "messages the ingress put on the queue".into(),
        ),
        (
            "lost at the ingress",
            i.lost.to_string(),
            "accepted, never published".into(),
        ),
        (
            "published unaccepted",
            i.published_unaccepted.to_string(),
            "published although refused or failed".into(),
        ),
        (
            "duplicate publishes",
            i.duplicate_publishes.to_string(),
            "a key published again".into(),
        ),
    ];
    if i.unkeyed > 0 {
        rows.push((
            "unkeyed messages",
            i.unkeyed.to_string(),
            "no key at message_key".into(),
        ));
    }
    rows.push((
        "sent per second",
        number(i.achieved_rate_per_s),
        if i.scheduled {
            format!(
                "target {}; start lag p99 {:.3} ms, max {:.3} ms",
                number(i.target_rate_per_s),
                i.schedule_lag_ms.p99,
                i.schedule_lag_ms.max
            )
        } else {
            String::new()
        },
    ));
    rows.push((
        "response (goose)",
        format!("{:.3} ms", g.p50),
        format!(
            "p50; p90 {:.3}, p99 {:.3}, max {:.3} ms (wall)",
            g.p90, g.p99, g.max
        ),
    ));
    rows
}

/// What went wrong at the ingress, in words.
pub(crate) fn notes(i: &IngressSummary) -> Vec<String> {
    let mut notes = Vec::new();
    if i.lost > 0 {
        notes.push(format!(
            "INGRESS LOST: the ingress accepted {} {} (2xx) that never reached the queue: the \
             caller was told the work was taken, and nothing will ever do it.",
            i.lost,
            plural(i.lost, "order", "orders"),
        ));
    }
    if i.published_unaccepted > 0 {
        notes.push(format!(
            "INGRESS: {} {} published although the ingress refused or failed the request: a \
             client that retries would publish {} twice.",
            i.published_unaccepted,
            plural(i.published_unaccepted, "order was", "orders were"),
            plural(i.published_unaccepted, "it", "them"),
        ));
    }
    if i.requests < i.planned {
        notes.push(format!(
            "INGRESS: only {} of {} planned requests were sent: the run reached its end first \
             (run.duration for a load without a schedule, run.duration + run.drain with one).",
            i.requests, i.planned
        ));
    }
    if i.scheduled && i.target_rate_per_s > 0.0 && i.achieved_rate_per_s < 0.9 * i.target_rate_per_s
    {
        notes.push(format!(
            "INGRESS BEHIND: {}/s sent against a schedule of {}/s: the {} users waited for \
             answers (goose is closed-model); raise workload.ingress.users.",
            number(i.achieved_rate_per_s),
            number(i.target_rate_per_s),
            i.users
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ingress::{GooseResponse, GooseSummary};
    use crate::metrics::LatencySummary;

    fn summary() -> IngressSummary {
        IngressSummary {
            planned: 10,
            requests: 10,
            accepted: 9,
            refused: 1,
            failed: 0,
            published: 8,
            lost: 1,
            published_unaccepted: 0,
            duplicate_publishes: 0,
            unkeyed: 0,
            users: 2,
            scheduled: true,
            target_rate_per_s: 10.0,
            achieved_rate_per_s: 5.0,
            schedule_lag_ms: LatencySummary::default(),
            goose: GooseSummary {
                requests: 10,
                successes: 9,
                failures: 1,
                response_ms: GooseResponse {
                    min: 1.0,
                    mean: 2.0,
                    p50: 2.0,
                    p90: 3.0,
                    p99: 4.0,
                    max: 5.0,
                },
                status_codes: [(202, 9), (503, 1)].into_iter().collect(),
                duration_s: 2.0,
                users: 2,
            },
        }
    }

    #[test]
    fn rows_name_refusals_by_status_and_notes_say_what_went_wrong() {
        let s = summary();
        let rows = rows(&s);
        let refused = rows.iter().find(|r| r.0 == "refused").unwrap();
        assert_eq!(refused.2, "503 x1");
        let notes = notes(&s);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("INGRESS LOST: the ingress accepted 1 order (2xx)"));
        assert!(notes[1].starts_with("INGRESS BEHIND: 5/s sent against a schedule of 10/s"));
    }
}
