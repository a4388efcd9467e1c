//! JetStream's ack reply subjects, as a delivery carries them and an ack is published to them.
//!
//! nats-server 2.9 writes `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer
//! seq>.<timestamp>.<pending>`; newer servers put a domain and an account hash before the stream
//! (`$JS.ACK.<domain>.<account hash>.<stream>.<consumer>.<delivered>.<stream seq>.…`, 11 tokens
//! or 12 with a trailing random token).

/// What an ack reply subject says of one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckSubject<'a> {
    pub stream: &'a str,
    pub consumer: &'a str,
    /// How many times the server has delivered the message, this delivery included.
    pub delivered: u32,
    /// The message's sequence in its stream.
    pub stream_seq: u64,
}

/// Parses `subject` as an ack reply subject; `None` if it is not one.
pub fn parse(subject: &str) -> Option<AckSubject<'_>> {
    let rest = subject.strip_prefix("$JS.ACK.")?;
    let t: Vec<&str> = rest.split('.').collect();
    // After the `$JS.ACK.` prefix: 7 tokens (2.9), 9 or 10 (with domain and account hash).
    let at = match t.len() {
        7 => 0,
        9 | 10 => 2,
        _ => return None,
    };
    Some(AckSubject {
        stream: t[at],
        consumer: t[at + 1],
        delivered: t[at + 2].parse().ok()?,
        stream_seq: t[at + 3].parse().ok()?,
    })
}

/// What an ack's payload asks the server for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckKind {
    /// Empty payload, `+ACK`, or `+NXT` (ack, then a request for the next message).
    Ack,
    /// `+WPI`: work in progress, the delivery's AckWait starts again.
    Progress,
    /// `-NAK`, with the redelivery delay in nanoseconds as the worker wrote it (0: at once).
    Nak { delay_ns: u64 },
    /// `+TERM`: no more deliveries of this message.
    Term,
}

/// The kind of an ack by its payload; `None` for a payload the server does not take as one.
pub fn kind(payload: &[u8]) -> Option<AckKind> {
    let text = std::str::from_utf8(payload).ok()?.trim();
    if text.is_empty() || text == "+ACK" || text.starts_with("+NXT") {
        return Some(AckKind::Ack);
    }
    if text == "+WPI" {
        return Some(AckKind::Progress);
    }
    if text.starts_with("+TERM") {
        return Some(AckKind::Term);
    }
    let rest = text.strip_prefix("-NAK")?.trim();
    // `{"delay": ns}` or Go's duration form (`5s`); the server takes a delay it cannot read
    // as none, and the NAK as a NAK.
    let delay_ns = if rest.starts_with('{') {
        serde_json::from_str::<serde_json::Value>(rest)
            .ok()
            .and_then(|v| v.get("delay").and_then(serde_json::Value::as_u64))
    } else {
        crate::profile::parse_duration(rest)
            .ok()
            .map(crate::record::nanos)
    };
    Some(AckKind::Nak {
        delay_ns: delay_ns.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_2_9_subject_gives_stream_consumer_delivery_count_and_stream_seq() {
        let s = parse("$JS.ACK.orders.workers.2.17.40.1700000000000000000.3").unwrap();
        assert_eq!(
            s,
            AckSubject {
                stream: "orders",
                consumer: "workers",
                delivered: 2,
                stream_seq: 17,
            }
        );
    }

    #[test]
    fn the_newer_subject_with_domain_and_account_hash_is_read_past_them() {
        let s =
            parse("$JS.ACK.hub.ACCHASH.orders.workers.3.5.9.1700000000000000000.0.xyz").unwrap();
        assert_eq!(
            (s.stream, s.consumer, s.delivered, s.stream_seq),
            ("orders", "workers", 3, 5)
        );
        let s = parse("$JS.ACK._.ACCHASH.orders.workers.1.8.9.1700000000000000000.0").unwrap();
        assert_eq!((s.delivered, s.stream_seq), (1, 8));
    }

    #[test]
    fn other_subjects_are_not_ack_subjects() {
        assert_eq!(parse("_INBOX.abc.def"), None);
        assert_eq!(parse("$JS.ACK.orders.workers.x.1.1.1.1"), None);
        assert_eq!(parse("$JS.ACK.orders.workers.1.1"), None);
    }

    #[test]
    fn payloads_name_ack_progress_nak_with_its_delay_and_term() {
        assert_eq!(kind(b""), Some(AckKind::Ack));
        assert_eq!(kind(b"+ACK"), Some(AckKind::Ack));
        assert_eq!(kind(b"+NXT {\"batch\":1}"), Some(AckKind::Ack));
        assert_eq!(kind(b"+WPI"), Some(AckKind::Progress));
        assert_eq!(kind(b"-NAK"), Some(AckKind::Nak { delay_ns: 0 }));
        assert_eq!(
            kind(b"-NAK {\"delay\": 2000000000}"),
            Some(AckKind::Nak {
                delay_ns: 2_000_000_000
            })
        );
        // Go's duration form: 1.5 s; a delay the server cannot read: a NAK without one.
        assert_eq!(
            kind(b"-NAK 1.5s"),
            Some(AckKind::Nak {
                delay_ns: 1_500_000_000
            })
        );
        assert_eq!(
            kind(b"-NAK {\"delay\": \"x\"}"),
            Some(AckKind::Nak { delay_ns: 0 })
        );
        assert_eq!(kind(b"-NAK soon"), Some(AckKind::Nak { delay_ns: 0 }));
        assert_eq!(kind(b"+TERM reason"), Some(AckKind::Term));
        assert_eq!(kind(b"hello"), None);
    }
}
