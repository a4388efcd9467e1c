//! The delivery limit a target's own recovery path needs.
//!
//! A worker that dies holding a message spends one delivery; the target's recovery then takes
//! however many deliveries its code needs before one does the work. For most targets that is one
//! more (2 in all). `claim-then-send` is the case docs/domain.md warns about: a death right after
//! the claim leaves a claim that is young for `claim_window`; the next delivery comes when the
//! lease ends and, while `lease < claim_window`, finds the claim in flight and hands the message
//! back for a whole window; the delivery after that finds the claim stale and sends. So
//! 1 (killed) + 1 (hand-back, when lease < window) + 1 (send). The recommended limit is that
//! plus [`SPARE`], so that one more try (a slow call, a second death) still fits.

use std::time::Duration;

use serde::Serialize;

/// Deliveries recommended beyond the slowest recovery path.
pub const SPARE: u32 = 1;

/// The deliveries a target needs to recover from a death at its worst point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecoveryPath {
    /// Deliveries used, the one that died included.
    pub deliveries: u32,
    /// The path, in words.
    pub description: String,
}

/// The slowest recovery path of `target` with this lease and claim window; the kind's lease is
/// named `lease_word` ([`crate::profile::kinds::words::SizingWords::lease`]).
pub fn recovery_path(
    target: &str,
    lease: Duration,
    claim_window: Option<Duration>,
    lease_word: &str,
) -> RecoveryPath {
    let fmt = readable_text;
    match (target, claim_window) {
        ("claim-then-send", Some(window)) if lease < window => RecoveryPath {
            deliveries: 3,
            description: format!(
                "a kill right after the claim: delivery 1 dies; delivery 2 comes when the \
                 {} {lease_word} ends and finds a claim younger than the {} window, so it hands the \
                 message back for {}; delivery 3 finds the claim stale and sends",
                fmt(lease),
                fmt(window),
                fmt(window)
            ),
        },
        ("claim-then-send", Some(window)) => RecoveryPath {
            deliveries: 2,
            description: format!(
                "a kill right after the claim: delivery 1 dies; delivery 2 comes when the {} \
                 {lease_word} ends, finds the claim older than the {} window and sends",
                fmt(lease),
                fmt(window)
            ),
        },
        ("ack-before-work", _) => RecoveryPath {
            deliveries: 2,
            description: "a kill before the ack: delivery 1 dies, delivery 2 does the work \
                          (a kill after the ack loses the message whatever the limit)"
                .into(),
        },
        _ => RecoveryPath {
            deliveries: 2,
            description: format!(
                "a kill while handling: delivery 1 dies; delivery 2 comes when the {} \
                 {lease_word} ends and does the work",
                fmt(lease)
            ),
        },
    }
}

/// The limit to recommend: the path plus [`SPARE`]; an existing limit that already leaves that
/// room is kept (more tries only delay a poison message's move to the DLQ). A queue without a
/// limit gets one: without it a poison message is delivered forever.
pub fn recommended_limit(current: u32, path: &RecoveryPath) -> u32 {
    let want = path.deliveries + SPARE;
    if current == 0 {
        want
    } else {
        current.max(want)
    }
}

/// Spare deliveries after the path: `None` without a limit.
pub fn spare(limit: u32, path: &RecoveryPath) -> Option<i64> {
    (limit > 0).then(|| i64::from(limit) - i64::from(path.deliveries))
}

/// A duration as a profile writes it (`30s`, `2m`).
pub fn readable_text(d: Duration) -> String {
    crate::profile::format_duration(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Duration {
        Duration::from_secs(x)
    }

    #[test]
    fn a_claim_younger_than_the_window_costs_a_hand_back() {
        let p = recovery_path("claim-then-send", s(30), Some(s(120)), "lease");
        assert_eq!(p.deliveries, 3);
        assert!(p.description.contains("hands the message back for 2m"));
        assert_eq!(spare(3, &p), Some(0));
        assert_eq!(recommended_limit(3, &p), 4);
        // A lease at least as long as the window: the next delivery sends.
        assert_eq!(
            recovery_path("claim-then-send", s(120), Some(s(120)), "lease").deliveries,
            2
        );
    }

    #[test]
    fn other_targets_redo_the_work_on_the_next_delivery() {
        for t in [
            "ack-after-work",
            "heartbeat",
            "dedupe-table",
            "status-fence",
            "ack-before-work",
        ] {
            let p = recovery_path(t, s(30), None, "lease");
            assert_eq!(p.deliveries, 2, "{t}");
            assert_eq!(
                recommended_limit(3, &p),
                3,
                "{t}: a limit with a spare is kept"
            );
            assert_eq!(recommended_limit(0, &p), 3, "{t}: no limit gets one");
            assert_eq!(recommended_limit(2, &p), 3, "{t}");
            assert_eq!(spare(0, &p), None);
        }
    }
}
