//! What the reports call a kind's messages, its settling and its lease, where a kind's words
//! differ from a queue's: a [`KindWords`] per kind ([`super::KindDescriptor::words`]).
//! SQS, RabbitMQ, NATS and Redis Streams share [`QUEUE`]; Kafka's consumer group commits
//! offsets and bounds a member by its poll interval, a share group ACCEPTs records under an
//! acquisition lock, and each says so in its own words.
//!
//! A text may name the kind's lease with `{lease}` ([`super::Lease::words`]), filled in by
//! [`with_lease`].

/// The words of a kind, for the console, summary.md, report.html, junit.xml, the charts,
/// `--trace` and `ackbench size`.
#[derive(Debug)]
pub struct KindWords {
    /// A message, one and many (`message`, Kafka's `record`).
    pub message: (&'static str, &'static str),
    /// What the broker does to hand a message out, after "was ever" (`received`, `fetched`).
    pub delivered: &'static str,
    /// What the ack that settles a message does to it, after "was" (`deleted from the queue`).
    pub settled: &'static str,
    /// The same in one word, in a row's note (`deleted`, `committed`, `accepted`).
    pub settled_short: &'static str,
    /// Where a message not yet settled is, after "still" (`in the queue`).
    pub unsettled: &'static str,
    /// The in-flight chart's two counts: messages a worker holds, and messages waiting for one
    /// (`in flight (leased)`, `waiting (visible)`).
    pub in_flight: (&'static str, &'static str),
    pub done: DoneWords,
    pub held: HeldWords,
    pub stale: StaleWords,
    pub timeout: TimeoutWords,
    pub given_up: GivenUpWords,
    /// The summary's row for the age of the oldest message not yet settled
    /// (`oldest message age (max)`).
    pub oldest_age_row: &'static str,
    pub trace: TraceWords,
    pub sizing: SizingWords,
}

/// `--trace KEY`'s lines in the kind's words.
#[derive(Debug)]
pub struct TraceWords {
    /// What an ack did to the message (`deleted`; Kafka's `committed`).
    pub settled: &'static str,
    /// A handler's extension of its lease, 17 characters at most (`visibility change`).
    pub extended: &'static str,
    /// Before the time the lease ends (`lease until`; Kafka's `poll deadline`).
    pub until: &'static str,
    /// The lease's end, 17 characters at most (`lease expired`).
    pub expired: &'static str,
    /// What the message is after its lease's end (`visible again`).
    pub again: &'static str,
    /// The message given up on, 17 characters at most (`DEAD-LETTERED`; `ARCHIVED`).
    pub given_up: &'static str,
    /// A stale ack's message, settled already (`message already gone`).
    pub gone: &'static str,
}

/// `ackbench size`'s words for the kind (sizing.md, sizing.json's reasons).
#[derive(Debug)]
pub struct SizingWords {
    /// The lease in a sentence, after its length (`the 5m lease`; Kafka's `the 5m
    /// max.poll.interval.ms`).
    pub lease: &'static str,
    /// The verification table's row for the lease (`visibility timeout`).
    pub lease_row: &'static str,
    /// Where the probe's kill happens, after "right after the" (`receive`).
    pub received: &'static str,
    /// What the probe's message had when settled, before "on delivery" (`acked`).
    pub acked: &'static str,
}

/// The notes on the messages the kind gave up on (summary.json's `dlq`), beside
/// [`super::Dlq`]'s row.
#[derive(Debug)]
pub struct GivenUpWords {
    /// The notes' head (`DLQ`).
    pub head: &'static str,
    /// What was done to them, before the messages (`dead-lettered`).
    pub what: &'static str,
    /// What those that had their effect mean, after "already had their effect:".
    pub with_effect: &'static str,
    /// What those that never had it mean, after "never had an effect:".
    pub without_effect: &'static str,
    /// The DLQ chart's count, in its title and legend (`DLQ depth`).
    pub depth: &'static str,
    /// The DLQ chart's axis (`messages in the DLQ`).
    pub axis: &'static str,
    /// The DLQ chart's count at the end, after the number (`in the DLQ at the end`).
    pub at_end: &'static str,
    /// What those with effect mean on the DLQ chart (`replaying them repeats the work`).
    pub replay: &'static str,
}

/// The settling that makes a message done (its effect, then this): time to done's end.
#[derive(Debug)]
pub struct DoneWords {
    /// After "publish to the effect and" (`the ack that deleted the message`).
    pub by: &'static str,
    /// The same, the message named before (`the ack that deleted it`).
    pub by_it: &'static str,
    /// After "none had its effect and" (`an ack that deleted it`).
    pub any: &'static str,
    /// After "the message had its effect and" (`an ack had deleted it`).
    pub when: &'static str,
}

/// The time each handler's message was its own: the `lease held` latency row.
#[derive(Debug)]
pub struct HeldWords {
    /// The row's label (`lease held`; Kafka's `to poll deadline`).
    pub label: &'static str,
    /// What the row measures, after its label and a colon (may name `{lease}`).
    pub means: &'static str,
    /// report.html's sentence on the hold ratio (time held over `label`), on a kind that has a
    /// lease per message.
    pub ratio: &'static str,
}

/// An ack that came after the message stopped being the handler's (summary.json's
/// `stale_acks`).
#[derive(Debug)]
pub struct StaleWords {
    /// The row's label, and summary.md's column (`stale acks`; Kafka's `stale commits`).
    pub label: &'static str,
    /// The row's note.
    pub row: &'static str,
    /// The worker timeline's legend for a delivery settled stale.
    pub legend: &'static str,
    /// What the broker does with one, in report.html's header; `None`: the profile's
    /// `broker.stale_ack` (run.json's `stale_ack`) says it.
    pub policy: Option<&'static str>,
}

/// The `TIMEOUT` and `LEASE` notes: handlers against the kind's bound on holding a message.
#[derive(Debug)]
pub struct TimeoutWords {
    /// After "N of M handlers": what they did when the bound ran out.
    pub outlived: &'static str,
    /// The same in short, for a chart's caption (`outlived the lease they held`).
    pub outlived_short: &'static str,
    /// What the broker did then, before the counts ("" when the counts say it all).
    pub then: &'static str,
    /// What happened to an outlived handler's message given out again, after "had its message"
    /// (`redelivered`).
    pub redelivered: &'static str,
    /// Whether the bound's end can give a message up (a DLQ, an archive): the note counts those
    /// (Kafka's poll interval gives no record up).
    pub gives_up: bool,
    /// The `LEASE` note: that no handler outlived the bound, after "yet".
    pub kept: &'static str,
}

/// A queue's words: SQS, RabbitMQ, NATS, Redis Streams.
pub const QUEUE: KindWords = KindWords {
    message: ("message", "messages"),
    delivered: "received",
    settled: "deleted from the queue",
    settled_short: "deleted",
    unsettled: "in the queue",
    in_flight: ("in flight (leased)", "waiting (visible)"),
    done: DoneWords {
        by: "the ack that deleted the message",
        by_it: "the ack that deleted it",
        any: "an ack that deleted it",
        when: "an ack had deleted it",
    },
    held: HeldWords {
        label: "lease held",
        means: "the lease each handler had, the {lease} moved by its own visibility changes (a \
                heartbeat's extensions)",
        ratio: "The ratio is each handler's time holding its message before it acked or \
                released it, over the lease it held; above 1, more than 1% of handlers still \
                held their message when their lease ended.",
    },
    stale: StaleWords {
        label: "stale acks",
        row: "acks after the lease had ended",
        legend: "stale ack (lease had ended)",
        policy: None,
    },
    timeout: TimeoutWords {
        outlived: "still held their message when the lease they held ran out",
        outlived_short: "outlived the lease they held",
        then: "",
        redelivered: "redelivered",
        gives_up: true,
        kept: "no handler outlived the lease it held",
    },
    given_up: GivenUpWords {
        head: "DLQ",
        what: "dead-lettered",
        with_effect: "replaying the DLQ would duplicate those effects",
        without_effect: "that work is not done, and nothing will do it unless someone handles \
                         the DLQ",
        depth: "DLQ depth",
        axis: "messages in the DLQ",
        at_end: "in the DLQ at the end",
        replay: "replaying them repeats the work",
    },
    oldest_age_row: "oldest message age (max)",
    trace: TraceWords {
        settled: "deleted",
        extended: "visibility change",
        until: "lease until",
        expired: "lease expired",
        again: "visible again",
        given_up: "DEAD-LETTERED",
        gone: "message already gone",
    },
    sizing: SizingWords {
        lease: "lease",
        lease_row: "visibility timeout",
        received: "receive",
        acked: "acked",
    },
};

/// `text` with `{lease}` replaced by the kind's words for its lease.
pub fn with_lease(text: &str, lease: &str) -> String {
    text.replace("{lease}", lease)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_is_named_where_a_text_asks() {
        // QUEUE's row definition on SQS: the one `{lease}` becomes "visibility timeout".
        assert_eq!(
            with_lease(QUEUE.held.means, "visibility timeout"),
            "the lease each handler had, the visibility timeout moved by its own visibility \
             changes (a heartbeat's extensions)"
        );
        assert_eq!(with_lease("no lease here", "AckWait"), "no lease here");
    }

    #[test]
    fn every_kinds_trace_heads_fit_the_trace_column() {
        // A trace line's head is padded to 17 characters before the worker: a longer one would
        // push its line out of the column.
        for kind in super::super::KINDS {
            let t = &kind.words.trace;
            for head in [t.extended, t.expired, t.given_up] {
                assert!(head.len() <= 17, "{}: {head}", kind.name);
            }
        }
    }
}
