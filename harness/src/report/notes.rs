//! What the numbers of a run mean, in words, for each thing that went wrong: the notes every
//! report format says (console, summary.md, junit.xml, report.html), each with the lines it
//! quotes.

use super::note::Note;
use super::summary::Summary;
use super::words::plural;
use super::worker_logs;

/// Why the run is incomplete, in words.
pub(crate) fn incomplete_reason(s: &Summary) -> &str {
    s.incomplete_reason
        .as_deref()
        .unwrap_or("stopped before its end")
}

/// The most crashes the notes name one by one (summary.json and report.html list every one).
pub(crate) const CRASHES_NAMED: usize = 10;

/// What the numbers mean, in words, for each thing that went wrong. summary.md, junit.xml and
/// report.html say the same sentences.
pub(crate) fn notes(s: &Summary) -> Vec<Note> {
    let mut notes: Vec<Note> = Vec::new();
    if !s.complete {
        notes.push(Note::from(format!(
            "INCOMPLETE: the run was {} at {:.3} s, before its end: every number here is what was \
             recorded up to then ({} still {} count as unfinished), and there is no pass or fail \
             verdict (exit code 3).",
            incomplete_reason(s),
            s.virtual_s,
            s.words().message.1,
            s.words().unsettled,
        )));
    }
    crashes(s, &mut notes);
    super::broken::broken_connections(s, &mut notes);
    anomalies(s, &mut notes);
    if s.messages > 0 && s.deliveries == 0 {
        let w = s.words();
        notes.push(Note {
            text: format!(
                "NEVER RAN: the consumer never ran: not one of the {} published {} was ever \
                 {} ({} worker {}, {} {}).",
                s.messages,
                plural(s.messages, w.message.0, w.message.1),
                w.delivered,
                s.worker_crashes,
                plural(s.worker_crashes, "crash", "crashes"),
                s.worker_kills,
                plural(s.worker_kills, "kill", "kills"),
            ),
            quotes: worker_logs::never_ran_quotes(s),
        });
    }
    notes.extend(super::late_group::note(s).map(Note::from));
    notes.extend(super::capacity::harness_note(s).map(Note::from));
    notes.extend(chaos_notes(s).into_iter().map(Note::from));
    notes.extend(super::faults::notes(s).into_iter().map(Note::from));
    notes.extend(attribution_note(s).into_iter().map(Note::from));
    notes.extend(unmatched_note(s).into_iter().map(Note::from));
    lost_and_dead_lettered(s, &mut notes);
    notes.extend(lease_note(s).map(Note::from));
    notes.extend(returned_note(s).map(Note::from));
    if let Some(why) = &s.handler_latency_unmeasured {
        notes.push(Note::from(format!(
            "HANDLER LATENCY: cannot be measured on this run: {why}. The handler row is left \
             empty (0 in summary.json) rather than filled with the time from one fetch to the \
             next, and a `p999_handler_latency` budget is not met."
        )));
    }
    if s.unfinished > 0 {
        let w = s.words();
        notes.push(Note::from(format!(
            "UNFINISHED: {} {} {} still {} when the run stopped.",
            s.unfinished,
            plural(s.unfinished, w.message.0, w.message.1),
            plural(s.unfinished, "was", "were"),
            w.unsettled,
        )));
    }
    retries_and_removals(s, &mut notes);
    if let Some(dup) = s.duplicate_publishes.filter(|&d| d > 0) {
        notes.push(Note::from(format!(
            "DUPLICATE PUBLISHES: the producer's retries reached the queue as {dup} more {}, \
             past the deduplication window (or with none): each is delivered as a message of its \
             own, and a consumer that does not deduplicate by key repeats the work.",
            plural(dup, "message", "messages"),
        )));
    }
    if let Some(i) = &s.ingress {
        notes.extend(super::ingress::notes(i).into_iter().map(Note::from));
    }
    notes.extend(s.consumer_clock.as_ref().map(clock_note).map(Note::from));
    notes.extend(worker_logs::folder_note(s).map(Note::from));
    notes
}

/// The first [`CRASHES_NAMED`] of a worker's mishaps, `worker W at T s (WHAT)` each, and how many
/// more summary.json lists.
pub(super) fn first_named<'a>(all: impl ExactSizeIterator<Item = (u32, f64, &'a str)>) -> String {
    let more = all.len().saturating_sub(CRASHES_NAMED);
    let named: Vec<String> = all
        .take(CRASHES_NAMED)
        .map(|(w, at, what)| format!("worker {w} at {at:.3} s ({what})"))
        .collect();
    match more {
        0 => named.join(", "),
        _ => format!(
            "{}; and {more} more (summary.json lists every one)",
            named.join(", ")
        ),
    }
}

/// `CRASHES`: the workers that died by themselves, the first few named, with the end of their stderr.
fn crashes(s: &Summary, notes: &mut Vec<Note>) {
    if !s.crashes.is_empty() {
        let named = first_named(
            s.crashes
                .iter()
                .map(|c| (c.worker, c.at_s, c.exit.as_str())),
        );
        let n = s.crashes.len() as u64;
        notes.push(Note {
            text: format!(
                "CRASHES: {n} {} by itself, not by a kill rule: {named}.",
                plural(n, "worker died", "times a worker died"),
            ),
            quotes: worker_logs::crash_quotes(s),
        });
    }
}

/// `BROKER ANOMALIES`: steps no broker should take, the first few named.
fn anomalies(s: &Summary, notes: &mut Vec<Note>) {
    if !s.anomalies.is_empty() {
        let named: Vec<String> = s
            .anomalies
            .iter()
            .take(CRASHES_NAMED)
            .map(|a| {
                format!(
                    "{} {} at {:.3} s (worker {}, delivery {})",
                    a.key,
                    a.kind.describe(),
                    a.at_s,
                    a.worker,
                    a.delivery
                )
            })
            .collect();
        let more = s.anomalies.len().saturating_sub(CRASHES_NAMED);
        let rest = if more > 0 {
            format!("; and {more} more (summary.json lists every one)")
        } else {
            String::new()
        };
        notes.push(Note::from(format!(
            "BROKER ANOMALIES: the broker took {} {} no broker should take: {}{rest}.",
            s.broker_anomalies,
            plural(s.broker_anomalies, "step", "steps"),
            named.join(", "),
        )));
    }
    for note in &s.broker_notes {
        notes.push(Note::from(format!("BROKER: {note}.")));
    }
}

/// `LOST`, and the two `DLQ` notes: dead-lettered work already done, and work never done.
fn lost_and_dead_lettered(s: &Summary, notes: &mut Vec<Note>) {
    if s.lost > 0 {
        let w = s.words();
        notes.push(Note::from(format!(
            "LOST: {} {} {} {} and never had an effect: nothing will ever do {}.",
            s.lost,
            plural(s.lost, w.message.0, w.message.1),
            plural(s.lost, "was", "were"),
            w.settled,
            plural(s.lost, "it", "them"),
        )));
    }
    let (w, g) = (s.words(), &s.words().given_up);
    if s.dlq_with_effect > 0 {
        notes.push(Note::from(format!(
            "{}: {} of {} {} {} already had {} effect: {}.",
            g.head,
            s.dlq_with_effect,
            s.dlq,
            g.what,
            plural(s.dlq, w.message.0, w.message.1),
            plural(s.dlq_with_effect, "its", "their"),
            g.with_effect,
        )));
    }
    if s.dlq_without_effect > 0 {
        notes.push(Note::from(format!(
            "{}: {} of {} {} {} never had an effect: {}.",
            g.head,
            s.dlq_without_effect,
            s.dlq,
            g.what,
            plural(s.dlq, w.message.0, w.message.1),
            g.without_effect,
        )));
    }
}

/// `RETRIES WAITING`, `FAILED` and `REMOVED`: what the consumer's own retries left, and what
/// the run's end removed.
fn retries_and_removals(s: &Summary, notes: &mut Vec<Note>) {
    let w = s.words();
    if s.unfinished_delayed > 0 {
        notes.push(Note::from(format!(
            "RETRIES WAITING: {} of the unfinished {} {} waiting for the consumer's retry (in a \
             delay queue, or held by its framework until due) when the run stopped: not lost; \
             a longer run.drain lets the retry run.",
            s.unfinished_delayed,
            plural(s.unfinished_delayed, w.message.0, w.message.1),
            plural(s.unfinished_delayed, "was", "were"),
        )));
    }
    if s.failed > 0 {
        notes.push(Note::from(format!(
            "FAILED: {} {} {} {} by the consumer after its attempt failed, and never had an \
             effect: the consumer gave up on {} (out of retries: its log and result backend say \
             so), so {} not counted as lost.",
            s.failed,
            plural(s.failed, w.message.0, w.message.1),
            plural(s.failed, "was", "were"),
            w.settled,
            plural(s.failed, "it", "them"),
            plural(s.failed, "it is", "they are"),
        )));
    }
    if !s.removed_at_end.is_empty() {
        let named: Vec<String> = s
            .removed_at_end
            .iter()
            .map(|r| {
                format!(
                    "{} ({} {})",
                    r.queue,
                    r.messages,
                    plural(r.messages, "message", "messages")
                )
            })
            .collect();
        notes.push(Note::from(format!(
            "REMOVED: the run's end removed {} that still held messages: {}; each was counted \
             first (unfinished, or in the DLQ).",
            plural(named.len() as u64, "a queue", "queues"),
            named.join(", "),
        )));
    }
}

/// Which clock the consumer programs ran on: `CONSUMER CLOCK: scaled x20 (measured x19.96).`
fn clock_note(c: &crate::record::ConsumerClockRecord) -> String {
    let x = |v: f64| crate::profile::number_text((v * 100.0).round() / 100.0);
    let mut text = format!("CONSUMER CLOCK: {}", c.clock);
    if let Some(speed) = c.speed {
        text.push_str(&format!(" x{}", x(speed)));
    }
    if let Some(m) = c.measured {
        text.push_str(&format!(" (measured x{})", x(m)));
    }
    match &c.note {
        Some(n) => text.push_str(&format!(": {n}.")),
        None => text.push('.'),
    }
    text
}

/// Provider calls that could not be matched to one delivery their worker held, by reason: their
/// kills and retries were judged against no delivery (or the latest of several).
fn attribution_note(s: &Summary) -> Option<String> {
    let u = &s.unattributed_calls;
    if u.is_none() {
        return None;
    }
    let reasons: Vec<String> = crate::record::Unattributed::ALL
        .iter()
        .filter(|&&why| u.count(why) > 0)
        .map(|&why| format!("{} {}", u.count(why), why.words()))
        .collect();
    let n = u.total();
    Some(format!(
        "ATTRIBUTION: {n} provider {} could not be matched to a delivery the worker held: {}. \
         A call is matched by its effect key to the delivery of that key its worker holds; kill \
         rules with `delivery` and handler retries judged {} against no delivery (or the latest \
         of several).",
        plural(n, "call", "calls"),
        reasons.join(", "),
        plural(n, "it", "them"),
    ))
}

/// Effects whose key names no published message: where each side's key is read and how to make
/// them agree, and the messages that then cannot be told done or lost.
fn unmatched_note(s: &Summary) -> Option<String> {
    let n = s.unmatched_effects;
    if n == 0 {
        return None;
    }
    let mut text = format!(
        "UNMATCHED: {n} {} no published message has, so {} cannot be counted against {} \
         message: the run is misconfigured, not losing data. ackbench reads an effect's key from \
         each provider call where `provider.key` says (default `pointer:/key`, the body's `key` \
         field; or `header:NAME`, `segment:N`), and a message's key from what it published \
         (with `workload.ingress`, from the published body at `workload.ingress.message_key`, \
         default `/key`): make the consumer send, where `provider.key` reads, the key of the \
         message it handles.",
        plural(n, "effect named a key", "effects named keys"),
        plural(n, "it", "they"),
        plural(n, "its", "their"),
    );
    if s.unverifiable_keys > 0 {
        let w = s.words();
        text.push_str(&format!(
            " {} {} {} {} with no effect under {} key: unverifiable while effects are unmatched \
             (not counted as lost).",
            s.unverifiable_keys,
            plural(s.unverifiable_keys, w.message.0, w.message.1),
            plural(s.unverifiable_keys, "was", "were"),
            w.settled,
            plural(s.unverifiable_keys, "its", "their"),
        ));
    }
    Some(text)
}

/// A warning for every chaos rule that never fired.
fn chaos_notes(s: &Summary) -> Vec<String> {
    s.chaos_rules
        .iter()
        .filter(|r| r.fired == 0)
        .map(|r| {
            if r.optional {
                format!(
                    "CHAOS: optional rule {} ({}) never fired in this run.",
                    r.rule, r.label
                )
            } else {
                format!(
                    "CHAOS: rule {} ({}) never fired: the run did not test what the rule \
                     describes, so the verdict fails on it (a rule that may not fire says \
                     optional: true).",
                    r.rule, r.label
                )
            }
        })
        .collect()
}

/// `RETURNED`: handlers whose delivery the broker took back before they settled it for another
/// reason than its lease (a channel or connection that closed), grouped by that reason: not a
/// `TIMEOUT`, whose lease was not what ended them.
fn returned_note(s: &Summary) -> Option<String> {
    let l = &s.handler_leases;
    if l.returned == 0 {
        return None;
    }
    let w = s.words();
    let message = w.message.0;
    let causes: Vec<String> = l
        .returned_by
        .in_words()
        .into_iter()
        .map(|(n, why)| format!("{n} because {why}"))
        .collect();
    let mut text = format!(
        "RETURNED: {} of {} handlers had their {message} taken back by the broker before they \
         settled it, before their {} ({:.3} ms) ran out: {}; {} had {} {message} {} while \
         still being worked on.",
        l.returned,
        l.handlers,
        s.lease_words(),
        s.visibility_timeout_s * 1000.0,
        causes.join(", "),
        l.returned_redelivered,
        plural(l.returned_redelivered, "its", "their"),
        w.timeout.redelivered,
    );
    let own = l.returned_by.channel_closed + l.returned_by.connection_closed;
    if own > 0 {
        text.push_str(
            " A worker that closes its channel or connection gives back every delivery it has \
             not acked; an ack sent after the close (or overtaken by it: a client that writes \
             the close before its buffered ack) is discarded, and the message is delivered \
             again.",
        );
    }
    Some(text)
}

/// What the handlers did with their leases, when it matters: some outlived the bound on holding
/// their message (and what the broker did then, in the kind's
/// [`crate::profile::kinds::words::TimeoutWords`]), or they ran past it and still did not.
fn lease_note(s: &Summary) -> Option<String> {
    let l = &s.handler_leases;
    let w = s.words();
    let t = &w.timeout;
    let timeout_ms = s.visibility_timeout_s * 1000.0;
    let message = w.message.0;
    if l.outlived > 0 {
        let neither = l
            .outlived
            .saturating_sub(l.outlived_redelivered + l.outlived_dead_lettered);
        let mut what = vec![format!(
            "{} had {} {message} {} while still being worked on",
            l.outlived_redelivered,
            plural(l.outlived_redelivered, "its", "their"),
            t.redelivered
        )];
        if t.gives_up || l.outlived_dead_lettered > 0 {
            what.push(format!(
                "{} had {} {message} {}",
                l.outlived_dead_lettered,
                plural(l.outlived_dead_lettered, "its", "their"),
                s.dlq_words()
            ));
        }
        if neither > 0 {
            what.push(format!("{neither} neither"));
        }
        let p99 = match s.handler_latency_unmeasured {
            Some(_) => String::new(),
            None => format!(", handler p99 {:.3} ms", s.handler_latency_ms.p99),
        };
        return Some(format!(
            "TIMEOUT: {} of {} handlers {} ({} {timeout_ms:.3} ms{p99}): {}{}.",
            l.outlived,
            l.handlers,
            t.outlived,
            s.lease_words(),
            t.then,
            what.join(", ")
        ));
    }
    if timeout_ms > 0.0 && s.handler_latency_ms.p99 > timeout_ms {
        let mut how = vec![format!(
            "{} of {} acked in time",
            l.acked_in_time, l.handlers
        )];
        if l.extended > 0 {
            how.push(format!("{} after extending their lease", l.extended));
        }
        if l.released > 0 {
            how.push(format!("{} handed their {message} back", l.released));
        }
        return Some(format!(
            "LEASE: handler p99 ({:.3} ms) is longer than the {} ({timeout_ms:.3} ms), yet {}: \
             {}; no {message} was {} while being worked on.",
            s.handler_latency_ms.p99,
            s.lease_words(),
            t.kept,
            how.join(", "),
            t.redelivered
        ));
    }
    None
}
