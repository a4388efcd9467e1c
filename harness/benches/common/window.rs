//! The drain window, the same for both sides: effects at the provider after the window's start
//! over the time to the last of them. The window starts once the last call the provider held
//! was answered (its answer read from the recorded calls, not from the effects, which
//! `effect_at: request` stamps when a held call arrives) and the last message was published,
//! whichever is later: the consumers draining a full queue, without the hold, the publisher's
//! pace or the consumers' start-up. A window that contains any of the hold is refused (the
//! figure would follow the hold's length, as `proxy_cost.rs`'s header explains).

use ackbench::internals::run::{EventKind, Nanos, RunRecord};

/// What a run's rate is read from, as plain instants on the run's clock (ns).
pub struct Timeline {
    /// Messages published, and the first and last publish's instants.
    pub published: (usize, Nanos, Nanos),
    /// The provider's hold phase: a call arriving in `[hold.0, hold.1)` is answered a hold later.
    pub hold: (Nanos, Nanos),
    /// Every provider call: when it arrived and when it was answered (`None`: never).
    pub calls: Vec<(Nanos, Option<Nanos>)>,
    /// Every effect.
    pub effects: Vec<Nanos>,
}

/// One run's figures.
pub struct Rate {
    /// Messages per second drained in the window.
    pub consumed: f64,
    /// Effects counted in the window, and its start.
    pub effects: usize,
    pub from: Nanos,
    /// The publisher's own rate.
    pub published: f64,
}

fn held(t: &Timeline) -> impl Iterator<Item = (Nanos, Option<Nanos>)> + '_ {
    t.calls
        .iter()
        .copied()
        .filter(|&(started, _)| t.hold.0 <= started && started < t.hold.1)
}

/// The drain rate of `t`, a run of `n` messages.
pub fn measure(t: &Timeline, n: u64) -> Result<Rate, String> {
    let (count, p0, p1) = t.published;
    if let Some((started, _)) = held(t).find(|&(_, ended)| ended.is_none()) {
        return Err(format!(
            "a call held by the provider (arrived at {:.3} s) was never answered",
            secs(started)
        ));
    }
    let held_end = held(t).filter_map(|(_, ended)| ended).max().unwrap_or(0);
    let from = p1.max(held_end).max(t.hold.1);
    if let Some(why) = hold_in_window(t, from) {
        panic!(
            "the measuring window contains the provider's hold: {why}; the rate would count \
             the hold's wait and follow its length, not the consumers' drain"
        );
    }
    let after: Vec<Nanos> = t.effects.iter().copied().filter(|&at| at > from).collect();
    if (after.len() as u64) < n / 4 {
        return Err(format!(
            "only {} of {n} effects came after the queue was full (the publisher kept up with \
             the consumers): raise the message count",
            after.len()
        ));
    }
    let last = after.iter().copied().max().unwrap_or(from);
    Ok(Rate {
        consumed: per_s(after.len(), from, last),
        effects: after.len(),
        from,
        published: per_s(count.saturating_sub(1), p0, p1),
    })
}

/// Why a window from `from` contains (part of) the hold, if it does.
fn hold_in_window(t: &Timeline, from: Nanos) -> Option<String> {
    if from < t.hold.1 {
        return Some(format!(
            "it starts at {:.3} s, inside the hold ({:.3}-{:.3} s)",
            secs(from),
            secs(t.hold.0),
            secs(t.hold.1)
        ));
    }
    held(t)
        .find(|&(_, ended)| ended.is_none_or(|e| e > from))
        .map(|(started, _)| {
            format!(
                "it starts at {:.3} s, before the held call that arrived at {:.3} s was answered",
                secs(from),
                secs(started)
            )
        })
}

fn per_s(count: usize, a: Nanos, b: Nanos) -> f64 {
    count as f64 / (b.saturating_sub(a) as f64 / 1e9).max(1e-9)
}

pub fn secs(at: Nanos) -> f64 {
    at as f64 / 1e9
}

/// The window on a made-up run: 32 calls arriving in the first 31 ms, held for 6 s; 3,000
/// messages published in the first 0.5 s; then one call a millisecond (1,000 messages/s), with
/// effects stamped at the request and at the response. A window from the 32nd effect (inside
/// the hold when effects are stamped at the request) is refused.
pub fn self_check() {
    const MS: Nanos = 1_000_000;
    let hold = (0, 6_000 * MS);
    let mut calls: Vec<(Nanos, Option<Nanos>)> =
        (0..32).map(|i| (i * MS, Some(hold.1 + i * MS))).collect();
    let drain_from = hold.1 + 31 * MS;
    calls.extend((1..=2968).map(|k| (drain_from + k * MS, Some(drain_from + (k + 1) * MS))));
    for at_request in [true, false] {
        let effects = calls
            .iter()
            .map(|&(s, e)| if at_request { s } else { e.unwrap_or(s) })
            .collect();
        let t = Timeline {
            published: (3000, 0, 500 * MS),
            hold,
            calls: calls.clone(),
            effects,
        };
        let rate = measure(&t, 3000).expect("self-check: the made-up run measures");
        assert_eq!(rate.from, drain_from, "self-check: window start");
        assert!(
            (rate.consumed - 1000.0).abs() < 10.0,
            "self-check: {} messages/s, expected 1000",
            rate.consumed
        );
        if at_request {
            assert!(hold_in_window(&t, t.effects[31]).is_some());
        }
    }
}

/// The drain rate of an ackbench run of `n` messages, read from its record: every message must
/// have had its effect, and the profile's provider must have one phase, the hold.
pub fn of_record(record: &RunRecord, n: u64) -> Result<Rate, String> {
    every_message_had_its_effect(record, n)?;
    let hold = match record.phases.as_slice() {
        [(from, to, _)] => (*from, *to),
        other => {
            return Err(format!(
                "expected one provider phase (the hold), got {}",
                other.len()
            ))
        }
    };
    let published: Vec<_> = record
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Published { .. }))
        .map(|e| e.at)
        .collect();
    let timeline = Timeline {
        published: (
            published.len(),
            published.iter().copied().min().unwrap_or(0),
            published.iter().copied().max().unwrap_or(0),
        ),
        hold,
        calls: record
            .ledger
            .calls
            .iter()
            .map(|c| (c.started, c.ended))
            .collect(),
        effects: record.ledger.effects.iter().map(|e| e.at).collect(),
    };
    measure(&timeline, n)
}

/// `Err` unless each of the `n` messages of the run had its effect.
pub fn every_message_had_its_effect(record: &RunRecord, n: u64) -> Result<(), String> {
    let effected: std::collections::HashSet<_> =
        record.ledger.effects.iter().filter_map(|e| e.seq).collect();
    if (effected.len() as u64) < n {
        return Err(format!(
            "only {} of {n} messages had their effect",
            effected.len()
        ));
    }
    Ok(())
}
